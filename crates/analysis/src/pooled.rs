//! Cell-wide estimates: all pairs pooled (what the original study reported),
//! D's interval over the forks beside it, and the calibration against d.
//!
//! The pooled CI is the exact percentile bootstrap (`runner_stats::exact_median`).
//! It treats 3000 pairs as independent although they come from 10
//! processes; when forks differ, it is too narrow. The interval over the
//! forks (Student's t over their median D) keeps the fork-to-fork spread
//! in the interval, so the two side by side show how much the pooled one
//! overstates its precision.

use super::{AnalysisInput, Calibration, CellInfo, ForkAnalysis, ForkData, OverForks, Pooled};
use runner_stats::StatsError;

pub(crate) fn pooled(input: &AnalysisInput, forks: &[ForkData<'_>]) -> Result<Pooled, StatsError> {
    let all = || forks.iter().flat_map(|f| f.measured.iter());
    // The shares describe D as recorded; the median and its CI are taken
    // from D dithered within the clock's step (`dither`).
    let recorded: Vec<i64> = all().map(|p| p.diff_ns()).collect();
    let diffs: Vec<f64> = forks.iter().flat_map(ForkData::diffs).collect();
    let e = super::fork::interval(input, &diffs)?;
    let share = |keep: fn(i64) -> bool| {
        recorded.iter().filter(|&&d| keep(d)).count() as f64 / recorded.len() as f64
    };
    Ok(Pooled {
        n: diffs.len() as u32,
        share_slower: share(|d| d > 0),
        share_tied: share(|d| d == 0),
        median_ns: e.median,
        ci_ns: [e.ci.lo, e.ci.hi],
        baseline_median_ns: runner_stats::median(
            &all().map(|p| p.baseline_ns).collect::<Vec<_>>(),
        )?,
        treatment_median_ns: runner_stats::median(
            &all().map(|p| p.treatment_ns).collect::<Vec<_>>(),
        )?,
    })
}

/// D over the forks (`OverForks`): Student's t over the forks' median D,
/// so that a fork effect is in the interval and its level holds at 2 or 3
/// forks as at 30 (a percentile bootstrap of so few forks is far too
/// narrow: two forks give three distinct fork sets).
pub(crate) fn over_forks(
    input: &AnalysisInput,
    forks: &[ForkAnalysis],
) -> Result<OverForks, StatsError> {
    if let [one] = forks {
        return Ok(OverForks {
            estimate_ns: one.median_ns,
            ci_ns: one.ci_ns,
        });
    }
    let medians: Vec<f64> = forks.iter().map(|f| f.median_ns).collect();
    let t = runner_stats::spending::fixed(&medians, input.confidence)?;
    Ok(OverForks {
        estimate_ns: t.mean,
        ci_ns: t.bounds.ok_or(StatsError::Empty)?,
    })
}

/// The harness measuring a delay it knows: what it gets back, against d
/// and against the wait actually injected (`spin_ns`: the treatment's wait
/// minus the baseline's).
///
/// The wait is not the same in every pair: a busy-wait ends on the first
/// clock read past its deadline, so it overshoots by up to one read, and an
/// interrupt inside it adds more. That jitter is wider than a quiet fork's
/// interval (reports/validity: spin_ns − d spans about −20 to +12 ns between
/// its 10th and 90th percentiles, where fork intervals are 10 ns wide), and
/// the median of D = run difference + wait is not the median run difference
/// plus the median wait. So "covers the injected wait" is judged pair by
/// pair: the (exact) interval of D − spin_ns must contain 0. That is the interval the fork would have
/// given had every pair's wait been exactly d, judged against d. At d = 0
/// (spin_ns is 0) it is the interval of D itself.
pub(crate) fn calibration(
    input: &AnalysisInput,
    info: &CellInfo,
    forks: &[ForkData<'_>],
    results: &[ForkAnalysis],
    pooled: &Pooled,
) -> Result<Calibration, StatsError> {
    let d = info.delay_ns as f64;
    let covers = |ci: [f64; 2], x: f64| ci[0] <= x && x <= ci[1];
    let spins: Vec<u64> = forks
        .iter()
        .flat_map(|f| f.measured.iter().map(|p| p.spin_ns))
        .collect();
    let spin_median_ns = runner_stats::median(&spins)?;
    let waited = spins.iter().any(|&s| s != 0);
    let (forks_covering_spin, ci_covers_spin) = if waited {
        let unwaited: Vec<Vec<f64>> = forks.iter().map(ForkData::unwaited).collect();
        // Each fork's interval on its own, on the analysis's pool; the
        // first error in fork order is the one returned.
        let mut n = 0;
        for e in runner_stats::pool::map_in_order(&unwaited, |u| super::fork::interval(input, u)) {
            n += u32::from(e?.ci.contains(0.0));
        }
        let pooled = super::fork::interval(input, &unwaited.concat())?;
        (n, pooled.ci.contains(0.0))
    } else {
        let n = results.iter().filter(|r| covers(r.ci_ns, 0.0)).count() as u32;
        (n, covers(pooled.ci_ns, 0.0))
    };
    // Each fork's true ratio is its own: its median baseline with the
    // wait it actually injected added, over its median baseline.
    // And pair by pair, as D's: the ratio of the treatment with each
    // pair's own wait taken out holds 1.
    let (mut forks_ratio_covering, mut forks_ratio_covering_spin) = (0, 0);
    for (f, r) in forks.iter().zip(results) {
        let wait = runner_stats::median(&f.measured.iter().map(|p| p.spin_ns).collect::<Vec<_>>())?;
        let truth = (r.baseline_median_ns + wait) / r.baseline_median_ns;
        forks_ratio_covering += u32::from(covers(r.ratio_ci, truth));
        let covered = if waited {
            let (b, t) = f.arm_times();
            let unwaited: Vec<f64> = t
                .iter()
                .zip(&f.measured)
                .map(|(t, p)| (t - p.spin_ns as f64).max(f64::MIN_POSITIVE))
                .collect();
            covers(
                runner_stats::ratio::paired_ratio(&b, &unwaited, input.confidence)?.ci,
                1.0,
            )
        } else {
            covers(r.ratio_ci, 1.0)
        };
        forks_ratio_covering_spin += u32::from(covered);
    }
    Ok(Calibration {
        forks_ratio_covering,
        forks_ratio_covering_spin,
        error_ns: pooled.median_ns - d,
        ci_covers_delay: covers(pooled.ci_ns, d),
        spin_median_ns,
        spin_error_ns: spin_median_ns - d,
        residual_bias_ns: pooled.median_ns - spin_median_ns,
        ci_covers_spin,
        forks_covering_delay: results.iter().filter(|r| covers(r.ci_ns, d)).count() as u32,
        forks_covering_spin,
    })
}
