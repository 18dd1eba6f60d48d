//! The committed report folders are chosen so that the README's first command
//! regenerates the same kind of report it overwrites: run on a fresh clone
//! (no database), `exec experiments/aa.toml` rewrites only `reports/aa/`,
//! which is itself an embedded-SQLite run, and leaves every other committed
//! report (the PostgreSQL ones under names of their own) byte for byte.
//! The reports are HEAD's (`common::committed`), whatever a run has since
//! rewritten in the working tree.

use crate::common;
use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The arguments after `cargo run --release --` of the README's first
/// command, e.g. `["exec", "experiments/aa.toml"]`.
fn first_readme_command() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let block = readme
        .split("```sh\n")
        .nth(1)
        .expect("README.md has a sh block");
    let line = block.lines().next().unwrap();
    let command = line.split('#').next().unwrap().trim();
    let args = shlex::split(command).expect("the first command parses");
    let at = args
        .iter()
        .position(|a| a == "--")
        .expect("the first command is `cargo run --release -- ...`");
    args[at + 1..].to_vec()
}

/// Every file under `dir`, by path relative to it, with its bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                let rel = path.strip_prefix(base).unwrap().to_path_buf();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn backend(run_json: &Path) -> String {
    read_json(run_json)["database"]["backend"]
        .as_str()
        .unwrap_or("none")
        .to_string()
}

#[test]
#[cfg_attr(not(runner_git), ignore = "SKIPPED: not a git checkout")]
fn the_first_readme_command_rewrites_only_the_report_of_its_own_kind() {
    let args = first_readme_command();
    assert_eq!(args[0], "exec", "{args:?}");
    let spec = Path::new(&args[1]);
    let name = spec.file_stem().unwrap().to_string_lossy().into_owned();

    // A fresh clone's experiments and reports, in a scratch directory.
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    copy_tree(&root().join("experiments"), &t.join("experiments"));
    common::committed::extract_reports(t);
    let before = files(&t.join("reports"));
    let committed = t.join("reports").join(&name);
    assert!(
        committed.join("run.json").is_file(),
        "reports/{name} is committed"
    );

    // The command as written, made small (runner() removes RUNNER_DATABASE_URL).
    runner()
        .current_dir(t)
        .args(&args)
        .args([
            "--quiet",
            "--set",
            "design.forks=2",
            "--set",
            "design.warmup_pairs=2",
            "--set",
            "design.pairs=20",
            "--set",
            "grid.delay_us=[0, 5]",
            "--set",
            "analysis.resamples=100",
        ])
        .assert()
        .success();

    let after = files(&t.join("reports"));
    let prefix = PathBuf::from(&name);
    let changed: Vec<&PathBuf> = after
        .keys()
        .chain(before.keys())
        .filter(|p| before.get(*p) != after.get(*p))
        .collect();
    // The report it replaces moves to reports/NAME.old (docs/guide/output-folder.md), which .gitignore keeps out of commits; nothing else changes.
    let old = PathBuf::from(format!("{name}.old"));
    let outside: Vec<&&PathBuf> = changed
        .iter()
        .filter(|p| !p.starts_with(&prefix) && !p.starts_with(&old))
        .collect();
    assert!(
        outside.is_empty(),
        "the first README command changed files outside reports/{name}/: {outside:?}"
    );
    assert!(
        changed.iter().any(|p| p.ends_with("report.md")),
        "it rewrote reports/{name}/report.md"
    );
    // The record of runner's files there lists the .gitignore too.
    assert!(after.contains_key(&old.join(".gitignore")), "{after:?}");
    for (p, bytes) in &before {
        if p.starts_with(&prefix) && !p.ends_with(".runner-files.json") {
            let moved = old.join(p.strip_prefix(&prefix).unwrap());
            assert_eq!(
                after.get(&moved),
                Some(bytes),
                "{} kept as {}",
                p.display(),
                moved.display()
            );
        }
    }
    // The same kind of report: the committed one ran on the backend a
    // fresh clone runs on.
    let fresh = backend(&t.join("reports").join(&name).join("run.json"));
    assert_eq!(fresh, "sqlite");
    assert_eq!(
        backend(&committed.join("run.json")),
        fresh,
        "reports/{name} must hold the kind of run the README's first command makes"
    );
}

/// The PostgreSQL reports live under names that no experiment's default
/// output uses, and their Reproduce command names their folder and server.
#[test]
#[cfg_attr(not(runner_git), ignore = "SKIPPED: not a git checkout")]
fn committed_postgres_reports_reproduce_into_their_own_folder() {
    let mut found = 0;
    for dir in common::committed::reports() {
        if backend(&dir.join("run.json")) != "postgres" {
            continue;
        }
        found += 1;
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.ends_with("-postgres"), "{name}");
        let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
        let command = report
            .split("## Reproduce\n\n```sh\n")
            .nth(1)
            .and_then(|s| s.lines().next())
            .unwrap_or_else(|| panic!("{name}: no Reproduce command"));
        assert!(
            command.starts_with("RUNNER_DATABASE_URL=postgres://"),
            "{name}: {command}"
        );
        assert!(
            command.contains(&format!("--out reports/{name}")),
            "{name}: {command}"
        );
    }
    assert!(
        found >= 3,
        "expected the PostgreSQL study reports, found {found}"
    );
}
