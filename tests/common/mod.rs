//! Helpers for integration tests that run the real `runner` binary.
#![allow(dead_code)]

use assert_cmd::Command;
use std::path::{Path, PathBuf};

/// The binary, with the developer's database URL, a scheduler's shard
/// variables and the host name override removed so a test's result does
/// not depend on the environment it runs in (e.g. inside a Slurm job).
pub fn runner() -> Command {
    Command::from_std(runner_std())
}

/// [`runner`] as a plain `std::process::Command`, for a test that needs to
/// spawn it (its pid, its process group).
pub fn runner_std() -> std::process::Command {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("runner"));
    for var in [
        "RUNNER_DATABASE_URL",
        "SLURM_ARRAY_TASK_ID",
        "JOB_COMPLETION_INDEX",
        "RUNNER_HOSTNAME",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("XDG_RUNTIME_DIR", runtime_dir());
    cmd
}

/// A runtime folder of the calling test's own (libtest names each test's
/// thread after it), so the CPU locks of runners that other tests start
/// at the same time leave this test's placement as it would be alone. A
/// test that means runners to meet sets one folder for all of them.
pub fn runtime_dir() -> PathBuf {
    let thread = std::thread::current();
    let name: String = thread
        .name()
        .unwrap_or("main")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("runtime")
        .join(name);
    std::fs::create_dir_all(&dir).expect("a runtime folder for the test");
    dir
}

/// A small, fast A/A spec on the in-memory preview.
pub const SMALL_AA: &str = r#"
name = "small"
title = "Small A/A"
description = "A test run."
seed = 7

[workload]
plans = 4
months = 12

[strategies.memory]
kind = "in-memory"

[design]
baseline = "memory"
treatment = "memory"
forks = 2
warmup_pairs = 5
pairs = 40

[grid]
delay_us = [0, 50]

[analysis]
resamples = 200
"#;

pub fn write_spec(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).expect("write spec");
    path
}

/// An experiment of two `sql` arms `a` and `b` (their `sql`, `setup`
/// and other keys) on `search_path = ["public"]`, with `database` as its
/// `[database]` table: 2 forks of 1 warm-up and 5 measured pairs.
pub fn sql_pair(database: &str, a: &str, b: &str) -> String {
    format!(
        r#"
[database]
{database}
[strategies.a]
kind = "sql"
search_path = ["public"]
{a}
[strategies.b]
kind = "sql"
search_path = ["public"]
{b}
[design]
baseline = "a"
treatment = "b"
forks = 2
warmup_pairs = 1
pairs = 5
"#
    )
}

/// `runner ARGS[0] NAME.toml ARGS[1..]` in `dir`, on the database at
/// `url`, with `body` written as NAME.toml.
pub fn run_on_database(
    dir: &Path,
    url: &str,
    args: &[&str],
    name: &str,
    body: &str,
) -> std::process::Output {
    let file = write_spec(dir, name, body);
    runner()
        .env("RUNNER_DATABASE_URL", url)
        .current_dir(dir)
        .arg(args[0])
        .arg(file)
        .args(&args[1..])
        .output()
        .unwrap()
}

/// The text of a report's section `## heading`, up to the next `## `
/// heading.
pub fn section<'a>(md: &'a str, heading: &str) -> Option<&'a str> {
    md.split(&format!("## {heading}"))
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
}

/// The rows of a CSV file as maps from column to value.
pub fn csv_rows(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_path(path).expect("open csv");
    let header = reader.headers().unwrap().iter().map(String::from).collect();
    let rows = reader
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

pub fn col(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name}"))
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read json")).expect("valid json")
}

pub mod committed;
pub mod faults;
pub mod leftovers;
pub mod needs;
pub mod shards;
pub mod svg;

pub use needs::*;

/// `url` with its database name replaced by `name`.
pub fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let after_host = base
        .find('@')
        .map_or(base.find("//").map_or(0, |i| i + 2), |i| i + 1);
    let host_end = base[after_host..]
        .find('/')
        .map_or(base.len(), |i| after_host + i);
    format!("{}/{name}{query}", &base[..host_end])
}

/// Creates a fresh database named after this process and a counter.
#[cfg(feature = "postgres")]
pub fn private_database(url: &str) -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let name = format!(
        "runner_test_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    );
    let mut client = postgres::Client::connect(url, postgres::NoTls)
        .unwrap_or_else(|e| panic!("connecting to RUNNER_DATABASE_URL: {e}"));
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap_or_else(|e| panic!("CREATE DATABASE {name} (the role needs CREATEDB): {e}"));
    with_database(url, &name)
}

/// `runner exec SPEC --quiet --out DIR/OUT EXTRA...` in DIR, which must succeed.
pub fn exec_ok(dir: &Path, spec: &Path, out: &str, extra: &[&str]) -> PathBuf {
    let out = dir.join(out);
    runner()
        .current_dir(dir)
        .arg("exec")
        .arg(spec)
        .arg("--quiet")
        .arg("--out")
        .arg(&out)
        .args(extra)
        .assert()
        .success();
    out
}

/// Every file under `dir` (recursively) with its bytes, and every symbolic
/// link with its target: what "nothing the user had was changed" compares.
pub fn tree(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    fn walk(root: &Path, at: &Path, out: &mut std::collections::BTreeMap<PathBuf, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(at) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            let ft = e.file_type().unwrap();
            if ft.is_symlink() {
                let to = std::fs::read_link(&path).unwrap();
                out.insert(rel, format!("-> {}", to.display()).into_bytes());
            } else if ft.is_dir() {
                out.insert(rel.join(""), b"<dir>".to_vec());
                walk(root, &path, out);
            } else {
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    walk(dir, dir, &mut out);
    out
}

/// `runner ARGS...` in `dir`, with RUNNER_FAULT removed unless given.
pub fn run_in(dir: &Path, args: &[&str]) -> std::process::Output {
    runner()
        .current_dir(dir)
        .env_remove("RUNNER_FAULT")
        .args(args)
        .output()
        .unwrap()
}

/// stderr as text.
pub fn err_of(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts exit 2 with one `error:` line containing every fragment, and no panic.
pub fn assert_refused(o: &std::process::Output, fragments: &[&str]) {
    let err = err_of(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for f in fragments {
        assert!(err.contains(f), "expected {f:?} in: {err}");
    }
}

/// Copies a folder tree (files and folders only).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// Edits a JSON file in place.
pub fn edit_json(path: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let mut v = read_json(path);
    edit(&mut v);
    std::fs::write(path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

/// Hex SHA-256 of a text, as run.json records them.
pub fn sha256_hex(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
