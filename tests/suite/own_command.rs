//! `kind = "command"` through the real binary (docs/guide/own-code.md): real
//! processes, real clock. Timing assertions use margins a loaded machine
//! cannot break (tens of milliseconds against a known sleep).

use crate::common;
use common::faults::{exec, stderr};
use common::*;
use std::path::Path;

fn spec(dir: &Path, name: &str, body: &str) -> std::path::PathBuf {
    let text = format!("name = \"{name}\"\nseed = 11\n{body}\n[analysis]\nresamples = 200\n");
    write_spec(dir, name, &text)
}

/// Each fork's verdicts and median D, per cell: (verdict, median_ns).
fn forks(analysis: &serde_json::Value, cell: usize) -> Vec<(String, f64)> {
    analysis["cells"][cell]["forks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["verdict"].as_str().unwrap().to_string(),
                f["median_ns"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_known_extra_sleep_is_seen_by_every_fork_at_its_size() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = spec(
        tmp.path(),
        "sleep",
        r#"
[strategies.short]
kind = "command"
argv = ["sleep", "0.001"]
[strategies.long]
kind = "command"
argv = ["sleep", "0.051"]
[design]
baseline = "short"
treatment = "long"
forks = 3
warmup_pairs = 1
pairs = 12
"#,
    );
    let out = exec_ok(tmp.path(), &spec, "out", &[]);
    let a = read_json(&out.join("analysis.json"));
    for (verdict, median) in forks(&a, 0) {
        assert_eq!(verdict, "seen");
        // 50 ms extra; a loaded machine adds noise, not 25 ms of bias.
        assert!((25e6..150e6).contains(&median), "median D {median} ns");
    }
    // Usage was recorded per run and summarised, paired.
    let (header, rows) = csv_rows(&out.join("pairs.csv"));
    assert_eq!(header.len(), 17, "{header:?}");
    let rss = col(&header, "treatment_max_rss_kib");
    assert!(rows.iter().all(|r| r[rss].parse::<u64>().unwrap() > 0));
    let usage = &a["cells"][0]["usage"];
    assert!(usage["user_ns"]["difference"].is_number(), "{usage}");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("## CPU time and memory"), "{report}");
    assert!(report.contains("`long` runs `sleep 0.051`"), "{report}");
}

#[test]
fn an_aa_command_reports_no_difference_and_sees_a_large_delay() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = spec(
        tmp.path(),
        "aa",
        r#"
[strategies.t]
kind = "command"
argv = ["true"]
[design]
baseline = "t"
treatment = "t"
forks = 4
warmup_pairs = 2
pairs = 30
[grid]
delay_us = [0, 20000]
"#,
    );
    let out = exec_ok(tmp.path(), &spec, "out", &[]);
    let a = read_json(&out.join("analysis.json"));
    let false_positives = forks(&a, 0).iter().filter(|(v, _)| v != "not seen").count();
    assert!(
        false_positives <= 2,
        "{false_positives} of 4 forks saw a difference at d = 0"
    );
    // The injected delay works for commands: inside the timed region, after the reap.
    for (verdict, median) in forks(&a, 1) {
        assert_eq!(verdict, "seen");
        assert!(
            (15e6..60e6).contains(&median),
            "median D {median} ns at d = 20 ms"
        );
    }
    let spin = a["cells"][1]["calibration"]["spin_median_ns"]
        .as_f64()
        .unwrap();
    // The treatment's wait minus the baseline's (which is not quite 0).
    assert!(spin >= 19.99e6, "{spin}");
}

#[test]
fn a_failing_command_stops_the_run_naming_command_status_and_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    // Succeeds 7 times (the checks and the first pairs), then fails.
    let spec = spec(
        tmp.path(),
        "fails",
        r#"
[strategies.c]
kind = "command"
argv = ["sh", "-c", "n=$(cat {scratch}/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > {scratch}/n; [ $n -lt 8 ] || { echo disk full >&2; exit 5; }"]
[design]
baseline = "c"
treatment = "c"
forks = 1
warmup_pairs = 0
pairs = 20
"#,
    );
    let o = exec(tmp.path(), &spec, "out", None, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("command `sh -c"), "{err}");
    assert!(
        err.contains("of strategy `c` ended with exit 5 on input "),
        "{err}"
    );
    assert!(err.contains("disk full"), "{err}");
    // No fork finished: nothing is kept to resume, nothing blocks the next exec.
    assert!(
        err.contains("no fork had finished, so nothing was kept"),
        "{err}"
    );
    assert!(!err.contains("--resume"), "{err}");
    assert!(!tmp.path().join("out.partial").exists());
    assert!(!err.contains("panicked"), "{err}");

    // allow_failure keeps going and times the failing runs too.
    let spec = spec_with_allow(tmp.path());
    exec_ok(tmp.path(), &spec, "allowed", &[]);
}

/// A command that fails every other run (a counter in its scratch folder)
/// fails at random as far as runner can tell: the error says so, not that
/// it carries state, and `allow_failure`, set by `--set` on the table's
/// quoted name as `runner ab` names it, times it, failures included.
#[test]
fn a_command_that_fails_at_random_is_said_to_and_allow_failure_runs_it() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = spec(
        tmp.path(),
        "flaky",
        r#"
[strategies.ok]
kind = "command"
argv = ["true"]
[strategies."scratch/flaky.sh"]
kind = "command"
shell = "n=$(cat {scratch}/n 2>/dev/null || echo 0); echo $((n+1)) > {scratch}/n; [ $((n % 2)) -eq 0 ]"
[design]
baseline = "ok"
treatment = "scratch/flaky.sh"
forks = 2
warmup_pairs = 1
pairs = 6
"#,
    );
    let o = exec(tmp.path(), &spec, "out", None, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("of strategy `scratch/flaky.sh` ended with exit 1 on input ")
            && err.contains("it succeeded on this same input before, so it fails at random"),
        "{err}"
    );
    assert!(!err.contains("carries state"), "{err}");
    let out = exec_ok(
        tmp.path(),
        &spec,
        "allowed",
        &[
            "--set",
            r#"strategies."scratch/flaky.sh".allow_failure=true"#,
        ],
    );
    let run = read_json(&out.join("run.json"));
    let flaky = &run["spec"]["experiment"]["strategies"]["scratch/flaky.sh"];
    assert_eq!(flaky["allow_failure"], true, "{flaky}");
    let (_, rows) = csv_rows(&out.join("pairs.csv"));
    assert_eq!(rows.len(), 2 * 7);
}

fn spec_with_allow(dir: &Path) -> std::path::PathBuf {
    spec(
        dir,
        "allowed",
        r#"
[strategies.c]
kind = "command"
argv = ["sh", "-c", "exit 3"]
allow_failure = true
[design]
baseline = "c"
treatment = "c"
forks = 1
warmup_pairs = 0
pairs = 5
"#,
    )
}

#[test]
fn different_stdout_is_caught_before_timing() {
    let tmp = tempfile::tempdir().unwrap();
    let body = r#"
[strategies.a]
kind = "command"
argv = ["sh", "-c", "echo same; echo $0", "a"]
[strategies.b]
kind = "command"
argv = ["sh", "-c", "echo same; echo $0", "b"]
[design]
baseline = "a"
treatment = "b"
forks = 1
warmup_pairs = 0
pairs = 5
"#;
    let s = spec(tmp.path(), "differ", body);
    let o = exec(tmp.path(), &s, "out", None, &[]);
    let err = stderr(&o);
    // The experiment file must change: exit 2, naming what to change, and
    // no resume command (a resume runs the same file).
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("set `compare_output = false` in [strategies.a] and [strategies.b]"),
        "{err}"
    );
    assert!(!err.contains("--resume"), "{err}");
    assert!(
        err.contains(
            "baseline `a` (command) and treatment `b` (command) disagree on the same input"
        ),
        "{err}"
    );
    assert!(err.contains("first at line 2: \"a\" vs \"b\""), "{err}");
    let pairs = tmp.path().join("out.partial");
    assert!(!pairs.join("pairs.csv").exists());
    // Told not to compare output, the same spec runs.
    let s = spec(
        tmp.path(),
        "blind",
        &body.replace("\"b\"]\n", "\"b\"]\ncompare_output = false\n"),
    );
    exec_ok(tmp.path(), &s, "blind", &[]);
}

/// Every run logs `ARM INPUT WORD`; the log shows the pairs.
fn logging_spec(dir: &Path, name: &str, seed: u64, log: &Path) -> std::path::PathBuf {
    let log = log.display();
    let body = format!(
        r#"
[strategies.b]
kind = "command"
argv = ["sh", "-c", "echo b $0 {{word}} >> {log}", "{{input}}"]
[strategies.t]
kind = "command"
shell = "echo t {{input}} {{word}} >> {log}"
[design]
baseline = "b"
treatment = "t"
forks = 2
warmup_pairs = 1
pairs = 6
schedule = "sequential"
[grid]
word = ["alpha", "beta"]
"#
    );
    let text = format!("name = \"{name}\"\nseed = {seed}\n{body}\n[analysis]\nresamples = 200\n");
    write_spec(dir, name, &text)
}

fn log_lines(log: &Path) -> Vec<(String, u64, String)> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Vec<&str> = l.split(' ').collect();
            (v[0].to_string(), v[1].parse().unwrap(), v[2].to_string())
        })
        .collect()
}

#[test]
fn input_is_shared_by_a_pair_fixed_by_the_seed_and_grid_values_reach_argv() {
    let tmp = tempfile::tempdir().unwrap();
    let runs: Vec<Vec<(String, u64, String)>> = [(1, "a"), (1, "b"), (2, "c")]
        .iter()
        .map(|&(seed, tag)| {
            let log = tmp.path().join(format!("{tag}.log"));
            let s = logging_spec(tmp.path(), tag, seed, &log);
            exec_ok(tmp.path(), &s, tag, &[]);
            log_lines(&log)
        })
        .collect();
    let lines = &runs[0];
    // 2 cells x 2 forks x (4 check runs + 7 pairs x 2 runs).
    assert_eq!(lines.len(), 2 * 2 * (4 + 14));
    for fork in lines.chunks(18) {
        // The checks, then each pair: two runs, one per arm, on one input.
        for pair in fork.chunks(2) {
            assert_ne!(pair[0].0, pair[1].0, "{pair:?}");
            assert_eq!(pair[0].1, pair[1].1, "one input per pair: {pair:?}");
            assert!(pair[0].1 < 1 << 63);
        }
        assert_eq!(fork[0].1, fork[2].1, "the checks run one input twice");
        let inputs: std::collections::BTreeSet<u64> = fork.iter().map(|l| l.1).collect();
        assert!(inputs.len() >= 7, "pairs get their own inputs");
    }
    let words: std::collections::BTreeSet<&str> = lines.iter().map(|l| l.2.as_str()).collect();
    assert_eq!(words, ["alpha", "beta"].into());
    assert_eq!(runs[1], runs[0], "same seed, same inputs and order");
    assert_ne!(runs[2], runs[0], "another seed, other inputs");
}

/// A sweep that puts an A/A group beside an A/B one: the A/A group gets a
/// threshold and false positives, the A/B group says its delays measure
/// nothing about the harness.
#[test]
fn an_ab_group_beside_an_aa_group_gets_no_threshold() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = spec(
        tmp.path(),
        "mixed",
        r#"
[strategies.a]
kind = "command"
argv = ["true"]
[strategies.b]
kind = "command"
argv = ["true"]
compare_output = false
[design]
baseline = "a"
treatment = "b"
forks = 2
warmup_pairs = 1
pairs = 10
[grid]
delay_us = [0, 20000]
"strategies.b.argv" = [["true"], ["sh", "-c", "exit 0"]]
"#,
    );
    let out = exec_ok(tmp.path(), &spec, "out", &[]);
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    let finding = &report[report.find("## Finding").unwrap()..report.find("## Setup").unwrap()];
    let paragraph = |label: &str| {
        finding
            .split("\n\n")
            .find(|p| p.starts_with(&format!("**{label}")))
            .unwrap_or_else(|| panic!("no paragraph for {label} in {finding}"))
            .to_string()
    };
    let aa = paragraph("b.argv = true.");
    assert!(aa.contains("With no delay injected"), "{aa}");
    assert!(!aa.contains("The two arms differ"), "{aa}");
    let ab = paragraph("b.argv = sh -c 'exit 0'.");
    assert!(ab.contains("The two arms differ"), "{ab}");
    assert!(
        !ab.contains("threshold is") && !ab.contains("false positive"),
        "{ab}"
    );
}

/// The terminal summary's table keeps its columns aligned when a swept key
/// makes labels longer than the usual column: every row's fork count starts
/// where the header's "forks" does.
#[test]
fn the_summary_table_stays_aligned_with_long_labels() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = spec(
        tmp.path(),
        "long",
        r#"
[strategies.a]
kind = "command"
argv = ["true"]
[design]
baseline = "a"
treatment = "a"
forks = 1
warmup_pairs = 0
pairs = 5
[grid]
delay_us = [0]
"strategies.a.argv" = [["true"], ["sh", "-c", "exit 0 # a comment long enough to pass the column"]]
"#,
    );
    let o = run_in(
        tmp.path(),
        &["exec", spec.to_str().unwrap(), "--out", "out"],
    );
    assert!(o.status.success(), "{}", err_of(&o));
    let stdout = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    let header = lines
        .iter()
        .position(|l| l.contains(" forks ") && l.contains("pooled median"))
        .unwrap_or_else(|| panic!("no table in {stdout}"));
    let column = lines[header].find(" forks ").unwrap() + 1;
    let rows = &lines[header + 1..header + 3];
    assert!(rows.iter().any(|r| r.len() > 40), "{stdout}");
    for row in rows {
        let at = row.char_indices().nth(column).map(|(i, _)| i).unwrap();
        let count = row[at..].split_whitespace().next().unwrap();
        assert!(
            row[..at].ends_with(' ') && count.ends_with("/1") && count.len() == 3,
            "{stdout}"
        );
    }
}
