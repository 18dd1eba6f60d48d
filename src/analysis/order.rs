//! Order effects: does running first or second change a run's time?
//!
//! paired-random: the measured pairs split by which arm ran first;
//! difference = median D (treatment first) - median D (treatment second),
//! with a two-sample percentile bootstrap CI (each group resampled on its
//! own, pooled over the cell's forks). If position did not matter, it is ~0;
//! the coin balances it out of D either way, this says how much it was.
//!
//! blocked: every baseline run precedes every treatment run, so position and
//! arm are confounded and only the per-fork sizes can be shown. Per fork,
//! faster_by = median(baseline) - (median(treatment) - d): how much faster the
//! second block ran than the first once the injected delay is taken out (the
//! study's A/A run: 119-173 us in 8/10 forks). A fork counts as "second block
//! faster" when faster_by > 0.

use super::{streams, AnalysisInput, CellInfo, ForkAnalysis, ForkData, Order};
use crate::record::{Arm, PairRecord};
use crate::spec::Ordering;
use crate::stats::{self, StatsError};

pub(crate) fn order(
    input: &AnalysisInput,
    info: &CellInfo,
    forks: &[ForkData<'_>],
    fork_results: &[ForkAnalysis],
) -> Result<Order, StatsError> {
    match input.ordering {
        Ordering::PairedRandom => paired_random(input, info, forks),
        Ordering::Blocked => blocked(info, fork_results),
    }
}

fn paired_random(
    input: &AnalysisInput,
    info: &CellInfo,
    forks: &[ForkData<'_>],
) -> Result<Order, StatsError> {
    let (first, second) = position_groups(forks);
    let median = |x: &[i64]| stats::median(x).ok();
    let (difference_ns, ci_ns, note) = super::contrast(
        input,
        &first,
        &second,
        &mut streams::order(input.master_seed, info.cell),
        "the treatment always ran in the same position: no order contrast",
    )?;
    Ok(Order::PairedRandom {
        treatment_first_n: first.len() as u32,
        treatment_first_median_ns: median(&first),
        treatment_second_n: second.len() as u32,
        treatment_second_median_ns: median(&second),
        difference_ns,
        ci_ns,
        note,
    })
}

/// D of the measured pairs with the treatment first, and with it second,
/// in fork order, then pair order.
pub(crate) fn position_groups(forks: &[ForkData<'_>]) -> (Vec<i64>, Vec<i64>) {
    let (first, second): (Vec<&PairRecord>, Vec<&PairRecord>) = forks
        .iter()
        .flat_map(|f| f.measured.iter().copied())
        .partition(|p| p.first == Arm::Treatment);
    let d = |v: Vec<&PairRecord>| v.iter().map(|p| p.diff_ns()).collect();
    (d(first), d(second))
}

fn blocked(info: &CellInfo, forks: &[ForkAnalysis]) -> Result<Order, StatsError> {
    let d = info.delay_ns as f64;
    let mut faster_by: Vec<f64> = forks
        .iter()
        .map(|f| f.baseline_median_ns - (f.treatment_median_ns - d))
        .collect();
    faster_by.sort_unstable_by(f64::total_cmp);
    let faster_by_median_ns = stats::median_sorted(&faster_by)?;
    Ok(Order::Blocked {
        forks: forks.len() as u32,
        forks_second_faster: faster_by.iter().filter(|&&x| x > 0.0).count() as u32,
        faster_by_min_ns: faster_by[0],
        faster_by_median_ns,
        faster_by_max_ns: faster_by[faster_by.len() - 1],
    })
}
