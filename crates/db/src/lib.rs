//! Databases for the `tx-rollback` and `sql` strategies: which one a run
//! uses, the table the preview works on, the sessions the user's SQL runs
//! in ([`session`]), and what the report says about it.
//!
//! Both backends hold one table per strategy instance, `model_field(name
//! text primary key, field_value double precision)` (on PostgreSQL
//! `model_field_<backend pid>` in the run schema), seeded from
//! [`Model::fields`]. A fork
//! proves that its previews leaked no write by comparing [`hash_rows`] of the
//! table right after seeding and after the fork: the hash is computed in Rust
//! over rows sorted by name bytes, so it is the same function on both
//! backends and does not depend on a server's collation.

pub mod cancel;
pub mod clients;
pub mod config;
pub mod guard;
pub mod locks;
pub mod names;
mod pg_copies;
mod pg_session;
pub mod pg_shared;
pub mod plans;
pub mod postgres;
pub mod preflight;
mod refused;
pub mod session;
pub mod sqlite;
mod sqlite_session;
pub mod statements;
pub mod waits;

pub use config::{Backend, DatabaseConfig, SqlOptions};
use runner_core::preview::Model;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;

/// The environment variable that names a PostgreSQL server; it wins over
/// `database.url` so CI can point any spec at its own server.
pub const URL_ENV: &str = "RUNNER_DATABASE_URL";

/// Where a fork's database strategies work, resolved once by the parent and
/// handed to each worker in its job.
///
/// `Debug` and `Display` never show the URL, because it may hold a password.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "backend", rename_all = "lowercase")]
pub enum DbTarget {
    /// A private in-memory SQLite database per strategy instance.
    Sqlite,
    /// The same, loaded with a copy of this file (`database.sqlite_file`)
    /// by `sql` strategies; the file itself is opened read-only.
    SqliteFile { file: String },
    /// A schema `runner_<run id>` on a server, created by the parent with
    /// [`postgres::create_run_schema`] and dropped with [`postgres::drop_run_schema`].
    Postgres { url: String, schema: String },
}

impl DbTarget {
    pub fn backend_label(&self) -> &'static str {
        match self {
            DbTarget::Sqlite | DbTarget::SqliteFile { .. } => "sqlite",
            DbTarget::Postgres { .. } => "postgres",
        }
    }
}

impl fmt::Display for DbTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbTarget::Sqlite => f.write_str("sqlite (in-memory)"),
            DbTarget::SqliteFile { file } => write!(f, "sqlite (in-memory copy of {file})"),
            DbTarget::Postgres { url, schema } => match postgres::Endpoint::parse(url) {
                Ok(e) => write!(f, "postgres {e} schema {schema}"),
                Err(_) => write!(f, "postgres (unparsable URL) schema {schema}"),
            },
        }
    }
}

impl fmt::Debug for DbTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DbTarget({self})")
    }
}

/// What can go wrong with a database; each variant reads as one sentence.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("cannot connect to PostgreSQL at {host}:{port} database \"{database}\": {message}")]
    Connect {
        host: String,
        port: u16,
        database: String,
        message: String,
    },
    #[error("invalid PostgreSQL URL: {0}")]
    BadUrl(String),
    #[error(
        "invalid run id {0:?}: use 1 to 50 characters from a-z, 0-9 and _ (it names schema runner_<id>)"
    )]
    BadRunId(String),
    #[error(
        "schema \"{0}\" already exists; runner only works in a schema it created, so it leaves it alone (drop it yourself if an interrupted run left it behind)"
    )]
    SchemaExists(String),
    #[error(
        "schema \"{0}\" was not created by runner for this run (missing or without runner's marker), so runner will not touch it"
    )]
    NotOurSchema(String),
    #[error("PostgreSQL {context}: {message}")]
    Postgres {
        context: &'static str,
        message: String,
    },
    #[error("SQLite {context}: {source}")]
    Sqlite {
        context: &'static str,
        #[source]
        source: rusqlite::Error,
    },
    /// A measured statement the database refused: `code` is its SQLSTATE
    /// (PostgreSQL) or `SQLITE_` and its extended result code (SQLite), what
    /// an arm with `allow_failure = true` counts.
    #[error("{backend} measured SQL: {message} ({})", code_label(code))]
    Statement {
        backend: &'static str,
        code: String,
        message: String,
    },
    #[error("setup of an arm with clients > 1 is committed in the arm's own schema so that its clients share it, and this one reached outside it ({0}); runner rolled it back: create what the clients share in the arm's schema (unqualified names), or list the table in [database] private_copies and change the copy")]
    SetupOutside(String),
    /// A feature the backend does not have; the sentence says what to do.
    #[error("{0}")]
    Unsupported(&'static str),
    #[error("the model read back from table model_field is wrong: {0}")]
    Model(String),
    #[error("the transaction runner opened for the fork was no longer open after {0}: the SQL ended it (runner refuses transaction control, and a COMMIT of it fails by construction, so its writes were rolled back; check the SQL for a statement that ends a transaction)")]
    TransactionEnded(&'static str),
}

/// How a failure code reads in a sentence: `SQLSTATE 40P01`, or SQLite's
/// `SQLITE_1555` as it is.
pub fn code_label(code: &str) -> String {
    if code.starts_with("SQLITE_") {
        code.to_owned()
    } else {
        format!("SQLSTATE {code}")
    }
}

/// Picks the database for a run (docs/reference.md, `[database]`): `auto` takes
/// RUNNER_DATABASE_URL (when set and non-empty) or `database.url` and means
/// PostgreSQL, else SQLite. `None`: `postgres` was asked for without a URL.
pub fn resolve(config: &DatabaseConfig, run_id: &str) -> Result<Option<DbTarget>, DbError> {
    resolve_with(config, env_url().as_deref(), run_id)
}

/// RUNNER_DATABASE_URL when set and not blank. The one place that reads it,
/// so spec validation and the code that connects cannot disagree.
pub fn env_url() -> Option<String> {
    std::env::var(URL_ENV).ok().filter(|u| !u.trim().is_empty())
}

/// [`resolve`] with the environment passed in, so it can be tested.
pub fn resolve_with(
    config: &DatabaseConfig,
    env_url: Option<&str>,
    run_id: &str,
) -> Result<Option<DbTarget>, DbError> {
    let url = env_url
        .filter(|u| !u.trim().is_empty())
        .or(config.url.as_deref().filter(|u| !u.trim().is_empty()));
    let postgres = |url: &str| -> Result<Option<DbTarget>, DbError> {
        // Refused before it is used or shown anywhere (`redact::credentials`).
        runner_core::redact::credentials(url).map_err(|e| DbError::BadUrl(e.to_string()))?;
        Ok(Some(DbTarget::Postgres {
            url: url.to_owned(),
            schema: schema_name(run_id)?,
        }))
    };
    match (config.backend, url) {
        (Backend::Sqlite, _) => Ok(Some(match &config.sqlite_file {
            Some(file) => DbTarget::SqliteFile { file: file.clone() },
            None => DbTarget::Sqlite,
        })),
        (Backend::Auto, None) => Ok(Some(DbTarget::Sqlite)),
        (Backend::Auto | Backend::Postgres, Some(url)) => postgres(url),
        (Backend::Postgres, None) => Ok(None),
    }
}

/// `runner_<run id>`; the id is restricted so the name never needs quoting
/// and stays within PostgreSQL's 63-byte identifier limit.
pub fn schema_name(run_id: &str) -> Result<String, DbError> {
    let ok = !run_id.is_empty()
        && run_id.len() <= 50
        && run_id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if ok {
        Ok(format!("runner_{run_id}"))
    } else {
        Err(DbError::BadRunId(run_id.to_owned()))
    }
}

/// Hex SHA-256 over rows sorted by name bytes, each row hashed as name bytes,
/// one 0 byte, and the value's f64 bits little-endian: bit-exact, so a leaked
/// write of even one ulp changes it.
pub fn hash_rows(mut rows: Vec<(String, f64)>) -> String {
    rows.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut h = Sha256::new();
    for (name, value) in &rows {
        h.update(name.as_bytes());
        h.update([0u8]);
        h.update(value.to_bits().to_le_bytes());
    }
    runner_core::hex::hex(&h.finalize())
}

/// The steps of one preview on a seeded `model_field` table. The override
/// field names are bound when the table is opened (they depend only on the
/// model size), so a preview passes values alone.
pub trait ModelTable {
    fn begin(&mut self) -> Result<(), DbError>;
    /// Writes `values` for [`runner_core::preview::Overrides::field_names`], in that order.
    fn write_overrides(&mut self, values: &[f64]) -> Result<(), DbError>;
    /// Reads every row into `model`; any row order gives the same model.
    fn read_into(&mut self, model: &mut Model) -> Result<(), DbError>;
    fn rollback(&mut self) -> Result<(), DbError>;
    /// [`hash_rows`] of the table as committed (outside any preview).
    fn content_hash(&mut self) -> Result<String, DbError>;
    /// The pid of a database server process serving this table's
    /// connection; none for an embedded database.
    fn backend_pid(&mut self) -> Result<Option<u32>, DbError> {
        Ok(None)
    }
    /// Once, after the fork's last read: removes the table where it outlives
    /// the connection (a server's); an in-memory one goes with it.
    fn close(&mut self) -> Result<(), DbError> {
        Ok(())
    }
}

/// Creates, seeds and prepares the table for one strategy instance.
/// `premade`: a table the exec parent made and seeded in the run schema
/// (PostgreSQL only; see [`postgres::job_table`]).
pub fn open_table(
    target: &DbTarget,
    model: &Model,
    premade: Option<&str>,
) -> Result<Box<dyn ModelTable>, DbError> {
    Ok(match target {
        DbTarget::Sqlite | DbTarget::SqliteFile { .. } => {
            Box::new(sqlite::SqliteTable::open(model)?)
        }
        DbTarget::Postgres { url, schema } => {
            Box::new(postgres::PgTable::open(url, schema, model, premade)?)
        }
    })
}

/// Checks a full read-back: with `name` the primary key, a row count equal
/// to the model's field count means every field was set exactly once, so
/// nothing stale survives from the previous preview.
pub(crate) fn check_row_count(model: &Model, rows: usize) -> Result<(), DbError> {
    if rows == model.field_count() {
        Ok(())
    } else {
        Err(DbError::Model(format!(
            "expected {} rows, got {rows}",
            model.field_count()
        )))
    }
}

/// Database facts a report states (docs/guide/output-folder.md, run.json environment).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DbInfo {
    /// `sqlite` or `postgres`.
    pub backend: String,
    /// `sqlite_version()` or the server's `SELECT version()`.
    pub version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postgres: Option<postgres::PgInfo>,
}

/// Connects (for PostgreSQL) and reads the facts; no table is touched.
pub fn db_info(target: &DbTarget) -> Result<DbInfo, DbError> {
    match target {
        DbTarget::Sqlite | DbTarget::SqliteFile { .. } => sqlite::db_info(),
        DbTarget::Postgres { url, .. } => postgres::db_info(url),
    }
}

#[cfg(test)]
mod tests;
