//! Carry-over: the penalty a wait puts on the run that follows it.
//!
//! Per fork, all runs (warm-up included, since the first measured run
//! follows the last warm-up run) are put in start order (`*_at_ns`; ties by
//! pair, then by the pair's `first`). What is compared is like with like:
//! only *measured baseline runs that ran first in their pair*, split by the
//! arm of the run just before them, i.e. the arm that ended the previous
//! pair. A baseline that ran second always follows its own pair's
//! treatment, and in random order a run that ran second is a different
//! position (it follows a run of the same input, in a warm cache); counting
//! those as "after a treatment" made that group mostly second runs and the
//! other group only first runs, so position was confounded with history.
//! difference = median baseline_ns after a treatment - median after a
//! baseline, with a hierarchical percentile bootstrap CI (forks, then each
//! chosen fork's two groups; see [`super::contrast`]).
//!
//! What that compares depends on `pad_baseline` (docs/guide/how-a-run-works.md):
//! - false: after a treatment the baseline follows a timed busy-wait of d,
//!   after a baseline it follows no wait; the difference is the cost of
//!   following a wait, which biases D in random order.
//! - true: every baseline run is followed by an untimed wait of d, so *every*
//!   run follows a wait of d; the difference compares a wait inside the
//!   previous timed region with an untimed pad, and should be ~0. A clear
//!   difference means the padding does not balance the history.
//!
//! With d = 0 there are no waits: the difference is then a plain
//! "which arm ran before" effect.

use super::{streams, AnalysisInput, ArmCarryOver, CarryOver, CellInfo, ForkData, RatioFigure};
use runner_core::record::{Arm, PairRecord, Phase};
use runner_stats::ratio::{over_forks, unpaired_ratio, RatioEstimate};
use runner_stats::StatsError;

/// What the two groups of each arm are, for the JSON and the report.
pub(super) const COMPARISON: &str = "each arm's measured runs that ran first in their pair, \
    split by the arm that ended the previous pair (a run that ran second always \
    follows its own pair's other arm and is left out, so both groups hold runs in \
    the same position)";

/// A run after the other arm that differs from the same arm's runs after
/// itself by more than this share of their median is named in the Finding
/// (when its interval also excludes 0): a tenth of a run is more than any
/// harness noise a report would otherwise let through unremarked.
pub(super) const FLAG_SHARE_OF_MEDIAN: f64 = 0.10;
/// ... or by more than this share of a resolved effect: a quarter of the
/// answer is what a reader would want to know was borrowed from history.
pub(super) const FLAG_SHARE_OF_EFFECT: f64 = 0.25;

pub(crate) fn carry_over(
    input: &AnalysisInput,
    info: &CellInfo,
    forks: &[ForkData<'_>],
) -> Result<CarryOver, StatsError> {
    let groups: Vec<[(Vec<f64>, Vec<f64>); 2]> = forks.iter().map(predecessors).collect();
    let arm = |k: usize, mut rng| -> Result<ArmCarryOver, StatsError> {
        let per_fork: Vec<(Vec<f64>, Vec<f64>)> = groups.iter().map(|g| g[k].clone()).collect();
        let c = super::contrast(input, &per_fork, &mut rng)?;
        Ok(ArmCarryOver {
            after_other_n: c.n_a,
            after_other_median_ns: c.median_a,
            after_same_n: c.n_b,
            after_same_median_ns: c.median_b,
            difference_ns: c.difference_ns,
            ci_ns: c.ci_ns,
            forks_left_out: c.forks_left_out,
            inflates: false,
        })
    };
    let baseline = arm(0, streams::carry_over(input.master_seed, info.cell))?;
    let treatment = arm(
        1,
        streams::carry_over_treatment(input.master_seed, info.cell),
    )?;
    let note = match (baseline.ci_ns, treatment.ci_ns) {
        (None, None) => Some(
            "no fork has first-in-pair runs of an arm after both arms (a blocked order has none): no contrast"
                .to_string(),
        ),
        _ if baseline.forks_left_out > 0 || treatment.forks_left_out > 0 => Some(format!(
            "forks with first-in-pair runs of an arm after only one arm are left out of that arm's contrast ({} of {} for the baseline, {} for the treatment)",
            baseline.forks_left_out,
            forks.len(),
            treatment.forks_left_out
        )),
        _ => None,
    };
    Ok(CarryOver {
        padded: input.pad_baseline,
        comparison: COMPARISON.to_string(),
        own_ratio: own_ratio(input, &groups)?,
        baseline,
        treatment,
        note,
    })
}

/// The speed ratio from runs that followed their own arm only: per fork,
/// median(treatment after a treatment) / median(baseline after a baseline),
/// the two groups unpaired, combined across forks on the log scale. What
/// the ratio would be had neither arm followed the other; `None` when no
/// fork has both groups.
fn own_ratio(
    input: &AnalysisInput,
    groups: &[[(Vec<f64>, Vec<f64>); 2]],
) -> Result<Option<RatioFigure>, StatsError> {
    let forks: Vec<RatioEstimate> = groups
        .iter()
        .filter(|[b, t]| !b.1.is_empty() && !t.1.is_empty())
        .map(|[b, t]| unpaired_ratio(&b.1, &t.1, input.confidence))
        .collect::<Result<_, _>>()?;
    if forks.is_empty() {
        return Ok(None);
    }
    let c = over_forks(&forks, input.confidence)?;
    Ok(Some(RatioFigure {
        ratio: c.ratio,
        ratio_ci: c.ci,
    }))
}

/// Marks each arm whose runs after the other arm differ from its runs
/// after itself beyond their interval and by more than
/// [`FLAG_SHARE_OF_MEDIAN`] of their median or [`FLAG_SHARE_OF_EFFECT`] of
/// the cell's effect (`effect_ns`, 0 when no difference was resolved).
pub(crate) fn mark(co: &mut CarryOver, effect_ns: f64) {
    for arm in [&mut co.baseline, &mut co.treatment] {
        arm.inflates = match (arm.difference_ns, arm.ci_ns, arm.after_same_median_ns) {
            (Some(d), Some([lo, hi]), Some(m)) => {
                let beyond = lo > 0.0 || hi < 0.0;
                let large = d.abs() > FLAG_SHARE_OF_MEDIAN * m.abs()
                    || (effect_ns != 0.0 && d.abs() > FLAG_SHARE_OF_EFFECT * effect_ns.abs());
                beyond && large
            }
            _ => false,
        };
    }
}

/// Per fork: for each arm ([baseline, treatment]), its measured runs that
/// ran first in their pair and followed the other arm, and those that
/// followed the same arm, each in run order; dithered within the clock's
/// step (`ForkData::arm_dither`), or at clock ties both groups' medians
/// would be one step and the interval of their difference a point.
pub(crate) fn predecessors(f: &ForkData<'_>) -> [(Vec<f64>, Vec<f64>); 2] {
    let offset = f.arm_dither();
    let records = f.all();
    let mut out: [(Vec<f64>, Vec<f64>); 2] = Default::default();
    for w in run_order(records).windows(2) {
        let (prev, (arm, i)) = (w[0].0, w[1]);
        let p = records[i];
        if p.phase != Phase::Measure || p.first != arm {
            continue;
        }
        // The pair's place among the measured pairs (sorted by pair number).
        let Ok(at) = f.measured.binary_search_by_key(&p.pair, |m| m.pair) else {
            continue;
        };
        let (k, v) = match arm {
            Arm::Baseline => (0, p.baseline_ns as f64 + offset[at][0]),
            Arm::Treatment => (1, p.treatment_ns as f64 + offset[at][1]),
        };
        if prev == arm {
            out[k].1.push(v);
        } else {
            out[k].0.push(v);
        }
    }
    out
}

/// Per fork, the baseline's two groups of [`predecessors`] (after the
/// treatment, after the baseline): what the resample trace records.
pub(crate) fn predecessor_groups(forks: &[ForkData<'_>]) -> Vec<(Vec<f64>, Vec<f64>)> {
    forks
        .iter()
        .map(|f| {
            let [b, _] = predecessors(f);
            b
        })
        .collect()
}

/// Every run of a fork in start order, as (arm, the position of its pair
/// in `records`).
pub(crate) fn run_order(records: &[&PairRecord]) -> Vec<(Arm, usize)> {
    let mut runs: Vec<(u64, bool, u32, bool, Arm, usize)> = records
        .iter()
        .enumerate()
        .flat_map(|(i, &p)| {
            let measured = p.phase == Phase::Measure;
            [
                (
                    p.baseline_at_ns,
                    measured,
                    p.pair,
                    p.first != Arm::Baseline,
                    Arm::Baseline,
                    i,
                ),
                (
                    p.treatment_at_ns,
                    measured,
                    p.pair,
                    p.first != Arm::Treatment,
                    Arm::Treatment,
                    i,
                ),
            ]
        })
        .collect();
    // Warm-up and measured pairs may share pair numbers; the phase breaks
    // that tie. A stable sort on these keys: runs equal in all of them keep
    // the order read.
    runs.sort_by_key(|&(at, measured, pair, second, _, _)| (at, measured, pair, second));
    runs.into_iter()
        .map(|(_, _, _, _, arm, i)| (arm, i))
        .collect()
}
