//! `--set key.path=value`: edits to the document before it is validated, so an
//! override is checked by exactly the same rules as the file.
//!
//! Edits go through `toml_edit` so the resolved text that is hashed into
//! run.json keeps the user's comments and formatting.

use super::override_error::OverrideError;
use toml_edit::{DocumentMut, Item, Table, TableLike, Value};

/// One parsed `--set` flag.
#[derive(Debug, Clone)]
pub(crate) struct Override {
    /// The flag as the user would type it (`--set design.forks=2`).
    pub flag: String,
    pub path: Vec<String>,
    pub value: Value,
}

/// Splits `KEY=VALUE`. The key is a TOML dotted key, so a table whose name
/// holds a dot, a space or a slash is addressed as the file writes it
/// (`strategies."scratch/flaky.sh".allow_failure=true`, `runner ab` names
/// strategies by their command line). The value is read as a TOML value
/// when it is one (`2`, `0.5`, `true`, `[0, 100]`, `"x"`), else taken as a
/// bare string, so a shell user can write `--set design.ordering=blocked`
/// without quoting.
pub(crate) fn parse(arg: &str) -> Result<Override, OverrideError> {
    let flag = format!("--set {arg}");
    let Some((key, raw)) = split_at_equals(arg) else {
        return Err(OverrideError::NoEquals { flag });
    };
    let key = key.trim();
    if key.is_empty() {
        return Err(OverrideError::EmptyKey { flag });
    }
    let path: Vec<String> = match toml_edit::Key::parse(key) {
        Ok(keys) => keys.iter().map(|k| k.get().to_string()).collect(),
        // An empty segment, named as such; anything else in TOML's words.
        Err(_) if key.split('.').any(|s| s.trim().is_empty()) => {
            return Err(OverrideError::EmptySegment {
                flag,
                key: key.into(),
            })
        }
        Err(e) => {
            return Err(OverrideError::NotAKey {
                flag,
                key: key.into(),
                why: e.message().lines().next().unwrap_or("").trim().to_string(),
            })
        }
    };
    if path.iter().any(String::is_empty) {
        return Err(OverrideError::EmptySegment {
            flag,
            key: key.into(),
        });
    }
    let mut value = raw
        .parse::<Value>()
        .unwrap_or_else(|_| Value::from(raw.to_string()));
    value.decor_mut().clear();
    Ok(Override { flag, path, value })
}

/// `KEY=VALUE` split at the first `=` outside a quoted key, so a quoted
/// table name may hold one (`strategies."a=b".kind=noop`).
fn split_at_equals(arg: &str) -> Option<(&str, &str)> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in arg.char_indices() {
        match (quote, c) {
            (Some('"'), _) if escaped => escaped = false,
            (Some('"'), '\\') => escaped = true,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '=') => return Some((&arg[..i], &arg[i + 1..])),
            (None, _) => {}
        }
    }
    None
}

/// Sets the value, creating missing tables on the way. Replacing a value
/// keeps its trailing comment, so `forks = 2  # why` stays documented.
pub(crate) fn apply(doc: &mut DocumentMut, o: &Override) -> Result<(), OverrideError> {
    let Some((last, parents)) = o.path.split_last() else {
        return Err(OverrideError::NoPath {
            flag: o.flag.clone(),
        });
    };
    let mut table: &mut dyn TableLike = doc.as_table_mut();
    for (depth, seg) in parents.iter().enumerate() {
        if !table.contains_key(seg) {
            let mut new = Table::new();
            new.set_implicit(true);
            table.insert(seg, Item::Table(new));
        }
        let item = table.get_mut(seg).expect("inserted above");
        table = match item.as_table_like_mut() {
            Some(t) => t,
            None => {
                return Err(OverrideError::NotATable {
                    flag: o.flag.clone(),
                    value: o.path[..=depth].join("."),
                    key: o.path[depth + 1].clone(),
                })
            }
        };
    }
    match table.get_mut(last) {
        Some(Item::Value(old)) => {
            let decor = old.decor().clone();
            *old = o.value.clone();
            *old.decor_mut() = decor;
        }
        Some(item) if !item.is_none() => *item = Item::Value(o.value.clone()),
        _ => {
            table.insert(last, Item::Value(o.value.clone()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(text: &str, flags: &[&str]) -> Result<String, OverrideError> {
        let mut doc: DocumentMut = text.parse().unwrap();
        for f in flags {
            apply(&mut doc, &parse(f)?)?;
        }
        Ok(doc.to_string())
    }

    #[test]
    fn values_parse_as_toml_or_fall_back_to_strings() {
        let v = |s: &str| parse(&format!("k={s}")).unwrap().value.to_string();
        assert_eq!(v("2"), "2");
        assert_eq!(v("0.5"), "0.5");
        assert_eq!(v("true"), "true");
        assert_eq!(v("[0,100]"), "[0,100]");
        assert_eq!(v("\"quoted\""), "\"quoted\"");
        assert_eq!(v("blocked"), "\"blocked\"");
        assert_eq!(v("paired-random"), "\"paired-random\"");
        assert_eq!(v(""), "\"\"");
        assert_eq!(v("a=b"), "\"a=b\"");
    }

    #[test]
    fn malformed_flags_name_the_flag() {
        assert!(parse("design.forks")
            .unwrap_err()
            .to_string()
            .starts_with("--set design.forks: no `=`"));
        assert!(parse("=2")
            .unwrap_err()
            .to_string()
            .contains("the key is empty"));
        assert!(parse("design..forks=2")
            .unwrap_err()
            .to_string()
            .contains("empty segment"));
        assert!(parse(".x=2")
            .unwrap_err()
            .to_string()
            .contains("empty segment"));
        assert!(parse("x.=2")
            .unwrap_err()
            .to_string()
            .contains("empty segment"));
        assert_eq!(parse(" design.forks =2").unwrap().path, ["design", "forks"]);
    }

    #[test]
    fn a_key_is_a_toml_dotted_key_so_any_name_can_be_addressed() {
        let path = |f: &str| parse(f).unwrap().path;
        assert_eq!(
            path(r#"strategies."scratch/flaky.sh".allow_failure=true"#),
            ["strategies", "scratch/flaky.sh", "allow_failure"]
        );
        assert_eq!(
            path(r#"strategies.'gzip -1 -c'.compare_output=false"#),
            ["strategies", "gzip -1 -c", "compare_output"]
        );
        assert_eq!(
            path(r#"strategies."a=b".kind=noop"#),
            ["strategies", "a=b", "kind"]
        );
        assert_eq!(
            path(r#"strategies."say \"hi\"".kind=noop"#),
            ["strategies", "say \"hi\"", "kind"]
        );
        // The quoted name is one table, made where it is missing.
        let out = set(
            "[strategies.\"scratch/flaky.sh\"]\nkind = \"command\"\n",
            &[r#"strategies."scratch/flaky.sh".allow_failure=true"#],
        )
        .unwrap();
        let parsed: toml::Value = toml::from_str(&out).unwrap();
        assert_eq!(
            parsed["strategies"]["scratch/flaky.sh"]["allow_failure"].as_bool(),
            Some(true),
            "{out}"
        );
        let e = parse(r#"strategies."open.x=1"#).unwrap_err().to_string();
        assert!(e.contains("no `=`"), "{e}");
        let e = parse("strategies.a b=1").unwrap_err().to_string();
        assert!(
            e.starts_with("--set strategies.a b=1: the key `strategies.a b` is not a TOML key"),
            "{e}"
        );
    }

    #[test]
    fn replaces_in_place_keeping_comments() {
        let out = set(
            "[design]\nforks = 10 # ten\npairs = 3\n",
            &["design.forks=2"],
        )
        .unwrap();
        assert_eq!(out, "[design]\nforks = 2 # ten\npairs = 3\n");
    }

    #[test]
    fn creates_keys_and_tables() {
        let out = set("seed = 1\n", &["strategies.x.kind=noop", "design.forks=2"]).unwrap();
        assert!(out.contains("[strategies.x]\nkind = \"noop\""), "{out}");
        assert!(out.contains("[design]\nforks = 2"), "{out}");
        let parsed: toml::Value = toml::from_str(&out).unwrap();
        assert_eq!(parsed["strategies"]["x"]["kind"].as_str(), Some("noop"));
        let inline = set("design = { forks = 1 }\n", &["design.pairs=5"]).unwrap();
        assert_eq!(inline, "design = { forks = 1 , pairs = 5 }\n");
    }

    #[test]
    fn cannot_descend_into_a_value() {
        let err = set("[design]\nforks = 10\n", &["design.forks.x=1"])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`design.forks` is a value, not a table"),
            "{err}"
        );
    }
}
