//! `runner exec --bisect`: every way a run ends, in `git bisect run`'s
//! exit codes (0 good, 1 bad, 125 skip, 128 stop), and the line that says
//! what git is told.
//!
//! Margins: a 2 µs gate on `noop` against itself (pairs differ by tens of
//! ns) passes, and with 4 µs injected it is a regression, on a loaded
//! machine too; no self-check, so nothing depends on its sizing.

use crate::common;
use common::*;

const GATE: &str = r#"
seed = 5
[strategies.noop]
kind = "noop"
[design]
baseline = "noop"
treatment = "noop"
forks = 3
warmup_pairs = 5
pairs = 60
[analysis]
resamples = 200
[gate]
max_slowdown = "2us"
self_check = false
"#;

fn code(dir: &std::path::Path, args: &[&str]) -> (i32, String) {
    let o = run_in(dir, args);
    (o.status.code().expect("exited"), err_of(&o))
}

#[test]
fn a_pass_is_good_and_a_regression_is_bad() {
    let tmp = tempfile::tempdir().unwrap();
    write_spec(tmp.path(), "g", GATE);
    let (c, err) = code(
        tmp.path(),
        &["exec", "g.toml", "--bisect", "--quiet", "--out", "pass"],
    );
    assert_eq!(c, 0, "{err}");
    assert!(err.contains("git bisect: pass: good, exit 0"), "{err}");
    // Recorded like every argument, and rendered back in the Reproduce command.
    let run = read_json(&tmp.path().join("pass/run.json"));
    assert_eq!(run["invocation"]["bisect"], true);
    let report = std::fs::read_to_string(tmp.path().join("pass/report.md")).unwrap();
    assert!(report.contains("--bisect"), "{report}");
    let (c, err) = code(
        tmp.path(),
        &[
            "exec",
            "g.toml",
            "--bisect",
            "--quiet",
            "--out",
            "slow",
            "--set",
            "grid.delay_us=[4]",
        ],
    );
    assert_eq!(c, 1, "{err}");
    assert!(err.contains("git bisect: regression: bad, exit 1"), "{err}");
    // Without --bisect the same verdict is exit 3, as before.
    let (c, _) = code(
        tmp.path(),
        &[
            "exec",
            "g.toml",
            "--quiet",
            "--out",
            "slow2",
            "--set",
            "grid.delay_us=[4]",
        ],
    );
    assert_eq!(c, 3);
}

#[test]
fn a_failed_run_is_skipped_and_bad_input_stops_the_bisection() {
    let tmp = tempfile::tempdir().unwrap();
    write_spec(
        tmp.path(),
        "fails",
        &GATE.replace("kind = \"noop\"", "kind = \"command\"\nargv = [\"false\"]"),
    );
    let (c, err) = code(
        tmp.path(),
        &["exec", "fails.toml", "--bisect", "--quiet", "--out", "f"],
    );
    assert_eq!(c, 125, "{err}");
    assert!(err.contains("false"), "{err}");

    let (c, err) = code(
        tmp.path(),
        &["exec", "missing.toml", "--bisect", "--out", "m"],
    );
    assert_eq!(c, 128, "{err}");
    // A command line clap refuses stops it too (exit 2 would read as "bad").
    let (c, err) = code(tmp.path(), &["exec", "fails.toml", "--bisect", "--bogus"]);
    assert_eq!(c, 128, "{err}");
    assert!(err.contains("--bogus"), "{err}");
    write_spec(
        tmp.path(),
        "ungated",
        &GATE.replace("[gate]\nmax_slowdown = \"2us\"\nself_check = false\n", ""),
    );
    let (c, err) = code(
        tmp.path(),
        &["exec", "ungated.toml", "--bisect", "--out", "u"],
    );
    assert_eq!(c, 128, "{err}");
    assert!(err.contains("--bisect needs a [gate]"), "{err}");
    assert!(!tmp.path().join("u.partial").exists());
}

/// Whether the arms agree depends on the commit: arms whose outputs differ
/// skip it (125) instead of stopping the bisection; without --bisect they
/// are still the file's to fix (exit 2).
#[test]
fn arms_whose_outputs_differ_skip_the_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = GATE
        .replace(
            "[strategies.noop]\nkind = \"noop\"",
            "[strategies.a]\nkind = \"command\"\nargv = [\"echo\", \"a\"]\n[strategies.b]\nkind = \"command\"\nargv = [\"echo\", \"b\"]",
        )
        .replace("baseline = \"noop\"\ntreatment = \"noop\"", "baseline = \"a\"\ntreatment = \"b\"");
    write_spec(tmp.path(), "differ", &spec);
    let (c, err) = code(
        tmp.path(),
        &["exec", "differ.toml", "--bisect", "--quiet", "--out", "d"],
    );
    assert_eq!(c, 125, "{err}");
    assert!(
        err.contains("git bisect: the arms' outputs differ: skip this commit, exit 125"),
        "{err}"
    );
    let (c, err) = code(
        tmp.path(),
        &["exec", "differ.toml", "--quiet", "--out", "d2"],
    );
    assert_eq!(c, 2, "{err}");
}

/// An inconclusive step is measured once more with twice the forks before
/// git is told to skip it. The treatment sleeps 40 ms in every other fork,
/// so the interval over the forks straddles a 10 ms threshold at 3 forks
/// and at 6, however loaded the machine is.
#[test]
fn an_inconclusive_step_is_retried_with_twice_the_forks_then_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    crate::gate::flip_gate(tmp.path());
    let (c, err) = code(
        tmp.path(),
        &["exec", "flip.toml", "--bisect", "--quiet", "--out", "f"],
    );
    assert_eq!(c, 125, "{err}");
    assert!(
        err.contains("gate: inconclusive; running it once more with --set design.forks=6"),
        "{err}"
    );
    assert!(
        err.contains("git bisect: inconclusive: skip this commit, exit 125"),
        "{err}"
    );
    // The folder holds the retry: 6 forks, and the override in its verdict.
    let g = read_json(&tmp.path().join("f/gate.json"));
    assert_eq!(g["overrides"], serde_json::json!(["--set design.forks=6"]));
    let run = read_json(&tmp.path().join("f/run.json"));
    assert_eq!(run["jobs"].as_array().unwrap().len(), 6);
}
