//! Instructions beside time (docs/guide/instructions.md), through the real
//! binary and the real valgrind: counted pairs, their ratio against what
//! cachegrind reports by hand, an A/A on counts, a gate on counts, a
//! sequential design that stops at its minimum, and the refusals. Counts
//! of a deterministic program are the same on a loaded machine, so these
//! are not timing tests: their margins are the counts' own.

use crate::common;
use common::needs::valgrind;
use common::*;
use std::path::{Path, PathBuf};

/// The loop both arms run, at `n` iterations: mawk (Debian's awk) executes
/// a few hundred instructions per iteration on top of its start-up.
fn awk(n: u64) -> String {
    format!("BEGIN{{for(i=0;i<{n};i++)s+=i}}")
}

/// Iterations of the baseline's loop: 20 000 is a few milliseconds
/// natively and a few hundred under valgrind.
const N: u64 = 20_000;

fn spec(dir: &Path, name: &str, body: &str) -> PathBuf {
    let text = format!("name = \"{name}\"\nseed = 5\n{body}\n[analysis]\nresamples = 200\n");
    write_spec(dir, name, &text)
}

/// Two awk arms at `n` and `m` iterations, counted (and timed with `time`).
fn two_loops(n: u64, m: u64, design: &str) -> String {
    format!(
        r#"
[strategies.small]
kind = "command"
argv = ["awk", "{}"]
[strategies.large]
kind = "command"
argv = ["awk", "{}"]
[design]
baseline = "small"
treatment = "large"
{design}
"#,
        awk(n),
        awk(m)
    )
}

/// What cachegrind counts for `argv` by hand, with the options runner uses:
/// every output file's `summary:` summed.
fn by_hand(argv: &[&str]) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let out = valgrind()
        .args([
            "--tool=cachegrind",
            "--cache-sim=no",
            "--trace-children=yes",
            "--quiet",
        ])
        .arg(format!(
            "--cachegrind-out-file={}",
            dir.path().join("cg.%p").display()
        ))
        .arg("--")
        .args(argv)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| {
            let text = std::fs::read_to_string(e.path()).unwrap();
            text.lines()
                .find_map(|l| l.strip_prefix("summary:"))
                .unwrap()
                .trim()
                .parse::<u64>()
                .unwrap()
        })
        .sum()
}

fn instructions(analysis: &serde_json::Value) -> &serde_json::Value {
    &analysis["cells"][0]["instructions"]
}

fn ratio_ci(i: &serde_json::Value) -> (f64, f64, f64) {
    let e = &i["effect"];
    (
        e["ratio"].as_f64().unwrap(),
        e["ratio_ci"][0].as_f64().unwrap(),
        e["ratio_ci"][1].as_f64().unwrap(),
    )
}

/// Two loops of known size ratio, counted beside time: runner's ratio lies
/// within 0.2 % of cachegrind's by hand and its interval is under 0.5 %
/// wide; the counted pairs are rows of their own (phase `count`), after the
/// timed ones, and the report and `runner report` say the same.
#[test]
#[cfg_attr(
    not(runner_valgrind),
    ignore = "SKIPPED: valgrind not installed (apt-get install valgrind)"
)]
fn the_ratio_is_cachegrinds_by_hand_and_its_interval_is_narrow() {
    let tmp = tempfile::tempdir().unwrap();
    let m = N * 105 / 100;
    let spec = spec(
        tmp.path(),
        "loops",
        &two_loops(
            N,
            m,
            "forks = 3\nwarmup_pairs = 1\npairs = 5\nmeasure = [\"time\", \"instructions\"]\ncounted_pairs = 2",
        ),
    );
    let out = exec_ok(tmp.path(), &spec, "out", &[]);
    let hand = by_hand(&["awk", &awk(m)]) as f64 / by_hand(&["awk", &awk(N)]) as f64;
    let a = read_json(&out.join("analysis.json"));
    let i = instructions(&a);
    let (ratio, lo, hi) = ratio_ci(i);
    assert!(
        (ratio / hand - 1.0).abs() < 0.002,
        "runner {ratio}, cachegrind by hand {hand}"
    );
    assert!((hi - lo) / ratio < 0.005, "[{lo}, {hi}]");
    assert!(lo <= ratio && ratio <= hi);
    assert_eq!(i["effect"]["direction"], "more");
    assert_eq!(i["n"], 6, "2 counted pairs in each of 3 forks");
    // The rows: every fork's 1 + 5 timed rows, then its 2 counted ones,
    // whose instructions are the treatment's more than the baseline's.
    let (header, rows) = csv_rows(&out.join("pairs.csv"));
    let (phase, b, t) = (
        col(&header, "phase"),
        col(&header, "baseline_instructions"),
        col(&header, "treatment_instructions"),
    );
    assert_eq!(header.len(), 19, "{header:?}");
    assert_eq!(rows.len(), 3 * (1 + 5 + 2));
    for r in &rows {
        match r[phase].as_str() {
            "count" => {
                let (b, t): (u64, u64) = (r[b].parse().unwrap(), r[t].parse().unwrap());
                assert!(t > b, "{r:?}");
            }
            _ => assert!(r[b].is_empty() && r[t].is_empty(), "{r:?}"),
        }
    }
    // The time analysis is the timed pairs': 5 per fork.
    assert_eq!(a["cells"][0]["n"], 15);
    let run = read_json(&out.join("run.json"));
    assert_eq!(run["forks"][0]["counted"]["tool"], "cachegrind");
    assert_eq!(run["environment"]["counters"]["used"], "cachegrind");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("`large` runs **4.") && report.contains("more instructions** than `small`"),
        "{}",
        section(&report, "## Finding").unwrap_or_default()
    );
    assert!(report.contains("## Instructions"));
    assert!(out.join("instructions.svg").is_file());
    // Re-rendered from the folder alone, byte for byte.
    let before = tree(&out);
    runner().arg("report").arg(&out).assert().success();
    assert_eq!(tree(&out), before);
}

/// An A/A on counts: the same command on both sides, counted alone; the
/// interval of the instructions' ratio holds 1.
#[test]
#[cfg_attr(
    not(runner_valgrind),
    ignore = "SKIPPED: valgrind not installed (apt-get install valgrind)"
)]
fn an_aa_on_counts_holds_one() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = spec(
        tmp.path(),
        "aa",
        &format!(
            "[strategies.same]\nkind = \"command\"\nargv = [\"awk\", \"{}\"]\n[design]\nbaseline = \"same\"\ntreatment = \"same\"\nforks = 3\nmeasure = [\"instructions\"]\n",
            awk(N)
        ),
    );
    let out = exec_ok(tmp.path(), &spec, "out", &[]);
    let a = read_json(&out.join("analysis.json"));
    let (_, lo, hi) = ratio_ci(instructions(&a));
    assert!(lo <= 1.0 && 1.0 <= hi, "[{lo}, {hi}]");
    assert_eq!(instructions(&a)["effect"]["direction"], "no-difference");
    // Counted alone: the measured pairs are the counted ones, 1 per fork
    // by default, and the report says its times are the counter's.
    let (header, rows) = csv_rows(&out.join("pairs.csv"));
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r[col(&header, "phase")] == "measure"));
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("counted instructions alone"), "{report}");
}

/// A gate on counts blocks a 5 % change at a 2 % budget (exit 3) and
/// passes an unchanged pair (exit 0), with its self-check on counts.
#[test]
#[cfg_attr(
    not(runner_valgrind),
    ignore = "SKIPPED: valgrind not installed (apt-get install valgrind)"
)]
fn a_gate_on_counts_blocks_five_percent_and_passes_an_unchanged_pair() {
    let tmp = tempfile::tempdir().unwrap();
    let gate = "forks = 3\nmeasure = [\"instructions\"]\n[gate]\nmax_slowdown = \"2%\"\nmetric = \"instructions\"\n";
    for (name, m, code) in [("changed", N * 105 / 100, 3), ("unchanged", N, 0)] {
        let spec = spec(tmp.path(), name, &two_loops(N, m, gate));
        let o = run_in(
            tmp.path(),
            &["exec", spec.to_str().unwrap(), "--quiet", "--out", name],
        );
        assert_eq!(o.status.code(), Some(code), "{name}: {}", err_of(&o));
        let g = read_json(&tmp.path().join(name).join("gate.json"));
        assert_eq!(g["judges"], "instructions", "{g}");
        assert_eq!(g["false_positive_forks"], serde_json::json!([0, 1]), "{g}");
        let summary = g["summary"].as_str().unwrap();
        if code == 3 {
            assert!(
                summary.starts_with("Regression: `large` runs more instructions than `small`"),
                "{summary}"
            );
        } else {
            assert!(summary.starts_with("Passed:"), "{summary}");
        }
    }
}

/// A sequential design on counts of a deterministic program decides at its
/// first look: every fork's count says the same.
#[test]
#[cfg_attr(
    not(runner_valgrind),
    ignore = "SKIPPED: valgrind not installed (apt-get install valgrind)"
)]
fn a_sequential_design_on_counts_stops_at_its_minimum() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = spec(
        tmp.path(),
        "stop",
        &two_loops(
            N,
            N * 105 / 100,
            "measure = [\"instructions\"]\n[design.stop]\ndecide = true\nmin_forks = 3\nmax_forks = 8\n",
        ),
    );
    let out = exec_ok(tmp.path(), &spec, "out", &[]);
    let run = read_json(&out.join("run.json"));
    assert_eq!(run["stops"][0]["forks_run"], 3, "{}", run["stops"]);
    assert_eq!(run["stops"][0]["reason"], "decided");
    let a = read_json(&out.join("analysis.json"));
    assert_eq!(a["cells"][0]["stop"]["statistic"], "instructions");
    assert_eq!(instructions(&a)["effect"]["interval"], "sequence");
}

/// Only commands are counted: an `sql` arm with instructions is refused
/// before anything runs, naming the key's place and why.
#[test]
fn an_sql_arm_is_not_counted() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = spec(
        tmp.path(),
        "sql",
        "[strategies.q]\nkind = \"sql\"\nrun = \"SELECT 1\"\n[strategies.c]\nkind = \"command\"\nargv = [\"true\"]\n[design]\nbaseline = \"c\"\ntreatment = \"q\"\nmeasure = [\"time\", \"instructions\"]\n",
    );
    let o = run_in(tmp.path(), &["check", spec.to_str().unwrap()]);
    assert_refused(
        &o,
        &[
            "sql.toml:",
            "design.measure",
            "strategy `q` is of kind \"sql\"",
            "only `command` arms are counted",
            "database server, another process",
        ],
    );
}

/// Counting without valgrind on PATH is refused before any run, naming
/// the Debian package.
#[test]
fn counting_without_valgrind_names_the_package() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("bin");
    std::fs::create_dir(&empty).unwrap();
    let spec = spec(
        tmp.path(),
        "none",
        "[strategies.a]\nkind = \"command\"\nargv = [\"/bin/true\"]\n[design]\nbaseline = \"a\"\ntreatment = \"a\"\nmeasure = [\"instructions\"]\n",
    );
    for command in ["check", "exec"] {
        let o = runner()
            .current_dir(tmp.path())
            .env("PATH", &empty)
            .args([command, spec.to_str().unwrap()])
            .output()
            .unwrap();
        assert_refused(&o, &["valgrind is not on PATH", "apt-get install valgrind"]);
    }
    assert!(!tmp.path().join("reports").exists(), "nothing ran");
}
