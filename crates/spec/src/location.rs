//! Where a problem is, in terms the user can act on: `file:line:col`, or the
//! `--set` flag that put the value there.
//!
//! Positions are looked up by key path in the file *as written*, not taken
//! from the spans of the text after overrides: a `--set` that adds a key
//! inserts a line, and every span below it would then name the wrong line.

use std::fmt;
use std::ops::Range;
use toml_edit::{ImDocument, Item, TableLike, Value};

/// A dotted key such as `strategies.rollback.kind`, kept as segments so a
/// strategy name containing a dot still finds its table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct KeyPath {
    pub segments: Vec<String>,
    /// An element of the array at `segments` (`grid.delay_us[2]`).
    pub index: Option<usize>,
}

impl KeyPath {
    pub(crate) fn root() -> Self {
        KeyPath::default()
    }

    /// `self` is `other` or lies inside it (array elements aside).
    pub(crate) fn within(&self, other: &KeyPath) -> bool {
        self.segments.starts_with(&other.segments)
    }

    pub(crate) fn child(&self, key: &str) -> Self {
        let mut segments = self.segments.clone();
        segments.push(key.to_string());
        KeyPath {
            segments,
            index: None,
        }
    }

    pub(crate) fn at(&self, index: usize) -> Self {
        KeyPath {
            segments: self.segments.clone(),
            index: Some(index),
        }
    }
}

/// `name` as a key of a TOML file: bare where TOML allows it (`fast`),
/// else quoted as TOML quotes it (`"sort -n"`), so a path or a table
/// header a message shows can be pasted into the file or `--set`.
pub fn toml_key(name: &str) -> String {
    toml_edit::Key::new(name).display_repr().into_owned()
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, seg) in self.segments.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            f.write_str(&toml_key(seg))?;
        }
        if let Some(i) = self.index {
            write!(f, "[{i}]")?;
        }
        Ok(())
    }
}

/// Which part of an entry a problem is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Anchor {
    /// The key itself (unknown keys).
    Key,
    /// The value (wrong type or range); for a missing key, its table.
    Value,
    /// Not in the file at all (an environment variable).
    Nowhere,
}

/// A rule that failed, before it is given a position.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Problem {
    pub path: KeyPath,
    pub anchor: Anchor,
    /// The whole sentence after the position, naming the key.
    pub message: String,
    /// A byte offset inside the string value at `path` (a statement in
    /// inline SQL, a placeholder): the position then points there.
    pub within: Option<usize>,
}

impl Problem {
    pub(crate) fn value(path: &KeyPath, message: impl Into<String>) -> Self {
        Problem {
            path: path.clone(),
            anchor: Anchor::Value,
            message: message.into(),
            within: None,
        }
    }

    /// The same problem, placed at byte `offset` of the string value.
    pub(crate) fn inside(mut self, offset: usize) -> Self {
        self.within = Some(offset);
        self
    }

    pub(crate) fn key(path: &KeyPath, message: impl Into<String>) -> Self {
        Problem {
            path: path.clone(),
            anchor: Anchor::Key,
            message: message.into(),
            within: None,
        }
    }

    pub(crate) fn nowhere(message: impl Into<String>) -> Self {
        Problem {
            path: KeyPath::root(),
            anchor: Anchor::Nowhere,
            message: message.into(),
            within: None,
        }
    }
}

/// 1-based line and column (in characters) of a byte offset; offsets past the
/// end or inside a character are clamped, so any span is safe to pass.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = before[line_start..].chars().count() + 1;
    (line, col)
}

/// The position of a problem: a place in the file, a flag, or neither.
pub(crate) enum Position {
    At(usize, usize),
    Flag(String),
    Unknown,
}

/// Resolves key paths against the file as written and the overrides applied.
pub(crate) struct Locator<'a> {
    pub original: Option<&'a ImDocument<String>>,
    /// (path, flag as typed), in command-line order.
    pub overrides: Vec<(Vec<String>, String)>,
}

impl Locator<'_> {
    pub(super) fn position(&self, problem: &Problem) -> Position {
        if problem.anchor == Anchor::Nowhere {
            return Position::Unknown;
        }
        let path = &problem.path.segments;
        // A later flag wins over an earlier one, as it does for the value.
        if let Some((_, flag)) = self
            .overrides
            .iter()
            .rev()
            .find(|(o, _)| path.starts_with(o))
        {
            return Position::Flag(flag.clone());
        }
        let Some(doc) = self.original else {
            return Position::Unknown;
        };
        let (depth, mut span) = find_in_original(doc.as_table(), &problem.path, problem.anchor);
        if let (Some(offset), Some(s)) = (problem.within, &span) {
            if depth == path.len() {
                span = Some(inside_string(doc.raw(), s.clone(), offset));
            }
        }
        // The part of the path the file does not have was created by a flag.
        let created = self
            .overrides
            .iter()
            .rev()
            .find(|(o, _)| common_prefix(o, path) > depth);
        match (created, span) {
            (Some((_, flag)), _) => Position::Flag(flag.clone()),
            (None, Some(span)) => {
                let (line, col) = line_col(doc.raw(), span.start);
                Position::At(line, col)
            }
            (None, None) => Position::Unknown,
        }
    }
}

/// The span of byte `offset` of a string's content, given the span of the
/// string as written (quotes included). Exact for literal strings and for
/// basic strings without escapes; with an escape the offsets no longer
/// match, so the string's start is kept.
fn inside_string(raw: &str, span: Range<usize>, offset: usize) -> Range<usize> {
    let Some(written) = raw.get(span.clone()) else {
        return span;
    };
    let (delimiter, escapes) = if written.starts_with("'''") {
        (3, false)
    } else if written.starts_with("\"\"\"") {
        (3, true)
    } else if written.starts_with('\'') {
        (1, false)
    } else if written.starts_with('"') {
        (1, true)
    } else {
        return span;
    };
    if escapes && written.contains('\\') {
        return span;
    }
    let mut start = span.start + delimiter;
    // A newline right after an opening triple quote is not part of the value.
    if delimiter == 3 {
        if raw[start..].starts_with("\r\n") {
            start += 2;
        } else if raw[start..].starts_with('\n') {
            start += 1;
        }
    }
    let at = (start + offset).min(span.end);
    at..at
}

fn common_prefix(a: &[String], b: &[String]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// How many segments of `path` exist in the file, and the best span for the
/// deepest one that does.
fn find_in_original(
    root: &dyn TableLike,
    path: &KeyPath,
    anchor: Anchor,
) -> (usize, Option<Range<usize>>) {
    let mut table = root;
    let mut best = None;
    for (depth, seg) in path.segments.iter().enumerate() {
        let Some((key, item)) = table.get_key_value(seg) else {
            return (depth, best);
        };
        let last = depth + 1 == path.segments.len();
        let item_span = match item {
            Item::Table(t) => t.span(),
            Item::Value(v) => v.span(),
            _ => None,
        };
        // An unknown table is best shown at its `[header]`, an unknown value at its key.
        let is_table = matches!(item, Item::Table(_));
        best = if last && anchor == Anchor::Key && !is_table {
            key.span().or(item_span)
        } else {
            item_span.or_else(|| key.span())
        };
        if last {
            if let (Some(i), Item::Value(Value::Array(a))) = (path.index, item) {
                best = a.get(i).and_then(Value::span).or(best);
            }
            return (depth + 1, best);
        }
        match item.as_table_like() {
            Some(t) => table = t,
            None => return (depth + 1, best),
        }
    }
    (path.segments.len(), best)
}

/// The key path of the entry whose key or value covers byte `offset` of a
/// parsed document; used to name the key in errors that serde reports by span.
pub(crate) fn path_at(root: &dyn TableLike, offset: usize) -> Option<(KeyPath, Anchor)> {
    for (name, item) in root.iter() {
        let key_span = root.get_key_value(name).and_then(|(k, _)| k.span());
        let here = KeyPath::root().child(name);
        if key_span.is_some_and(|s| s.contains(&offset)) {
            return Some((here, Anchor::Key));
        }
        let (span, inner) = match item {
            Item::Table(t) => (t.span(), Some(t as &dyn TableLike)),
            Item::Value(Value::InlineTable(t)) => (t.span(), Some(t as &dyn TableLike)),
            Item::Value(v) => (v.span(), None),
            _ => (None, None),
        };
        if let Some((sub, anchor)) = inner.and_then(|t| path_at(t, offset)) {
            let mut segments = here.segments;
            segments.extend(sub.segments);
            return Some((
                KeyPath {
                    segments,
                    index: sub.index,
                },
                anchor,
            ));
        }
        if span.is_some_and(|s| s.contains(&offset)) {
            return Some((here, Anchor::Value));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_is_one_based_and_counts_characters() {
        let text = "a = 1\nbé = 2\n";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 6), (2, 1));
        // 'é' is two bytes but one column.
        assert_eq!(line_col(text, 9), (2, 3));
        assert_eq!(line_col(text, 8), (2, 2));
        assert_eq!(line_col(text, 999), (3, 1));
        assert_eq!(line_col("", 5), (1, 1));
    }

    #[test]
    fn key_path_display_quotes_odd_segments() {
        let p = KeyPath::root()
            .child("strategies")
            .child("a.b")
            .child("kind");
        assert_eq!(p.to_string(), "strategies.\"a.b\".kind");
        assert_eq!(
            KeyPath::root()
                .child("grid")
                .child("delay_us")
                .at(2)
                .to_string(),
            "grid.delay_us[2]"
        );
    }

    fn doc(text: &str) -> ImDocument<String> {
        ImDocument::parse(text.to_string()).unwrap()
    }

    fn at(loc: &Locator, p: &Problem) -> String {
        match loc.position(p) {
            Position::At(l, c) => format!("{l}:{c}"),
            Position::Flag(f) => f,
            Position::Unknown => "-".into(),
        }
    }

    #[test]
    fn locates_values_keys_tables_elements_and_flags() {
        let d = doc("[design]\nforks = 0\n\n[grid]\ndelay_us = [0, 5, 5]\n");
        let mut loc = Locator {
            original: Some(&d),
            overrides: vec![],
        };
        let design = KeyPath::root().child("design");
        assert_eq!(at(&loc, &Problem::value(&design.child("forks"), "")), "2:9");
        assert_eq!(at(&loc, &Problem::key(&design.child("forks"), "")), "2:1");
        assert_eq!(
            at(&loc, &Problem::value(&design.child("baseline"), "")),
            "1:1"
        );
        let delays = KeyPath::root().child("grid").child("delay_us");
        assert_eq!(at(&loc, &Problem::value(&delays.at(2), "")), "5:19");
        assert_eq!(
            at(&loc, &Problem::value(&KeyPath::root().child("seed"), "")),
            "-"
        );
        loc.overrides.push((
            vec!["design".into(), "forks".into()],
            "--set design.forks=0".into(),
        ));
        loc.overrides.push((
            vec!["strategies".into(), "x".into(), "duration_us".into()],
            "--set s".into(),
        ));
        assert_eq!(
            at(&loc, &Problem::value(&design.child("forks"), "")),
            "--set design.forks=0"
        );
        let kind = KeyPath::root().child("strategies").child("x").child("kind");
        assert_eq!(at(&loc, &Problem::value(&kind, "")), "--set s");
    }

    #[test]
    fn positions_inside_strings() {
        let d = doc("a = 'x COMMIT'\nb = '''\nSELECT 1;\n  COMMIT'''\nc = \"x\\ty COMMIT\"\n");
        let loc = Locator {
            original: Some(&d),
            overrides: vec![],
        };
        let p = |k: &str, off: usize| Problem::value(&KeyPath::root().child(k), "").inside(off);
        assert_eq!(at(&loc, &p("a", 2)), "1:8");
        // Line 2 of the SQL is line 4 of the file.
        assert_eq!(at(&loc, &p("b", "SELECT 1;\n  ".len())), "4:3");
        // An escape shifts offsets: fall back to the string's start.
        assert_eq!(at(&loc, &p("c", 6)), "5:5");
    }

    #[test]
    fn path_at_finds_keys_values_and_nested_tables() {
        let d = doc("a = 1\n[s.x]\nkind = 'noop'\nt = { u = 2 }\n");
        let root = d.as_table();
        let off = |needle: &str| d.raw().find(needle).unwrap();
        let show = |o| path_at(root, o).map(|(p, a)| format!("{p} {a:?}"));
        assert_eq!(show(off("a =")).unwrap(), "a Key");
        assert_eq!(show(off("'noop'")).unwrap(), "s.x.kind Value");
        assert_eq!(show(off("u =")).unwrap(), "s.x.t.u Key");
        assert_eq!(show(off("2 }")).unwrap(), "s.x.t.u Value");
    }
}
