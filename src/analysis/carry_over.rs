//! Carry-over: the penalty a wait puts on the run that follows it.
//!
//! Per fork, all runs (warm-up included, since the first measured run
//! follows the last warm-up run) are put in start order (`*_at_ns`; ties by
//! pair, then by the pair's `first`). Each *measured baseline* run with a
//! predecessor goes into "after treatment" or "after baseline" by the arm of
//! the run just before it; difference = median baseline_ns after treatment -
//! median baseline_ns after baseline, two-sample percentile bootstrap CI.
//!
//! What that compares depends on `pad_baseline` (design section 3):
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
use crate::stats::{self, StatsError};

pub(crate) fn carry_over(
    input: &AnalysisInput,
    info: &CellInfo,
    forks: &[ForkData<'_>],
) -> Result<CarryOver, StatsError> {
    let (after_t, after_b) = predecessor_groups(forks);
    let (difference_ns, ci_ns, note) = super::contrast(
        input,
        &after_t,
        &after_b,
        &mut streams::carry_over(input.master_seed, info.cell),
        "no measured baseline run follows one of the two arms: no contrast",
    )?;
    Ok(CarryOver {
        after_treatment_n: after_t.len() as u32,
        after_treatment_median_ns: stats::median(&after_t).ok(),
        after_baseline_n: after_b.len() as u32,
        after_baseline_median_ns: stats::median(&after_b).ok(),
        difference_ns,
        ci_ns,
        padded: input.pad_baseline,
        note,
    })
}

/// baseline_ns of measured baseline runs that followed a treatment run, and
/// of those that followed a baseline run, in fork order, then run order.
pub(crate) fn predecessor_groups(forks: &[ForkData<'_>]) -> (Vec<u64>, Vec<u64>) {
    let (mut after_t, mut after_b) = (Vec::new(), Vec::new());
    for f in forks {
        let runs = run_order(&f.all);
        for w in runs.windows(2) {
            let (prev, (arm, p)) = (w[0].0, w[1]);
            if arm == Arm::Baseline && p.phase == Phase::Measure {
                match prev {
                    Arm::Treatment => after_t.push(p.baseline_ns),
                    Arm::Baseline => after_b.push(p.baseline_ns),
                }
            }
        }
    }
    (after_t, after_b)
}

/// Every run of a fork in start order, as (arm, its pair).
pub(crate) fn run_order<'a>(records: &[&'a PairRecord]) -> Vec<(Arm, &'a PairRecord)> {
    let mut runs: Vec<(u64, u32, bool, Arm, &PairRecord)> = records
        .iter()
        .flat_map(|&p| {
            [
                (
                    p.baseline_at_ns,
                    p.pair,
                    p.first != Arm::Baseline,
                    Arm::Baseline,
                    p,
                ),
                (
                    p.treatment_at_ns,
                    p.pair,
                    p.first != Arm::Treatment,
                    Arm::Treatment,
                    p,
                ),
            ]
        })
        .collect();
    // Warm-up and measured pairs may share pair numbers; the phase breaks that tie.
    runs.sort_by_key(|&(at, pair, second, _, p)| (at, p.phase == Phase::Measure, pair, second));
    runs.into_iter().map(|(_, _, _, arm, p)| (arm, p)).collect()
}
