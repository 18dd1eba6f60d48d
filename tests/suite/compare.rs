//! `runner compare` on the real binary: two runs of one spec give a table
//! of changes with seeded intervals; runs of different specs are exit 2
//! naming the keys; different machines are named.

use crate::common;
use common::*;
use std::path::Path;

const SPEC: &str = r#"
name = "cmp"
seed = 4
[strategies.spin]
kind = "spin"
duration_us = 20
[strategies.noop]
kind = "noop"
[design]
baseline = "noop"
treatment = "spin"
forks = 3
warmup_pairs = 3
pairs = 40
[analysis]
resamples = 200
"#;

fn run(tmp: &Path, out: &str, sets: &[&str]) {
    let spec = write_spec(tmp, "cmp", SPEC);
    let mut cmd = runner();
    cmd.current_dir(tmp)
        .args(["exec", spec.to_str().unwrap(), "--out", out, "--quiet"]);
    for s in sets {
        cmd.args(["--set", s]);
    }
    cmd.assert().success();
}

fn compare(tmp: &Path, args: &[&str]) -> std::process::Output {
    runner()
        .current_dir(tmp)
        .arg("compare")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn two_runs_of_one_spec_compare_with_seeded_intervals() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    run(t, "a", &[]);
    // A different title and seed are still the same experiment.
    run(t, "b", &["title=\"today\"", "seed=5"]);
    let o = compare(t, &["a", "b"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.starts_with("# Compare: cmp\n"), "{text}");
    assert!(text.contains("| `noop` (baseline) |"), "{text}");
    assert!(text.contains("| `spin` (treatment) |"), "{text}");
    assert!(
        text.contains("**What separate runs can resolve.**"),
        "{text}"
    );
    assert!(text.contains("Machines: both ran on"), "{text}");
    // The seeds are printed and the output reproduces byte for byte.
    let seed = runner::compare::stream_seed(4, 5, 0, 1);
    assert!(text.contains(&format!("cell 0 arm 1: {seed}")), "{text}");
    assert_eq!(compare(t, &["a", "b"]).stdout, text.as_bytes());
    // --out writes the same Markdown to a file and prints its path.
    let o = compare(t, &["a", "b", "--out", "cmp.md"]);
    assert!(o.status.success());
    assert_eq!(String::from_utf8(o.stdout).unwrap(), "cmp.md\n");
    assert_eq!(std::fs::read_to_string(t.join("cmp.md")).unwrap(), text);
    // But never into a run's folder.
    let o = compare(t, &["a", "b", "--out", "a/cmp.md"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!t.join("a/cmp.md").exists());
}

#[test]
fn runs_of_different_specs_are_refused_naming_the_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    run(t, "a", &[]);
    run(
        t,
        "b",
        &["design.pairs=30", "strategies.spin.duration_us=10"],
    );
    let o = compare(t, &["a", "b"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("are runs of different specs (strategies.spin.duration_ns differ)"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
}

#[test]
fn different_machines_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    run(t, "a", &[]);
    run(t, "b", &[]);
    // run.json's environment is not bound by a digest: another host wrote it.
    let path = t.join("b/run.json");
    let mut v = read_json(&path);
    v["environment"]["hostname"] = serde_json::json!("other-host");
    v["environment"]["cpu_model"] = serde_json::json!("Other CPU");
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let o = compare(t, &["a", "b"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("**Machines differ**"), "{text}");
    assert!(text.contains("B on `other-host` (Other CPU"), "{text}");
}

/// B's baseline is eight times slower: D grew (30 ms to 40 ms) while the
/// treatment's ratio to its own baseline fell (about 3x to about 1.5x). compare says the baselines differ and judges
/// the ratio: the treatment gained. Sleeps keep the margins wide on a
/// busy machine.
#[test]
fn compare_judges_the_ratio_and_says_when_the_baselines_differ() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(
        t,
        "sleeps",
        r#"
name = "sleeps"
seed = 7
[strategies.base]
kind = "command"
argv = ["sh", "base.sh"]
[strategies.work]
kind = "command"
argv = ["sh", "work.sh"]
[design]
baseline = "base"
treatment = "work"
forks = 3
warmup_pairs = 1
pairs = 4
[analysis]
resamples = 200
"#,
    );
    let exec = |out: &str, base: &str, work: &str| {
        std::fs::write(t.join("base.sh"), format!("sleep {base}\n")).unwrap();
        std::fs::write(t.join("work.sh"), format!("sleep {work}\n")).unwrap();
        runner()
            .current_dir(t)
            .args(["exec", spec.to_str().unwrap(), "--out", out, "--quiet"])
            .assert()
            .success();
    };
    exec("a", "0.01", "0.04");
    exec("b", "0.08", "0.12");
    let o = compare(t, &["a", "b"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("**The baselines differ**: `base` ran at"),
        "{text}"
    );
    assert!(text.contains("| speed ratio, B / A [95 % CI] |"), "{text}");
    assert!(text.contains("the treatment gained"), "{text}");
    assert!(!text.contains("the treatment lost ground"), "{text}");
}

/// Runs of one fork and one pair: nothing to draw an interval from, so
/// every interval reads "n/a (one run)" beside its value, by the digit rule
/// of a lone value, never as a point such as `-55.50947 [-55.50947,
/// -55.50947] µs`, and no direction is claimed.
#[test]
fn an_interval_from_one_run_reads_n_a() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let one = ["design.forks=1", "design.pairs=1", "design.warmup_pairs=0"];
    run(t, "a", &one);
    run(t, "b", &[&one[..], &["seed=5"]].concat());
    let o = compare(t, &["a", "b"]);
    assert!(o.status.success(), "{}", err_of(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let point = regex::Regex::new(r"\[(-?[0-9.]+)x?, (-?[0-9.]+)x?\]").unwrap();
    for c in point.captures_iter(&text) {
        assert_ne!(c[1], c[2], "a point printed as an interval:\n{text}");
    }
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("| `spin`") || l.starts_with("| `noop`"))
        .collect();
    // The effect's row and each arm's: the value, then n/a, no verdict.
    assert_eq!(rows.len(), 3, "{text}");
    for row in &rows {
        assert!(row.contains(", n/a (one run) |"), "{row}");
        assert!(row.ends_with("| n/a (one run) |"), "{row}");
        assert!(!row.contains("faster") && !row.contains("slower"), "{row}");
        assert!(
            !row.contains(" to "),
            "one fork's median is no range: {row}"
        );
    }
    // Digits: the value beside n/a is a lone value, three significant
    // digits (the issue's was printed with seven).
    let value = regex::Regex::new(r"\| -?([0-9.]+)x?(?: [nµm]?s)?, n/a \(one run\)").unwrap();
    let mut seen = 0;
    for c in value.captures_iter(&text) {
        let digits = c[1].replace('.', "");
        let significant = digits.trim_start_matches('0');
        assert!(significant.len() <= 3, "{}:\n{text}", &c[0]);
        seen += 1;
    }
    assert_eq!(seen, 6, "{text}");
    assert!(!text.contains("about ± 0"), "{text}");
}
