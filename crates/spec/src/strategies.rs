//! Strategies and the database they need: which kinds exist, which keys each
//! takes, and whether a database strategy has a usable connection before
//! anything runs (no connection is attempted here).

use super::context::Context;
use super::context::Files;
use super::experiment::*;
use super::kinds::{CommandSpec, Field, StrategyKind};
use super::location::{KeyPath, Problem};
use super::raw::{RawDatabase, RawStrategy};
use super::values::{boolean, choice, micros, string};
use runner_db::Feature;
use std::collections::BTreeMap;

fn root(key: &str) -> KeyPath {
    KeyPath::root().child(key)
}

const BACKENDS: [(&str, Backend); 3] = [
    ("auto", Backend::Auto),
    ("sqlite", Backend::Sqlite),
    ("postgres", Backend::Postgres),
];

pub(crate) fn database(raw: RawDatabase, files: Files) -> Result<DatabaseConfig, Problem> {
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
        runner_core::redact::credentials(u)
            .map_err(|e| Problem::value(&url_path, format!("database.url: {e}")))?;
        if let Some(e) = runner_db::url_problem(u) {
            return Err(Problem::value(&url_path, format!("database.url is not a valid PostgreSQL connection string ({e}); expected e.g. postgres://user@127.0.0.1:5432/db")));
        }
    }
    let file_path = base.child("sqlite_file");
    let sqlite_file = string(
        raw.sqlite_file.as_ref(),
        &file_path,
        "a path to a SQLite database file",
    )?;
    if let Some(f) = &sqlite_file {
        if backend != Backend::Sqlite {
            return Err(Problem::value(&file_path, format!("database.sqlite_file needs backend = \"sqlite\" (it is only read by SQLite), got backend = \"{}\"", match backend { Backend::Auto => "auto", Backend::Postgres => "postgres", Backend::Sqlite => "sqlite" })));
        }
        if !files.recorded() && !std::path::Path::new(f).is_file() {
            return Err(Problem::value(&file_path, format!("database.sqlite_file = {f:?} is not a file; paths are relative to the current directory")));
        }
    }
    let private_copies = table_names(raw.private_copies.as_ref(), &base.child("private_copies"))?;
    let explain = boolean(raw.explain.as_ref(), &base.child("explain"), false)?;
    let strict = boolean(raw.strict.as_ref(), &base.child("strict"), false)?;
    let check_inputs = raw
        .check_inputs
        .as_ref()
        .map(|v| {
            super::values::integer(
                v,
                &base.child("check_inputs"),
                1,
                100,
                "an integer from 1 to 100 (the inputs each fork's checks before timing compare the sql arms' rows on, default 5)",
            )
            .map(|n| n as u32)
        })
        .transpose()?;
    Ok(DatabaseConfig {
        backend,
        url,
        sqlite_file,
        private_copies,
        explain,
        strict,
        check_inputs,
    })
}

/// `private_copies`: distinct table names, each `table` or `schema.table`
/// (whether they exist is asked of the database before anything runs).
fn table_names(v: Option<&toml::Value>, path: &KeyPath) -> Result<Vec<String>, Problem> {
    use toml::Value;
    let what = "an array of table names (e.g. [\"public.orders\"])";
    let Some(v) = v else { return Ok(Vec::new()) };
    let Value::Array(items) = v else {
        return Err(super::values::got(path, what, v));
    };
    let mut names: Vec<String> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = path.at(i);
        let name = match item {
            Value::String(s) if runner_db::names::parse_name(s).is_some() => s.clone(),
            other => {
                return Err(super::values::got(
                    &at,
                    "a table name, `table` or `schema.table`",
                    other,
                ))
            }
        };
        if names.contains(&name) {
            return Err(Problem::value(
                &at,
                format!("{at} = {name:?} is named twice"),
            ));
        }
        names.push(name);
    }
    Ok(names)
}

pub(crate) fn check_database_usable(
    db: &DatabaseConfig,
    strategies: &BTreeMap<String, StrategyKind>,
    ctx: &Context,
) -> Result<(), Problem> {
    let Some((name, kind)) = strategies.iter().find(|(_, k)| k.needs_database()) else {
        return Ok(());
    };
    // The backend it would run on, as `db::resolve` will pick it, must be
    // in this build (the `sqlite` and `postgres` features).
    let feature = match db.backend {
        Backend::Sqlite => Feature::Sqlite,
        Backend::Postgres => Feature::Postgres,
        Backend::Auto if ctx.env_url.is_some() || db.url.is_some() => Feature::Postgres,
        Backend::Auto => Feature::Sqlite,
    };
    if !feature.built() {
        let (database, feature) = (feature.database(), feature.name());
        return Err(Problem::value(
            &root("strategies").child(name).child("kind"),
            format!("strategy `{name}` ({}) runs on {database}, and this runner was built without it (its `{feature}` feature); build runner with it: cargo install --path . --features {feature}", kind.label()),
        ));
    }
    if db.backend == Backend::Sqlite {
        // What only PostgreSQL has, refused before anything runs.
        for (name, kind) in strategies {
            let StrategyKind::Sql(s) = kind else { continue };
            let (key, why) = if s.clients > 1 {
                ("clients", "concurrent clients need PostgreSQL (SQLite's writers take turns within one process)")
            } else if s.protocol == super::kinds::Protocol::Prepared {
                ("protocol", "protocol = \"prepared\" needs PostgreSQL (SQLite already compiles a statement once while its text stays the same)")
            } else {
                continue;
            };
            return Err(Problem::value(
                &root("strategies").child(name).child(key),
                format!("strategies.{name}.{key}: {why}; use backend \"postgres\" or \"auto\" with a PostgreSQL URL"),
            ));
        }
        return Ok(());
    }
    if let Some(env) = ctx.env_url {
        runner_core::redact::credentials(env).map_err(|e| {
            Problem::nowhere(format!(
                "RUNNER_DATABASE_URL: {e}; strategy `{name}` ({}) would use it",
                kind.label()
            ))
        })?;
        return match runner_db::url_problem(env) {
            Some(e) => Err(Problem::nowhere(format!("RUNNER_DATABASE_URL is not a valid PostgreSQL connection string ({e}); strategy `{name}` ({}) would use it", kind.label()))),
            None => Ok(()),
        };
    }
    if db.backend == Backend::Postgres && db.url.is_none() {
        return Err(Problem::value(
            &root("database").child("backend"),
            format!("database.backend = \"postgres\" has no URL, but strategy `{name}` ({}) needs a database; set database.url or RUNNER_DATABASE_URL, or use backend \"sqlite\" or \"auto\"", kind.label()),
        ));
    }
    Ok(())
}

/// The kinds a table may name, and the keys each takes besides `kind`.
pub(super) const KINDS: [(&str, &[&str]); 6] = [
    ("in-memory", &[]),
    ("tx-rollback", &[]),
    ("spin", &["duration_us"]),
    ("noop", &[]),
    ("command", &super::command::KEYS),
    ("sql", &super::sql::KEYS),
];

/// Keys that exclude each other: a table sets at most one of each pair.
const EXCLUSIVE: [(&str, &str); 3] = [
    ("argv", "shell"),
    ("run", "run_file"),
    ("setup", "setup_file"),
];

/// The keys a kind takes besides `kind`.
pub(crate) fn keys_of(kind: &StrategyKind) -> &'static [&'static str] {
    KINDS
        .iter()
        .find(|(label, _)| *label == kind.label())
        .map_or(&[], |(_, keys)| keys)
}

/// One key of a strategy of `kind`, validated into a [`Field`]: the rule
/// for the table and for a `[grid]` sweep of that key.
pub(crate) fn field(
    kind: &StrategyKind,
    key: &str,
    v: &toml::Value,
    path: &KeyPath,
    files: Files,
) -> Result<Field, Problem> {
    match kind {
        StrategyKind::Spin { .. } => Ok(Field::DurationNs(micros(v, path)?.1)),
        StrategyKind::Command(_) => super::command::field(key, v, path, files),
        StrategyKind::Sql(_) => super::sql::field(key, v, path, files),
        other => Err(Problem::key(
            path,
            format!("{path}: kind = \"{}\" takes no key but kind", other.label()),
        )),
    }
}

/// `kind = "imported"`: what `runner analyze` writes for arms another
/// harness measured. Read back from run.json it is valid (with no other
/// key); in an experiment file it is refused, since nothing can run it.
fn imported(base: &KeyPath, table: &RawStrategy, files: Files) -> Result<StrategyKind, Problem> {
    if !files.recorded() {
        let names: Vec<String> = KINDS.iter().map(|(l, _)| format!("\"{l}\"")).collect();
        return Err(Problem::value(
            &base.child("kind"),
            format!("{}: kind = \"imported\" marks pairs another harness measured (`runner analyze` writes it); nothing can run it, so use one of {}", base.child("kind"), names.join(", ")),
        ));
    }
    match table.keys().find(|k| *k != "kind") {
        Some(k) => Err(Problem::key(
            &base.child(k),
            format!(
                "{}: kind = \"imported\" takes no key but kind",
                base.child(k)
            ),
        )),
        None => Ok(StrategyKind::Imported),
    }
}

fn empty(label: &str) -> StrategyKind {
    match label {
        "in-memory" => StrategyKind::InMemory,
        "tx-rollback" => StrategyKind::TxRollback,
        "spin" => StrategyKind::Spin { duration_ns: 0 },
        "command" => StrategyKind::Command(Box::new(CommandSpec {
            compare_output: true,
            ..CommandSpec::default()
        })),
        "sql" => StrategyKind::Sql(Box::default()),
        _ => StrategyKind::Noop,
    }
}

pub(crate) fn strategies(
    raw: BTreeMap<String, RawStrategy>,
    files: Files,
) -> Result<BTreeMap<String, StrategyKind>, Problem> {
    if raw.is_empty() {
        return Err(Problem::value(&root("strategies"), "strategies must define at least one strategy, e.g. [strategies.memory] with kind = \"in-memory\""));
    }
    let mut out = BTreeMap::new();
    for (name, table) in raw {
        let kind = strategy(&root("strategies").child(&name), &table, files)?;
        out.insert(name, kind);
    }
    Ok(out)
}

fn strategy(base: &KeyPath, table: &RawStrategy, files: Files) -> Result<StrategyKind, Problem> {
    let kind_path = base.child("kind");
    if table.get("kind").and_then(|k| k.as_str()) == Some("imported") {
        return imported(base, table, files);
    }
    let labels: Vec<(&str, &str)> = KINDS.iter().map(|(l, _)| (*l, *l)).collect();
    let label = choice(table.get("kind"), &kind_path, &labels)?.ok_or_else(|| {
        let names: Vec<String> = KINDS.iter().map(|(l, _)| format!("\"{l}\"")).collect();
        Problem::value(
            &kind_path,
            format!(
                "{kind_path} is required; set it to one of {}",
                names.join(", ")
            ),
        )
    })?;
    let mut kind = empty(label);
    let keys = keys_of(&kind);
    for key in table.keys().filter(|k| *k != "kind") {
        if !keys.contains(&key.as_str()) {
            let mut valid = vec!["kind"];
            valid.extend(keys);
            return Err(Problem::key(
                &base.child(key),
                format!(
                    "unknown key `{}`;{} valid keys here (kind = \"{label}\") are: {}",
                    base.child(key),
                    super::suggest::did_you_mean(key, valid.iter().copied()),
                    valid.join(", ")
                ),
            ));
        }
    }
    for (a, b) in EXCLUSIVE {
        if table.contains_key(a) && table.contains_key(b) {
            return Err(Problem::key(
                &base.child(b),
                format!("{base} sets both {a} and {b}; set one of them"),
            ));
        }
    }
    for (key, value) in table.iter().filter(|(k, _)| *k != "kind") {
        kind.apply(&field(&kind, key, value, &base.child(key), files)?);
    }
    let required: &[&str] = match label {
        "spin" => &["duration_us"],
        "command" => &["argv", "shell"],
        "sql" => &["run", "run_file"],
        _ => &[],
    };
    if !required.is_empty() && !required.iter().any(|k| table.contains_key(*k)) {
        let what = match label {
            "spin" => "duration_us = a non-negative number of microseconds",
            "command" => "argv = [\"program\", \"arg\", ...] (or shell = \"...\")",
            _ => "run = \"SQL\" (or run_file = \"path.sql\")",
        };
        return Err(Problem::value(
            &base.child(required[0]),
            format!(
                "{} is required for kind = \"{label}\"; set {what}",
                base.child(required[0])
            ),
        ));
    }
    Ok(kind)
}
