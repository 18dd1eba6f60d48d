//! A sequential design's stopping rule (`[design.stop]`), looked at after
//! every fork of a cell: exec asks [`look`] whether a cell is done; the
//! analysis ([`cell`]) recomputes every look from the rows, checks that the
//! run stopped where run.json says and for the reason it gives, and reports
//! the cell's deciding interval (`cells[].stop`).
//!
//! The rule's interval is a confidence sequence over the cell's fork-level
//! estimates (each fork's median D, dithered as every median of D is):
//! `stats::sequential`, valid at whichever look the data made the run stop.
//! Beside it, the fixed-n t interval of the same estimates, looked at after
//! every fork with the same rule ([`NaiveStop`]): what stopping on an
//! interval that assumes a fixed n would have said.

use super::{AnalysisError, AnalysisInput, CellInfo, ForkData};
use crate::plan::stop::{StopReason, Stopped};
use crate::record::PairRecord;
use crate::spec::{MaxSlowdown, StopRule};
use crate::stats::sequential::{confidence_sequence, t_interval, MeanInterval};
use crate::stats::{self, StatsError};
use serde::{Deserialize, Serialize};

/// What the analysis needs to know about a run's stopping rule.
#[derive(Debug, Clone)]
pub struct StopInput {
    pub rule: StopRule,
    /// With `decide` and a gate: the gate's threshold, whose verdict
    /// decides instead of the interval leaving 0.
    pub gate: Option<MaxSlowdown>,
    /// Where each experiment cell stopped (run.json `stops`).
    pub stops: Vec<Stopped>,
}

/// `cells[].stop` in analysis.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellStop {
    pub forks_run: u32,
    pub reason: StopReason,
    /// The confidence sequence after the last fork: the deciding interval.
    pub interval_ns: [f64; 2],
    /// Its centre: the mean of the fork estimates.
    pub estimate_ns: f64,
    pub half_width_ns: f64,
    /// `half_width` in ns (a percentage: of the baseline median of the
    /// forks run); null without one.
    pub target_ns: Option<f64>,
    /// With a gate deciding: its threshold in ns for this cell.
    pub threshold_ns: Option<f64>,
    /// The wait actually injected: median spin_ns of the forks run.
    pub injected_ns: f64,
    /// Whether `interval_ns` holds `injected_ns` (at d = 0: whether it
    /// holds 0, i.e. is not a false positive).
    pub covers_injected: bool,
    pub naive: NaiveStop,
    /// The deciding interval after each fork from the second on (where
    /// it is bounded): the path the run took to its stop, which
    /// `stop.svg` draws. Absent from analyses made before it was kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<StopLook>,
}

/// The confidence sequence after the first `forks` forks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StopLook {
    pub forks: u32,
    pub estimate_ns: f64,
    pub interval_ns: [f64; 2],
}

/// The same rule on the fixed-n t interval of the same forks, looked at
/// after every fork from `min_forks` on: where it would have stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NaiveStop {
    pub forks: u32,
    /// Whether its rule held there (else the data ran out first).
    pub met: bool,
    pub interval_ns: [f64; 2],
    pub covers_injected: bool,
}

/// One look: the interval after the first `n` forks, and whether the rule
/// held.
struct Look {
    interval: MeanInterval,
    target_ns: Option<f64>,
    threshold_ns: Option<f64>,
    met: Option<StopReason>,
}

/// Each fork's estimate (median of its dithered D) and measured baseline
/// runs, in fork order.
fn per_fork(forks: &[ForkData<'_>]) -> Result<(Vec<f64>, Vec<Vec<u64>>), StatsError> {
    let estimates = forks
        .iter()
        .map(|f| stats::median(&f.diffs()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((estimates, forks.iter().map(|f| f.baselines()).collect()))
}

/// The rule after the first `n` forks, on the interval `interval_of` makes.
fn look_at(
    input: &AnalysisInput,
    s: &StopInput,
    estimates: &[f64],
    baselines: &[Vec<u64>],
    n: usize,
    interval_of: fn(&[f64], f64) -> Result<MeanInterval, StatsError>,
) -> Result<Look, StatsError> {
    judge(
        s,
        interval_of(&estimates[..n], input.confidence)?,
        baselines,
        n,
    )
}

/// The rule after the first `n` forks, whose interval is `interval`.
fn judge(
    s: &StopInput,
    interval: MeanInterval,
    baselines: &[Vec<u64>],
    n: usize,
) -> Result<Look, StatsError> {
    let needs_median = matches!(s.rule.half_width, Some(crate::spec::HalfWidth::Percent(_)))
        || matches!(s.gate, Some(MaxSlowdown::Percent(_)));
    let median = if needs_median {
        let runs: Vec<u64> = baselines[..n].iter().flatten().copied().collect();
        stats::median(&runs)?
    } else {
        0.0
    };
    let target_ns = s.rule.half_width.map(|h| h.ns_for(median));
    let threshold_ns = s.gate.filter(|_| s.rule.decide).map(|g| g.ns_for(median));
    let decided = match (s.rule.decide, interval.bounds(), threshold_ns) {
        (false, _, _) | (true, None, _) => false,
        (true, Some(ci), Some(t)) => {
            crate::stats::gate::decide(interval.mean, ci, t)
                != crate::stats::gate::Decision::Inconclusive
        }
        (true, Some(_), None) => interval.excludes_zero(),
    };
    let met = if decided {
        Some(StopReason::Decided)
    } else if target_ns.is_some_and(|t| interval.half_width <= t) {
        Some(StopReason::Target)
    } else {
        None
    };
    Ok(Look {
        interval,
        target_ns,
        threshold_ns,
        met,
    })
}

/// Whether `cell`, whose finished forks' rows are `rows`, is done: its
/// rule held at this look (from `min_forks` on), or it ran `max_forks`.
/// `None`: give it another fork. The run's time is exec's to judge.
pub fn look(
    input: &AnalysisInput,
    s: &StopInput,
    cell: &CellInfo,
    rows: &[PairRecord],
) -> Result<Option<StopReason>, AnalysisError> {
    let one = AnalysisInput {
        cells: vec![cell.clone()],
        ..input.clone()
    };
    let grouped = super::group(&one, rows)?;
    let forks = &grouped[&cell.cell];
    let stats_err = |source| AnalysisError::Stats {
        cell: cell.cell,
        source,
    };
    let n = forks.len();
    if n < s.rule.min_forks.get() as usize {
        return Ok(None);
    }
    let (estimates, baselines) = per_fork(forks).map_err(stats_err)?;
    let met = look_at(input, s, &estimates, &baselines, n, confidence_sequence)
        .map_err(stats_err)?
        .met;
    Ok(met.or((n >= s.rule.max_forks.get() as usize).then_some(StopReason::Max)))
}

/// One experiment cell's `cells[].stop`, checked against the stop run.json
/// records for it: the rule held at no look before it, and at it exactly
/// when the recorded reason says so (`target`, `decided`), else not at all
/// (`max`, `time`).
pub(crate) fn cell(
    input: &AnalysisInput,
    s: &StopInput,
    cell: u32,
    forks: &[ForkData<'_>],
) -> Result<CellStop, AnalysisError> {
    let bad = |what: String| AnalysisError::Stop(format!("cell {cell}: {what}"));
    let stopped = s
        .stops
        .iter()
        .find(|x| x.cell == cell)
        .ok_or_else(|| bad("run.json records no stopping point for it".into()))?;
    let k = stopped.forks_run as usize;
    let numbers: Vec<u32> = forks.iter().map(|f| f.fork).collect();
    if numbers != (0..stopped.forks_run).collect::<Vec<_>>() {
        return Err(bad(format!(
            "run.json records it stopping after {k} forks (forks 0 to {}), but its rows are of forks {numbers:?}",
            k.saturating_sub(1)
        )));
    }
    let stats_err = |source| AnalysisError::Stats { cell, source };
    let (estimates, baselines) = per_fork(forks).map_err(stats_err)?;
    let min = s.rule.min_forks.get() as usize;
    let at = |n, f| look_at(input, s, &estimates, &baselines, n, f).map_err(stats_err);
    // The deciding sequence after each fork, computed once: the looks
    // below and the stopping path (`stop.svg`) read the same intervals.
    let sequence: Vec<Option<MeanInterval>> = (0..=k)
        .map(|n| {
            (n >= 1)
                .then(|| confidence_sequence(&estimates[..n], input.confidence).ok())
                .flatten()
        })
        .collect();
    let deciding = |n: usize| match sequence[n] {
        Some(i) => judge(s, i, &baselines, n).map_err(stats_err),
        None => at(n, confidence_sequence),
    };
    for n in min..k {
        if let Some(reason) = deciding(n)?.met {
            return Err(bad(format!(
                "its rule held after {n} forks ({reason}), so the run would have stopped there, but run.json records it stopping after {k}"
            )));
        }
    }
    let last = deciding(k)?;
    let agrees = match stopped.reason {
        StopReason::Target | StopReason::Decided => last.met == Some(stopped.reason),
        StopReason::Max | StopReason::Time => last.met.is_none(),
    };
    if !agrees {
        return Err(bad(format!(
            "run.json records it stopping after {k} forks for reason `{}`, but after {k} forks its rule says {}",
            stopped.reason,
            last.met.map_or("go on".to_string(), |r| format!("`{r}`"))
        )));
    }
    let spins: Vec<u64> = forks
        .iter()
        .flat_map(|f| f.measured.iter().map(|p| p.spin_ns))
        .collect();
    let injected_ns = stats::median(&spins).map_err(stats_err)?;
    let bounds = |i: &MeanInterval| {
        i.bounds()
            .ok_or_else(|| bad(format!("its interval after {} forks is unbounded", i.n)))
    };
    let path = (2..=k)
        .filter_map(|n| {
            let i = sequence[n]?;
            i.bounds().map(|b| StopLook {
                forks: n as u32,
                estimate_ns: i.mean,
                interval_ns: b,
            })
        })
        .collect();
    let naive = (min..=k)
        .map(|n| at(n, t_interval))
        .collect::<Result<Vec<_>, _>>()?;
    let naive_stop = naive
        .iter()
        .find(|l| l.met.is_some())
        .unwrap_or_else(|| naive.last().expect("min_forks <= forks_run"));
    Ok(CellStop {
        forks_run: stopped.forks_run,
        reason: stopped.reason,
        interval_ns: bounds(&last.interval)?,
        estimate_ns: last.interval.mean,
        half_width_ns: last.interval.half_width,
        target_ns: last.target_ns,
        threshold_ns: last.threshold_ns,
        injected_ns,
        covers_injected: last.interval.contains(injected_ns),
        naive: NaiveStop {
            forks: naive_stop.interval.n as u32,
            met: naive_stop.met.is_some(),
            interval_ns: bounds(&naive_stop.interval)?,
            covers_injected: naive_stop.interval.contains(injected_ns),
        },
        path,
    })
}

/// A stopped cell's speed ratio: the confidence sequence over its forks'
/// log ratios (valid wherever the run stopped, whichever statistic chose
/// the stop), around their mean, as ratios.
pub(crate) fn ratio(
    input: &AnalysisInput,
    cell: u32,
    forks: &[super::ForkAnalysis],
) -> Result<(f64, [f64; 2]), AnalysisError> {
    let logs: Vec<f64> = forks.iter().map(|f| f.ratio.ln()).collect();
    let cs = confidence_sequence(&logs, input.confidence)
        .map_err(|source| AnalysisError::Stats { cell, source })?;
    let ci = stats::ratio::ratio_of_log_interval(cs.mean, cs.half_width).ok_or_else(|| {
        AnalysisError::Stop(format!(
            "cell {cell}: its ratio's interval after {} forks is unbounded",
            cs.n
        ))
    })?;
    Ok((cs.mean.exp(), ci))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Arm, Phase};
    use std::num::NonZeroU32;

    /// Fork f of cell 0: five measured pairs whose D are `base + f + k`
    /// (k = -2..=2), so the fork's median D is `base + f` exactly (no
    /// dither: clock resolution 0), with baseline runs of 10 µs.
    fn rows(forks: u32, base: i64) -> Vec<PairRecord> {
        let mut out = Vec::new();
        for f in 0..forks {
            for (i, k) in (-2i64..=2).enumerate() {
                let d = (base + i64::from(f) + k).max(-9_000);
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
            ordering: crate::spec::Ordering::PairedRandom,
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

    fn rule(decide: bool, half_width: Option<crate::spec::HalfWidth>) -> StopInput {
        StopInput {
            rule: StopRule {
                half_width,
                decide,
                min_forks: NonZeroU32::new(3).unwrap(),
                max_forks: NonZeroU32::new(6).unwrap(),
                max_time_s: None,
            },
            gate: None,
            stops: Vec::new(),
        }
    }

    /// Fork estimates 1000, 1001, 1002: mean 1001, s = 1, the sequence's
    /// half-width 13.22 / sqrt(3) = 7.63 (`stats::sequential`'s table):
    /// decided at the first look; before min_forks nothing is said; with
    /// D around 0 the rule never holds and the cell runs to max_forks.
    #[test]
    fn look_stops_a_clear_cell_at_min_forks_and_an_unclear_one_at_max() {
        let (i, cell) = (input(), input().cells[0].clone());
        let decide = rule(true, None);
        assert_eq!(look(&i, &decide, &cell, &rows(2, 1000)).unwrap(), None);
        assert_eq!(
            look(&i, &decide, &cell, &rows(3, 1000)).unwrap(),
            Some(StopReason::Decided)
        );
        // Estimates -1, 0, 1, ...: the interval always holds 0.
        assert_eq!(look(&i, &decide, &cell, &rows(5, -1)).unwrap(), None);
        assert_eq!(
            look(&i, &decide, &cell, &rows(6, -1)).unwrap(),
            Some(StopReason::Max)
        );
        // A target of 8 ns: 7.63 is inside it after 3 forks; of 7 ns not.
        let target = |ns| rule(false, Some(crate::spec::HalfWidth::Ns(ns)));
        assert_eq!(
            look(&i, &target(8), &cell, &rows(3, -1)).unwrap(),
            Some(StopReason::Target)
        );
        assert_eq!(look(&i, &target(7), &cell, &rows(3, -1)).unwrap(), None);
        // 1 % of the 10 µs baseline is 100 ns.
        let percent = rule(false, Some(crate::spec::HalfWidth::Percent(1.0)));
        assert_eq!(
            look(&i, &percent, &cell, &rows(3, -1)).unwrap(),
            Some(StopReason::Target)
        );
    }

    /// The analysis recomputes every look: a recorded stop later than the
    /// first look where the rule held, or a reason the data do not give,
    /// is refused; the one the run made is reported with the t interval
    /// peeked beside it.
    #[test]
    fn a_recorded_stop_must_be_where_the_rule_first_held() {
        let i = input();
        let check = |forks: u32, base: i64, reason: StopReason| {
            let rows = rows(forks, base);
            let mut s = rule(true, None);
            s.stops = vec![Stopped {
                cell: 0,
                forks_run: forks,
                reason,
            }];
            let grouped = super::super::group(&i, &rows).unwrap();
            cell(&i, &s, 0, &grouped[&0])
        };
        let ok = check(3, 1000, StopReason::Decided).unwrap();
        assert_eq!((ok.forks_run, ok.estimate_ns), (3, 1001.0));
        assert!((ok.half_width_ns - 7.633_668_868).abs() < 1e-6, "{ok:?}");
        assert!(!ok.covers_injected, "d = 0 and the interval excludes 0");
        assert_eq!((ok.naive.forks, ok.naive.met), (3, true));
        let late = check(4, 1000, StopReason::Decided).unwrap_err().to_string();
        assert!(
            late.contains("its rule held after 3 forks (decided), so the run would have stopped there, but run.json records it stopping after 4"),
            "{late}"
        );
        let wrong = check(3, 1000, StopReason::Time).unwrap_err().to_string();
        assert!(
            wrong.contains("for reason `time`, but after 3 forks its rule says `decided`"),
            "{wrong}"
        );
        let max = check(6, -1, StopReason::Max).unwrap();
        assert!(max.covers_injected && !max.naive.met, "{max:?}");
        let not_met = check(6, -1, StopReason::Decided).unwrap_err().to_string();
        assert!(not_met.contains("its rule says go on"), "{not_met}");
    }
}
