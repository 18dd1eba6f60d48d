//! The keys of a `kind = "sql"` strategy, and the check of its statements
//! under every binding of their placeholders (docs/guide/own-code.md).

use super::context::Files;
use super::kinds::{Field, Protocol, SqlText};
use super::location::{KeyPath, Problem};
use super::values::describe;
use toml::Value;

pub(crate) const KEYS: [&str; 8] = [
    "run",
    "run_file",
    "setup",
    "setup_file",
    "search_path",
    "allow_failure",
    "protocol",
    "clients",
];

const PROTOCOLS: [(&str, Protocol); 2] = [
    ("simple", Protocol::Simple),
    ("prepared", Protocol::Prepared),
];

fn got(path: &KeyPath, what: &str, v: &Value) -> Problem {
    Problem::value(path, format!("{path} must be {what}, got {}", describe(v)))
}

/// One key's value, validated; `*_file` keys are read now, so the text
/// that runs is the text that was checked and recorded.
pub(crate) fn field(key: &str, v: &Value, path: &KeyPath, files: Files) -> Result<Field, Problem> {
    Ok(match key {
        "run" => Field::Run(inline(v, path)?),
        "setup" => Field::SqlSetup(inline(v, path)?),
        "run_file" => Field::Run(file(v, path, files)?),
        "setup_file" => Field::SqlSetup(file(v, path, files)?),
        "search_path" => Field::SearchPath(schemas(v, path)?),
        "allow_failure" => Field::AllowFailure(super::values::boolean(Some(v), path, false)?),
        "clients" => Field::Clients(clients(v, path)?),
        "protocol" => {
            Field::Protocol(super::values::choice(Some(v), path, &PROTOCOLS)?.unwrap_or_default())
        }
        other => {
            return Err(Problem::key(
                path,
                format!("{path}: `{other}` is not an sql key"),
            ))
        }
    })
}

/// Concurrent clients: 1 to 64 (each is a connection of its own).
pub(crate) fn clients(v: &Value, path: &KeyPath) -> Result<u32, Problem> {
    match v {
        Value::Integer(n) if (1..=64).contains(n) => Ok(*n as u32),
        other => Err(got(
            path,
            "an integer from 1 to 64 (concurrent connections)",
            other,
        )),
    }
}

fn inline(v: &Value, path: &KeyPath) -> Result<SqlText, Problem> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Ok(SqlText {
            text: s.clone(),
            file: None,
        }),
        other => Err(got(path, "SQL text (one or more statements)", other)),
    }
}

fn file(v: &Value, path: &KeyPath, files: Files) -> Result<SqlText, Problem> {
    let Value::String(name) = v else {
        return Err(got(path, "the path of a file of SQL statements", v));
    };
    if let Files::Recorded(r) = files {
        let text = r.sql_files.get(name).ok_or_else(|| {
            Problem::value(
                path,
                format!("{path} = {name:?}, but the run recorded no text for that file"),
            )
        })?;
        return Ok(SqlText {
            text: text.clone(),
            file: Some(name.clone()),
        });
    }
    let text = std::fs::read_to_string(name).map_err(|e| {
        let cwd = std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        Problem::value(
            path,
            format!("{path} = {name:?} cannot be read ({e}); paths are relative to the current directory ({cwd})"),
        )
    })?;
    Ok(SqlText {
        text,
        file: Some(name.clone()),
    })
}

fn schemas(v: &Value, path: &KeyPath) -> Result<Vec<String>, Problem> {
    let what = "an array of schema names (e.g. [\"public\"])";
    let Value::Array(items) = v else {
        return Err(got(path, what, v));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::String(s) if !s.is_empty() && !s.contains('\0') => Ok(s.clone()),
            other => Err(got(&path.at(i), "a schema name", other)),
        })
        .collect()
}
