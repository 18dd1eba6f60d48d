//! The `[database]` table once validated: which backend a run asks for.
//! It lives with the databases (the spec's validation produces it), so
//! `db` needs nothing from `spec`.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// RUNNER_DATABASE_URL or `database.url` when set, else sqlite.
    #[default]
    Auto,
    Sqlite,
    Postgres,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct DatabaseConfig {
    pub backend: Backend,
    pub url: Option<String>,
    /// SQLite only: `sql` strategies start from a private in-memory copy of
    /// this file (opened read-only, never written) instead of an empty database.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sqlite_file: Option<String>,
}
