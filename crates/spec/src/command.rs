//! The keys of a `kind = "command"` strategy, one reader per key, so a key
//! read from the table and the same key swept from `[grid]` follow one rule.

use super::context::Files;
use super::kinds::Field;
use super::location::{KeyPath, Problem};
use super::placeholder;
use super::values::describe;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Value;

pub(crate) const KEYS: [&str; 11] = [
    "argv",
    "shell",
    "cwd",
    "env",
    "stdin",
    "setup",
    "teardown",
    "prepare",
    "timeout_s",
    "allow_failure",
    "compare_output",
];

fn got(path: &KeyPath, what: &str, v: &Value) -> Problem {
    Problem::value(path, format!("{path} must be {what}, got {}", describe(v)))
}

/// One key's value, validated.
pub(crate) fn field(key: &str, v: &Value, path: &KeyPath, files: Files) -> Result<Field, Problem> {
    Ok(match key {
        "argv" => Field::Argv(words(v, path, files)?),
        "setup" => Field::Setup(words(v, path, files)?),
        "teardown" => Field::Teardown(words(v, path, files)?),
        "prepare" => Field::Prepare(words(v, path, files)?),
        "shell" => match v {
            Value::String(s) if !s.trim().is_empty() => Field::Shell(s.clone()),
            other => {
                return Err(got(
                    path,
                    "a non-empty shell command line (run with /bin/sh -c)",
                    other,
                ))
            }
        },
        "cwd" => Field::Cwd(existing(v, path, "a directory", Path::is_dir, files)?),
        "stdin" => Field::Stdin(existing(v, path, "a file", Path::is_file, files)?),
        "env" => Field::Env(env(v, path)?),
        "timeout_s" => Field::TimeoutNs(seconds(v, path)?),
        "allow_failure" => Field::AllowFailure(flag(v, path, false)?),
        "compare_output" => Field::CompareOutput(flag(v, path, true)?),
        other => {
            return Err(Problem::key(
                path,
                format!("{path}: `{other}` is not a command key"),
            ))
        }
    })
}

fn flag(v: &Value, path: &KeyPath, default: bool) -> Result<bool, Problem> {
    super::values::boolean(Some(v), path, default)
}

/// An argv: a non-empty array of strings whose program is found now when
/// it can be (no placeholder in it): a typo fails before the run, not in it.
fn words(v: &Value, path: &KeyPath, files: Files) -> Result<Vec<String>, Problem> {
    let what = "a non-empty array of strings, the program first (e.g. [\"gzip\", \"-1\"])";
    let Value::Array(items) = v else {
        return Err(got(path, what, v));
    };
    if items.is_empty() {
        return Err(got(path, what, v));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item {
            Value::String(s) => out.push(s.clone()),
            other => return Err(got(&path.at(i), "a string", other)),
        }
    }
    let program = &out[0];
    if program.is_empty() {
        return Err(Problem::value(
            &path.at(0),
            format!("{} must name a program, got \"\"", path.at(0)),
        ));
    }
    if !files.recorded() && placeholder::names(program).is_empty() && !program_exists(program) {
        return Err(Problem::value(
            &path.at(0),
            format!(
                "{} = {program:?} is not a program runner can find ({}); give a program on PATH or a path to an executable",
                path.at(0),
                if program.contains('/') { "no executable file there" } else { "not on PATH" }
            ),
        ));
    }
    Ok(out)
}

/// Whether `program` would be found: a path with a `/` (relative ones are
/// not checked, they depend on `cwd`), or an executable file on PATH.
fn program_exists(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = Path::new(program);
        return p.is_relative() || executable(p);
    }
    let path = runner_core::settings::get()
        .path
        .clone()
        .unwrap_or_default();
    std::env::split_paths(&path).any(|dir| executable(&dir.join(program)))
}

/// A path that must exist now, unless it holds a placeholder.
fn existing(
    v: &Value,
    path: &KeyPath,
    what: &str,
    test: fn(&Path) -> bool,
    files: Files,
) -> Result<String, Problem> {
    let Value::String(s) = v else {
        return Err(got(path, &format!("a path to {what}"), v));
    };
    if !files.recorded() && placeholder::names(s).is_empty() && !test(Path::new(s)) {
        let cwd = std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        return Err(Problem::value(
            path,
            format!(
                "{path} = {s:?} is not {what}; paths are relative to the current directory ({cwd})"
            ),
        ));
    }
    Ok(s.clone())
}

fn env(v: &Value, path: &KeyPath) -> Result<BTreeMap<String, String>, Problem> {
    let Value::Table(t) = v else {
        return Err(got(path, "a table of NAME = \"value\" strings", v));
    };
    let mut out = BTreeMap::new();
    for (name, value) in t {
        let here = path.child(name);
        if name.is_empty() || name.contains('=') || name.contains('\0') {
            return Err(Problem::key(
                &here,
                format!(
                    "{here}: {name:?} cannot be an environment variable name (no `=`, not empty)"
                ),
            ));
        }
        match value {
            Value::String(s) => out.insert(name.clone(), s.clone()),
            other => return Err(got(&here, "a string", other)),
        };
    }
    Ok(out)
}

/// A positive number of seconds (fractions allowed), in whole nanoseconds.
fn seconds(v: &Value, path: &KeyPath) -> Result<u64, Problem> {
    let what = "a positive number of seconds (e.g. 10 or 0.5)";
    let s = match v {
        Value::Integer(i) if *i > 0 => *i as f64,
        Value::Float(f) if f.is_finite() && *f > 0.0 => *f,
        other => return Err(got(path, what, other)),
    };
    let ns = (s * 1e9).round();
    if !(1.0..=1e18).contains(&ns) {
        return Err(got(path, what, v));
    }
    Ok(ns as u64)
}
