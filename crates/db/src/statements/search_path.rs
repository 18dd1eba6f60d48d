//! SQL that sets `search_path`, found by the tokenizer: runner sets it
//! for every arm (the arm's own schema first, where its private copies and
//! what `setup` makes live, then the schemas of the strategy's
//! `search_path` key), and SQL that changed it could name the user's table
//! where the arm means its copy, so such SQL is refused before anything runs.
//!
//! Read from the tokens, not the parse tree, so a statement sqlparser
//! cannot parse is read too, and the text of every string and dollar quote
//! is read as SQL in its turn (a `DO` body, an `EXECUTE '...'`), as
//! `names::mentioned` reads them: a string that only holds such words is
//! refused with them, the safe direction.
//!
//! What it finds: `SET [SESSION | LOCAL] search_path` (also as a clause of
//! `CREATE FUNCTION`, `ALTER ROLE`, `ALTER DATABASE`), `RESET search_path`,
//! `RESET ALL` (back to the session's default path, without the arm's
//! schema), and `set_config('search_path', ...)` or a `set_config` whose
//! setting is not a literal. `DISCARD ALL` is refused as a statement that
//! cannot run in a transaction.

use super::SqlDialect;
use sqlparser::dialect::Dialect;
use sqlparser::tokenizer::{Token, Tokenizer, Word};

/// How deep strings inside strings are read.
const DEPTH: u32 = 4;

/// The words of the first place in `sql` that sets search_path
/// (`SET LOCAL search_path`, `RESET ALL`, `set_config('search_path', ...)`).
pub(super) fn find(sql: &str, d: SqlDialect) -> Option<String> {
    scan(sql, d.dialect().as_ref(), 0)
}

/// An unquoted word in upper case; a quoted identifier is never a keyword.
fn keyword(t: Option<&&Token>) -> Option<String> {
    match t {
        Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        _ => None,
    }
}

fn is_search_path(t: Option<&&Token>) -> bool {
    let folded = |w: &Word| match w.quote_style {
        Some(_) => w.value.clone(),
        None => w.value.to_ascii_lowercase(),
    };
    matches!(t, Some(Token::Word(w)) if folded(w) == "search_path")
}

fn string(t: Option<&&Token>) -> Option<String> {
    match t {
        Some(
            Token::SingleQuotedString(s)
            | Token::EscapedStringLiteral(s)
            | Token::NationalStringLiteral(s)
            | Token::UnicodeStringLiteral(s),
        ) => Some(s.clone()),
        Some(Token::DollarQuotedString(s)) => Some(s.value.clone()),
        _ => None,
    }
}

fn scan(sql: &str, d: &dyn Dialect, depth: u32) -> Option<String> {
    let tokens = Tokenizer::new(d, sql).tokenize().ok()?;
    let t: Vec<&Token> = tokens
        .iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    for (i, tok) in t.iter().enumerate() {
        let next = |k: usize| t.get(i + k);
        match keyword(Some(tok)).as_deref() {
            Some("SET") => {
                let modifier = keyword(next(1)).filter(|m| m == "SESSION" || m == "LOCAL");
                let at = if modifier.is_some() { 2 } else { 1 };
                if is_search_path(next(at)) {
                    return Some(match modifier {
                        Some(m) => format!("SET {m} search_path"),
                        None => "SET search_path".into(),
                    });
                }
            }
            Some("RESET") if is_search_path(next(1)) => return Some("RESET search_path".into()),
            Some("RESET") if keyword(next(1)).as_deref() == Some("ALL") => {
                return Some("RESET ALL".into())
            }
            Some("SET_CONFIG") if next(1) == Some(&&Token::LParen) => {
                match (string(next(2)), next(3)) {
                    (Some(name), Some(Token::Comma))
                        if !name.trim().eq_ignore_ascii_case("search_path") => {}
                    (Some(_), Some(Token::Comma)) => {
                        return Some("set_config('search_path', ...)".into())
                    }
                    _ => {
                        return Some(
                            "set_config(...) with a setting that is not a literal name".into(),
                        )
                    }
                }
            }
            _ => {}
        }
        if depth < DEPTH {
            if let Some(inner) = string(Some(tok)) {
                if let Some(found) = scan(&inner, d, depth + 1) {
                    return Some(found);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_way_to_set_search_path_is_found() {
        for (sql, words) in [
            ("SET search_path TO public", "SET search_path"),
            ("set local search_path = public, pg_catalog", "SET LOCAL search_path"),
            ("SET SESSION \"search_path\" TO public", "SET SESSION search_path"),
            ("RESET search_path", "RESET search_path"),
            ("reset all", "RESET ALL"),
            (
                "SELECT set_config('search_path', 'public', true)",
                "set_config('search_path', ...)",
            ),
            (
                "SELECT pg_catalog.SET_CONFIG(E'Search_Path ', 'public', false)",
                "set_config('search_path', ...)",
            ),
            (
                "SELECT set_config(name, 'public', true) FROM s",
                "set_config(...) with a setting that is not a literal name",
            ),
            (
                "DO $$ BEGIN EXECUTE 'SET LOCAL search_path TO public'; END $$",
                "SET LOCAL search_path",
            ),
            (
                "CREATE FUNCTION f() RETURNS int LANGUAGE sql SET search_path = public AS 'SELECT 1'",
                "SET search_path",
            ),
            (
                "ALTER ROLE bench SET search_path TO public",
                "SET search_path",
            ),
        ] {
            assert_eq!(find(sql, SqlDialect::Postgres).as_deref(), Some(words), "{sql}");
        }
    }

    #[test]
    fn other_settings_and_reads_of_the_path_pass() {
        for sql in [
            "SET LOCAL work_mem = '64MB'",
            "SELECT set_config('work_mem', '64MB', true)",
            "SELECT current_setting('search_path')",
            "SHOW search_path",
            "SELECT 'set_config' AS name",
            "RESET work_mem",
            "UPDATE t SET v = 1 WHERE id = 2",
        ] {
            assert_eq!(find(sql, SqlDialect::Postgres), None, "{sql}");
        }
    }
}
