//! The user's SQL, read with a real parser (`sqlparser`): split into
//! statements, and checked before anything runs (design section 8).
//!
//! Statements are separated by `;` tokens, so a semicolon inside a string,
//! a comment or a PostgreSQL dollar-quoted body does not split (a SQLite
//! trigger body with semicolons is not supported).
//!
//! Measured SQL runs inside `BEGIN ... ROLLBACK`, so everything it writes is
//! undone, unless it ends that transaction itself: transaction control and
//! statements that cannot run inside a transaction are refused. Setup SQL
//! is committed, so it is held to more: only statements whose effect stays
//! in the strategy's own schema (unqualified write targets; setup runs with
//! that schema alone on the search path). A statement sqlparser cannot
//! parse is still checked by its leading keywords when measured, and refused
//! in setup, where runner must know what it commits.

use sqlparser::ast::{FromTable, ObjectName, Set, Statement, TableFactor, TableObject};
use sqlparser::dialect::{Dialect, PostgreSqlDialect, SQLiteDialect};
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};
use std::ops::Range;

/// Which SQL grammar to read the text with: the backend it will run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlDialect {
    Sqlite,
    Postgres,
}

impl SqlDialect {
    fn dialect(self) -> Box<dyn Dialect> {
        match self {
            SqlDialect::Sqlite => Box::new(SQLiteDialect {}),
            SqlDialect::Postgres => Box::new(PostgreSqlDialect {}),
        }
    }
}

/// Measured (inside `BEGIN ... ROLLBACK`) or setup (committed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlRole {
    Run,
    Setup,
}

/// Why a text was refused: a sentence and the byte offset it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub offset: usize,
    pub message: String,
}

/// Byte ranges of the statements of `sql` (without the `;`), in order;
/// empty statements (`;;`, trailing comments) are skipped.
pub fn split(sql: &str, dialect: SqlDialect) -> Result<Vec<Range<usize>>, Refusal> {
    let d = dialect.dialect();
    let tokens = Tokenizer::new(d.as_ref(), sql)
        .tokenize_with_location()
        .map_err(|e| Refusal {
            offset: offset_of(sql, e.location.line, e.location.column),
            message: format!("the SQL cannot be read: {}", e.message),
        })?;
    let mut out = Vec::new();
    let mut current: Option<Range<usize>> = None;
    for t in &tokens {
        match &t.token {
            Token::SemiColon => out.extend(current.take()),
            Token::Whitespace(_) | Token::EOF => {}
            _ => {
                let (start, end) = token_range(sql, t);
                current = Some(match current {
                    Some(r) => r.start..end,
                    None => start..end,
                });
            }
        }
    }
    out.extend(current);
    Ok(out)
}

fn token_range(sql: &str, t: &TokenWithSpan) -> (usize, usize) {
    let start = offset_of(sql, t.span.start.line, t.span.start.column);
    let end = offset_of(sql, t.span.end.line, t.span.end.column);
    (start, end.max(start))
}

/// Byte offset of a 1-based (line, column in characters) location.
fn offset_of(sql: &str, line: u64, column: u64) -> usize {
    let mut offset = 0;
    for _ in 1..line.max(1) {
        match sql[offset..].find('\n') {
            Some(i) => offset += i + 1,
            None => return sql.len(),
        }
    }
    let rest = &sql[offset..];
    offset
        + rest
            .char_indices()
            .nth(column.saturating_sub(1) as usize)
            .map_or(rest.len(), |(i, _)| i)
}

/// Checks every statement of `sql` for `role`; `Ok` with the statement
/// count. No statement at all is refused too: there would be nothing to time.
pub fn check(sql: &str, dialect: SqlDialect, role: SqlRole) -> Result<usize, Refusal> {
    let ranges = split(sql, dialect)?;
    if ranges.is_empty() {
        return Err(Refusal {
            offset: 0,
            message: "holds no SQL statement".into(),
        });
    }
    let d = dialect.dialect();
    for r in &ranges {
        let text = &sql[r.clone()];
        let refuse = |message: String| Refusal {
            offset: r.start,
            message,
        };
        match Parser::parse_sql(d.as_ref(), text) {
            Ok(parsed) => {
                for stmt in &parsed {
                    let verdict = match role {
                        SqlRole::Run => check_run(stmt),
                        SqlRole::Setup => check_setup(stmt, dialect),
                    };
                    verdict.map_err(refuse)?;
                }
            }
            Err(e) => match role {
                SqlRole::Run => check_keywords(text, d.as_ref()).map_err(refuse)?,
                SqlRole::Setup => {
                    return Err(refuse(format!(
                        "sqlparser cannot parse this setup statement ({e}), so runner cannot check that it writes only the strategy's own schema; setup is committed, so it must be checked"
                    )))
                }
            },
        }
    }
    Ok(ranges.len())
}

fn first_words(stmt: &Statement) -> String {
    let text = stmt.to_string();
    let words: Vec<&str> = text.split_whitespace().take(2).collect();
    words.join(" ")
}

const TX_CONTROL: &str = "is transaction control; runner wraps every measured run in BEGIN ... ROLLBACK itself, and a statement that ends or splits that transaction could make a write last";

/// Measured SQL: anything that survives inside one transaction.
fn check_run(stmt: &Statement) -> Result<(), String> {
    let what = match stmt {
        Statement::StartTransaction { .. }
        | Statement::Commit { .. }
        | Statement::Rollback { .. }
        | Statement::Savepoint { .. }
        | Statement::ReleaseSavepoint { .. }
        | Statement::Set(Set::SetTransaction { .. }) => {
            return Err(format!("{} {TX_CONTROL}", first_words(stmt)))
        }
        Statement::Vacuum(_) => "VACUUM cannot run inside a transaction",
        Statement::AttachDatabase { .. }
        | Statement::AttachDuckDBDatabase { .. }
        | Statement::DetachDuckDBDatabase { .. } => {
            "ATTACH/DETACH changes which databases the connection writes, outside the transaction"
        }
        Statement::Pragma { .. } => "PRAGMA settings are not undone by ROLLBACK",
        Statement::CreateDatabase { .. } => "CREATE DATABASE cannot run inside a transaction",
        Statement::Discard { .. } => "DISCARD cannot run inside a transaction",
        _ => return Ok(()),
    };
    Err(format!(
        "{what}; measured SQL runs inside BEGIN ... ROLLBACK"
    ))
}

/// What a statement sqlparser could not parse starts with; enough to find
/// transaction control, which is always a leading keyword.
fn check_keywords(text: &str, d: &dyn Dialect) -> Result<(), String> {
    let tokens = Tokenizer::new(d, text).tokenize().unwrap_or_default();
    let words: Vec<String> = tokens
        .iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .take(2)
        .map(|t| match t {
            Token::Word(w) if w.quote_style.is_none() => w.value.to_uppercase(),
            _ => String::new(),
        })
        .collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let refused = match words.as_slice() {
        ["BEGIN" | "START" | "COMMIT" | "END" | "ROLLBACK" | "ABORT" | "SAVEPOINT" | "RELEASE", ..] => true,
        ["PREPARE", "TRANSACTION"] | ["SET", "TRANSACTION"] => true,
        ["VACUUM" | "ATTACH" | "DETACH" | "PRAGMA" | "CHECKPOINT" | "DISCARD", ..] => {
            return Err(format!(
                "{} cannot run inside, or would reach outside, the BEGIN ... ROLLBACK that runner wraps every measured run in",
                words[0]
            ))
        }
        _ => false,
    };
    if refused {
        Err(format!("{} {TX_CONTROL}", words.join(" ")))
    } else {
        Ok(())
    }
}

fn qualified(name: &ObjectName) -> bool {
    name.0.len() > 1
}

fn everything(what: &str) -> String {
    format!("{what} without a table name works on every table of the database, the user's included; name the strategy's own tables (e.g. {what} t)")
}

/// Setup SQL: statements whose writes stay in the strategy's own schema.
fn check_setup(stmt: &Statement, dialect: SqlDialect) -> Result<(), String> {
    let targets: Vec<&ObjectName> = match stmt {
        Statement::StartTransaction { .. }
        | Statement::Commit { .. }
        | Statement::Rollback { .. }
        | Statement::Savepoint { .. }
        | Statement::ReleaseSavepoint { .. }
        | Statement::Set(Set::SetTransaction { .. }) => {
            return Err(format!(
                "{} is transaction control; runner commits setup itself, statement by statement",
                first_words(stmt)
            ))
        }
        Statement::Set(Set::SingleAssignment { variable, .. })
            if variable.to_string().eq_ignore_ascii_case("search_path") =>
        {
            return Err("SET search_path in setup would send unqualified writes outside the strategy's own schema".into())
        }
        Statement::Query(_) | Statement::Set(_) | Statement::Pragma { .. } => Vec::new(),
        // Without a table, PostgreSQL's ANALYZE and VACUUM reach every table
        // of the database, the user's included.
        Statement::Vacuum(v) if dialect == SqlDialect::Postgres => match &v.table_name {
            Some(t) => vec![t],
            None => return Err(everything("VACUUM")),
        },
        Statement::Analyze(a) => match (&a.table_name, dialect) {
            (Some(t), _) => vec![t],
            (None, SqlDialect::Sqlite) => Vec::new(),
            (None, SqlDialect::Postgres) => return Err(everything("ANALYZE")),
        },
        Statement::Insert(i) => match &i.table {
            TableObject::TableName(n) => vec![n],
            _ => return Err("INSERT into something other than a table is not accepted in setup".into()),
        },
        Statement::Update(u) => match &u.table.relation {
            TableFactor::Table { name, .. } => vec![name],
            _ => return Err("UPDATE of something other than a table is not accepted in setup".into()),
        },
        Statement::Delete(d) => {
            let from = match &d.from {
                FromTable::WithFromKeyword(t) | FromTable::WithoutKeyword(t) => t,
            };
            let mut names: Vec<&ObjectName> = d.tables.iter().collect();
            for t in from {
                if let TableFactor::Table { name, .. } = &t.relation {
                    names.push(name);
                }
            }
            names
        }
        Statement::CreateTable(c) => vec![&c.name],
        Statement::CreateView(v) => vec![&v.name],
        Statement::CreateIndex(i) => i.name.iter().chain([&i.table_name]).collect(),
        Statement::CreateSequence { name, .. } => vec![name],
        Statement::AlterTable(a) => vec![&a.name],
        Statement::Drop { names, .. } => names.iter().collect(),
        Statement::Truncate(t) => t.table_names.iter().map(|t| &t.name).collect(),
        _ => {
            return Err(format!(
                "{} is not accepted in setup: setup is committed, so runner accepts only statements whose effect it can keep in the strategy's own schema (CREATE TABLE/VIEW/INDEX/SEQUENCE, INSERT, UPDATE, DELETE, TRUNCATE, ALTER TABLE, DROP, ANALYZE, VACUUM, SET and queries)",
                first_words(stmt)
            ))
        }
    };
    match targets.into_iter().find(|n| qualified(n)) {
        Some(n) => Err(format!(
            "setup writes `{n}`, a name qualified with a schema or database; setup is committed, so it may only write unqualified names, which land in the strategy's own schema (read other schemas freely)"
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PG: SqlDialect = SqlDialect::Postgres;
    const LITE: SqlDialect = SqlDialect::Sqlite;

    fn pieces(sql: &str, d: SqlDialect) -> Vec<&str> {
        split(sql, d)
            .unwrap()
            .into_iter()
            .map(|r| &sql[r])
            .collect()
    }

    #[test]
    fn splits_on_semicolons_outside_strings_comments_and_dollar_quotes() {
        let sql = "SELECT ';' AS a; -- c;\n/* x; */ SELECT 2 ;; DO $$ BEGIN PERFORM 1; END $$";
        assert_eq!(
            pieces(sql, PG),
            [
                "SELECT ';' AS a",
                "SELECT 2",
                "DO $$ BEGIN PERFORM 1; END $$"
            ]
        );
        assert_eq!(pieces("SELECT 1", LITE), ["SELECT 1"]);
        assert!(pieces("  -- only a comment\n", LITE).is_empty());
        assert_eq!(
            pieces("SELECT 'é';\nSELECT 2", LITE),
            ["SELECT 'é'", "SELECT 2"]
        );
    }

    #[test]
    fn refuses_transaction_control_in_measured_sql() {
        // (SQL, what the message names, where the refused statement starts)
        for (sql, word, start) in [
            ("SELECT 1; COMMIT", "COMMIT", 10),
            ("UPDATE t SET a = 1;\nEND", "END", 20),
            ("BEGIN; SELECT 1", "BEGIN", 0),
            ("START TRANSACTION", "START", 0),
            ("SELECT 1;\n  ROLLBACK", "ROLLBACK", 12),
            ("SAVEPOINT s", "SAVEPOINT", 0),
            ("RELEASE SAVEPOINT s", "RELEASE", 0),
            (
                "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
                "SET TRANSACTION",
                0,
            ),
            ("abort", "ROLLBACK", 0),
            ("VACUUM", "VACUUM", 0),
        ] {
            let e = check(sql, PG, SqlRole::Run).unwrap_err();
            assert!(e.message.contains(word), "{sql}: {}", e.message);
            assert_eq!(e.offset, start, "{sql}");
        }
        assert!(check("ATTACH 'x.db' AS x", LITE, SqlRole::Run).is_err());
        assert!(check("PRAGMA journal_mode = wal", LITE, SqlRole::Run).is_err());
        assert!(check("", LITE, SqlRole::Run)
            .unwrap_err()
            .message
            .contains("no SQL statement"));
    }

    #[test]
    fn accepts_ordinary_measured_sql_including_writes() {
        let sql = "UPDATE public.orders SET qty = qty + 1 WHERE id = 5;\n\
                   SELECT count(*) FROM orders o WHERE EXISTS (SELECT 1 FROM items i WHERE i.o = o.id);\n\
                   INSERT INTO other.t VALUES (1)";
        assert_eq!(check(sql, PG, SqlRole::Run), Ok(3));
        assert_eq!(check(sql, LITE, SqlRole::Run), Ok(3));
        // Not parsed by sqlparser, not transaction control: accepted.
        assert_eq!(
            check("SELECT 1 FROM t TABLESAMPLE WEIRD", PG, SqlRole::Run),
            Ok(1)
        );
    }

    #[test]
    fn setup_may_only_write_unqualified_names() {
        let ok = "CREATE TABLE t (id int); INSERT INTO t SELECT id FROM public.src;\n\
                  CREATE INDEX t_id ON t (id); ANALYZE t; UPDATE t SET id = id; DELETE FROM t WHERE id < 0";
        assert_eq!(check(ok, PG, SqlRole::Setup), Ok(6));
        for bad in [
            "INSERT INTO public.t VALUES (1)",
            "CREATE TABLE public.t (id int)",
            "UPDATE s.t SET a = 1",
            "DELETE FROM s.t",
            "DROP TABLE public.t",
            "TRUNCATE public.t",
        ] {
            let e = check(bad, PG, SqlRole::Setup).unwrap_err();
            assert!(e.message.contains("qualified"), "{bad}: {}", e.message);
        }
        assert_eq!(check("ANALYZE", LITE, SqlRole::Setup), Ok(1));
        for bad in [
            "ANALYZE",
            "VACUUM",
            "COMMIT",
            "SET search_path TO public",
            "CREATE SCHEMA s",
            "GRANT SELECT ON t TO x",
        ] {
            assert!(check(bad, PG, SqlRole::Setup).is_err(), "{bad}");
        }
        assert!(check("ATTACH 'x.db' AS x", LITE, SqlRole::Setup).is_err());
    }
}
