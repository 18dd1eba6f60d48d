//! Database facts a report states, recorded in run.json: whichever
//! features this runner was built with, a folder made by another build
//! reads.

use serde::{Deserialize, Serialize};

/// Database facts a report states (docs/guide/output-folder.md, run.json environment).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DbInfo {
    /// `sqlite` or `postgres`.
    pub backend: String,
    /// `sqlite_version()` or the server's `SELECT version()`.
    pub version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postgres: Option<PgInfo>,
}

/// Server facts that change what a timing means: durability settings,
/// cache size, and whether the connection crosses TCP or a Unix socket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PgInfo {
    pub server_version: String,
    pub shared_buffers: String,
    pub synchronous_commit: String,
    pub fsync: String,
    pub wal_level: String,
    /// `tcp` or `unix`.
    pub transport: String,
    pub host: String,
    pub port: u16,
    pub database: String,
    /// The role the run logged in as (never the password), so a report can
    /// give the URL that reproduces it; absent in runs recorded before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The role is a superuser (absent in runs recorded before runner
    /// looked): its SQL can reach past any transaction (docs/guide/own-code.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superuser: Option<bool>,
    /// Built-in roles it is a member of that act outside the database
    /// (run programs, read or write server files, signal other sessions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_roles: Vec<String>,
}

impl PgInfo {
    /// One sentence when the role can do what no rollback undoes, for
    /// `runner check` and the report's Setup.
    pub fn role_warning(&self) -> Option<String> {
        powers_warning(
            self.user.as_deref(),
            self.superuser == Some(true),
            &self.server_roles,
        )
    }
}

/// The sentence of [`PgInfo::role_warning`] for a role's powers.
pub(crate) fn powers_warning(
    user: Option<&str>,
    superuser: bool,
    server_roles: &[String],
) -> Option<String> {
    let role = user.unwrap_or("the run's role");
    let power = if superuser {
        format!("role \"{role}\" is a superuser")
    } else if !server_roles.is_empty() {
        format!("role \"{role}\" is a member of {}", server_roles.join(", "))
    } else {
        return None;
    };
    Some(format!(
        "{power}: runner still rolls back every write, but such a role's SQL can also run programs, write server files or stop other sessions (from inside a function, where runner's check cannot see it), which no rollback undoes; run with a role without these privileges"
    ))
}
