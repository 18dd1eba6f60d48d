//! An A/B comparison says its effect in the user's words in every place it
//! is printed (the Finding, the terminal, the Comparison table, `compare`,
//! a gate's verdict and the CI step summary): faster, slower or no
//! difference resolved, with a ratio written `1.46x`, a % change and a
//! per-run difference, each with its interval; never a negative duration
//! called "less" or "more", never "true delay" in a plain A/B.
//!
//! Two sources of pairs with a known direction:
//! - recorded data (`runner analyze` of pairs written here): the direction
//!   is in the numbers, so "no difference resolved" can be asserted too;
//! - real runs of `spin` strategies, busy-waits of 10, 20 and 40 µs, whose
//!   differences are far larger than a loaded machine's noise on a median.

use crate::common;
use common::*;
use std::fmt::Write as _;
use std::path::Path;

/// Pairs of 3 forks x 60 pairs whose D = treatment − baseline is `shift`
/// ns plus a symmetric pattern: the median and its interval are fixed by
/// the numbers, and with `shift = 0` the interval covers 0.
fn pairs_csv(shift: i64) -> String {
    let mut out = String::from("cell,fork,pair,first,baseline_ns,treatment_ns\n");
    for fork in 0..3 {
        for pair in 0..60i64 {
            let base = 10_000 + 37 * ((pair * 7 + fork * 3) % 11);
            let wobble = [-60, -20, 0, 20, 60][(pair % 5) as usize];
            let first = if pair % 2 == 0 {
                "baseline"
            } else {
                "treatment"
            };
            writeln!(
                out,
                "ab,{fork},{pair},{first},{base},{}",
                base + shift + wobble
            )
            .unwrap();
        }
    }
    out
}

fn analyze(dir: &Path, name: &str, shift: i64) -> (String, String) {
    std::fs::write(dir.join(format!("{name}.csv")), pairs_csv(shift)).unwrap();
    let o = runner()
        .current_dir(dir)
        .args([
            "analyze",
            &format!("{name}.csv"),
            "--out",
            name,
            "--seed",
            "5",
        ])
        .args(["--baseline", "old", "--treatment", "new", "--quiet"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err_of(&o));
    assert!(o.stderr.is_empty(), "--quiet: {}", err_of(&o));
    let report = std::fs::read_to_string(dir.join(name).join("report.md")).unwrap();
    (String::from_utf8(o.stdout).unwrap(), report)
}

/// What no effect sentence may say.
fn plain(text: &str) {
    for bad in [
        " less than",
        " more than `",
        "true delay",
        "reversed",
        "-1.0",
    ] {
        assert!(!text.contains(bad), "says {bad:?}:\n{text}");
    }
}

/// The Finding paragraph of a report.
fn finding(report: &str) -> &str {
    section(report, "Finding").expect("a Finding section")
}

#[test]
fn recorded_pairs_read_right_in_each_direction() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    for (name, shift, word, ratio) in [
        ("faster", -4_000, "faster", "x ["),
        ("slower", 4_000, "slower", "x ["),
        ("same", 0, "No difference resolved", "speed ratio 1.0"),
    ] {
        let (stdout, report) = analyze(t, name, shift);
        let f = finding(&report);
        assert!(f.contains(word), "{name}: {f}");
        assert!(f.contains(ratio), "{name}: {f}");
        assert!(f.contains(" % ["), "{name}: the % change: {f}");
        assert!(f.contains("per run"), "{name}: {f}");
        assert!(
            stdout.contains(&word.to_lowercase()) || stdout.contains(word),
            "{name}: {stdout}"
        );
        assert!(
            stdout.contains("intervals: 95 % interval over the forks"),
            "{name}: {stdout}"
        );
        plain(f);
        plain(&stdout);
        // The Comparison table says the direction in its result column.
        let table = section(&report, "Comparison").expect("a Comparison section");
        let expected = if shift == 0 {
            "no difference resolved"
        } else {
            word
        };
        assert!(
            table.contains(&format!("| {expected} |")),
            "{name}: {table}"
        );
        // A plain A/B has none of the study's words, tables or plots.
        for study in [
            "## Sensitivity",
            "## Calibration",
            "detection.svg",
            "padded",
        ] {
            assert!(!report.contains(study), "{name}: {study}");
        }
        assert!(report.contains("effect.svg") && report.contains("distributions.svg"));
    }
    // A 4 µs speed-up on a 10.2 µs run: about 1.6x faster, -39 %.
    let (stdout, _) = analyze(t, "faster2", -4_000);
    assert!(
        stdout.contains("`new` is faster than `old`: 1.6"),
        "{stdout}"
    );
    assert!(stdout.contains(" % [-"), "{stdout}");
    assert!(
        stdout.contains("faster per run; faster in 3 of 3 forks"),
        "{stdout}"
    );
}

const SPIN: &str = r#"
title = "spins"
seed = 5
[strategies.short]
kind = "spin"
duration_us = 10
[strategies.base]
kind = "spin"
duration_us = 20
[strategies.copy]
kind = "spin"
duration_us = 20
[strategies.long]
kind = "spin"
duration_us = 40
[design]
baseline = "base"
treatment = "short"
forks = 3
warmup_pairs = 5
pairs = 40
[analysis]
resamples = 200
"#;

fn exec(dir: &Path, out: &str, set: &[&str]) -> (i32, String) {
    let spec = write_spec(dir, "spin", SPIN);
    let mut cmd = runner();
    cmd.current_dir(dir)
        .args(["exec", spec.to_str().unwrap(), "--out", out, "--quiet"]);
    for s in set {
        cmd.args(["--set", s]);
    }
    let o = cmd.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

#[test]
fn real_runs_say_faster_and_slower_in_report_terminal_and_compare() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let (code, out) = exec(t, "fast", &[]);
    assert_eq!(code, 0, "{out}");
    // 10 µs against 20 µs: half the time, so about 2x faster and -50 %.
    assert!(out.contains("`short` is faster than `base`: "), "{out}");
    assert!(out.contains("x ["), "{out}");
    assert!(out.contains("faster per run"), "{out}");
    plain(&out);
    let (code, out) = exec(t, "slow", &["design.treatment=\"long\""]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("`long` is slower than `base`: "), "{out}");
    assert!(out.contains("slower per run"), "{out}");
    plain(&out);
    let report = std::fs::read_to_string(t.join("slow/report.md")).unwrap();
    assert!(finding(&report).contains("`long` is **slower** than `base`"));
    // compare: each run's effect in the same words.
    let (code, _) = exec(t, "fast2", &["design.forks=4"]);
    assert_eq!(code, 0);
    let o = runner()
        .current_dir(t)
        .args(["compare", "fast", "fast2"])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "runs that differ in forks compare: {}",
        err_of(&o)
    );
    let text = String::from_utf8(o.stdout).unwrap();
    let row = text
        .lines()
        .find(|l| l.starts_with("| `short` |"))
        .unwrap_or_else(|| panic!("an effect row: {text}"));
    // Each run's ratio, and B's over A's, which the verdict judges.
    assert_eq!(row.matches("x [").count(), 3, "{row}");
    assert_eq!(row.matches("] faster").count(), 2, "{row}");
}

#[test]
fn three_variants_are_ranked_by_their_ratio() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(
        t,
        "variants",
        &SPIN.replace(
            "treatment = \"short\"",
            "treatments = [\"long\", \"copy\", \"short\"]",
        ),
    );
    let o = runner()
        .current_dir(t)
        .args(["exec", spec.to_str().unwrap(), "--out", "v", "--quiet"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err_of(&o));
    let stdout = String::from_utf8(o.stdout).unwrap();
    // The terminal's ranked table: fastest first.
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| {
            ["short ", "copy ", "long "]
                .iter()
                .any(|v| l.starts_with(v))
        })
        .collect();
    assert_eq!(rows.len(), 3, "{stdout}");
    assert!(
        rows[0].starts_with("short ") && rows[0].contains("faster"),
        "{stdout}"
    );
    assert!(rows[1].starts_with("copy "), "{stdout}");
    assert!(
        rows[2].starts_with("long ") && rows[2].contains("slower"),
        "{stdout}"
    );
    // The report opens its Finding with the same ranked table.
    let report = std::fs::read_to_string(t.join("v/report.md")).unwrap();
    let f = finding(&report);
    let table: Vec<&str> = f.lines().filter(|l| l.starts_with("| ")).collect();
    assert!(
        table[0].starts_with("| variant | result | speed ratio"),
        "{f}"
    );
    assert!(
        table[1].starts_with("| short | faster | ") && table[1].contains("x ["),
        "{f}"
    );
    assert!(table[3].starts_with("| long | slower | "), "{f}");
    // Cells are named by their variant, never by JSON.
    assert!(!report.contains("{\""), "{report}");
    let a = read_json(&t.join("v/analysis.json"));
    let directions: Vec<&str> = a["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["effect"]["direction"].as_str().unwrap())
        .collect();
    assert_eq!(directions[0], "slower");
    assert_eq!(directions[2], "faster");
}

#[test]
fn a_gate_says_faster_or_slower_in_its_verdict_and_step_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let summary = t.join("summary.md");
    let gated = format!("{SPIN}[gate]\nmax_slowdown = \"25%\"\nself_check = false\n");
    let spec = write_spec(t, "gated", &gated);
    for (treatment, code, words) in [
        ("short", 0, "Passed: `short` is "),
        ("long", 3, "Regression: `long` is "),
    ] {
        let o = runner()
            .current_dir(t)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .args([
                "exec",
                spec.to_str().unwrap(),
                "--out",
                treatment,
                "--quiet",
            ])
            .args(["--set", &format!("design.treatment=\"{treatment}\"")])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(code), "{}", err_of(&o));
        let stdout = String::from_utf8(o.stdout).unwrap();
        assert!(stdout.contains(words), "{stdout}");
        let direction = if code == 0 { "faster" } else { "slower" };
        // The threshold is a percentage: the change in run time, as the
        // Finding prints it.
        assert!(
            stdout.contains(&format!(" {direction} than `base`: ")),
            "{stdout}"
        );
        assert!(stdout.contains(" % ["), "{stdout}");
    }
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(text.contains("Passed: `short` is ") && text.contains(" faster than `base`"));
    assert!(text.contains("Regression: `long` is ") && text.contains(" slower than `base`"));
}
