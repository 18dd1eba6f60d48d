//! Every mistake of a file at once. Validation stops at its first problem;
//! to find the next, the loop in `load_text` repairs the document where the
//! problem is and validates it again, until the file passes or nothing more
//! can be repaired. A repair must not invent a problem: one that may only
//! follow from an earlier repair is not listed, only repaired in turn.
//!
//! Repairs, from the most to the least that survives of the file:
//!
//! - a misspelt choice with a near valid one (`kind = "comand"`, a strategy
//!   name in `design.treatment`) takes that one, so every other key of the
//!   table is still checked;
//! - a bad key is taken out;
//! - a strategy whose table cannot be repaired key by key (no kind near
//!   the one written, or a key it requires is bad) becomes `kind = "noop"`:
//!   the design's references to it still hold, and what it would have read
//!   from `[grid]` is no longer checked (a grid key only it read would look
//!   unread, so grid problems after such a repair are not listed);
//! - an arm naming no strategy names the first defined one.

use super::location::{KeyPath, Problem};
use super::strategies::KINDS;
use super::suggest;
use toml_edit::{DocumentMut, Item, Table, TableLike, Value};

/// What was repaired, so that the problems it may cause are recognised.
#[derive(Debug, Default)]
pub(super) struct Repairs {
    /// Keys taken out or replaced.
    touched: Vec<KeyPath>,
    /// A strategy was replaced by a noop one.
    stubbed: bool,
}

impl Repairs {
    /// Whether `p` may only be a consequence of an earlier repair: it is at
    /// or around a repaired key, or its sentence names the key (a
    /// placeholder that read it, a sibling that is required in its place).
    /// Erring this way lists fewer problems, never one that is not there.
    pub(super) fn explain(&self, p: &Problem) -> bool {
        if self.stubbed && p.path.segments.first().is_some_and(|s| s == "grid") {
            return true;
        }
        self.touched.iter().any(|r| follows_from(p, r))
    }

    /// Changes `doc` so that the problem at `path` is gone; false when it
    /// cannot be (the loop then ends).
    pub(super) fn repair(&mut self, doc: &mut DocumentMut, p: &Problem) -> bool {
        let path = &p.path;
        let segs: Vec<&str> = path.segments.iter().map(String::as_str).collect();
        let again = self.touched.iter().any(|t| path.within(t));
        let done = match segs.as_slice() {
            ["strategies", name, "kind"] if !again => {
                match near_choice(doc, path, KINDS.iter().map(|(k, _)| *k)) {
                    Some(kind) => set(doc, path, Value::from(kind)),
                    None => self.stub(doc, name),
                }
            }
            ["strategies", name, ..] if again || segs.len() == 2 => {
                let whole = KeyPath::root().child("strategies").child(name);
                if self.touched.contains(&whole) {
                    return false;
                }
                self.touched.push(whole);
                self.stub(doc, name)
            }
            ["design", "baseline" | "treatment" | "treatments"] if !again => {
                let names = strategy_names(doc);
                let to = near_choice(doc, path, names.iter().map(String::as_str))
                    .or(names.first().map(String::as_str))
                    .map(str::to_string);
                match to {
                    Some(to) if p.message.contains("not defined") => {
                        set(doc, path, Value::from(to))
                    }
                    _ => remove_key(doc, path),
                }
            }
            _ if !again => remove_key(doc, path),
            _ => false,
        };
        if done {
            self.touched.push(path.clone());
        }
        done
    }

    fn stub(&mut self, doc: &mut DocumentMut, name: &str) -> bool {
        let Some(strategies) = doc.get_mut("strategies").and_then(Item::as_table_like_mut) else {
            return false;
        };
        let mut stub = Table::new();
        stub.insert("kind", toml_edit::value("noop"));
        strategies.insert(name, Item::Table(stub));
        self.stubbed = true;
        true
    }
}

/// Where a sentence starts listing what would be valid.
const LISTS: [&str; 3] = ["valid keys here", "valid here:", "defined strategies are:"];

/// See [`Repairs::explain`].
fn follows_from(p: &Problem, removed: &KeyPath) -> bool {
    if p.path.within(removed) || removed.within(&p.path) {
        return true;
    }
    let Some(name) = removed.segments.last() else {
        return false;
    };
    // A word of its own: `strategies.slow.kind` does not name the `kind`
    // of another strategy.
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '.';
    // Not in the list of what would be valid, which names every key.
    let said = LISTS
        .iter()
        .filter_map(|l| p.message.find(l))
        .min()
        .map_or(p.message.as_str(), |end| &p.message[..end]);
    said.match_indices(name.as_str()).any(|(i, m)| {
        let before = said[..i].chars().next_back();
        let after = said[i + m.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// The defined strategy names, in the file's order.
fn strategy_names(doc: &DocumentMut) -> Vec<String> {
    doc.get("strategies")
        .and_then(Item::as_table_like)
        .map(|t| t.iter().map(|(k, _)| k.to_string()).collect())
        .unwrap_or_default()
}

/// The string at `path` (an array element with its index), if it is one.
fn string_at<'a>(doc: &'a DocumentMut, path: &KeyPath) -> Option<&'a str> {
    let mut item: &Item = doc.as_item();
    for seg in &path.segments {
        item = item.as_table_like()?.get(seg)?;
    }
    match path.index {
        Some(i) => item.as_array()?.get(i)?.as_str(),
        None => item.as_str(),
    }
}

/// The valid choice nearest to the string written at `path`.
fn near_choice<'a>(
    doc: &DocumentMut,
    path: &KeyPath,
    valid: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    suggest::nearest(string_at(doc, path)?, valid)
}

/// Sets the value at `path` (an array element with its index).
fn set(doc: &mut DocumentMut, path: &KeyPath, v: Value) -> bool {
    let Some((last, parents)) = path.segments.split_last() else {
        return false;
    };
    let Some(table) = table_at(doc, parents) else {
        return false;
    };
    match path.index {
        Some(i) => match table.get_mut(last).and_then(Item::as_array_mut) {
            Some(a) if i < a.len() => {
                a.replace(i, v);
                true
            }
            _ => false,
        },
        None => {
            table.insert(last, Item::Value(v));
            true
        }
    }
}

fn table_at<'a>(doc: &'a mut DocumentMut, segs: &[String]) -> Option<&'a mut dyn TableLike> {
    let mut table: &mut dyn TableLike = doc.as_table_mut();
    for seg in segs {
        table = table.get_mut(seg)?.as_table_like_mut()?;
    }
    Some(table)
}

/// Takes the key at `path` (its whole value, for an array element) out of
/// `doc`; false when there is no such key.
fn remove_key(doc: &mut DocumentMut, path: &KeyPath) -> bool {
    let Some((last, parents)) = path.segments.split_last() else {
        return false;
    };
    table_at(doc, parents).is_some_and(|t| t.remove(last).is_some())
}
