//! Which database a run works in, resolved once by the parent from
//! `[database]` and RUNNER_DATABASE_URL and handed to each worker.

use crate::config::{Backend, DatabaseConfig};
use crate::DbError;
use serde::{Deserialize, Serialize};
use std::fmt;

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
    /// `pg::schema::create_run_schema` and dropped with `drop_run_schema`.
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
            DbTarget::Postgres { url, schema } => endpoint(f, url, schema),
        }
    }
}

impl fmt::Debug for DbTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DbTarget({self})")
    }
}

fn endpoint(f: &mut fmt::Formatter<'_>, url: &str, schema: &str) -> fmt::Result {
    write!(f, "postgres {} schema {schema}", server(url))
}

/// The server a URL names, `host:port database "name"` (never its
/// password). Without the PostgreSQL client there is no parser to ask, and
/// it says so.
pub fn server(url: &str) -> String {
    #[cfg(feature = "postgres")]
    {
        crate::pg::connect::Endpoint::parse(url)
            .map_or("(unparsable URL)".to_string(), |e| e.to_string())
    }
    #[cfg(not(feature = "postgres"))]
    {
        let _ = url;
        "(a server this runner was built without the client for)".to_string()
    }
}

/// Picks the database for a run (docs/reference.md, `[database]`): `auto`
/// takes `env_url` (RUNNER_DATABASE_URL, when set and not blank; the
/// caller reads it) or `database.url` and means PostgreSQL, else SQLite.
/// `None`: `postgres` was asked for without a URL.
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

/// Why `url` is not a PostgreSQL connection string, in the client's words;
/// `None` when it is one. Without the `postgres` feature there is no
/// client to ask, and a URL is taken as written: an experiment that would
/// use it is refused for the missing feature first.
pub fn url_problem(url: &str) -> Option<String> {
    #[cfg(feature = "postgres")]
    {
        use std::str::FromStr;
        postgres::Config::from_str(url).err().map(|e| e.to_string())
    }
    #[cfg(not(feature = "postgres"))]
    {
        let _ = url;
        None
    }
}
