//! The gate's verdict from the analysed cells (docs/guide/gate.md): the
//! rule of `stats::gate` applied to each experiment cell's deciding
//! interval, the power of that interval computed from its own width
//! (`stats::gate::interval_power`), and the rule applied to each fork of
//! the self-check cells, whose shares test whether a fork's interval is
//! valid: at d = 0 (false alarms) and at half the threshold (false blocks).
//!
//! Per group of experiment cells (the cells that differ only in their
//! delay, or in their variant): the threshold (a duration, or a share of
//! the pooled median of the group's measured baseline runs), each cell's
//! decision and power, the self-check. The verdict over everything:
//!
//! 1. when the self-check shows, by the one-sided lower bound of its
//!    false-alarm or false-block share, that forks' intervals block
//!    unchanged or within-budget code more often than `max_false_block`,
//!    inconclusive: on this machine the intervals are not valid to block
//!    on, whatever the deciding one says;
//! 2. else any regression is a regression; else any inconclusive cell is
//!    inconclusive;
//! 3. else, when a deciding interval's computed power at twice the
//!    threshold is below `min_power`, inconclusive too (a pass that could
//!    not have failed is not a pass); else a pass.
//!
//! A self-check of few forks cannot show that the rates are small (0 of 8
//! forks bounds a rate at 31 % only), and it does not have to: the rates
//! the verdict rests on are the deciding interval's, nominal when the
//! intervals are valid, and the self-check is the test that they are.
//! Its upper bounds are stated beside the verdict.
//!
//! An inconclusive verdict about the deciding interval names a design
//! predicted to decide ([`advice`]).
//!
//! The self-check forks' intervals are every fork's interval: exact
//! (`stats::exact_median`), so they need no stream.

mod advice;
mod model;
pub(crate) mod sizing;
#[cfg(test)]
mod tests;

pub(crate) use model::*;

use super::{AnalysisError, AnalysisInput, CellAnalysis, ForkData};
use crate::plan::self_check::GateSizing;
use crate::plan::Role;
use crate::record::{PairRecord, Phase};
use crate::spec::{Gate, GateStatistic};

use crate::stats::gate::{
    decide, flagged, half_width_for_power, interval_power, nominal_false_alarm, Decision,
};
use crate::stats::{self, StatsError};
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
    stats::median(&runs).ok()
}

/// The rule applied to each fork of a self-check cell.
fn self_check(
    input: &AnalysisInput,
    info: &GateCellInfo,
    forks: &[ForkData<'_>],
    threshold_ns: f64,
) -> Result<SelfCheck, StatsError> {
    let per_fork = forks
        .iter()
        .map(|f| {
            let e = super::fork::interval(input, &f.diffs())?;
            let ci_ns = [e.ci.lo, e.ci.hi];
            Ok(SelfCheckFork {
                fork: f.fork,
                median_ns: e.median,
                ci_ns,
                flagged: decide(e.median, ci_ns, threshold_ns) == Decision::Regression,
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
        let key = crate::plan::self_check::group_params(&c.params);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, m)) => m.push(c),
            None => groups.push((key, vec![c])),
        }
    }
    let mut out = Vec::new();
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
        let decided: Vec<GateCell> = members
            .iter()
            .map(|c| {
                // A sequential design stopped where its data said: only
                // its confidence sequence is valid there.
                let (estimate_ns, ci_ns) = match (&c.stop, gate.statistic) {
                    (Some(s), _) => (s.estimate_ns, s.interval_ns),
                    (None, GateStatistic::Hierarchical) => {
                        (c.hierarchical.median_ns, c.hierarchical.ci_ns)
                    }
                    (None, GateStatistic::Pooled | GateStatistic::Sequence) => {
                        (c.pooled.median_ns, c.pooled.ci_ns)
                    }
                };
                GateCell {
                    cell: c.cell,
                    params: c.params.clone(),
                    delay_ns: c.delay_ns,
                    estimate_ns,
                    ci_ns,
                    decision: Verdict::of(decide(estimate_ns, ci_ns, threshold_ns)),
                }
            })
            .collect();
        let check = |role: Role| -> Result<Option<SelfCheck>, AnalysisError> {
            let Some(info) = g.cells.iter().find(|c| {
                c.role == role && crate::plan::self_check::group_params(&c.params) == params
            }) else {
                return Ok(None);
            };
            self_check(input, info, forks(info.cell), threshold_ns)
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
            .map(|c| power_of(c, threshold_ns, input.confidence))
            .min_by(|a, b| a.power.total_cmp(&b.power));
        let worst = decided
            .iter()
            .map(|c| c.decision)
            .max()
            .unwrap_or(Verdict::Pass);
        let invalid = [&false_alarms, &false_blocks]
            .iter()
            .filter_map(|c| c.as_ref())
            .any(|c| c.share.lower_bound > gate.max_false_block);
        let weak = power.is_some_and(|p| p.power < gate.min_power);
        out.push(GateGroup {
            params,
            baseline_median_ns: median,
            threshold_ns,
            verdict: if invalid || (worst == Verdict::Pass && weak) {
                Verdict::Inconclusive
            } else {
                worst
            },
            cells: decided,
            false_alarms,
            power,
            false_blocks,
        });
    }
    let decided = out.iter().flat_map(|g| &g.cells).map(|c| c.decision).max();
    let verdict = out
        .iter()
        .map(|g| g.verdict)
        .max()
        .unwrap_or(Verdict::Inconclusive);
    let invalid = out.iter().any(|g| {
        [&g.false_alarms, &g.false_blocks]
            .iter()
            .filter_map(|c| c.as_ref())
            .any(|c| c.share.lower_bound > gate.max_false_block)
    });
    let reason = match (verdict, decided) {
        (Verdict::Inconclusive, _) if invalid => Reason::SelfCheckFailed,
        (Verdict::Regression, _) => Reason::Regression,
        (Verdict::Inconclusive, Some(Verdict::Pass)) => Reason::LowPower,
        (Verdict::Inconclusive, _) => Reason::IntervalReachesThreshold,
        (Verdict::Pass, _) => Reason::IntervalBelowThreshold,
    };
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
    Ok(GateAnalysis {
        max_slowdown: gate.max_slowdown.to_string(),
        statistic: if cells.iter().any(|c| c.stop.is_some()) {
            GateStatistic::Sequence
        } else {
            gate.statistic
        },
        min_power: gate.min_power,
        max_false_block: gate.max_false_block,
        self_check: gate.self_check,
        nominal_false_alarm: nominal_false_alarm(input.confidence),
        verdict,
        reason,
        exit_code: verdict.exit_code(),
        false_alarms: total(|g| g.false_alarms.as_ref()),
        false_blocks: total(|g| g.false_blocks.as_ref()),
        power,
        advice,
        groups: out,
    })
}

/// The computed power of one cell's deciding interval at twice the
/// threshold (`stats::gate::interval_power`).
fn power_of(c: &GateCell, threshold_ns: f64, confidence: f64) -> IntervalPower {
    let z = stats::normal_quantile((1.0 + confidence) / 2.0);
    IntervalPower {
        cell: c.cell,
        power: interval_power(
            c.estimate_ns,
            c.ci_ns,
            threshold_ns,
            2.0 * threshold_ns,
            confidence,
        ),
        slowdown_ns: 2.0 * threshold_ns,
        spread_ns: (c.ci_ns[1] - c.ci_ns[0]) / (2.0 * z),
    }
}

/// The design an inconclusive verdict about the deciding interval names:
/// for an interval that straddles the threshold, one whose half-width is
/// below the estimate's distance from it; for a pass short of power, one
/// narrow enough for `min_power` that still lies below the threshold.
/// `None` for every other verdict, and when the cell has one fork (no
/// fork-to-fork spread to size from) or no design would decide.
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
    let (group, cell, needed) = match reason {
        Reason::IntervalReachesThreshold => {
            let (g, c) = all().find(|(_, c)| c.decision == Verdict::Inconclusive)?;
            (g, c, (c.estimate_ns - g.threshold_ns).abs())
        }
        Reason::LowPower => {
            let p = power?;
            let (g, c) = all().find(|(_, c)| c.cell == p.cell)?;
            let for_power = half_width_for_power(g.threshold_ns, gate.min_power, input.confidence);
            (g, c, for_power.min(g.threshold_ns - c.estimate_ns))
        }
        _ => return None,
    };
    let _ = group;
    let analysed = cells.iter().find(|x| x.cell == cell.cell)?;
    let v = analysed.variance.as_ref()?;
    // What ran in this cell (a sequential design's forks run, not its
    // maximum); warm-up pairs are not in the analysis, so not costed.
    let forks = analysed.forks_total.max(1);
    let pairs = analysed.n / forks;
    let vc = stats::VarianceComponents {
        between: v.median_between_ns2,
        within: v.median_within_ns2,
    };
    advice::advise(vc, input.confidence, (forks, pairs), 0, needed)
}
