//! Variance components of D (forks x pairs) and the design that would reach
//! a target CI half-width (Kalibera & Jones 2013; formulas in
//! `runner_stats::variance`).
//!
//! Two pairs of components are reported: the classic ANOVA ones of D (for
//! the mean, as Kalibera & Jones define them) and robust ones for the
//! median, from the fork medians and their bootstrap intervals. The
//! recommendation uses the median ones, because runner's estimates are
//! medians and real timings have heavy tails that inflate the mean's
//! variance by orders of magnitude (design notes in `runner_stats::variance`).
//!
//! The search tries 100, 300, 1000 and 3000 pairs per fork and 2..=1000
//! forks, costing a fork as its pairs plus [`FORK_OVERHEAD_PAIRS`]; the
//! half-width it promises is for the mean of the fork medians.

use super::{AnalysisInput, ForkAnalysis, ForkData, Pooled, Recommended, Variance};
use runner_stats::StatsError;

/// Pairs per fork the recommendation chooses from.
pub const PAIRS_OPTIONS: [u32; 4] = [100, 300, 1000, 3000];
/// Starting a fresh process and warming it up, in pair-equivalents (the
/// study's 80 warm-up pairs plus process start): what makes more forks cost.
pub const FORK_OVERHEAD_PAIRS: u32 = 100;
pub const MAX_FORKS: u32 = 1000;
/// Default target: this fraction of the pooled median baseline.
pub const DEFAULT_TARGET_FRACTION: f64 = 0.01;

pub(crate) fn variance(
    input: &AnalysisInput,
    forks: &[ForkData<'_>],
    fork_results: &[ForkAnalysis],
    pooled: &Pooled,
) -> Result<Option<Variance>, StatsError> {
    let diffs: Vec<Vec<f64>> = forks.iter().map(ForkData::diffs).collect();
    let groups: Vec<&[f64]> = diffs.iter().map(Vec::as_slice).collect();
    let vc = match runner_stats::variance_components(&groups) {
        Ok(vc) => vc,
        Err(StatsError::TooFewGroups(_)) => return Ok(None),
        Err(e) => return Err(e),
    };
    let medians: Vec<f64> = fork_results.iter().map(|f| f.median_ns).collect();
    let intervals: Vec<[f64; 2]> = fork_results.iter().map(|f| f.ci_ns).collect();
    let pairs: Vec<u32> = fork_results.iter().map(|f| f.n).collect();
    let robust = runner_stats::median_components(&medians, &intervals, &pairs, input.confidence)?;
    let target = input
        .target_half_width_ns
        .unwrap_or(DEFAULT_TARGET_FRACTION * pooled.baseline_median_ns);
    let recommended = runner_stats::recommend(
        robust,
        input.confidence,
        target,
        &PAIRS_OPTIONS,
        FORK_OVERHEAD_PAIRS,
        MAX_FORKS,
    )
    .map(|r| Recommended {
        forks: r.forks,
        pairs: r.pairs,
        half_width_ns: r.half_width,
        cost_pairs: r.cost_pairs,
    });
    Ok(Some(Variance {
        between_ns2: vc.between,
        within_ns2: vc.within,
        median_between_ns2: robust.between,
        median_within_ns2: robust.within,
        target_half_width_ns: target,
        recommended,
    }))
}
