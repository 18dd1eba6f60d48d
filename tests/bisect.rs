//! `runner exec --bisect`: every way a run ends, in `git bisect run`'s
//! exit codes (0 good, 1 bad, 125 skip, 128 stop).
//!
//! Margins: a 2 µs gate on `noop` against itself (pairs differ by tens of
//! ns) passes, and with 4 µs injected it is a regression, on a loaded
//! machine too; no self-check, so nothing depends on its sizing.

mod common;
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
