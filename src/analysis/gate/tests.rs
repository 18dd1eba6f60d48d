//! The verdict over cells and the self-check shares, on data whose every
//! interval is known by hand: a fork whose D is constant has the interval
//! [D, D] whatever the resamples draw.

use super::*;
use crate::analysis::{analyse_gated, CellInfo};
use crate::record::{Arm, PairRecord, Phase};
use crate::spec::{Gate, GateStatistic, MaxSlowdown, Ordering};
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

/// A gate whose self-check of 4 and 5 forks can meet its bounds: 0 or 1
/// blocked of 4 is at most 52.7 % or 75.1 %, under 80 %; 5 caught of 5 at
/// least 54.9 %, over 50 %. (The defaults, 10 % and 80 %, need 29 forks.)
fn gate(max: MaxSlowdown, power_delay: u64) -> GateInput {
    GateInput {
        gate: Gate {
            max_slowdown: max,
            statistic: GateStatistic::Hierarchical,
            min_power: 0.5,
            max_false_block: 0.8,
            self_check: true,
            within_check: false,
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
                role: Role::GatePower,
                params: params(power_delay as f64 / 1000.0),
                delay_ns: power_delay,
            },
        ],
    }
}

/// Experiment D = `exp` in every fork; the d = 0 check's forks have D
/// `null(f)`; the 2x check's D `power(f)`.
fn verdict(
    max: MaxSlowdown,
    exp: i64,
    null: impl Fn(u32) -> i64,
    power: impl Fn(u32) -> i64,
) -> GateAnalysis {
    let mut pairs = cell(0, 0, 3, |_| exp);
    pairs.extend(cell(1, 0, 4, null));
    pairs.extend(cell(2, 200, 5, power));
    let a = analyse_gated(&input(), Some(&gate(max, 200)), &pairs).unwrap();
    a.gate.unwrap()
}

#[test]
fn an_interval_below_the_threshold_with_power_passes() {
    // t = 100 ns; D = 40: [40, 40] < 100. The null check has one fork at
    // D = 150 (flagged: [150, 150] lies above 100); power 5 of 5.
    let g = verdict(
        MaxSlowdown::Ns(100),
        40,
        |f| if f == 0 { 150 } else { 0 },
        |_| 200,
    );
    assert_eq!(
        (g.verdict, g.reason, g.exit_code),
        (Verdict::Pass, Reason::IntervalBelowThreshold, 0)
    );
    let fa = g.false_alarms.unwrap();
    assert_eq!((fa.flagged, fa.forks, fa.share), (1, 4, 0.25));
    assert!((fa.upper_bound - 0.7514).abs() < 1e-3, "{}", fa.upper_bound);
    let p = g.power.unwrap();
    assert_eq!((p.flagged, p.forks, p.share), (5, 5, 1.0));
    assert_eq!(g.groups[0].threshold_ns, 100.0);
    assert_eq!(g.groups[0].cells[0].ci_ns, [40.0, 40.0]);
    assert!(g.groups[0].false_alarms.as_ref().unwrap().per_fork[0].flagged);
}

#[test]
fn a_slowdown_over_the_threshold_is_a_regression_whatever_the_power() {
    let g = verdict(MaxSlowdown::Ns(100), 150, |_| 0, |_| 0);
    assert_eq!(
        (g.verdict, g.reason, g.exit_code),
        (Verdict::Regression, Reason::Regression, 3)
    );
    assert_eq!(g.power.unwrap().flagged, 0);
}

#[test]
fn low_power_turns_a_pass_into_inconclusive() {
    // 3 of 5 forks caught: at least 18.9 % by the bound, under 50 %.
    let g = verdict(
        MaxSlowdown::Ns(100),
        40,
        |_| 0,
        |f| if f < 3 { 200 } else { 50 },
    );
    assert_eq!(
        (g.verdict, g.reason, g.exit_code),
        (Verdict::Inconclusive, Reason::LowPower, 4)
    );
    assert_eq!(g.power.unwrap().share, 0.6);
    assert!(g.power.unwrap().lower_bound < 0.5);
    assert_eq!(g.groups[0].cells[0].decision, Verdict::Pass);
    // The forks that would show 50 %: 5 of 5 is at least 54.9 %.
    assert_eq!(
        g.forks_needed,
        Some(5.max(crate::stats::gate::forks_to_bound(0.8, 0.95)))
    );
}

#[test]
fn a_self_check_too_small_to_bound_its_rates_is_inconclusive_whatever_the_interval() {
    // The default 10 %: 0 blocked of 4 forks is at most 52.7 %.
    let mut pairs = cell(0, 0, 3, |_| 150);
    pairs.extend(cell(1, 0, 4, |_| 0));
    pairs.extend(cell(2, 200, 5, |_| 200));
    let mut g = gate(MaxSlowdown::Ns(100), 200);
    g.gate.max_false_block = crate::spec::DEFAULT_MAX_FALSE_BLOCK;
    let a = analyse_gated(&input(), Some(&g), &pairs)
        .unwrap()
        .gate
        .unwrap();
    assert_eq!(
        (a.verdict, a.reason, a.exit_code),
        (Verdict::Inconclusive, Reason::ErrorRateUnbounded, 4)
    );
    // The interval alone would have said regression.
    assert_eq!(a.groups[0].cells[0].decision, Verdict::Regression);
    assert_eq!(a.forks_needed, Some(29));
}

#[test]
fn the_half_threshold_cell_counts_false_blocks() {
    // t = 100, 50 injected: forks at D = 50 pass the rule; one at 150 is
    // blocked, 1 of 4.
    let mut pairs = cell(0, 0, 3, |_| 40);
    pairs.extend(cell(1, 0, 4, |_| 0));
    pairs.extend(cell(2, 200, 5, |_| 200));
    pairs.extend(cell(3, 50, 4, |f| if f == 2 { 150 } else { 50 }));
    let mut g = gate(MaxSlowdown::Ns(100), 200);
    g.cells.push(GateCellInfo {
        cell: 3,
        role: Role::GateWithin,
        params: params(0.05),
        delay_ns: 50,
    });
    let a = analyse_gated(&input(), Some(&g), &pairs)
        .unwrap()
        .gate
        .unwrap();
    let fb = a.false_blocks.unwrap();
    assert_eq!((fb.flagged, fb.forks), (1, 4));
    assert_eq!(a.verdict, Verdict::Pass);
    // A stricter bound than 1 of 4 can meet makes it inconclusive.
    g.gate.max_false_block = 0.7;
    let a = analyse_gated(&input(), Some(&g), &pairs)
        .unwrap()
        .gate
        .unwrap();
    assert_eq!(a.reason, Reason::ErrorRateUnbounded);
}

#[test]
fn an_interval_reaching_the_threshold_is_inconclusive() {
    // D = 100 exactly: [100, 100] lies neither below nor above 100.
    let g = verdict(MaxSlowdown::Ns(100), 100, |_| 0, |_| 200);
    assert_eq!(
        (g.verdict, g.reason),
        (Verdict::Inconclusive, Reason::IntervalReachesThreshold)
    );
}

#[test]
fn a_percentage_is_of_the_pooled_baseline_median_and_checked_against_a_sizing() {
    // Baseline runs are 10 000 ns: 1 % is 100 ns.
    let g = verdict(MaxSlowdown::Percent(1.0), 40, |_| 0, |_| 200);
    assert_eq!(g.groups[0].baseline_median_ns, 10_000.0);
    assert_eq!(g.groups[0].threshold_ns, 100.0);
    let mut pairs = cell(0, 0, 3, |_| 40);
    pairs.extend(cell(1, 0, 4, |_| 0));
    pairs.extend(cell(2, 200, 5, |_| 200));
    let mut g = gate(MaxSlowdown::Percent(1.0), 200);
    g.sizing = Some(crate::plan::self_check::GateSizing {
        groups: vec![crate::plan::self_check::GroupSizing {
            cells: vec![0],
            baseline_median_ns: 9_999.0,
            threshold_ns: 99.99,
            delay_ns: 200,
        }],
    });
    let e = analyse_gated(&input(), Some(&g), &pairs).unwrap_err();
    assert!(
        matches!(e, AnalysisError::GateSizing(ref m) if m.contains("9999")),
        "{e}"
    );
}
