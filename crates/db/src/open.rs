//! Opening what a target names: the preview's table, a session for the
//! `sql` strategy, the database's facts. The one place that chooses a
//! backend, so the `sqlite` and `postgres` features switch it here alone;
//! a target whose backend this runner was built without is one sentence
//! (the experiment file's check refuses it first, with its key).

use crate::fingerprint::Fingerprinter;
use crate::model::TableMaker;
use crate::owner::RunnerSchema;
#[cfg(feature = "postgres")]
use crate::pg::session::PgSession;
use crate::preflight::{ArmSql, Findings, PreflightError};
use crate::session::SqlSession;
#[cfg(feature = "sqlite")]
use crate::sqlite::session::SqliteSession;
use crate::{DbError, DbInfo, DbTarget, ModelTable, SqlOptions};
use runner_core::preview::Model;

/// Creates, seeds and prepares the table for one strategy instance.
/// `premade`: a table the exec parent made and seeded in the run schema
/// (PostgreSQL only; see [`crate::model::job_table`]).
#[cfg_attr(
    not(all(feature = "sqlite", feature = "postgres")),
    allow(unused_variables)
)]
pub fn table(
    target: &DbTarget,
    model: &Model,
    premade: Option<&str>,
) -> Result<Box<dyn ModelTable>, DbError> {
    match target {
        #[cfg(feature = "sqlite")]
        DbTarget::Sqlite | DbTarget::SqliteFile { .. } => {
            Ok(Box::new(crate::sqlite::SqliteTable::open(model)?))
        }
        #[cfg(feature = "postgres")]
        DbTarget::Postgres { url, schema } => Ok(Box::new(crate::pg::table::PgTable::open(
            url, schema, model, premade,
        )?)),
        #[allow(unreachable_patterns)]
        other => Err(not_built(other)),
    }
}

/// Connects (for PostgreSQL) and reads the facts; no table is touched.
pub fn info(target: &DbTarget) -> Result<DbInfo, DbError> {
    match target {
        #[cfg(feature = "sqlite")]
        DbTarget::Sqlite | DbTarget::SqliteFile { .. } => crate::sqlite::db_info(),
        #[cfg(feature = "postgres")]
        DbTarget::Postgres { url, .. } => crate::pg::info::db_info(url),
        #[allow(unreachable_patterns)]
        other => Err(not_built(other)),
    }
}

/// Opens a session for the arm in `slot` (`b`, `t`), runs `setup` in its
/// own space (committed), and leaves the user's schemas in `search_path`
/// readable after its own (PostgreSQL only).
pub fn session(
    target: &DbTarget,
    slot: &str,
    search_path: &[String],
    setup: Option<&str>,
) -> Result<Box<dyn SqlSession>, DbError> {
    session_with(target, slot, search_path, setup, &SqlOptions::default())
}

/// [`session`], with the private copies of `options` made first (PostgreSQL:
/// in the arm's schema, before `setup`; SQLite: every table of the
/// session's database already is one).
#[cfg_attr(
    not(all(feature = "sqlite", feature = "postgres")),
    allow(unused_variables)
)]
pub fn session_with(
    target: &DbTarget,
    slot: &str,
    search_path: &[String],
    setup: Option<&str>,
    options: &SqlOptions,
) -> Result<Box<dyn SqlSession>, DbError> {
    match target {
        #[cfg(feature = "sqlite")]
        DbTarget::Sqlite => Ok(Box::new(SqliteSession::open(None, setup)?)),
        #[cfg(feature = "sqlite")]
        DbTarget::SqliteFile { file } => Ok(Box::new(SqliteSession::open(Some(file), setup)?)),
        #[cfg(feature = "postgres")]
        DbTarget::Postgres { url, schema } => Ok(Box::new(PgSession::open(
            url,
            schema,
            slot,
            search_path,
            setup,
            &options.private_copies,
        )?)),
        #[allow(unreachable_patterns)]
        other => Err(not_built(other)),
    }
}

/// Gives a run its own schema `runner_<run id>` where the target has
/// schemas (PostgreSQL), first dropping one a killed run of the same id
/// left when `resuming`; the schema's name, `None` on SQLite.
pub fn run_schema(
    target: &DbTarget,
    run_id: &str,
    resuming: bool,
) -> Result<Option<String>, DbError> {
    match target {
        #[cfg(feature = "postgres")]
        DbTarget::Postgres { url, .. } => {
            if resuming {
                crate::pg::schema::drop_run_schema(url, run_id)?;
            }
            crate::pg::schema::create_run_schema(url, run_id).map(Some)
        }
        DbTarget::Sqlite | DbTarget::SqliteFile { .. } => {
            let _ = (run_id, resuming);
            Ok(None)
        }
        #[allow(unreachable_patterns)]
        other => Err(not_built(other)),
    }
}

/// Drops what [`run_schema`] made (and the arms' schemas of the run), each
/// only if runner's marker says it is this run's; nothing on SQLite.
pub fn drop_run_schema(target: &DbTarget, run_id: &str) -> Result<(), DbError> {
    match target {
        #[cfg(feature = "postgres")]
        DbTarget::Postgres { url, .. } => crate::pg::schema::drop_run_schema(url, run_id),
        DbTarget::Sqlite | DbTarget::SqliteFile { .. } => {
            let _ = run_id;
            Ok(())
        }
        #[allow(unreachable_patterns)]
        other => Err(not_built(other)),
    }
}

/// Drops the schemas of runner's on the server whose owner ran on this
/// host and is gone (`pg::schema::sweep`); what was dropped, nothing on SQLite.
pub fn sweep(target: &DbTarget) -> Result<Vec<RunnerSchema>, DbError> {
    match target {
        #[cfg(feature = "postgres")]
        DbTarget::Postgres { url, .. } => crate::pg::schema::sweep(url),
        DbTarget::Sqlite | DbTarget::SqliteFile { .. } => Ok(Vec::new()),
        #[allow(unreachable_patterns)]
        other => Err(not_built(other)),
    }
}

/// Every schema of runner's on the server, with its owner; none on SQLite.
pub fn runner_schemas(target: &DbTarget) -> Result<Vec<RunnerSchema>, DbError> {
    match target {
        #[cfg(feature = "postgres")]
        DbTarget::Postgres { url, .. } => crate::pg::schema::list(url),
        DbTarget::Sqlite | DbTarget::SqliteFile { .. } => Ok(Vec::new()),
        #[allow(unreachable_patterns)]
        other => Err(not_built(other)),
    }
}

/// Drops one schema of runner's (its marker read again first).
#[cfg_attr(not(feature = "postgres"), allow(unused_variables))]
pub fn drop_schema(target: &DbTarget, schema: &str) -> Result<(), DbError> {
    match target {
        #[cfg(feature = "postgres")]
        DbTarget::Postgres { url, .. } => crate::pg::schema::drop_ours(url, schema),
        DbTarget::Sqlite | DbTarget::SqliteFile { .. } => Ok(()),
        #[allow(unreachable_patterns)]
        other => Err(not_built(other)),
    }
}

/// The fingerprint's connection for a run on a server (`pg::guard`); `None`
/// on SQLite, where each arm's database is private to its worker.
pub fn guard(target: &DbTarget) -> Result<Option<Box<dyn Fingerprinter>>, DbError> {
    match target {
        #[cfg(feature = "postgres")]
        DbTarget::Postgres { url, schema } => Ok(Some(Box::new(crate::pg::guard::Guard::connect(
            url, schema,
        )?))),
        DbTarget::Sqlite | DbTarget::SqliteFile { .. } => Ok(None),
        #[allow(unreachable_patterns)]
        other => Err(not_built(other)),
    }
}

/// One sentence when the role a server target logs in as can do what no
/// rollback undoes (`pg::info::role_warning`); nothing on SQLite.
pub fn role_warning(target: &DbTarget) -> Result<Option<String>, DbError> {
    match target {
        #[cfg(feature = "postgres")]
        DbTarget::Postgres { url, .. } => crate::pg::info::role_warning(url),
        DbTarget::Sqlite | DbTarget::SqliteFile { .. } => Ok(None),
        #[allow(unreachable_patterns)]
        other => Err(not_built(other)),
    }
}

/// The parent's connection that makes the forks' preview tables ahead of
/// them, on a server (`pg::table::Maker`); `None` on SQLite, where each
/// worker's table lives in its own in-memory database.
pub fn table_maker(target: &DbTarget) -> Result<Option<Box<dyn TableMaker>>, DbError> {
    match target {
        #[cfg(feature = "postgres")]
        DbTarget::Postgres { url, schema } => {
            Ok(Some(Box::new(crate::pg::table::Maker::open(url, schema)?)))
        }
        DbTarget::Sqlite | DbTarget::SqliteFile { .. } => Ok(None),
        #[allow(unreachable_patterns)]
        other => Err(not_built(other)),
    }
}

/// The catalog's findings for a PostgreSQL run whose arms run SQL (or
/// that names private copies); `None` elsewhere. On SQLite the private
/// copies' tables are looked up in `database.sqlite_file`.
#[cfg_attr(not(feature = "postgres"), allow(unused_variables))]
pub fn preflight(
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

/// The sentence for a target whose backend is not in this build.
#[allow(dead_code)]
fn not_built(target: &DbTarget) -> DbError {
    DbError::NotBuilt(crate::Feature::of(target))
}
