//! Before anything of the user's SQL runs (`check`'s trials, exec's
//! estimate and forks): what the database's catalog says about the
//! experiment's SQL. On PostgreSQL, `pg::preflight` asks the server; on a
//! SQLite file, the private copies' tables are looked up in it.

use crate::{DbError, DbTarget};
use std::collections::BTreeSet;

/// One arm's SQL as a cell runs it (placeholders filled).
#[derive(Debug, Clone)]
pub struct ArmSql {
    pub strategy: String,
    /// Its `setup` and `run` texts.
    pub texts: Vec<String>,
    pub search_path: Vec<String>,
}

/// What the catalog said, for the guard.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Findings {
    /// Relations the experiment names (guard keys: `schema.name` as
    /// `quote_ident` writes them), with the sequences their columns own
    /// and the tables owning a named sequence.
    pub named: BTreeSet<String>,
    /// The private copies, resolved, in the guard's spelling.
    pub copies: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    /// The experiment cannot run as written: exit 2.
    #[error("{0}")]
    Refused(String),
    /// The database file the experiment names cannot be read: the run
    /// fails (exit 1).
    #[error("cannot open database.sqlite_file {file}: {message}")]
    Unreadable { file: String, message: String },
    #[error(transparent)]
    Db(#[from] DbError),
}

/// Where a permission error sends the user.
pub const PRIVILEGES_DOC: &str = "docs/guide/own-code.md, \"Privileges\"";

/// The catalog's findings for a PostgreSQL run whose arms run SQL (or
/// that names private copies); `None` elsewhere. On SQLite the private
/// copies' tables are looked up in `database.sqlite_file`.
#[cfg_attr(not(feature = "postgres"), allow(unused_variables))]
pub fn check(
    target: &DbTarget,
    arms: &[ArmSql],
    private_copies: &[String],
) -> Result<Option<Findings>, PreflightError> {
    match target {
        #[cfg(feature = "postgres")]
        DbTarget::Postgres { url, .. } if !arms.is_empty() || !private_copies.is_empty() => {
            crate::pg::preflight::check(url, arms, private_copies).map(Some)
        }
        #[cfg(feature = "sqlite")]
        DbTarget::SqliteFile { file } if !private_copies.is_empty() => {
            crate::sqlite::tables_exist(file, private_copies).map(|()| None)
        }
        DbTarget::Sqlite if !private_copies.is_empty() => Err(PreflightError::Refused(format!(
            "[database] private_copies names {}, but this run's SQLite database starts empty (no database.sqlite_file), so there is no table to copy; set database.sqlite_file, or remove private_copies",
            private_copies.join(", ")
        ))),
        _ => Ok(None),
    }
}
