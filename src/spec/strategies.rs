//! Strategies and the database they need: which kinds exist, which keys each
//! takes, and whether a database strategy has a usable connection before
//! anything runs (no connection is attempted here).

use super::experiment::*;
use super::location::{KeyPath, Problem};
use super::raw::{RawDatabase, RawStrategy};
use super::validate::Context;
use super::values::{choice, micros, string};
use std::collections::BTreeMap;
use std::str::FromStr;

fn root(key: &str) -> KeyPath {
    KeyPath::root().child(key)
}

const BACKENDS: [(&str, Backend); 3] = [
    ("auto", Backend::Auto),
    ("sqlite", Backend::Sqlite),
    ("postgres", Backend::Postgres),
];

pub(crate) fn database(raw: RawDatabase) -> Result<DatabaseConfig, Problem> {
    let base = root("database");
    let backend =
        choice(raw.backend.as_ref(), &base.child("backend"), &BACKENDS)?.unwrap_or_default();
    let url_path = base.child("url");
    let url = string(
        raw.url.as_ref(),
        &url_path,
        "a PostgreSQL connection string",
    )?;
    if let (Some(u), false) = (&url, backend == Backend::Sqlite) {
        // The URL itself is not echoed: it may hold a password.
        postgres::Config::from_str(u).map_err(|e| {
            Problem::value(&url_path, format!("database.url is not a valid PostgreSQL connection string ({e}); expected e.g. postgres://user@127.0.0.1:5432/db"))
        })?;
    }
    Ok(DatabaseConfig { backend, url })
}

pub(crate) fn check_database_usable(
    db: &DatabaseConfig,
    strategies: &BTreeMap<String, StrategyKind>,
    ctx: &Context,
) -> Result<(), Problem> {
    let Some((name, kind)) = strategies.iter().find(|(_, k)| k.needs_database()) else {
        return Ok(());
    };
    if db.backend == Backend::Sqlite {
        return Ok(());
    }
    if let Some(env) = ctx.env_url {
        return postgres::Config::from_str(env).map(|_| ()).map_err(|e| {
            Problem::nowhere(format!("RUNNER_DATABASE_URL is not a valid PostgreSQL connection string ({e}); strategy `{name}` ({}) would use it", kind.label()))
        });
    }
    if db.backend == Backend::Postgres && db.url.is_none() {
        return Err(Problem::value(
            &root("database").child("backend"),
            format!("database.backend = \"postgres\" has no URL, but strategy `{name}` ({}) needs a database; set database.url or RUNNER_DATABASE_URL, or use backend \"sqlite\" or \"auto\"", kind.label()),
        ));
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Kind {
    InMemory,
    TxRollback,
    Spin,
    Noop,
}

pub(crate) fn strategies(
    raw: BTreeMap<String, RawStrategy>,
) -> Result<BTreeMap<String, StrategyKind>, Problem> {
    if raw.is_empty() {
        return Err(Problem::value(&root("strategies"), "strategies must define at least one strategy, e.g. [strategies.memory] with kind = \"in-memory\""));
    }
    let kinds = [
        ("in-memory", Kind::InMemory),
        ("tx-rollback", Kind::TxRollback),
        ("spin", Kind::Spin),
        ("noop", Kind::Noop),
    ];
    let mut out = BTreeMap::new();
    for (name, s) in raw {
        let base = root("strategies").child(&name);
        let kind_path = base.child("kind");
        let kind = choice(s.kind.as_ref(), &kind_path, &kinds)?.ok_or_else(|| {
            Problem::value(&kind_path, format!("{kind_path} is required; set it to one of \"in-memory\", \"tx-rollback\", \"spin\", \"noop\""))
        })?;
        let duration_path = base.child("duration_us");
        let kind = match (kind, &s.duration_us) {
            (Kind::Spin, Some(v)) => StrategyKind::Spin { duration_ns: micros(v, &duration_path)?.1 },
            (Kind::Spin, None) => return Err(Problem::value(&duration_path, format!("{duration_path} is required for kind = \"spin\"; set it to a non-negative number of microseconds"))),
            (other, Some(_)) => {
                let label = match other {
                    Kind::InMemory => "in-memory",
                    Kind::TxRollback => "tx-rollback",
                    _ => "noop",
                };
                return Err(Problem::key(&duration_path, format!("{duration_path} only applies to kind = \"spin\"; kind = \"{label}\" takes no other key than kind")));
            }
            (Kind::InMemory, None) => StrategyKind::InMemory,
            (Kind::TxRollback, None) => StrategyKind::TxRollback,
            (Kind::Noop, None) => StrategyKind::Noop,
        };
        out.insert(name, kind);
    }
    Ok(out)
}
