//! Before anything of the user's SQL runs (`check`'s trials, exec's
//! estimate and forks): what the database's catalog says about the
//! experiment's SQL: what is asked and what is answered. On PostgreSQL,
//! `pg::preflight` asks the server; on a SQLite file, the private copies'
//! tables are looked up in it (`open::preflight` chooses).

use crate::DbError;
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
    /// What the experiment names or copies, as the guard's keys
    /// (`fingerprint::Blame::named`): relations (`schema.name` as
    /// `quote_ident` writes them) with the sequences their columns own,
    /// `schema S`, `function schema.name`, `large objects`.
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

impl runner_core::error::Coded for PreflightError {
    /// The database's answer decides: SQL it refuses is the experiment's
    /// to fix (exit 2); a file or server that cannot be read is the run
    /// failing before its first fork (exit 1).
    fn failure(&self) -> runner_core::error::Failure {
        use runner_core::error::Failure;
        match self {
            PreflightError::Refused(_) => Failure::BadInput,
            PreflightError::Unreadable { .. } | PreflightError::Db(_) => Failure::RunFailed,
        }
    }
}

/// Where a permission error sends the user.
pub const PRIVILEGES_DOC: &str = "docs/guide/own-code.md, \"Privileges\"";
