//! `runner clean`: runner's schemas on a PostgreSQL server, listed with
//! their owner, and dropped on demand.
//!
//! Every schema a run or a check makes carries its owner in its comment
//! (`db::owner`), and every exec and check first drops those whose owner
//! ran on this host and is gone; `clean` does the same alone and shows
//! what is there. It only ever drops a schema that carries runner's
//! marker, and never one whose owner still runs on this host. A schema
//! made on another host, or by a runner from before owners were recorded,
//! is kept unless named with `--schema`.

use runner_core::error::{Coded, Failure, Result};
use runner_db::owner::Liveness;
use runner_db::{DbError, DbTarget};
use std::path::Path;

/// Why `runner clean` does nothing: no server to clean (none named, or a
/// `[database]` runner cannot use), or a `--schema` it must not drop
/// (not runner's, or its owner still runs) are bad input; a server that
/// fails while listing or dropping fails the command.
#[derive(Debug, thiserror::Error)]
enum CleanError {
    /// Neither RUNNER_DATABASE_URL nor an experiment file names a server.
    #[error(
        "runner clean needs a PostgreSQL server: set RUNNER_DATABASE_URL, or name an experiment file whose database.url names one (runner clean SPEC)"
    )]
    NoServer,
    /// The `[database]` table (or RUNNER_DATABASE_URL) names no database
    /// runner can use.
    #[error("{0}")]
    Resolve(#[source] DbError),
    /// A PostgreSQL database without a URL to reach it.
    #[error(
        "database.backend is \"postgres\" but no URL is set; set database.url or RUNNER_DATABASE_URL"
    )]
    NoUrl,
    /// `--schema` names a schema without runner's marker, which runner
    /// never drops.
    #[error(
        "--schema {schema}: no schema of that name carries runner's marker on {server}; runner drops only schemas it made (`runner clean --list` lists them)"
    )]
    NotOurs { schema: String, server: String },
    /// `--schema` names a schema whose owner runs on this host, and drops
    /// it itself as it ends.
    #[error(
        "--schema {schema}: its owner still runs ({owner}); stop that runner, which drops it as it ends"
    )]
    OwnerRuns { schema: String, owner: String },
    /// The server failed while its schemas were listed or dropped.
    #[error("{0}")]
    Server(#[source] DbError),
}

impl Coded for CleanError {
    fn failure(&self) -> Failure {
        match self {
            CleanError::NoServer
            | CleanError::Resolve(_)
            | CleanError::NoUrl
            | CleanError::NotOurs { .. }
            | CleanError::OwnerRuns { .. } => Failure::BadInput,
            CleanError::Server(_) => Failure::RunFailed,
        }
    }
}

/// `runner clean [SPEC] [--list] [--schema NAME]...`: the text to print.
pub(crate) fn clean(spec: Option<&Path>, list_only: bool, named: &[String]) -> Result<String> {
    let target = target(spec)?;
    let DbTarget::Postgres { url, .. } = &target else {
        return Ok(
            "nothing to clean: this experiment's database is SQLite, in memory and private to each arm\n"
                .into(),
        );
    };
    let found = runner_db::open::runner_schemas(&target).map_err(CleanError::Server)?;
    for name in named {
        match found.iter().find(|f| &f.schema == name) {
            None => {
                return Err(CleanError::NotOurs {
                    schema: name.clone(),
                    server: runner_db::server(url),
                }
                .into())
            }
            Some(f) if f.liveness() == Some(Liveness::Alive) => {
                return Err(CleanError::OwnerRuns {
                    schema: name.clone(),
                    owner: f.said(),
                }
                .into())
            }
            Some(_) => {}
        }
    }
    let mut out = String::new();
    if found.is_empty() {
        out.push_str(&format!(
            "no schema of runner's on {}\n",
            runner_db::server(url)
        ));
        return Ok(out);
    }
    out.push_str(&format!(
        "runner's schemas on {}:\n",
        runner_db::server(url)
    ));
    let mut dropped = 0;
    for f in &found {
        let drop = !list_only && (f.abandoned() || named.contains(&f.schema));
        let state = match (f.liveness(), drop) {
            (_, true) => {
                runner_db::open::drop_schema(&target, &f.schema).map_err(CleanError::Server)?;
                dropped += 1;
                "dropped".to_string()
            }
            (Some(Liveness::Gone), false) => {
                "its owner is gone; `runner clean` drops it".to_string()
            }
            (Some(Liveness::Alive), false) => "in use: its owner runs".to_string(),
            (Some(Liveness::Elsewhere), false) => format!(
                "kept: made on another host; drop it there, or here with --schema {}",
                f.schema
            ),
            (None, false) => format!(
                "kept: its owner was not recorded; drop it with --schema {} once no runner uses it",
                f.schema
            ),
        };
        out.push_str(&format!("  {}: {state}\n", f.said()));
    }
    if !list_only {
        out.push_str(&format!("dropped {dropped} of {}\n", found.len()));
    }
    Ok(out)
}

/// The server: the experiment file's database as exec resolves it
/// (RUNNER_DATABASE_URL first), or RUNNER_DATABASE_URL alone.
fn target(spec: Option<&Path>) -> Result<DbTarget> {
    let env = runner_core::settings::get().database_url.as_deref();
    let config = match spec {
        Some(path) => runner_spec::load(path, &[])?.experiment.database,
        None if env.is_some() => runner_db::DatabaseConfig::default(),
        None => return Err(CleanError::NoServer.into()),
    };
    let target = runner_db::resolve_with(&config, env, "clean")
        .map_err(CleanError::Resolve)?
        .ok_or(CleanError::NoUrl)?;
    Ok(target)
}
