//! The user's SQL, read with a real parser (`sqlparser`): split into
//! statements, and checked before anything runs (docs/guide/own-code.md).
//!
//! Statements are separated by `;` tokens, so a semicolon inside a string,
//! a comment or a PostgreSQL dollar-quoted body does not split (a SQLite
//! trigger body with semicolons is not supported).
//!
//! What keeps the user's data safe is not this check but how the SQL runs:
//! on PostgreSQL, setup and every measured run of a fork live inside one
//! transaction that is never committed (runs under savepoints), and on
//! SQLite in a private in-memory database that cannot attach another
//! (see `pg::session` and `sqlite::session`). This check refuses, before
//! anything runs, the two kinds of statement that construction cannot
//! hold: transaction control (it would end runner's transaction), what
//! PostgreSQL does not roll back ([`lasting`]: sequences, COPY to or
//! from files and programs, large objects, advisory locks, LISTEN/NOTIFY,
//! server administration, dblink), and a change of `search_path`
//! (`search_path`: it could point a name at the user's table instead of
//! the arm's private copy). What hides such a call from a parser
//! (a function body, `DO`, dynamic SQL) is caught after the fork by the
//! fingerprint of everything outside runner's schemas (`fingerprint`).

use sqlparser::ast::{CopyTarget, Expr, ObjectName, Set, Statement, TableFactor, Visit, Visitor};
use sqlparser::dialect::{Dialect, PostgreSqlDialect, SQLiteDialect};
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};
use std::ops::{ControlFlow, Range};

use super::refused::Refused;

mod places;
mod search_path;

pub use places::{places, unpreparable, Place};

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

/// Measured (under a savepoint) or setup (once per fork); neither is ever
/// committed, and both are held to the same rules.
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

pub(crate) fn token_range(sql: &str, t: &TokenWithSpan) -> (usize, usize) {
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
        let refuse = |reason: Refused| Refusal {
            offset: r.start,
            message: reason.to_string(),
        };
        if dialect == SqlDialect::Postgres {
            if let Some(words) = search_path::find(text, dialect) {
                return Err(refuse(Refused::SearchPath { words }));
            }
        }
        match Parser::parse_sql(d.as_ref(), text) {
            Ok(parsed) => {
                for stmt in &parsed {
                    check_run(stmt, dialect, role).map_err(refuse)?;
                    if dialect == SqlDialect::Postgres {
                        lasting(stmt).map_err(refuse)?;
                    }
                }
            }
            // A statement sqlparser cannot read may still run; transaction
            // control is always its leading keywords, and what else it does
            // is covered by the transaction and the fingerprint.
            Err(_) => check_keywords(text, d.as_ref(), dialect, role).map_err(refuse)?,
        }
    }
    Ok(ranges.len())
}

/// Whether EXPLAIN takes the statement: a query or a write (INSERT,
/// UPDATE, DELETE, MERGE), or the EXECUTE of a prepared one; not DDL, SET
/// or `DO`.
pub fn explainable(sql: &str, dialect: SqlDialect) -> bool {
    let d = dialect.dialect();
    match Parser::parse_sql(d.as_ref(), sql) {
        Ok(parsed) => {
            parsed.len() == 1
                && matches!(
                    parsed[0],
                    Statement::Query(_)
                        | Statement::Insert(_)
                        | Statement::Update { .. }
                        | Statement::Delete(_)
                        | Statement::Merge { .. }
                        | Statement::Execute { .. }
                )
        }
        Err(_) => false,
    }
}

/// Whether PostgreSQL's `PREPARE` takes the statement: what EXPLAIN takes
/// but an EXECUTE.
pub fn preparable(sql: &str, dialect: SqlDialect) -> bool {
    let d = dialect.dialect();
    explainable(sql, dialect)
        && !matches!(
            Parser::parse_sql(d.as_ref(), sql).as_deref(),
            Ok([Statement::Execute { .. }])
        )
}

fn first_words(stmt: &Statement) -> String {
    let text = stmt.to_string();
    let words: Vec<&str> = text.split_whitespace().take(2).collect();
    words.join(" ")
}

/// Setup and measured SQL: anything that stays inside one transaction.
/// SQLite's setup may set PRAGMAs (its database is private and in memory).
fn check_run(stmt: &Statement, dialect: SqlDialect, role: SqlRole) -> Result<(), Refused> {
    let what = match stmt {
        Statement::StartTransaction { .. }
        | Statement::Commit { .. }
        | Statement::Rollback { .. }
        | Statement::Savepoint { .. }
        | Statement::ReleaseSavepoint { .. }
        | Statement::Set(Set::SetTransaction { .. }) => {
            return Err(Refused::TxControl {
                words: first_words(stmt),
            })
        }
        Statement::Vacuum(_) => {
            "VACUUM cannot run inside a transaction (and SQLite's VACUUM INTO writes a file)"
        }
        Statement::AttachDatabase { .. }
        | Statement::AttachDuckDBDatabase { .. }
        | Statement::DetachDuckDBDatabase { .. } => {
            "ATTACH/DETACH changes which databases the connection writes, outside the transaction"
        }
        Statement::Pragma { .. } if role == SqlRole::Setup && dialect == SqlDialect::Sqlite => {
            return Ok(())
        }
        Statement::Pragma { .. } => "PRAGMA settings are not undone by ROLLBACK",
        Statement::CreateDatabase { .. } => "CREATE DATABASE cannot run inside a transaction",
        Statement::Discard { .. } => "DISCARD cannot run inside a transaction",
        _ => return Ok(()),
    };
    Err(Refused::OutsideTransaction { why: what })
}

/// Why PostgreSQL would keep the effect of `stmt` after ROLLBACK, if it
/// would: the statements and functions that act outside the transaction.
/// Listed by what they do, not by how they could be hidden: a call inside
/// a function body or `DO` is caught afterwards by the fingerprint.
fn lasting(stmt: &Statement) -> Result<(), Refused> {
    match stmt {
        Statement::Copy { target, .. } => match target {
            CopyTarget::File { filename } => {
                return Err(Refused::ServerFile {
                    filename: filename.clone(),
                })
            }
            CopyTarget::Program { .. } => return Err(Refused::Program),
            CopyTarget::Stdin | CopyTarget::Stdout => {}
        },
        Statement::LISTEN { .. } | Statement::UNLISTEN { .. } | Statement::NOTIFY { .. } => {
            return Err(Refused::OtherSessions {
                words: first_words(stmt),
            })
        }
        Statement::Load { .. } => return Err(Refused::Load),
        _ => {}
    }
    let mut calls = Calls;
    if let ControlFlow::Break(name) = stmt.visit(&mut calls) {
        return Err(Refused::LastingCall {
            effect: lasting_function(&name).unwrap_or("an effect outside the transaction"),
            name,
        });
    }
    Ok(())
}

/// What a PostgreSQL function does that outlives a rolled-back
/// transaction, if it does (names compared in lower case).
pub fn lasting_function(name: &str) -> Option<&'static str> {
    let n = name.to_ascii_lowercase();
    let n = n.as_str();
    Some(match n {
        "nextval" | "setval" => "which moves a sequence",
        "pg_notify" => "which notifies other sessions",
        "pg_terminate_backend" | "pg_cancel_backend" => "which stops another session",
        "pg_reload_conf"
        | "pg_rotate_logfile"
        | "pg_switch_wal"
        | "pg_create_restore_point"
        | "pg_promote"
        | "pg_wal_replay_pause"
        | "pg_wal_replay_resume"
        | "pg_logical_emit_message"
        | "pg_log_backend_memory_contexts" => "which acts on the server itself",
        _ if n.starts_with("lo_") || matches!(n, "lowrite" | "loread") => {
            "which works on large objects or server files"
        }
        _ if n.starts_with("pg_advisory") || n.starts_with("pg_try_advisory") => {
            "which takes an advisory lock other sessions wait on"
        }
        _ if n.starts_with("dblink") => "which opens another connection that commits on its own",
        _ if n.starts_with("pg_stat_reset") || n.starts_with("pg_stat_statements_reset") => {
            "which resets the server's statistics"
        }
        _ if n.starts_with("pg_file_") => "which writes server files",
        _ if n.contains("replication_slot") || n.starts_with("pg_replication_origin") => {
            "which changes replication state"
        }
        _ => return None,
    })
}

/// Finds the first call (in an expression or a FROM clause) of a function
/// in [`lasting_function`]'s list.
struct Calls;

impl Calls {
    fn check(name: &ObjectName) -> ControlFlow<String> {
        let last = name
            .0
            .last()
            .and_then(|p| p.as_ident())
            .map(|i| i.value.clone());
        match last {
            Some(n) if lasting_function(&n).is_some() => ControlFlow::Break(n.to_ascii_lowercase()),
            _ => ControlFlow::Continue(()),
        }
    }
}

impl Visitor for Calls {
    type Break = String;

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<String> {
        match expr {
            Expr::Function(f) => Self::check(&f.name),
            _ => ControlFlow::Continue(()),
        }
    }

    fn pre_visit_table_factor(&mut self, t: &TableFactor) -> ControlFlow<String> {
        match t {
            TableFactor::Table {
                name,
                args: Some(_),
                ..
            }
            | TableFactor::Function { name, .. } => Self::check(name),
            _ => ControlFlow::Continue(()),
        }
    }
}

/// What a statement sqlparser could not parse starts with; enough to find
/// transaction control, which is always a leading keyword.
fn check_keywords(
    text: &str,
    d: &dyn Dialect,
    dialect: SqlDialect,
    role: SqlRole,
) -> Result<(), Refused> {
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
        ["BEGIN" | "START" | "COMMIT" | "END" | "ROLLBACK" | "ABORT" | "SAVEPOINT" | "RELEASE", ..] => {
            true
        }
        ["PREPARE", "TRANSACTION"] | ["SET", "TRANSACTION"] => true,
        ["PRAGMA", ..] if role == SqlRole::Setup && dialect == SqlDialect::Sqlite => false,
        ["VACUUM" | "ATTACH" | "DETACH" | "PRAGMA" | "CHECKPOINT" | "DISCARD", ..] => {
            return Err(Refused::Keyword {
                keyword: words[0].into(),
            })
        }
        _ => false,
    };
    if refused {
        Err(Refused::TxControl {
            words: words.join(" "),
        })
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
