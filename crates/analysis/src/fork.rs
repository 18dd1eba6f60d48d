//! Per-fork estimates: can one process, on its own, see the delay?
//!
//! Each fork's median D gets a percentile bootstrap CI (Efron & Tibshirani
//! 1993), computed exactly (`runner_stats::exact_median`) from D dithered within
//! the clock's step (`dither`): it depends on the fork's values and its own
//! recorded stream alone, with no resample count, so adding a fork never
//! changes another's CI.
//! Each fork also gets its speed ratio, median(treatment) / median(baseline)
//! on its own runs (`runner_stats::ratio::paired_ratio`, from run times dithered
//! as D is), and its arms' steady-state classes (`steady.rs`).

use super::{AnalysisInput, ForkAnalysis, ForkData, Spread, Verdict};
use runner_stats::StatsError;

/// Each fork on its own (its exact interval, medians and PELT classes), on
/// the analysis's pool (`runner_stats::pool`): results in fork order, the first
/// error in fork order is the one returned.
pub(crate) fn forks(
    input: &AnalysisInput,
    forks: &[ForkData<'_>],
) -> Result<Vec<ForkAnalysis>, StatsError> {
    runner_stats::pool::map_in_order(forks, |f| one(input, f))
        .into_iter()
        .collect()
}

fn one(input: &AnalysisInput, f: &ForkData<'_>) -> Result<ForkAnalysis, StatsError> {
    let e = interval(input, &f.diffs())?;
    let ci_ns = [e.ci.lo, e.ci.hi];
    let (b, t) = f.arm_times();
    let ratio = runner_stats::ratio::paired_ratio(&b, &t, input.confidence)?;
    Ok(ForkAnalysis {
        fork: f.fork,
        n: f.measured.len() as u32,
        median_ns: e.median,
        ci_ns,
        verdict: Verdict::of(ci_ns),
        baseline_median_ns: runner_stats::median(&f.baselines())?,
        treatment_median_ns: runner_stats::median(&f.treatments())?,
        ratio: ratio.ratio,
        ratio_ci: ratio.ci,
        steady_state: super::steady::fork(f)?,
    })
}

/// Median and exact percentile bootstrap CI of one fork's `values`: the
/// interval behind every per-fork figure (its verdict, the gate's
/// self-check, calibration's coverage). It is the limit of the Monte-Carlo
/// bootstrap as its resamples grow, so `input.resamples` plays no part.
pub(crate) fn interval(
    input: &AnalysisInput,
    values: &[f64],
) -> Result<runner_stats::MedianEstimate, StatsError> {
    runner_stats::exact_median(values, input.confidence)
}

/// Min-max over forks of each arm's median: how far apart whole runs land.
pub(crate) fn spread(forks: &[ForkAnalysis]) -> Spread {
    let range = |get: fn(&ForkAnalysis) -> f64| {
        forks
            .iter()
            .map(get)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
                (lo.min(x), hi.max(x))
            })
    };
    let (baseline_min_ns, baseline_max_ns) = range(|f| f.baseline_median_ns);
    let (treatment_min_ns, treatment_max_ns) = range(|f| f.treatment_median_ns);
    Spread {
        baseline_min_ns,
        baseline_max_ns,
        treatment_min_ns,
        treatment_max_ns,
    }
}

/// Pearson r of (baseline median, treatment median) across forks: high when
/// the fork-to-fork spread belongs to the process, not to the arm.
pub(crate) fn correlation(forks: &[ForkAnalysis]) -> Option<f64> {
    let b: Vec<f64> = forks.iter().map(|f| f.baseline_median_ns).collect();
    let t: Vec<f64> = forks.iter().map(|f| f.treatment_median_ns).collect();
    runner_stats::pearson(&b, &t)
}
