//! The run's schemas on the server, and the one safety rule over them:
//! runner only touches a schema it created (docs/guide/experiment-file.md).
//! [`create_run_schema`] refuses an existing `runner_<id>` and marks the
//! new one with a comment; workers and [`drop_run_schema`] check that
//! marker, so nothing outside a schema runner made for this run is ever
//! modified.
//!
//! The comment also names the schema's owner (`crate::owner`): the run and
//! the process that made it. A schema whose owner was killed before it
//! could drop it is dropped by the next runner on that host that opens the
//! database ([`sweep`]), or on demand (`runner clean`).

use super::connect::{connect, pg};
use crate::owner::{Owner, RunnerSchema};
use crate::{schema_name, DbError};
use postgres::error::SqlState;
use postgres::Client;

/// The slots a per-arm schema can have: baseline, treatment.
pub(crate) const SLOTS: [&str; 2] = ["b", "t"];

pub(crate) fn marker(schema: &str) -> String {
    format!("created by runner for its run schema {schema}")
}

/// What runner writes after [`marker`] to name a schema's owner.
const OWNER: &str = "; owner: ";

/// The comment of a schema runner makes now: its marker and its owner
/// (this process, for `run`), as a SQL literal.
pub(crate) fn comment(schema: &str, run: &str) -> String {
    let text = format!("{}{OWNER}{}", marker(schema), Owner::me(run));
    format!("'{}'", text.replace('\'', "''"))
}

/// The owner a schema's comment names; `None` for runner's marker without
/// one (a runner from before owners) or a comment that is not runner's.
fn owner_in(schema: &str, comment: &str) -> Option<Owner> {
    comment
        .strip_prefix(&marker(schema))?
        .strip_prefix(OWNER)
        .and_then(Owner::parse)
}

/// Whether `comment` is runner's marker for `schema`, with or without an owner.
fn is_marker(schema: &str, comment: &str) -> bool {
    comment
        .strip_prefix(&marker(schema))
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(OWNER))
}

/// The SQL condition, on `pg_namespace n`, that the schema is runner's.
pub(crate) const OURS_SQL: &str = "(coalesce(obj_description(n.oid, 'pg_namespace'), '') = 'created by runner for its run schema ' || n.nspname \
     OR starts_with(coalesce(obj_description(n.oid, 'pg_namespace'), ''), 'created by runner for its run schema ' || n.nspname || '; owner: '))";

/// The schema's comment, `None` when there is no such schema.
pub(crate) fn schema_comment(
    client: &mut Client,
    schema: &str,
) -> Result<Option<Option<String>>, DbError> {
    let row = client
        .query_opt(
            "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1",
            &[&schema],
        )
        .map_err(pg("look up schema"))?;
    row.map(|r| r.try_get(0).map_err(pg("look up schema")))
        .transpose()
}

pub(crate) fn check_ours(client: &mut Client, schema: &str) -> Result<bool, DbError> {
    ours(
        schema,
        schema_comment(client, schema)?
            .as_ref()
            .map(Option::as_deref),
    )
}

/// Whether `schema`, found with `comment` (`None`: no such schema), is one
/// runner made: false when it does not exist, an error when it exists
/// without runner's marker.
pub(crate) fn ours(schema: &str, comment: Option<Option<&str>>) -> Result<bool, DbError> {
    match comment {
        None => Ok(false),
        Some(Some(c)) if is_marker(schema, c) => Ok(true),
        Some(_) => Err(DbError::NotOurSchema(schema.to_owned())),
    }
}

/// Creates `runner_<run_id>` for a run; refuses, untouched, one that exists.
pub fn create_run_schema(url: &str, run_id: &str) -> Result<String, DbError> {
    let schema = schema_name(run_id)?;
    let (mut client, _) = connect(url)?;
    if schema_comment(&mut client, &schema)?.is_some() {
        return Err(DbError::SchemaExists(schema));
    }
    // The name is validated to [a-z0-9_], so formatting it in is safe.
    let sql = format!(
        "BEGIN; CREATE SCHEMA {schema}; COMMENT ON SCHEMA {schema} IS {}; COMMIT;",
        comment(&schema, run_id)
    );
    match client.batch_execute(&sql) {
        Ok(()) => Ok(schema),
        Err(e) if e.code() == Some(&SqlState::DUPLICATE_SCHEMA) => {
            Err(DbError::SchemaExists(schema))
        }
        Err(e) => Err(pg("create schema")(e)),
    }
}

/// Drops `runner_<run_id>`, and the per-arm schemas of `sql` strategies
/// (`runner_<run_id>_b`, `_t`), each only if runner made it; a missing
/// schema is fine.
pub fn drop_run_schema(url: &str, run_id: &str) -> Result<(), DbError> {
    let schema = schema_name(run_id)?;
    let (mut client, _) = connect(url)?;
    let mut arms: Vec<String> = SLOTS
        .iter()
        .map(|slot| format!("{schema}_{slot}"))
        .collect();
    // The committed arm schemas of `clients = N`, one per worker
    // (`shared`): normally dropped by their fork, left by a killed one.
    for slot in SLOTS {
        let like = format!("{}\\_{slot}\\_p%", schema.replace('_', "\\_"));
        let rows = client
            .query(
                "SELECT nspname::text FROM pg_namespace WHERE nspname LIKE $1",
                &[&like],
            )
            .map_err(pg("list the arms' schemas"))?;
        arms.extend(rows.iter().map(|r| r.get::<_, String>(0)));
    }
    // Each schema on its own: one that is not runner's is left alone and
    // reported, and does not keep runner's own from being dropped.
    let mut first_error = None;
    for s in arms.iter().chain([&schema]) {
        let dropped = check_ours(&mut client, s).and_then(|ours| {
            if ours {
                client
                    .batch_execute(&format!("DROP SCHEMA {s} CASCADE"))
                    .map_err(pg("drop schema"))?;
            }
            Ok(())
        });
        if let Err(e) = dropped {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Every schema on the server that carries runner's marker, by name.
pub fn list(url: &str) -> Result<Vec<RunnerSchema>, DbError> {
    let (mut client, _) = connect(url)?;
    list_on(&mut client)
}

fn list_on(client: &mut Client) -> Result<Vec<RunnerSchema>, DbError> {
    let rows = client
        .query(
            &format!(
                "SELECT n.nspname::text, obj_description(n.oid, 'pg_namespace') FROM pg_namespace n \
                 WHERE n.nspname LIKE 'runner\\_%' AND {OURS_SQL} ORDER BY 1"
            ),
            &[],
        )
        .map_err(pg("list runner's schemas"))?;
    Ok(rows
        .iter()
        .map(|r| {
            let schema: String = r.get(0);
            let comment: Option<String> = r.get(1);
            let owner = comment.and_then(|c| owner_in(&schema, &c));
            RunnerSchema { schema, owner }
        })
        .collect())
}

/// Drops `schema` if it still carries runner's marker (it is read again
/// first); a schema already gone is fine.
pub fn drop_ours(url: &str, schema: &str) -> Result<(), DbError> {
    let (mut client, _) = connect(url)?;
    drop_on(&mut client, schema)
}

fn drop_on(client: &mut Client, schema: &str) -> Result<(), DbError> {
    if check_ours(client, schema)? {
        client
            .batch_execute(&format!("DROP SCHEMA {} CASCADE", ident(schema)))
            .map_err(pg("drop schema"))?;
    }
    Ok(())
}

/// Drops every schema of runner's whose owner was on this host and is
/// gone (killed before it could drop it); what was dropped. A schema
/// that cannot be dropped now (another session holds a lock on it) is
/// left for the next runner.
pub fn sweep(url: &str) -> Result<Vec<RunnerSchema>, DbError> {
    let (mut client, _) = connect(url)?;
    let mut dropped = Vec::new();
    for found in list_on(&mut client)? {
        if found.abandoned() && drop_on(&mut client, &found.schema).is_ok() {
            dropped.push(found);
        }
    }
    Ok(dropped)
}

fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `SET LOCAL search_path` to the strategy's schema first (what `setup`
/// creates goes there), then the user's schemas: `setup` and `run` read
/// the user's tables alike. The fork's session, a client and the shared
/// set-up all set it this way.
pub(crate) fn set_search_path(
    client: &mut Client,
    schema: &str,
    search_path: &[String],
) -> Result<(), DbError> {
    let path: Vec<String> = std::iter::once(schema.to_string())
        .chain(search_path.iter().map(|s| ident(s)))
        .collect();
    client
        .batch_execute(&format!("SET LOCAL search_path TO {}", path.join(", ")))
        .map_err(pg("set search_path"))
}
