//! Snapshots of the rendered report and terminal summary for fixed data,
//! covering each wording and number rule: the threshold between grid steps
//! and "≤ d, the smallest delay tried", reversed forks counted as false
//! positives at d = 0, two speeds, one unit per table cell, precision from
//! the interval width, zero as 0, exact delays, ranges, correlations, the
//! A/B comparison and the Reproduce section.
//!
//! Each case runs a tiny real experiment (for a real `run.json`), pins what
//! depends on the machine and the clock (environment, times, ids), replaces
//! `pairs.csv` with pairs built from a formula, and renders. The expected
//! files are `tests/snapshots/*.md` / `*.txt`; after an intended change,
//! `UPDATE_SNAPSHOTS=1 cargo test --test suite report_snapshots::` rewrites them
//! (review the diff).

use crate::common;
use common::*;
use std::path::{Path, PathBuf};

/// A fixed machine, clock and id, so the snapshot does not depend on where
/// it runs.
fn pin_machine(run: &mut serde_json::Value, command: &[&str]) {
    let env = &mut run["environment"];
    for (k, v) in [
        ("os", "Linux (Debian GNU/Linux 12)"),
        ("kernel", "6.1.0"),
        ("hostname", "snapshot"),
        ("cpu_model", "Test CPU"),
        ("rustc", "rustc 1.0.0"),
        ("runner_version", "0.1.0"),
        ("git_commit", "0123456789abcdef0123456789abcdef01234567"),
    ] {
        env[k] = serde_json::json!(v);
    }
    env["logical_cores"] = serde_json::json!(2);
    env["physical_cores"] = serde_json::json!(1);
    env["memory_bytes"] = serde_json::json!(25_769_803_776u64);
    env["cpu_frequency_mhz"] = serde_json::json!(null);
    env["cpu_governor"] = serde_json::json!(null);
    env["load_before"] = serde_json::json!([0.5, 0.4, 0.3]);
    env["load_after"] = serde_json::json!([0.6, 0.5, 0.4]);
    env["clock"] = serde_json::json!({"read_cost_ns": 20.5, "resolution_ns": 10});
    // The measured code: a repository with uncommitted changes.
    env["code"] = serde_json::json!({
        "state": "git",
        "commit": "fedcba9876543210fedcba9876543210fedcba98",
        "branch": "main",
        "dirty": true,
        "diff_sha256": "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a",
    });
    run["run_id"] = serde_json::json!("20260101_000000_abcdef");
    run["started_at"] = serde_json::json!("2026-01-01T00:00:00Z");
    run["finished_at"] = serde_json::json!("2026-01-01T00:01:00Z");
    // The command as given, parsed as runner parses it, and no digest of
    // the invocation and clock (edited above).
    run["invocation"] =
        serde_json::to_value(runner_folder::invocation::Invocation::from_argv(command).unwrap())
            .unwrap();
    run.as_object_mut().unwrap().remove("record_sha256");
    run["spec"]["path"] = serde_json::json!(command[2]);
    run["environment"]["checks"] = serde_json::json!([
        {"check": "aslr", "status": "ok", "found": "full randomization (2)", "advice": null},
        {"check": "load", "status": "warn", "found": "1.20 over the last minute on 2 CPUs", "advice": "wait for other work to finish"},
        {"check": "cpu-steal", "status": "ok", "found": "0.1 % of CPU time since boot", "advice": null}
    ]);
    run["environment"]["busiest_processes"] =
        serde_json::json!([{"pid": 1, "name": "postgres", "cpu_share": 0.04}]);
    for (i, f) in run["forks"].as_array_mut().unwrap().iter_mut().enumerate() {
        f["wall_ns"] = serde_json::json!(500_000_000u64);
        f["job_ns"] = serde_json::json!(550_000_000u64);
        // One fork over the outside-load threshold, the rest quiet.
        let outside = if i == 1 { 0.2 } else { 0.01 };
        let flags = if i == 1 { vec!["outside-load"] } else { vec![] };
        f["sentinel"] = serde_json::json!({
            "window_ticks": 150, "steal_share": 0.0, "outside_share": outside,
            "load_before": [0.5, 0.4, 0.3], "load_after": [0.6, 0.5, 0.4], "flags": flags
        });
        // Every run on CPU 1, where same-core (the default) pins the worker.
        let p = &mut f["placement"];
        let runs = |arm: &serde_json::Value| -> u64 {
            arm.as_array()
                .unwrap()
                .iter()
                .map(|c| c["n"].as_u64().unwrap())
                .sum()
        };
        let (b, t) = (runs(&p["cpus"]["baseline"]), runs(&p["cpus"]["treatment"]));
        p["planned"] = serde_json::json!({"worker": 1, "backend": 1});
        p["cpus"] = serde_json::json!({"baseline": [{"cpu": 1, "n": b}], "treatment": [{"cpu": 1, "n": t}]});
    }
}

/// One pair of the synthetic data.
struct Pair {
    cell: u32,
    fork: u32,
    pair: u32,
    baseline_ns: u64,
    treatment_ns: u64,
    delay_ns: u64,
}

/// A small deterministic noise source (xorshift), so the fixtures do not
/// depend on a crate's random stream.
struct Noise(u64);

impl Noise {
    /// Uniform in 0..n.
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn write_pairs(path: &Path, pairs: &[Pair]) {
    let mut out = String::from(
        "cell,fork,phase,pair,first,baseline_ns,treatment_ns,delay_ns,spin_ns,baseline_at_ns,treatment_at_ns\n",
    );
    for p in pairs {
        let first = if p.pair % 2 == 0 {
            "baseline"
        } else {
            "treatment"
        };
        let slot = u64::from(p.pair) * 4_000_000;
        let (b_at, t_at) = if p.pair % 2 == 0 {
            (slot, slot + 2_000_000)
        } else {
            (slot + 2_000_000, slot)
        };
        out.push_str(&format!(
            "{},{},measure,{},{first},{},{},{},{},{b_at},{t_at}\n",
            p.cell, p.fork, p.pair, p.baseline_ns, p.treatment_ns, p.delay_ns, p.delay_ns
        ));
    }
    std::fs::write(path, out).unwrap();
}

/// Records in `run` the digests of the pairs written in place of the
/// measured ones (`report` refuses rows that are not the run's otherwise).
fn bind_digests(run: &mut serde_json::Value, csv: &[u8]) {
    let mut per: std::collections::BTreeMap<(u64, u64), Vec<u8>> = Default::default();
    let body = &csv[csv.iter().position(|&b| b == b'\n').unwrap() + 1..];
    for line in body.split_inclusive(|&b| b == b'\n') {
        let text = std::str::from_utf8(line).unwrap();
        let mut cols = text.split(',');
        let cell: u64 = cols.next().unwrap().parse().unwrap();
        let fork: u64 = cols.next().unwrap().parse().unwrap();
        per.entry((cell, fork)).or_default().extend_from_slice(line);
    }
    for f in run["forks"].as_array_mut().unwrap() {
        let key = (f["cell"].as_u64().unwrap(), f["fork"].as_u64().unwrap());
        let rows = &per[&key];
        f["rows"] = rows.split_inclusive(|&b| b == b'\n').count().into();
        f["sha256"] = runner_folder::sha256_bytes(rows).into();
    }
    run["pairs_sha256"] = runner_folder::sha256_bytes(csv).into();
}

/// Runs `spec` for a real run.json, pins it, writes `pairs` and renders.
/// Returns (report.md, terminal summary).
fn render_case(spec: &str, command: &[&str], pairs: &[Pair]) -> (String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let spec_path = write_spec(tmp.path(), "snap", spec);
    let out = exec_ok(tmp.path(), &spec_path, "run", &[]);
    let run_json = out.join("run.json");
    let mut run = read_json(&run_json);
    pin_machine(&mut run, command);
    // The snapshot is of the wording, not of the build that ran the tests.
    run["build"] = serde_json::json!({"profile": "release", "fault": null, "launched_as": "cargo run --release --"});
    write_pairs(&out.join("pairs.csv"), pairs);
    bind_digests(&mut run, &std::fs::read(out.join("pairs.csv")).unwrap());
    std::fs::write(&run_json, serde_json::to_string_pretty(&run).unwrap()).unwrap();
    let rendered = runner_report::render_folder(&out, None, None).expect("renders");
    (
        std::fs::read_to_string(out.join("report.md")).unwrap(),
        rendered.summary,
    )
}

fn snapshot_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name)
}

/// Compares `actual` with the committed snapshot, or rewrites it under
/// UPDATE_SNAPSHOTS=1.
fn assert_snapshot(name: &str, actual: &str) {
    let path = snapshot_path(name);
    if std::env::var("UPDATE_SNAPSHOTS").as_deref() == Ok("1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; create it with UPDATE_SNAPSHOTS=1", path.display()));
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "{name} differs from line {}:\n  expected: {:?}\n  actual:   {:?}\nIf the change is intended: UPDATE_SNAPSHOTS=1 cargo test --test suite report_snapshots::",
            line + 1,
            expected.lines().nth(line).unwrap_or(""),
            actual.lines().nth(line).unwrap_or(""),
        );
    }
}

const AA: &str = r#"
name = "snap"
title = "Snapshot A/A"
description = "Fixed data for the report's wording and number rules."
seed = 11
[workload]
plans = 2
months = 6
[strategies.memory]
kind = "in-memory"
[design]
baseline = "memory"
treatment = "memory"
forks = 6
warmup_pairs = 0
pairs = 60
[grid]
delay_us = [0, 5, 10, 25]
[analysis]
resamples = 200
"#;

/// Four fast forks near 500 µs and two slow ones near 1.5 ms (two speeds);
/// D is d plus noise of ±4 µs, shifted per (cell, fork) to make: at d = 0
/// one fork seen and one reversed; at 5 µs one fork missing it; at 25 µs,
/// above the threshold, one fork missing it too.
fn aa_pairs() -> Vec<Pair> {
    let mut noise = Noise(0x9e37_79b9_7f4a_7c15);
    let mut pairs = Vec::new();
    for (cell, d) in [0u64, 5_000, 10_000, 25_000].into_iter().enumerate() {
        for fork in 0..6u32 {
            let base = if fork < 4 {
                500_000 + 9_000 * u64::from(fork)
            } else {
                1_500_000 + 20_000 * u64::from(fork)
            };
            let shift: i64 = match (cell, fork) {
                (0, 0) => -6_000,
                (0, 1) => 6_000,
                (1, 2) => -5_000,
                (3, 3) => -25_000,
                _ => 0,
            };
            for pair in 0..60u32 {
                let b = base + noise.below(8_000);
                let t = (base as i64 + d as i64 + shift + noise.below(8_000) as i64) as u64;
                pairs.push(Pair {
                    cell: cell as u32,
                    fork,
                    pair,
                    baseline_ns: b,
                    treatment_ns: t,
                    delay_ns: d,
                });
            }
        }
    }
    pairs
}

#[test]
fn an_aa_report_states_thresholds_false_positives_and_two_speeds() {
    let command = [
        "runner",
        "exec",
        "experiments/snap.toml",
        "--set",
        "grid.delay_us=[0, 5, 10, 25]",
        "--out",
        "reports/snap",
        "--quiet",
    ];
    let (report, summary) = render_case(AA, &command, &aa_pairs());
    assert_snapshot("aa.md", &report);
    assert_snapshot("aa.txt", &summary);
    // The rules, independent of the snapshot's wording elsewhere.
    for needle in [
        // Threshold between two grid steps; a larger step missed.
        "the step below, 5 µs, was seen by 5 of 6, so the threshold lies between 5 µs and 10 µs",
        "Not every fork saw the larger 25 µs (5 of 6).",
        // A reversed fork at d = 0 is a false positive too.
        "2 of 6 forks reported a difference (1 above zero, 1 below)",
        "The forks ran at two speeds: 8 of 24 forks",
        "These figures come from one run on one machine",
        // One unit per cell, written once; zero as 0; exact delays.
        "| 0 | 1/6 seen, 1 reversed |",
        "| 25 µs | 5/6 seen |",
        // The reproduce command: quoted --set, --out kept, --quiet dropped.
        "cargo run --release -- exec experiments/snap.toml --out reports/snap --set 'grid.delay_us=[0, 5, 10, 25]'",
        "- Code: the measured repository at commit `fedcba987654` (branch `main`), **dirty**: tracked files differed from that commit (the SHA-256 of their diff begins `5a5a5a5a5a5a`), so the commit alone does not hold the code that ran; runner built from commit `0123456789abcdef0123456789abcdef01234567`.",
        "schedule, the inputs and the analysis of these data reproduce byte for byte",
        // Jobs, not forks.
        "24 jobs (4 cells x 6 forks)",
    ] {
        assert!(report.contains(needle), "report lacks {needle:?}");
    }
    assert!(
        !report.contains(" 0.0 ns") && !report.contains(" -0 "),
        "zero printed as 0"
    );
    assert!(
        !report.contains("µs [") && !report.contains("ns ["),
        "one unit per cell, once"
    );
    assert!(summary.contains("threshold lies between 5 µs and 10 µs"));
}

const FLOOR: &str = r#"
name = "snap"
title = "Snapshot floor"
description = "Exact data: every interval has zero width."
seed = 12
[workload]
plans = 2
months = 6
[strategies.nothing]
kind = "noop"
[design]
baseline = "nothing"
treatment = "nothing"
forks = 3
warmup_pairs = 0
pairs = 30
[grid]
delay_us = [0, 0.1, 0.5]
[analysis]
resamples = 200
"#;

#[test]
fn data_on_the_clocks_steps_is_dithered_within_a_step_and_the_smallest_delay_tried_is_an_upper_bound(
) {
    let mut pairs = Vec::new();
    for (cell, d) in [0u64, 100, 500].into_iter().enumerate() {
        for fork in 0..3u32 {
            for pair in 0..30u32 {
                let extra = if d > 0 { 70 } else { 0 };
                pairs.push(Pair {
                    cell: cell as u32,
                    fork,
                    pair,
                    baseline_ns: 40,
                    treatment_ns: 40 + d + extra,
                    delay_ns: d,
                });
            }
        }
    }
    let command = ["runner", "exec", "experiments/snap.toml", "--quiet"];
    let (report, summary) = render_case(FLOOR, &command, &pairs);
    assert_snapshot("floor.md", &report);
    assert_snapshot("floor.txt", &summary);
    // Order and carry-over at clock ties included, no interval collapses
    // to a point, and a cell's numbers share one digit rule.
    assert!(
        !report.contains("[0, 0]"),
        "a collapsed interval:\n{report}"
    );
    assert!(
        !report.contains("| 0 [-") && !report.contains("| 0 [0"),
        "a zero estimate printed by another rule than its interval:\n{report}"
    );
    for needle in [
        "Every fork saw 100 ns (2.50 times the 40.0 ns median baseline run), so this harness's threshold is ≤ 100 ns, the smallest delay tried.",
        // Every D lies on the 10 ns clock's steps: dithered within a step,
        // the intervals are neither points nor wider than the step.
        "| 0 | 0/3 seen | -0.52 [-1.66, 0.63] ns |",
        "| 100 ns | 3/3 seen | 170.08 [169.55, 170.52] ns |",
        "- Database: none (no strategy used one).",
    ] {
        assert!(report.contains(needle), "report lacks {needle:?}");
    }
}

const AB: &str = r#"
name = "snap"
title = "Snapshot A/B"
description = "Two strategies at two model sizes."
seed = 13
[workload]
months = 6
[strategies.memory]
kind = "in-memory"
[strategies.other]
kind = "in-memory"
[design]
baseline = "memory"
treatment = "other"
forks = 3
warmup_pairs = 0
pairs = 40
[grid]
plans = [10, 40]
[analysis]
resamples = 200
"#;

#[test]
fn an_ab_report_labels_cells_by_their_params_and_counts_no_false_positives() {
    let mut noise = Noise(0x2545_f491_4f6c_dd1d);
    let mut pairs = Vec::new();
    for (cell, extra) in [372_000u64, 1_181_000].into_iter().enumerate() {
        for fork in 0..3u32 {
            for pair in 0..40u32 {
                let b = 15_000 + 40_000 * cell as u64 + noise.below(2_000);
                pairs.push(Pair {
                    cell: cell as u32,
                    fork,
                    pair,
                    baseline_ns: b,
                    treatment_ns: b + extra + noise.below(9_000),
                    delay_ns: 0,
                });
            }
        }
    }
    let command = ["runner", "exec", "experiments/snap.toml"];
    let (report, summary) = render_case(AB, &command, &pairs);
    assert_snapshot("ab.md", &report);
    assert_snapshot("ab.txt", &summary);
    assert!(
        report.contains("**plans = 10.** `other` is **slower** than `memory`: **24."),
        "{report}"
    );
    assert!(report.contains("slower in 3 of 3 forks"));
    assert!(report.contains("| plans = 40 |"));
    assert!(!report.contains("false positive"));
    // Ranked by the ratio: the larger model is the smaller slowdown.
    let rows: Vec<&str> = summary
        .lines()
        .filter(|l| l.starts_with("plans = "))
        .collect();
    assert!(
        rows[0].starts_with("plans = 40") && rows[0].contains("slower"),
        "{summary}"
    );
}
