//! Order effects: does running first or second change a run's time?
//!
//! paired-random: each fork's measured pairs split by which arm ran first;
//! difference = median D (treatment first) - median D (treatment second),
//! with a hierarchical percentile bootstrap CI (forks resampled, then each
//! chosen fork's two groups of pairs; see [`super::contrast`]), because
//! pairs of one fork are not independent of each other. If position did not
//! matter, it is ~0; the coin balances it out of D either way, this says
//! how much it was.
//!
//! blocked: every baseline run precedes every treatment run, so position and
//! arm are confounded and only the per-fork sizes can be shown. Per fork,
//! faster_by = median(baseline) - (median(treatment) - d): how much faster the
//! second block ran than the first once the injected delay is taken out (the
//! study's A/A run: 119-173 us in 8/10 forks). A fork counts as "second block
//! faster" when faster_by > 0.

use super::{streams, AnalysisInput, CellInfo, ForkAnalysis, ForkData, Order};
use runner_core::record::Arm;
use runner_spec::Ordering;
use runner_stats::StatsError;

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
    let c = super::contrast(
        input,
        &position_groups(forks),
        &mut streams::order(input.master_seed, info.cell),
    )?;
    let note = if c.difference_ns.is_none() {
        Some("the treatment always ran in the same position: no order contrast".to_string())
    } else if c.forks_left_out > 0 {
        Some(format!(
            "{} of {} forks had the treatment in only one position and are left out",
            c.forks_left_out,
            forks.len()
        ))
    } else {
        None
    };
    Ok(Order::PairedRandom {
        treatment_first_n: c.n_a,
        treatment_first_median_ns: c.median_a,
        treatment_second_n: c.n_b,
        treatment_second_median_ns: c.median_b,
        difference_ns: c.difference_ns,
        ci_ns: c.ci_ns,
        forks_left_out: c.forks_left_out,
        note,
    })
}

/// Per fork (in fork order): D of its measured pairs with the treatment
/// first, and with it second, each in pair order; dithered within the
/// clock's step like every D whose median is taken (`ForkData::diffs`), or
/// at clock ties both groups' medians would be one step and the interval
/// of their difference a point.
pub(crate) fn position_groups(forks: &[ForkData<'_>]) -> Vec<(Vec<f64>, Vec<f64>)> {
    forks
        .iter()
        .map(|f| {
            let (mut first, mut second) = (Vec::new(), Vec::new());
            for (p, d) in f.measured.iter().zip(f.diffs()) {
                if p.first == Arm::Treatment {
                    first.push(d);
                } else {
                    second.push(d);
                }
            }
            (first, second)
        })
        .collect()
}

fn blocked(info: &CellInfo, forks: &[ForkAnalysis]) -> Result<Order, StatsError> {
    let d = info.delay_ns as f64;
    let mut faster_by: Vec<f64> = forks
        .iter()
        .map(|f| f.baseline_median_ns - (f.treatment_median_ns - d))
        .collect();
    faster_by.sort_unstable_by(f64::total_cmp);
    let faster_by_median_ns = runner_stats::median_sorted(&faster_by)?;
    Ok(Order::Blocked {
        forks: forks.len() as u32,
        forks_second_faster: faster_by.iter().filter(|&&x| x > 0.0).count() as u32,
        faster_by_min_ns: faster_by[0],
        faster_by_median_ns,
        faster_by_max_ns: faster_by[faster_by.len() - 1],
    })
}
