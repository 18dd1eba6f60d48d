//! Databases for the `tx-rollback` and `sql` strategies: which one a run
//! uses ([`target`]), the table the preview works on ([`model`]), the
//! sessions the user's SQL runs in ([`session`]), the checks of that SQL
//! ([`statements`], [`names`]), and what the report says about it
//! ([`info`], [`fingerprint`], [`plans`], [`waits`]).
//!
//! Each backend is a feature: `sqlite` ([`sqlite`], bundled) and
//! `postgres` ([`pg`]). [`open`] is the one place that chooses between
//! them; what a run folder records reads whichever features are built.

pub mod clients;
pub mod config;
pub mod error;
pub mod fingerprint;
pub mod info;
pub mod model;
pub mod names;
pub mod open;
pub mod owner;
#[cfg(feature = "postgres")]
pub mod pg;
pub mod plans;
pub mod preflight;
mod refused;
pub mod session;
#[cfg(feature = "sqlite")]
pub mod sqlite;
pub mod statements;
pub mod target;
pub mod waits;

pub use config::{Backend, DatabaseConfig, SqlOptions};
pub use error::{code_label, DbError};
pub use info::{DbInfo, PgInfo};
pub use model::{hash_rows, ModelTable};
pub use target::{resolve_with, schema_name, server, url_problem, DbTarget};

/// A backend this runner can be built with or without (its cargo feature).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    Sqlite,
    Postgres,
}

impl Feature {
    /// The feature a target needs.
    pub fn of(target: &DbTarget) -> Feature {
        match target {
            DbTarget::Sqlite | DbTarget::SqliteFile { .. } => Feature::Sqlite,
            DbTarget::Postgres { .. } => Feature::Postgres,
        }
    }

    /// The database, as a sentence names it.
    pub fn database(self) -> &'static str {
        match self {
            Feature::Sqlite => "SQLite",
            Feature::Postgres => "PostgreSQL",
        }
    }

    /// The cargo feature's name, as `--features` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Feature::Sqlite => "sqlite",
            Feature::Postgres => "postgres",
        }
    }

    /// Whether this build has it.
    pub fn built(self) -> bool {
        match self {
            Feature::Sqlite => cfg!(feature = "sqlite"),
            Feature::Postgres => cfg!(feature = "postgres"),
        }
    }
}

#[cfg(test)]
mod tests;
