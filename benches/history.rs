//! `cargo bench --bench history`: how long `runner history` takes over 50
//! committed versions of a report folder (goal: under 5 s). No timed
//! assertion; prints one line, committed as `benches/history.txt`.
//!
//! Set-up (untimed): a throwaway git repository in a temporary folder, a
//! small `noop` experiment (4 forks x 50 pairs, 2 cells), run 50 times
//! with the release binary and committed after each run, so each commit
//! is a version that passes every check. Then `runner history` on it,
//! best of 3: reading the 50 versions from git, checking each by its
//! digests, analysing each again, and writing history.md and the plots.

// Helpers shared by this crate's modules are `pub` for them; nothing
// outside the test binary can reach them anyway.
#![allow(unreachable_pub)]

use std::path::Path;
use std::process::Command;
use std::time::Instant;

const VERSIONS: usize = 50;

const SPEC: &str = r#"
name = "bench"
title = "A small noop run, committed 50 times"
seed = 50
[strategies.noop]
kind = "noop"
[design]
baseline = "noop"
treatment = "noop"
forks = 4
warmup_pairs = 5
pairs = 50
[grid]
delay_us = [0, 1]
[analysis]
resamples = 500
"#;

fn run(cmd: &mut Command) {
    let o = cmd.output().expect("runs");
    assert!(
        o.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn git(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com");
    c
}

fn runner(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_runner"));
    c.current_dir(dir).env_remove("RUNNER_DATABASE_URL");
    c
}

fn main() {
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let repo = tmp.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    run(git(&repo).args(["init", "-q"]));
    std::fs::write(repo.join("bench.toml"), SPEC).unwrap();
    for i in 1..=VERSIONS {
        run(runner(&repo).args(["exec", "bench.toml", "--quiet"]));
        run(git(&repo).args(["add", "-A"]));
        run(git(&repo).args(["commit", "-q", "-m", &format!("version {i}")]));
    }
    let mut best = f64::MAX;
    for _ in 0..3 {
        let start = Instant::now();
        run(runner(&repo).args(["history", "reports/bench", "--out", "history"]));
        best = best.min(start.elapsed().as_secs_f64());
    }
    let md = std::fs::read_to_string(repo.join("history/history.md")).unwrap();
    assert!(md.contains(&format!("{VERSIONS} hold a run that passed its checks")));
    println!(
        "history: {VERSIONS} committed versions of a 2-cell x 4-fork x 50-pair report folder: {best:.2} s (best of 3; goal < 5 s)"
    );
}
