//! Before anything of the user's runs (`check`'s trials, exec's estimate
//! and forks): the catalog's answers about the experiment's SQL
//! (`db::preflight`), as the command's errors. What cannot run as written
//! is bad input (exit 2); a server that cannot answer fails the run
//! (exit 1), pointing at the privileges guide when it says so.

use crate::db::preflight::{self, ArmSql, Findings, PreflightError, PRIVILEGES_DOC};
use crate::db::DbTarget;
use crate::error::{bad_input, run_failed, Result};
use crate::plan::{self, Cell};
use crate::spec::placeholder::Template;
use crate::spec::{Experiment, StrategyKind};

/// The SQL arms of `cells`, each distinct text once, placeholders filled
/// (`{input}` as 0).
pub fn arms(exp: &Experiment, cells: &[Cell]) -> Vec<ArmSql> {
    let mut out: Vec<ArmSql> = Vec::new();
    for cell in cells {
        let (b, t) = cell.arms(&exp.design);
        for name in [b, t] {
            let StrategyKind::Sql(spec) = plan::bind(exp, cell, name) else {
                continue;
            };
            let render = |text: &str| {
                Template::compile(text).map_or_else(|_| text.to_owned(), |t| t.render(0))
            };
            let mut texts: Vec<String> = spec.setup.iter().map(|s| render(&s.text)).collect();
            texts.push(render(&spec.run.text));
            let arm = ArmSql {
                strategy: name.to_string(),
                texts,
                search_path: spec.search_path.clone(),
            };
            let seen = out.iter().any(|a| {
                a.strategy == arm.strategy
                    && a.texts == arm.texts
                    && a.search_path == arm.search_path
            });
            if !seen {
                out.push(arm);
            }
        }
    }
    out
}

/// The catalog's findings for a PostgreSQL run whose arms run SQL; `None`
/// elsewhere. On SQLite the private copies' tables are looked up in
/// `database.sqlite_file`.
pub fn run(exp: &Experiment, cells: &[Cell], db: Option<&DbTarget>) -> Result<Option<Findings>> {
    let arms = arms(exp, cells);
    let copies = &exp.database.private_copies;
    match db {
        Some(DbTarget::Postgres { url, .. }) if !arms.is_empty() || !copies.is_empty() => {
            preflight::check(url, &arms, copies).map(Some).map_err(|e| match e {
                PreflightError::Refused(m) => bad_input(m),
                PreflightError::Db(e) => run_failed(with_privileges(format!(
                    "before anything ran, reading the database's catalog failed: {e}"
                ))),
            })
        }
        Some(DbTarget::SqliteFile { file }) if !copies.is_empty() => {
            sqlite_copies(file, copies)?;
            Ok(None)
        }
        Some(DbTarget::Sqlite) if !copies.is_empty() => Err(bad_input(format!(
            "[database] private_copies names {}, but this run's SQLite database starts empty (no database.sqlite_file), so there is no table to copy; set database.sqlite_file, or remove private_copies",
            copies.join(", ")
        ))),
        _ => Ok(None),
    }
}

/// A message with the privileges guide added when the server refused
/// for want of one.
pub fn with_privileges(message: String) -> String {
    if message.contains("permission denied") || message.contains("must be owner") {
        format!("{message}\nthe privileges each feature needs are in {PRIVILEGES_DOC}")
    } else {
        message
    }
}

/// Every table `private_copies` names is in the SQLite file (each arm
/// works in an in-memory copy of the whole file, so each already is a
/// private copy).
fn sqlite_copies(file: &str, copies: &[String]) -> Result<()> {
    let flags =
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = rusqlite::Connection::open_with_flags(file, flags)
        .map_err(|e| run_failed(format!("cannot open database.sqlite_file {file}: {e}")))?;
    for given in copies {
        let name = crate::db::names::parse_name(given).ok_or_else(|| {
            bad_input(format!(
                "[database] private_copies: {given:?} is not a table name"
            ))
        })?;
        let schema = name.schema.as_deref().unwrap_or("main");
        let found: i64 = conn
            .query_row(
                &format!(
                    "SELECT count(*) FROM \"{}\".sqlite_master WHERE type = 'table' AND lower(name) = lower(?1)",
                    schema.replace('"', "\"\"")
                ),
                [&name.name],
                |r| r.get(0),
            )
            .unwrap_or(0);
        if found == 0 {
            return Err(bad_input(format!(
                "[database] private_copies names {given:?}, but {file} has no such table"
            )));
        }
    }
    Ok(())
}
