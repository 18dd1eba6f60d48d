use super::*;
use runner_core::record::{Arm, Phase};
use std::num::NonZeroU32;

/// Fork f of cell 0: five measured pairs whose D are `base + f + k`
/// (k = -2..=2), so the fork's median D is `base + f` exactly (no
/// dither: clock resolution 0), with baseline runs of 10 µs; the fork's
/// ratio is then (10 µs + base + f) / 10 µs.
fn rows(forks: u32, base: i64) -> Vec<PairRecord> {
    rows_by(forks, |f| base + i64::from(f))
}

/// Fork f's median D is `d(f)` (five pairs around it, 10 µs baselines).
fn rows_by(forks: u32, d: impl Fn(u32) -> i64) -> Vec<PairRecord> {
    let mut out = Vec::new();
    for f in 0..forks {
        for (i, k) in (-2i64..=2).enumerate() {
            let d = (d(f) + k).max(-9_000);
            out.push(PairRecord {
                cell: 0,
                fork: f,
                phase: Phase::Measure,
                pair: i as u32,
                first: if i % 2 == 0 {
                    Arm::Baseline
                } else {
                    Arm::Treatment
                },
                baseline_ns: 10_000,
                treatment_ns: (10_000 + d) as u64,
                delay_ns: 0,
                spin_ns: 0,
                baseline_at_ns: 1000 * i as u64,
                treatment_at_ns: 1000 * i as u64 + 500,
                usage: Default::default(),
                counts: Default::default(),
            });
        }
    }
    out
}

fn input() -> AnalysisInput {
    AnalysisInput {
        master_seed: 7,
        resamples: 100,
        confidence: 0.95,
        ordering: runner_spec::Ordering::PairedRandom,
        pad_baseline: true,
        cells: vec![CellInfo {
            cell: 0,
            params: Default::default(),
            delay_ns: 0,
        }],
        target_half_width_ns: None,
        clock_resolution_ns: 0.0,
    }
}

fn rule(decide: bool, half_width: Option<HalfWidth>) -> StopInput {
    StopInput {
        counts: false,
        rule: StopRule {
            half_width,
            decide,
            min_forks: NonZeroU32::new(3).unwrap(),
            max_forks: NonZeroU32::new(6).unwrap(),
            max_time_s: None,
        },
        gate: None,
        stops: Vec::new(),
        method: StopMethod::Spending,
    }
}

/// Fork ratios 1.1000, 1.1001, 1.1002: the interval over their logs
/// excludes 0 at the first look; before min_forks nothing is said; with
/// ratios around 1 the rule never holds and the cell runs to max_forks.
#[test]
fn look_stops_a_clear_cell_at_min_forks_and_an_unclear_one_at_max() {
    let (i, cell) = (input(), input().cells[0].clone());
    let decide = rule(true, None);
    assert_eq!(look(&i, &decide, &cell, &rows(2, 1000)).unwrap(), None);
    assert_eq!(
        look(&i, &decide, &cell, &rows(3, 1000)).unwrap(),
        Some(StopReason::Decided)
    );
    // Estimates -1, 0, 1, ...: the interval always holds no change.
    assert_eq!(look(&i, &decide, &cell, &rows(5, -1)).unwrap(), None);
    assert_eq!(
        look(&i, &decide, &cell, &rows(6, -1)).unwrap(),
        Some(StopReason::Max)
    );
}

/// A target in time judges D's interval: fork estimates -1, 0, 1 (s = 1)
/// at the first look of 3..6 spend 0.02, t(2) = 6.9646, so the half-width
/// is 6.9646 / sqrt(3) = 4.02 ns: inside a 5 ns target, not a 4 ns one. A
/// target in % judges the ratio's: the ratios 0.9999, 1, 1.0001 span far
/// less than 1 % of the baseline either side.
#[test]
fn a_target_judges_the_statistic_in_its_unit() {
    let (i, cell) = (input(), input().cells[0].clone());
    let target = |ns| rule(false, Some(HalfWidth::Ns(ns)));
    assert_eq!(target(5).statistic(), StopStatistic::Difference);
    assert_eq!(
        look(&i, &target(5), &cell, &rows(3, -1)).unwrap(),
        Some(StopReason::Target)
    );
    assert_eq!(look(&i, &target(4), &cell, &rows(3, -1)).unwrap(), None);
    let percent = rule(false, Some(HalfWidth::Percent(1.0)));
    assert_eq!(percent.statistic(), StopStatistic::Ratio);
    assert_eq!(
        look(&i, &percent, &cell, &rows(3, -1)).unwrap(),
        Some(StopReason::Target)
    );
    let tight = rule(false, Some(HalfWidth::Percent(0.01)));
    assert_eq!(look(&i, &tight, &cell, &rows(3, -1)).unwrap(), None);
}

/// Three forks whose ratios are 0.73, 0.60 and 0.64: "faster" at the
/// first look (`stats::spending`'s worked example), and the interval the
/// cell reports is the one that decided.
#[test]
fn three_forks_that_agree_on_a_win_decide_it() {
    let i = input();
    let ratios = [0.73, 0.60, 0.64];
    let data = rows_by(3, |f| {
        (10_000.0 * (ratios[f as usize] - 1.0f64)).round() as i64
    });
    let mut s = rule(true, None);
    s.stops = vec![Stopped {
        cell: 0,
        forks_run: 3,
        reason: StopReason::Decided,
    }];
    assert_eq!(
        look(&i, &s, &i.cells[0], &data).unwrap(),
        Some(StopReason::Decided)
    );
    let grouped = super::super::group(&i, &data).unwrap();
    let c = cell(&i, &s, 0, &grouped[&0]).unwrap();
    assert_eq!(c.statistic, StopStatistic::Ratio);
    assert!(c.ratio_ci[1] < 1.0, "{c:?}");
    assert!(
        (c.ratio - (0.73f64 * 0.60 * 0.64).cbrt()).abs() < 1e-3,
        "{c:?}"
    );
    assert_eq!(c.path.len(), 1, "one bounded look: {:?}", c.path);
    assert_eq!(c.path[0].interval, c.ratio_ci);
}

/// A gate in time units decides on D against its threshold; one in %
/// on the ratio against 1 + the threshold.
#[test]
fn a_gate_decides_in_its_own_unit() {
    let (i, cell) = (input(), input().cells[0].clone());
    let mut s = rule(true, None);
    // D of 100 ns (ratio 1.01) against 500 ns: a pass, decided.
    s.gate = Some(MaxSlowdown::Ns(500));
    assert_eq!(s.statistic(), StopStatistic::Difference);
    assert_eq!(
        look(&i, &s, &cell, &rows(3, 100)).unwrap(),
        Some(StopReason::Decided)
    );
    // The same forks against 1 % (a ratio of 1.01): straddled, go on.
    s.gate = Some(MaxSlowdown::Percent(1.0));
    assert_eq!(s.statistic(), StopStatistic::Ratio);
    assert_eq!(look(&i, &s, &cell, &rows(3, 99)).unwrap(), None);
    // Against 5 %: a pass, decided.
    s.gate = Some(MaxSlowdown::Percent(5.0));
    assert_eq!(
        look(&i, &s, &cell, &rows(3, 99)).unwrap(),
        Some(StopReason::Decided)
    );
}

/// The analysis recomputes every look: a recorded stop later than the
/// first look where the rule held, or a reason the data do not give,
/// is refused; the one the run made is reported with the t interval
/// peeked beside it.
#[test]
fn a_recorded_stop_must_be_where_the_rule_first_held() {
    let i = input();
    let check = |forks: u32, base: i64, reason: StopReason, method: StopMethod| {
        let rows = rows(forks, base);
        let mut s = rule(true, None);
        s.method = method;
        s.stops = vec![Stopped {
            cell: 0,
            forks_run: forks,
            reason,
        }];
        let grouped = super::super::group(&i, &rows).unwrap();
        cell(&i, &s, 0, &grouped[&0])
    };
    let spending = StopMethod::Spending;
    let ok = check(3, 1000, StopReason::Decided, spending).unwrap();
    assert_eq!((ok.forks_run, ok.estimate_ns), (3, 1001.0));
    // D's interval at the stop: 1001 ± 6.9646 / sqrt(3).
    assert!(
        (ok.half_width_ns - 6.9646 / 3f64.sqrt()).abs() < 1e-3,
        "{ok:?}"
    );
    assert!(!ok.covers_injected, "d = 0 and the interval excludes 0");
    assert_eq!((ok.naive.forks, ok.naive.met), (3, true));
    let late = check(4, 1000, StopReason::Decided, spending)
        .unwrap_err()
        .to_string();
    assert!(
        late.contains("its rule held after 3 forks (decided), so the run would have stopped there, but run.json records it stopping after 4"),
        "{late}"
    );
    let wrong = check(3, 1000, StopReason::Time, spending)
        .unwrap_err()
        .to_string();
    assert!(
        wrong.contains("for reason `time`, but after 3 forks its rule says `decided`"),
        "{wrong}"
    );
    let max = check(6, -1, StopReason::Max, spending).unwrap();
    assert!(max.covers_injected && !max.naive.met, "{max:?}");
    let not_met = check(6, -1, StopReason::Decided, spending)
        .unwrap_err()
        .to_string();
    assert!(not_met.contains("its rule says go on"), "{not_met}");
}

/// A run made under the earlier rule (Lai's confidence sequence over D)
/// is checked against that rule: fork estimates 1000, 1001, 1002 decided
/// it at the first look (half-width 7.63 ns), and estimates -1, 0, 1, 2
/// (half-width 4.22 at 4 forks) met a 5 ns target only at the fourth.
#[test]
fn a_run_made_under_the_earlier_rule_is_checked_against_it() {
    let i = input();
    let check = |forks: u32, base: i64, reason: StopReason, half_width: Option<HalfWidth>| {
        let rows = rows(forks, base);
        let mut s = rule(half_width.is_none(), half_width);
        s.method = StopMethod::SequenceOnDifference;
        s.stops = vec![Stopped {
            cell: 0,
            forks_run: forks,
            reason,
        }];
        let grouped = super::super::group(&i, &rows).unwrap();
        cell(&i, &s, 0, &grouped[&0])
    };
    assert!(check(3, 1000, StopReason::Decided, None).is_ok());
    let target = Some(HalfWidth::Ns(5));
    assert!(check(4, -1, StopReason::Target, target).is_ok());
    // Under today's rule the same data met the target at 3 forks.
    let early = check(3, -1, StopReason::Target, target).unwrap_err();
    assert!(early.to_string().contains("its rule says go on"), "{early}");
}
