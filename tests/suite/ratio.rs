//! The figures people copy, on recorded pairs whose answer is known
//! (`runner analyze`): the speed ratio is the ratio of the arms' typical
//! runs, with positive bounds however large the change; forks at two
//! speeds agree; an arm slowed by the run before it is named; a strategy
//! whose name holds Markdown keeps every table whole.

use crate::common;
use common::*;
use rand::{Rng, SeedableRng};
use std::fmt::Write as _;
use std::path::Path;

/// One recorded pair: (fork, baseline ns, treatment ns, which ran first).
type Pair = (u32, u64, u64, &'static str);

fn csv(pairs: &[Pair]) -> String {
    let mut out = String::from("cell,fork,pair,first,baseline_ns,treatment_ns\n");
    let mut next = std::collections::BTreeMap::new();
    for &(fork, b, t, first) in pairs {
        let pair: &mut u32 = next.entry(fork).or_default();
        writeln!(out, "ab,{fork},{pair},{first},{b},{t}").unwrap();
        *pair += 1;
    }
    out
}

/// `runner analyze` of `pairs` as `old` (baseline) against `new`, into
/// `dir/name`: its stdout and report.md and analysis.json.
fn analyze(
    dir: &Path,
    name: &str,
    pairs: &[Pair],
    names: [&str; 2],
) -> (String, String, serde_json::Value) {
    std::fs::write(dir.join(format!("{name}.csv")), csv(pairs)).unwrap();
    let o = runner()
        .current_dir(dir)
        .args([
            "analyze",
            &format!("{name}.csv"),
            "--out",
            name,
            "--seed",
            "5",
            "--quiet",
        ])
        .args(["--baseline", names[0], "--treatment", names[1]])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err_of(&o));
    let report = std::fs::read_to_string(dir.join(name).join("report.md")).unwrap();
    let json = std::fs::read_to_string(dir.join(name).join("analysis.json")).unwrap();
    (
        String::from_utf8(o.stdout).unwrap(),
        report,
        serde_json::from_str(&json).unwrap(),
    )
}

fn first(i: usize) -> &'static str {
    if i.is_multiple_of(2) {
        "baseline"
    } else {
        "treatment"
    }
}

fn effect(json: &serde_json::Value) -> (f64, [f64; 2]) {
    let e = &json["cells"][0]["effect"];
    let ci = e["ratio_ci"].as_array().unwrap();
    (
        e["ratio"].as_f64().unwrap(),
        [ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap()],
    )
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[test]
fn a_big_win_is_a_ratio_with_positive_bounds_around_it() {
    // `sleep 0.05` against `sleep 0.001`: 3 forks x 10 pairs.
    let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
    let pairs: Vec<Pair> = (0..30)
        .map(|i| {
            let b = 52_400_000.0 * (1.0 + 0.04 * (rng.gen::<f64>() - 0.5));
            let t = 2_400_000.0 * (1.0 + 0.3 * rng.gen::<f64>());
            ((i / 10) as u32, b as u64, t as u64, first(i))
        })
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let (stdout, report, json) = analyze(tmp.path(), "sleep", &pairs, ["slow", "quick"]);
    let (ratio, [lo, hi]) = effect(&json);
    assert!(
        0.0 < lo && lo <= ratio && ratio <= hi,
        "{ratio} [{lo}, {hi}]"
    );
    assert!(1.0 / ratio > 15.0, "{ratio}");
    for text in [stdout.as_str(), section(&report, "Finding").unwrap()] {
        assert!(!text.contains("n/a"), "{text}");
    }
    assert!(stdout.contains("x ["), "{stdout}");
}

#[test]
fn an_additive_change_on_a_wide_baseline_is_the_ratio_of_the_medians() {
    // Baseline 50 ms ± 4 %, treatment 1 ms plus an exponential wait of
    // mean 1 ms: the ratio of the arms' medians, not of per-pair ratios.
    let mut rng = rand_pcg::Pcg64::seed_from_u64(2);
    let pairs: Vec<Pair> = (0..90)
        .map(|i| {
            let b = 50_000_000.0 * (1.0 + 0.04 * (2.0 * rng.gen::<f64>() - 1.0));
            let t = 1_000_000.0 - 1_000_000.0 * (1.0 - rng.gen::<f64>()).ln();
            ((i / 30) as u32, b as u64, t as u64, first(i))
        })
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let (_, _, json) = analyze(tmp.path(), "wait", &pairs, ["old", "new"]);
    let of_medians = median(pairs.iter().map(|p| p.2 as f64).collect())
        / median(pairs.iter().map(|p| p.1 as f64).collect());
    let (ratio, _) = effect(&json);
    assert!(
        (ratio / of_medians - 1.0).abs() < 0.08,
        "{ratio} vs {of_medians}"
    );
}

#[test]
fn forks_at_two_speeds_agree_on_their_ratio() {
    // Two forks' baselines at 26 ms, two at 12 ms; every treatment 0.79x
    // its own baseline, with a little noise of its own.
    let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
    let mut pairs = Vec::new();
    for (fork, base) in [26e6, 26e6, 12e6, 12e6].into_iter().enumerate() {
        for i in 0..30 {
            let b = base * (1.0 + 0.02 * (rng.gen::<f64>() - 0.5));
            let t = 0.79 * base * (1.0 + 0.02 * (rng.gen::<f64>() - 0.5));
            pairs.push((fork as u32, b as u64, t as u64, first(i)));
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let (stdout, report, json) = analyze(tmp.path(), "speeds", &pairs, ["old", "new"]);
    let (ratio, [lo, hi]) = effect(&json);
    let speedup = 1.0 / ratio;
    assert!((1.24..=1.29).contains(&speedup), "{speedup}");
    assert!(
        1.0 / hi >= 1.22 && 1.0 / lo <= 1.31,
        "[{}, {}]",
        1.0 / hi,
        1.0 / lo
    );
    assert!(stdout.contains("faster"), "{stdout}");
    let finding = section(&report, "Finding").unwrap();
    assert!(
        finding.contains("changed speed during the run"),
        "{finding}"
    );
    assert!(
        finding.contains("117 %") || finding.contains("apart"),
        "{finding}"
    );
}

#[test]
fn an_arm_slowed_by_the_run_before_it_is_named() {
    // The treatment takes 2.5x longer right after a baseline run than
    // after its own; the baseline is the same either way.
    let mut rng = rand_pcg::Pcg64::seed_from_u64(4);
    let mut pairs = Vec::new();
    for fork in 0..4u32 {
        let mut last = "treatment";
        for _ in 0..60 {
            let order = if rng.gen::<bool>() {
                "baseline"
            } else {
                "treatment"
            };
            let b = 100_000.0 * (1.0 + 0.05 * rng.gen::<f64>());
            // The treatment runs right after a baseline when it runs
            // second, or first after a pair that ended on the baseline.
            let after_baseline = order == "baseline" || last == "baseline";
            let t =
                90_000.0 * (1.0 + 0.05 * rng.gen::<f64>()) * if after_baseline { 2.5 } else { 1.0 };
            pairs.push((fork, b as u64, t as u64, order));
            last = if order == "baseline" {
                "treatment"
            } else {
                "baseline"
            };
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let (_, report, json) = analyze(tmp.path(), "carry", &pairs, ["scan", "lookup"]);
    assert_eq!(
        json["cells"][0]["carry_over"]["treatment"]["inflates"],
        true
    );
    let finding = section(&report, "Finding").unwrap();
    assert!(
        finding.contains("a `lookup` run that followed a `scan` run took"),
        "{finding}"
    );
    assert!(
        finding.contains("from runs that followed their own arm only"),
        "{finding}"
    );
    assert!(finding.contains("ordering = \"blocked\""), "{finding}");
}

#[test]
fn a_name_that_holds_markdown_keeps_every_table_whole() {
    let pairs: Vec<Pair> = (0..40)
        .map(|i| {
            (
                (i / 20) as u32,
                10_000 + (i as u64 * 37) % 500,
                12_000 + (i as u64 * 53) % 500,
                first(i),
            )
        })
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let (_, report, _) = analyze(tmp.path(), "names", &pairs, ["a|b", "c`d"]);
    // Every table's rows have as many columns as its header.
    let mut header_cells = None;
    for line in report.lines() {
        if !line.starts_with('|') {
            header_cells = None;
            continue;
        }
        let cells = line.replace("\\|", "").matches('|').count();
        match header_cells {
            None => header_cells = Some(cells),
            Some(n) => assert_eq!(cells, n, "{line}"),
        }
    }
    assert!(report.contains("a\\|b"), "a pipe in a table is escaped");
    assert!(
        report.contains("`` c`d ``"),
        "a backtick in a code span is fenced"
    );
}

/// One effect on every committed report: the direction said is the one
/// the speed ratio's interval says, the change is the ratio less 1, and
/// the difference per run is the same ratio in time at the baseline's
/// median run, so a copied "faster" is never contradicted by a figure
/// beside it.
#[test]
fn every_committed_report_states_one_effect() {
    let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("reports");
    let mut cells = 0;
    for entry in std::fs::read_dir(&reports).unwrap().flatten() {
        let path = entry.path().join("analysis.json");
        if !path.is_file() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let a = read_json(&path);
        for c in a["cells"].as_array().unwrap() {
            let e = &c["effect"];
            let at = format!("{name} cell {}", c["cell"]);
            let said = e["direction"].as_str().unwrap();
            let bound = |key: &str, i: usize| e[key][i].as_f64().unwrap();
            let value = |key: &str| e[key].as_f64().unwrap();
            let ratio = value("ratio");
            assert!(
                0.0 < bound("ratio_ci", 0) && bound("ratio_ci", 0) <= ratio,
                "{at}: {e}"
            );
            assert!(ratio <= bound("ratio_ci", 1), "{at}: {e}");
            let by_ratio = if bound("ratio_ci", 1) < 1.0 {
                "faster"
            } else if bound("ratio_ci", 0) > 1.0 {
                "slower"
            } else {
                "no-difference"
            };
            assert_eq!(said, by_ratio, "{at}: {e}");
            let base = value("baseline_median_ns");
            for i in 0..2 {
                let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * (1.0 + b.abs());
                assert!(
                    close(bound("change_ci", i), bound("ratio_ci", i) - 1.0),
                    "{at}: {e}"
                );
                assert!(
                    close(bound("difference_ci_ns", i), base * bound("change_ci", i)),
                    "{at}: {e}"
                );
            }
            cells += 1;
        }
    }
    assert!(cells > 100, "read {cells} cells");
}
