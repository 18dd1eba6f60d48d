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
    /// Tables (`schema.table`, or a name found through `search_path`)
    /// that every `sql` arm gets a private copy of, per fork, in its own
    /// schema: what the SQL writes lands in the copy, never in the table
    /// (docs/guide/own-code.md, "Private copies").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub private_copies: Vec<String>,
    /// Once per fork, after the measured runs and untimed, each `sql`
    /// arm's statements run under EXPLAIN, and the plans are recorded.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub explain: bool,
    /// A run whose forks leave dead row versions in a table the
    /// experiment names, or move any sequence, fails instead of saying it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub strict: bool,
    /// How many inputs the checks before timing compare an `sql` arm's
    /// rows on (`None`: [`CHECK_INPUTS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_inputs: Option<u32>,
}

/// The inputs the checks before timing compare rows on, unless
/// `check_inputs` says otherwise.
pub const CHECK_INPUTS: u32 = 5;

impl DatabaseConfig {
    /// What a worker's `sql` sessions need of this table.
    pub fn sql_options(&self) -> SqlOptions {
        SqlOptions {
            private_copies: self.private_copies.clone(),
            explain: self.explain,
            check_inputs: self.check_inputs.unwrap_or(CHECK_INPUTS),
        }
    }
}

/// The `[database]` keys a fork's `sql` sessions act on, handed to each
/// worker in its job.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct SqlOptions {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub private_copies: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub explain: bool,
    /// The inputs each fork's checks before timing compare `sql` arms on
    /// (at least 1).
    pub check_inputs: u32,
}
