//! The verdict over cells and the self-check shares, on data whose every
//! interval is known by hand: a fork whose D is constant has the interval
//! [D, D] whatever the resamples draw.

use super::*;
use crate::{analyse_with, CellInfo};
use runner_core::record::{Arm, PairRecord, Phase};
use runner_spec::{Gate, MaxSlowdown, Ordering};
use serde_json::json;

/// `forks` forks of `n` pairs in `cell`, fork f's D = `d(f)` in every pair.
fn cell(cell: u32, delay_ns: u64, forks: u32, d: impl Fn(u32) -> i64) -> Vec<PairRecord> {
    let mut out = Vec::new();
    for f in 0..forks {
        for p in 0..5u32 {
            let base = 10_000u64;
            out.push(PairRecord {
                cell,
                fork: f,
                phase: Phase::Measure,
                pair: p,
                first: if p % 2 == 0 {
                    Arm::Baseline
                } else {
                    Arm::Treatment
                },
                baseline_ns: base,
                treatment_ns: (base as i64 + d(f)) as u64,
                delay_ns,
                spin_ns: delay_ns,
                baseline_at_ns: u64::from(p) * 100,
                treatment_at_ns: u64::from(p) * 100 + 50,
                usage: Default::default(),
                counts: Default::default(),
            });
        }
    }
    out
}

fn params(delay_us: f64) -> serde_json::Map<String, serde_json::Value> {
    json!({ "delay_us": delay_us }).as_object().unwrap().clone()
}

fn input() -> AnalysisInput {
    AnalysisInput {
        master_seed: 1,
        resamples: 100,
        confidence: 0.95,
        ordering: Ordering::PairedRandom,
        pad_baseline: true,
        cells: vec![CellInfo {
            cell: 0,
            params: params(0.0),
            delay_ns: 0,
        }],
        target_half_width_ns: None,
        clock_resolution_ns: 0.0,
    }
}

/// A gate with the default rates (`max_false_block` 10 %, shown by a
/// lower bound; `min_power` 80 %, computed from the deciding interval):
/// a d = 0 cell (1) and a 0.5x cell (2, `within_delay` injected).
fn gate(max: MaxSlowdown, within_delay: u64) -> GateInput {
    GateInput {
        gate: Gate {
            max_slowdown: max,
            metric: runner_spec::Metric::Time,
            min_power: 0.8,
            max_false_block: runner_spec::DEFAULT_MAX_FALSE_BLOCK,
            self_check: true,
            within_check: true,
            max_retry_factor: Some(4.0),
            allow_overrides: true,
        },
        sizing: None,
        cells: vec![
            GateCellInfo {
                cell: 1,
                role: Role::GateNull,
                params: params(0.0),
                delay_ns: 0,
            },
            GateCellInfo {
                cell: 2,
                role: Role::GateWithin,
                params: params(within_delay as f64 / 1000.0),
                delay_ns: within_delay,
            },
        ],
    }
}

/// Experiment fork f's D = `exp(f)` (3 forks); the d = 0 check's 4 forks
/// have D `null(f)`; the 0.5x check's 4 forks D `within(f)`.
fn verdict(
    max: MaxSlowdown,
    exp: impl Fn(u32) -> i64,
    null: impl Fn(u32) -> i64,
    within: impl Fn(u32) -> i64,
) -> GateAnalysis {
    let mut pairs = cell(0, 0, 3, exp);
    pairs.extend(cell(1, 0, 4, null));
    pairs.extend(cell(2, 50, 4, within));
    let a = analyse_with(&input(), Some(&gate(max, 50)), None, &pairs).unwrap();
    a.gate.unwrap()
}

#[test]
fn a_narrow_interval_below_the_threshold_passes_with_its_computed_power() {
    // t = 100 ns; D = 40 in every fork: [40, 40], zero width, so its
    // power at 200 is certain. One d = 0 fork at D = 150 is blocked: 1 of
    // 4 is at most 75.1 %, which the self-check states, but at least
    // 1.3 %, not shown above 10 %: the verdict stands.
    let g = verdict(
        MaxSlowdown::Ns(100),
        |_| 40,
        |f| if f == 0 { 150 } else { 0 },
        |_| 50,
    );
    assert_eq!(
        (g.verdict, g.reason, g.exit_code),
        (Verdict::Pass, Reason::IntervalBelowThreshold, 0)
    );
    let fa = g.false_alarms.unwrap();
    assert_eq!((fa.flagged, fa.forks, fa.share), (1, 4, 0.25));
    assert!((fa.upper_bound - 0.7514).abs() < 1e-3, "{}", fa.upper_bound);
    assert!(fa.lower_bound < 0.1, "{}", fa.lower_bound);
    let p = g.power.unwrap();
    assert_eq!((p.cell, p.power, p.slowdown), (0, 1.0, 200.0));
    assert_eq!(g.groups[0].threshold_ns, 100.0);
    assert_eq!(g.groups[0].cells[0].ci, [40.0, 40.0]);
    assert!(g.groups[0].false_alarms.as_ref().unwrap().per_fork[0].flagged);
    assert_eq!(g.advice, None);
}

#[test]
fn a_slowdown_over_the_threshold_is_a_regression() {
    let g = verdict(MaxSlowdown::Ns(100), |_| 150, |_| 0, |_| 50);
    assert_eq!(
        (g.verdict, g.reason, g.exit_code),
        (Verdict::Regression, Reason::Regression, 3)
    );
}

#[test]
fn a_wide_interval_below_the_threshold_is_short_of_power() {
    // Forks at -300, -250 and -200: the interval over them, -250 ± 124,
    // lies below 100, but it is so wide that an interval like it would
    // often miss a slowdown of 200.
    let g = verdict(
        MaxSlowdown::Ns(100),
        |f| [-300, -250, -200][f as usize],
        |_| 0,
        |_| 50,
    );
    assert_eq!(g.groups[0].cells[0].decision, Verdict::Pass);
    assert_eq!(
        (g.verdict, g.reason, g.exit_code),
        (Verdict::Inconclusive, Reason::LowPower, 4)
    );
    assert!(g.power.unwrap().power < 0.5, "{:?}", g.power);
    // The design named has at least the 3 forks and 5 pairs that ran.
    let a = g.advice.expect("a design is named");
    assert!(a.forks >= 3 && a.pairs >= 5, "{a:?}");
}

#[test]
fn a_self_check_that_shows_invalid_intervals_is_inconclusive_whatever_the_interval() {
    // Every 0.5x fork is blocked (D = 150 > 100 where 50 was injected): 4
    // of 4 is at least 47.3 %, shown above 10 %.
    let g = verdict(MaxSlowdown::Ns(100), |_| 150, |_| 0, |_| 150);
    assert_eq!(
        (g.verdict, g.reason, g.exit_code),
        (Verdict::Inconclusive, Reason::SelfCheckFailed, 4)
    );
    // The interval alone would have said regression.
    assert_eq!(g.groups[0].cells[0].decision, Verdict::Regression);
    let fb = g.false_blocks.unwrap();
    assert_eq!((fb.flagged, fb.forks), (4, 4));
    assert!(fb.lower_bound > 0.1);
}

#[test]
fn a_small_clean_self_check_does_not_block_the_verdict() {
    // 0 of 4 and 0 of 4: at most 52.7 % each, nothing shown above 10 %.
    let g = verdict(MaxSlowdown::Ns(100), |_| 40, |_| 0, |_| 50);
    assert_eq!(g.verdict, Verdict::Pass);
    let fb = g.false_blocks.unwrap();
    assert_eq!((fb.flagged, fb.forks, fb.lower_bound), (0, 4, 0.0));
    assert!((fb.upper_bound - 0.5271).abs() < 1e-3, "{}", fb.upper_bound);
}

#[test]
fn an_interval_reaching_the_threshold_is_inconclusive() {
    // D = 100 exactly: [100, 100] lies neither below nor above 100; no
    // fork spread, so no design to name... but its zero width puts the
    // estimate on the threshold: no design decides.
    let g = verdict(MaxSlowdown::Ns(100), |_| 100, |_| 0, |_| 50);
    assert_eq!(
        (g.verdict, g.reason),
        (Verdict::Inconclusive, Reason::IntervalReachesThreshold)
    );
    assert_eq!(g.advice, None);
}

#[test]
fn a_percentage_is_of_the_pooled_baseline_median_and_checked_against_a_sizing() {
    // Baseline runs are 10 000 ns: 1 % is 100 ns.
    let g = verdict(MaxSlowdown::Percent(1.0), |_| 40, |_| 0, |_| 50);
    assert_eq!(g.groups[0].baseline_median_ns, 10_000.0);
    assert_eq!(g.groups[0].threshold_ns, 100.0);
    let mut pairs = cell(0, 0, 3, |_| 40);
    pairs.extend(cell(1, 0, 4, |_| 0));
    pairs.extend(cell(2, 50, 4, |_| 50));
    let mut g = gate(MaxSlowdown::Percent(1.0), 50);
    g.sizing = Some(runner_plan::self_check::GateSizing {
        groups: vec![runner_plan::self_check::GroupSizing {
            cells: vec![0],
            baseline_median_ns: 9_999.0,
            threshold_ns: 99.99,
            delay_ns: 200,
        }],
    });
    let e = analyse_with(&input(), Some(&g), None, &pairs).unwrap_err();
    assert!(
        matches!(e, AnalysisError::GateSizing(ref m) if m.contains("9999")),
        "{e}"
    );
}
