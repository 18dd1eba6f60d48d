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

use super::{streams, AnalysisInput, CarryOver, CellInfo, ForkData};
use crate::record::{Arm, PairRecord, Phase};
use crate::stats::StatsError;

/// What the two groups are, for the JSON and the report.
pub const COMPARISON: &str = "measured baseline runs that ran first in their pair, \
    split by the arm that ended the previous pair (baselines that ran second always \
    follow their own pair's treatment and are left out, so both groups hold runs in \
    the same position)";

pub(crate) fn carry_over(
    input: &AnalysisInput,
    info: &CellInfo,
    forks: &[ForkData<'_>],
) -> Result<CarryOver, StatsError> {
    let c = super::contrast(
        input,
        &predecessor_groups(forks),
        &mut streams::carry_over(input.master_seed, info.cell),
    )?;
    let note = if c.difference_ns.is_none() {
        Some("no fork has first-in-pair baseline runs after both arms: no contrast".to_string())
    } else if c.forks_left_out > 0 {
        Some(format!(
            "{} of {} forks had first-in-pair baseline runs after only one arm and are left out",
            c.forks_left_out,
            forks.len()
        ))
    } else {
        None
    };
    Ok(CarryOver {
        after_treatment_n: c.n_a,
        after_treatment_median_ns: c.median_a,
        after_baseline_n: c.n_b,
        after_baseline_median_ns: c.median_b,
        difference_ns: c.difference_ns,
        ci_ns: c.ci_ns,
        padded: input.pad_baseline,
        comparison: COMPARISON.to_string(),
        forks_left_out: c.forks_left_out,
        note,
    })
}

/// Per fork (in fork order): baseline_ns of its measured baseline runs that
/// ran first in their pair and followed a treatment run, and of those that
/// followed a baseline run, each in run order; dithered within the clock's
/// step (`ForkData::run_dither`), or at clock ties both groups' medians
/// would be one step and the interval of their difference a point.
pub(crate) fn predecessor_groups(forks: &[ForkData<'_>]) -> Vec<(Vec<f64>, Vec<f64>)> {
    forks
        .iter()
        .map(|f| {
            let offset = f.run_dither();
            let records = f.all();
            let (mut after_t, mut after_b) = (Vec::new(), Vec::new());
            for w in run_order(records).windows(2) {
                let (prev, (arm, i)) = (w[0].0, w[1]);
                let p = records[i];
                if arm == Arm::Baseline && p.phase == Phase::Measure && p.first == Arm::Baseline {
                    let v = p.baseline_ns as f64 + offset[i];
                    match prev {
                        Arm::Treatment => after_t.push(v),
                        Arm::Baseline => after_b.push(v),
                    }
                }
            }
            (after_t, after_b)
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
