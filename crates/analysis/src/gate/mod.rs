//! The gate's verdict from the analysed cells (docs/guide/gate.md): the
//! rule of `runner_stats::gate` applied to each experiment cell's deciding
//! interval (the one the report prints: the speed ratio's against 1 + a
//! percentage, D's against a duration), the power of that interval
//! computed from its own width (`runner_stats::gate::interval_power`), and the
//! rule applied to each fork of the self-check cells, whose shares test
//! whether a fork's interval is valid: at d = 0 (false alarms) and at half
//! the threshold (false blocks).
//!
//! A percentage judges the ratio, not D over a baseline median: a load
//! that stretches both arms alike stretches the median too, so D / median
//! stays put while the threshold in time grows with the load, and the
//! gate loosens (a 6 % slowdown passed a 5 % gate that way). The ratio of
//! each fork's medians, on its own baseline, does not move.
//!
//! Per group of experiment cells (the cells that differ only in their
//! delay, or in their variant): the threshold, each cell's decision and
//! power, the self-check. The verdict over everything, first that applies:
//!
//! 1. a deciding cell ran fewer than [`MIN_FORKS`] forks: inconclusive,
//!    since two forks' interval rests on an assumption nothing in two
//!    forks can check;
//! 2. the self-check shows, by the one-sided lower bound of its
//!    false-alarm or false-block share, that forks' intervals block
//!    unchanged or within-budget code more often than `max_false_block`:
//!    inconclusive, the intervals are not valid to block on here;
//! 3. with a percentage, the baseline's fork medians spread by more than
//!    the threshold and D's interval (against the threshold in time)
//!    decides otherwise than the ratio's: inconclusive, the load changed
//!    the runs' length while the gate measured;
//! 4. else any regression is a regression; else any inconclusive cell is
//!    inconclusive;
//! 5. else, when a deciding interval's computed power at twice the
//!    threshold is below `min_power`, inconclusive too (a pass that could
//!    not have failed is not a pass); else a pass.
//!
//! A self-check of few forks cannot show that the rates are small (0 of 8
//! forks bounds a rate at 31 % only), and it does not have to: the rates
//! the verdict rests on are the deciding interval's, nominal when the
//! intervals are valid, and the self-check is the test that they are
//! (`self_check_bounds` says whether it ran enough forks to bound them).
//!
//! An inconclusive verdict about the deciding interval names a design
//! predicted to decide ([`advice`]).
//!
//! The self-check forks' intervals are every fork's interval: exact
//! (`runner_stats::exact_median`) for D, `runner_stats::ratio::paired_ratio` for the
//! ratio, so they need no stream.

mod advice;
mod model;
pub mod sizing;
#[cfg(test)]
mod tests;

pub use model::*;

use super::{AnalysisError, AnalysisInput, CellAnalysis, ForkData};
use runner_core::record::{PairRecord, Phase};
use runner_plan::self_check::GateSizing;
use runner_plan::Role;
use runner_spec::{Gate, MaxSlowdown, Metric};

use runner_stats::gate::{
    decide, flagged, half_width_for_power, interval_power, nominal_false_alarm, Decision,
};
use runner_stats::StatsError;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// What the analysis needs to know about a run's gate.
#[derive(Debug, Clone)]
pub struct GateInput {
    pub gate: Gate,
    /// The recorded sizing of a percentage gate's 2x cells.
    pub sizing: Option<GateSizing>,
    /// The self-check cells.
    pub cells: Vec<GateCellInfo>,
}

#[derive(Debug, Clone)]
pub struct GateCellInfo {
    pub cell: u32,
    pub role: Role,
    pub params: Map<String, Value>,
    pub delay_ns: u64,
}

/// The pooled median of the measured baseline runs of `cells` in `rows`;
/// `None` when there are none. What a percentage threshold is a share of.
pub(crate) fn baseline_median(rows: &[PairRecord], cells: &[u32]) -> Option<f64> {
    let wanted: BTreeSet<u32> = cells.iter().copied().collect();
    let runs: Vec<u64> = rows
        .iter()
        .filter(|r| r.phase == Phase::Measure && wanted.contains(&r.cell))
        .map(|r| r.baseline_ns)
        .collect();
    runner_stats::median(&runs).ok()
}

/// A threshold as the rule holds it, and how to read a fork's own
/// interval in its unit.
#[derive(Debug, Clone, Copy)]
struct Rule {
    judges: Judged,
    /// 1 + the percentage, or the duration in ns.
    threshold: f64,
}

impl Rule {
    fn of(max: MaxSlowdown, threshold_ns: f64, metric: Metric) -> Rule {
        match max {
            MaxSlowdown::Percent(p) => Rule {
                judges: match metric {
                    Metric::Time => Judged::Ratio,
                    Metric::Instructions => Judged::Instructions,
                },
                threshold: 1.0 + p / 100.0,
            },
            MaxSlowdown::Ns(_) => Rule {
                judges: Judged::Difference,
                threshold: threshold_ns,
            },
        }
    }

    /// A fork's own estimate and interval in the judged unit.
    fn fork(&self, input: &AnalysisInput, f: &ForkData<'_>) -> Result<(f64, [f64; 2]), StatsError> {
        match self.judges {
            Judged::Difference => {
                let e = super::fork::interval(input, &f.diffs())?;
                Ok((e.median, [e.ci.lo, e.ci.hi]))
            }
            Judged::Ratio => {
                let (b, t) = f.arm_times();
                let r = runner_stats::ratio::paired_ratio(&b, &t, input.confidence)?;
                Ok((r.ratio, r.ci))
            }
            Judged::Instructions => {
                let r = super::instructions::fork_ratio_of(input, f)?.ok_or(StatsError::Empty)?;
                Ok((r.ratio, r.ci))
            }
        }
    }

    /// The computed power at twice the threshold (on the log scale for a
    /// ratio, where its interval is symmetric).
    fn power(&self, cell: u32, estimate: f64, ci: [f64; 2], confidence: f64) -> IntervalPower {
        let z = runner_stats::normal_quantile((1.0 + confidence) / 2.0);
        let (m, [lo, hi], t, twice) = match self.judges {
            Judged::Difference => (estimate, ci, self.threshold, 2.0 * self.threshold),
            Judged::Ratio | Judged::Instructions => (
                estimate.ln(),
                [ci[0].ln(), ci[1].ln()],
                self.threshold.ln(),
                (2.0 * self.threshold - 1.0).ln(),
            ),
        };
        IntervalPower {
            cell,
            power: interval_power(m, [lo, hi], t, twice, confidence),
            slowdown: match self.judges {
                Judged::Difference => twice,
                Judged::Ratio | Judged::Instructions => twice.exp(),
            },
            spread: (hi - lo) / (2.0 * z),
        }
    }
}

/// The rule applied to each fork of a self-check cell.
fn self_check(
    input: &AnalysisInput,
    info: &GateCellInfo,
    forks: &[ForkData<'_>],
    rule: Rule,
) -> Result<SelfCheck, StatsError> {
    let per_fork = forks
        .iter()
        .map(|f| {
            let (estimate, ci) = rule.fork(input, f)?;
            Ok(SelfCheckFork {
                fork: f.fork,
                estimate,
                ci,
                flagged: decide(estimate, ci, rule.threshold) == Decision::Regression,
            })
        })
        .collect::<Result<Vec<_>, StatsError>>()?;
    let (n_flagged, n) = flagged(per_fork.iter().map(|f| {
        if f.flagged {
            Decision::Regression
        } else {
            Decision::Pass
        }
    }));
    Ok(SelfCheck {
        cell: info.cell,
        delay_ns: info.delay_ns,
        share: Share::of(n_flagged, n, input.confidence),
        per_fork,
    })
}

/// One experiment cell's deciding interval (the report's) and D's beside
/// it, held against the group's threshold.
fn gate_cell(c: &CellAnalysis, rule: Rule, threshold_ns: f64) -> Result<GateCell, AnalysisError> {
    let (estimate, ci) = match rule.judges {
        Judged::Ratio => (c.effect.ratio, c.effect.ratio_ci),
        Judged::Instructions => {
            let e = &c
                .instructions
                .as_ref()
                .ok_or(AnalysisError::EmptyCell(c.cell))?
                .effect;
            (e.ratio, e.ratio_ci)
        }
        Judged::Difference => match &c.stop {
            Some(s) => (s.estimate_ns, s.interval_ns),
            None => (c.over_forks.estimate_ns, c.over_forks.ci_ns),
        },
    };
    let (difference_ns, difference_ci_ns) = match &c.stop {
        Some(s) => (s.estimate_ns, s.interval_ns),
        None => (c.over_forks.estimate_ns, c.over_forks.ci_ns),
    };
    Ok(GateCell {
        cell: c.cell,
        params: c.params.clone(),
        delay_ns: c.delay_ns,
        forks: c.forks_total,
        estimate,
        ci,
        decision: Verdict::of(decide(estimate, ci, rule.threshold)),
        difference_ns,
        difference_ci_ns,
        difference_decision: Verdict::of(decide(difference_ns, difference_ci_ns, threshold_ns)),
    })
}

/// max / min - 1 of the cells' forks' baseline medians.
fn baseline_spread(members: &[&CellAnalysis]) -> f64 {
    let medians = members
        .iter()
        .flat_map(|c| c.forks.iter().map(|f| f.baseline_median_ns));
    let (lo, hi) = medians.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), m| {
        (lo.min(m), hi.max(m))
    });
    if lo > 0.0 && hi.is_finite() {
        hi / lo - 1.0
    } else {
        0.0
    }
}

/// See the module doc. `cells` are the analysed experiment cells; `forks`
/// gives a self-check cell's rows; `rows` are every pair of the run.
pub(crate) fn gate<'a>(
    input: &AnalysisInput,
    g: &GateInput,
    cells: &[CellAnalysis],
    forks: impl Fn(u32) -> &'a [ForkData<'a>],
    rows: &[PairRecord],
) -> Result<GateAnalysis, AnalysisError> {
    let gate = &g.gate;
    let mut groups: Vec<(Map<String, Value>, Vec<&CellAnalysis>)> = Vec::new();
    for c in cells {
        let key = runner_plan::self_check::group_params(&c.params);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, m)) => m.push(c),
            None => groups.push((key, vec![c])),
        }
    }
    let mut out = Vec::new();
    let mut reasons = Vec::new();
    for (i, (params, members)) in groups.into_iter().enumerate() {
        let ids: Vec<u32> = members.iter().map(|c| c.cell).collect();
        let median = baseline_median(rows, &ids).ok_or(AnalysisError::EmptyCell(ids[0]))?;
        if let Some(s) = g.sizing.as_ref().and_then(|s| s.groups.get(i)) {
            if s.baseline_median_ns != median {
                return Err(AnalysisError::GateSizing(format!(
                    "run.json's gate_sizing.groups[{i}].baseline_median_ns is {}, but the measured baseline runs of cells {ids:?} have the median {median}",
                    s.baseline_median_ns
                )));
            }
        }
        let threshold_ns = gate.max_slowdown.ns_for(median);
        let rule = Rule::of(gate.max_slowdown, threshold_ns, gate.metric);
        let decided: Vec<GateCell> = members
            .iter()
            .map(|c| gate_cell(c, rule, threshold_ns))
            .collect::<Result<_, _>>()?;
        let check = |role: Role| -> Result<Option<SelfCheck>, AnalysisError> {
            let Some(info) = g.cells.iter().find(|c| {
                c.role == role && runner_plan::self_check::group_params(&c.params) == params
            }) else {
                return Ok(None);
            };
            self_check(input, info, forks(info.cell), rule)
                .map(Some)
                .map_err(|source| AnalysisError::Stats {
                    cell: info.cell,
                    source,
                })
        };
        let false_alarms = check(Role::GateNull)?;
        let false_blocks = check(Role::GateWithin)?;
        let power = decided
            .iter()
            .map(|c| rule.power(c.cell, c.estimate, c.ci, input.confidence))
            .min_by(|a, b| a.power.total_cmp(&b.power));
        let spread = baseline_spread(&members);
        let reason = group_reason(
            gate,
            &decided,
            [&false_alarms, &false_blocks],
            power,
            spread,
        );
        out.push(GateGroup {
            params,
            baseline_median_ns: median,
            threshold_ns,
            threshold: rule.threshold,
            baseline_spread: spread,
            verdict: reason.verdict(),
            cells: decided,
            false_alarms,
            power,
            false_blocks,
        });
        reasons.push(reason);
    }
    let reason = reasons
        .iter()
        .copied()
        .min_by_key(|r| r.rank())
        .unwrap_or(Reason::IntervalReachesThreshold);
    let verdict = reason.verdict();
    let total = |pick: fn(&GateGroup) -> Option<&SelfCheck>| {
        let checks: Vec<&SelfCheck> = out.iter().filter_map(pick).collect();
        (!checks.is_empty()).then(|| {
            let (f, n) = checks
                .iter()
                .fold((0, 0), |(f, n), c| (f + c.share.flagged, n + c.share.forks));
            Share::of(f, n, input.confidence)
        })
    };
    let power = out
        .iter()
        .filter_map(|g| g.power)
        .min_by(|a, b| a.power.total_cmp(&b.power));
    let advice = advise(input, gate, reason, &out, cells, power.as_ref());
    let false_alarms = total(|g| g.false_alarms.as_ref());
    let false_blocks = total(|g| g.false_blocks.as_ref());
    let needed = runner_stats::gate::forks_to_bound(gate.max_false_block, input.confidence);
    let self_check_bounds = gate.self_check
        && out.iter().all(|g| {
            [&g.false_alarms, &g.false_blocks]
                .iter()
                .all(|c| c.as_ref().is_none_or(|c| c.share.forks >= needed))
        });
    Ok(GateAnalysis {
        max_slowdown: gate.max_slowdown.to_string(),
        judges: Rule::of(gate.max_slowdown, 0.0, gate.metric).judges,
        interval: cells
            .first()
            .map_or(crate::effect::IntervalKind::Forks, |c| c.effect.interval),
        min_power: gate.min_power,
        max_false_block: gate.max_false_block,
        self_check: gate.self_check,
        nominal_false_alarm: nominal_false_alarm(input.confidence),
        verdict,
        reason,
        exit_code: verdict.exit_code(),
        false_alarms,
        self_check_bounds,
        false_blocks,
        power,
        advice,
        groups: out,
    })
}

/// One group's reason, by the module doc's order.
fn group_reason(
    gate: &Gate,
    cells: &[GateCell],
    checks: [&Option<SelfCheck>; 2],
    power: Option<IntervalPower>,
    baseline_spread: f64,
) -> Reason {
    let worst = cells
        .iter()
        .map(|c| c.decision)
        .max()
        .unwrap_or(Verdict::Pass);
    let invalid = checks
        .iter()
        .filter_map(|c| c.as_ref())
        .any(|c| c.share.lower_bound > gate.max_false_block);
    // Load stretches time, never a count: a gate on instructions has no
    // such reason.
    let loaded = match gate.max_slowdown {
        MaxSlowdown::Percent(p) if gate.metric == Metric::Time => {
            baseline_spread > p / 100.0 && cells.iter().any(|c| c.difference_decision != c.decision)
        }
        _ => false,
    };
    if cells.iter().any(|c| c.forks < MIN_FORKS) {
        Reason::TooFewForks
    } else if invalid {
        Reason::SelfCheckFailed
    } else if loaded {
        Reason::Load
    } else if worst == Verdict::Regression {
        Reason::Regression
    } else if worst == Verdict::Inconclusive {
        Reason::IntervalReachesThreshold
    } else if power.is_some_and(|p| p.power < gate.min_power) {
        Reason::LowPower
    } else {
        Reason::IntervalBelowThreshold
    }
}

/// The design an inconclusive verdict about the deciding interval names:
/// for an interval that straddles the threshold, one whose half-width is
/// below the estimate's distance from it; for a pass short of power, one
/// narrow enough for `min_power` that still lies below the threshold; for
/// too few forks, at least [`MIN_FORKS`]. In D's units (a ratio's
/// distances translated at the group's baseline median), from the cell's
/// variance components. `None` for every other verdict, and when no
/// design would decide.
fn advise(
    input: &AnalysisInput,
    gate: &Gate,
    reason: Reason,
    groups: &[GateGroup],
    cells: &[CellAnalysis],
    power: Option<&IntervalPower>,
) -> Option<Advice> {
    let all = || {
        groups
            .iter()
            .flat_map(|g| g.cells.iter().map(move |c| (g, c)))
    };
    if gate.metric == Metric::Instructions {
        return advise_counts(input, reason, groups, cells);
    }
    // A distance in the judged unit, in ns.
    let in_ns = |g: &GateGroup, x: f64| match gate.max_slowdown {
        MaxSlowdown::Percent(_) => x * g.baseline_median_ns,
        MaxSlowdown::Ns(_) => x,
    };
    let (cell, needed) = match reason {
        Reason::IntervalReachesThreshold => {
            let (g, c) = all().find(|(_, c)| c.decision == Verdict::Inconclusive)?;
            (c, in_ns(g, (c.estimate - g.threshold).abs()))
        }
        Reason::LowPower => {
            let p = power?;
            let (g, c) = all().find(|(_, c)| c.cell == p.cell)?;
            let t_ns = g.threshold_ns;
            let for_power = half_width_for_power(t_ns, gate.min_power, input.confidence);
            (c, for_power.min(in_ns(g, g.threshold - c.estimate)))
        }
        Reason::TooFewForks => {
            let (g, c) = all().min_by_key(|(_, c)| c.forks)?;
            let analysed = cells.iter().find(|x| x.cell == c.cell)?;
            let pairs = analysed.n / analysed.forks_total.max(1);
            let needed = in_ns(g, (c.estimate - g.threshold).abs());
            let sized = analysed.variance.as_ref().and_then(|v| {
                let vc = runner_stats::VarianceComponents {
                    between: v.median_between_ns2,
                    within: v.median_within_ns2,
                };
                // The fewest forks a gate decides on, at the pairs that ran,
                // when the model says they would do; else the cheapest
                // design beyond them.
                let at_least =
                    runner_stats::predicted_half_width(vc, input.confidence, MIN_FORKS, pairs);
                if at_least < needed {
                    return Some(Advice {
                        change: AdviceChange::Forks,
                        forks: MIN_FORKS,
                        pairs,
                        predicted_half_width_ns: Some(at_least),
                        needed_half_width_ns: needed,
                    });
                }
                advice::advise(vc, input.confidence, (MIN_FORKS, pairs), 0, needed)
            });
            return Some(sized.unwrap_or(Advice {
                change: AdviceChange::Forks,
                forks: MIN_FORKS,
                pairs,
                predicted_half_width_ns: None,
                needed_half_width_ns: needed,
            }));
        }
        _ => return None,
    };
    let analysed = cells.iter().find(|x| x.cell == cell.cell)?;
    let v = analysed.variance.as_ref()?;
    // What ran in this cell (a sequential design's forks run, not its
    // maximum); warm-up pairs are not in the analysis, so not costed.
    let forks = analysed.forks_total.max(1);
    let pairs = analysed.n / forks;
    let vc = runner_stats::VarianceComponents {
        between: v.median_between_ns2,
        within: v.median_within_ns2,
    };
    advice::advise(vc, input.confidence, (forks, pairs), 0, needed)
}

/// [`advise`] for a gate on instructions: counts are the same in every
/// pair of a fork, so only forks narrow their interval; the forks that
/// Student's t over the forks' log ratios, at their spread, predicts would
/// bring the half-width below the estimate's distance from the threshold
/// (or, for a pass short of power, below the width that power needs).
fn advise_counts(
    input: &AnalysisInput,
    reason: Reason,
    groups: &[GateGroup],
    cells: &[CellAnalysis],
) -> Option<Advice> {
    let all = || {
        groups
            .iter()
            .flat_map(|g| g.cells.iter().map(move |c| (g, c)))
    };
    let (g, c) = match reason {
        Reason::IntervalReachesThreshold => {
            all().find(|(_, c)| c.decision == Verdict::Inconclusive)?
        }
        Reason::LowPower => {
            all().max_by(|a, b| (a.1.ci[1] - a.1.ci[0]).total_cmp(&(b.1.ci[1] - b.1.ci[0])))?
        }
        Reason::TooFewForks => all().min_by_key(|(_, c)| c.forks)?,
        _ => return None,
    };
    let analysed = cells.iter().find(|x| x.cell == c.cell)?;
    let counts = analysed.instructions.as_ref()?;
    let pairs = analysed.n / analysed.forks_total.max(1);
    let logs: Vec<f64> = counts.forks.iter().map(|f| f.ratio.ln()).collect();
    let needed = match reason {
        Reason::LowPower => {
            let t = g.threshold.ln();
            half_width_for_power(t, 0.8, input.confidence).min(t - c.estimate.ln())
        }
        _ => (c.estimate.ln() - g.threshold.ln()).abs(),
    };
    let mean = logs.iter().sum::<f64>() / logs.len().max(1) as f64;
    let sd = (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>()
        / (logs.len().max(2) - 1) as f64)
        .sqrt();
    let t = |df: u32| runner_stats::distributions::t_quantile(input.confidence, df);
    let forks = (MIN_FORKS..=super::variance::MAX_FORKS)
        .find(|&k| {
            let h = t(k - 1) * sd / f64::from(k).sqrt();
            k >= analysed.forks_total && h < needed
        })
        .unwrap_or(MIN_FORKS.max(analysed.forks_total));
    (forks > analysed.forks_total || reason == Reason::TooFewForks).then_some(Advice {
        change: AdviceChange::Forks,
        forks: forks.max(MIN_FORKS),
        pairs,
        predicted_half_width_ns: None,
        needed_half_width_ns: needed,
    })
}
