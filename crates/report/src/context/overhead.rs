//! The run's overhead: how much of the forks' wall time was not spent in
//! timed regions or in the baseline's padding. A harness that
//! spends most of a run starting processes and writing files makes every
//! experiment slower than it needs to be, so the report states the ratio.

use runner_core::record::PairRecord;
use runner_folder::RunInfo;
use serde::Serialize;

/// Wall time against time measured, for the report's Setup.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverheadView {
    /// The parent's time for every fork (`forks[].job_ns`), summed.
    pub wall_ns: u64,
    /// Every timed region of every pair, warm-up included, plus the
    /// baseline's padding where `pad_baseline` asked for it.
    pub timed_ns: u64,
    /// `wall_ns / timed_ns`: 1.00 would be a harness that costs nothing.
    pub ratio: f64,
    /// One sentence for the Setup list.
    pub line: String,
}

/// The overhead of a run whose every fork recorded the parent's time;
/// none for runs recorded before runner kept it (their Setup is unchanged)
/// and for imported pairs, which runner did not run.
pub fn view(info: &RunInfo, pairs: &[PairRecord]) -> Option<OverheadView> {
    let wall_ns = parent_time(info.forks().iter().map(|f| f.job_ns))?;
    // Counted runs (`design.measure`) are not timed regions: their whole
    // time under valgrind is the counter's, left out of both sides.
    let counted_ns: u64 = pairs
        .iter()
        .filter(|p| p.counts.is_some())
        .map(|p| p.baseline_ns + p.treatment_ns)
        .sum();
    let timed: Vec<&PairRecord> = pairs.iter().filter(|p| p.counts.is_none()).collect();
    compute(
        wall_ns.saturating_sub(counted_ns),
        measured(timed, info.spec().experiment.design.pad_baseline),
    )
}

/// The forks' summed `job_ns`; none without forks or when one lacks it
/// (a run resumed across runner versions would mix two meanings).
fn parent_time(job_ns: impl IntoIterator<Item = Option<u64>>) -> Option<u64> {
    let mut n = 0;
    let mut sum = 0u64;
    for j in job_ns {
        sum += j?;
        n += 1;
    }
    (n > 0).then_some(sum)
}

/// Every timed region, plus the baseline's padding of d when it ran.
fn measured<'a>(pairs: impl IntoIterator<Item = &'a PairRecord>, pad_baseline: bool) -> u64 {
    pairs
        .into_iter()
        .map(|p| p.baseline_ns + p.treatment_ns + if pad_baseline { p.delay_ns } else { 0 })
        .sum()
}

/// The view of `wall_ns` spent for `timed_ns` measured; none when nothing
/// was timed (a ratio over zero says nothing).
pub fn compute(wall_ns: u64, timed_ns: u64) -> Option<OverheadView> {
    if timed_ns == 0 {
        return None;
    }
    let ratio = wall_ns as f64 / timed_ns as f64;
    let seconds = |ns: u64| crate::numbers::duration(ns as f64);
    // Three significant digits: 1.07 near the goal, 348 for a run of tiny regions.
    let digits = if ratio < 10.0 {
        2
    } else if ratio < 100.0 {
        1
    } else {
        0
    };
    Some(OverheadView {
        wall_ns,
        timed_ns,
        ratio,
        line: format!(
            "the forks took {} of wall time for {} of timed regions and padding (ratio {ratio:.digits$}); the rest started the workers, set up and checked the arms, and stored the records",
            seconds(wall_ns),
            seconds(timed_ns)
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ratio_is_wall_over_timed_and_padding() {
        let v = compute(22_000_000_000, 20_000_000_000).unwrap();
        assert_eq!(v.ratio, 1.1);
        assert!(
            v.line
                .starts_with("the forks took 22.0 s of wall time for 20.0 s of timed regions and padding (ratio 1.10)"),
            "{}",
            v.line
        );
        assert_eq!(compute(5, 0), None, "nothing timed, no ratio");
    }

    #[test]
    fn padding_counts_only_when_the_design_pads() {
        let pair = |delay_ns| PairRecord {
            cell: 0,
            fork: 0,
            phase: runner_core::record::Phase::Measure,
            pair: 0,
            first: runner_core::record::Arm::Baseline,
            baseline_ns: 100,
            treatment_ns: 100 + delay_ns,
            delay_ns,
            spin_ns: delay_ns,
            baseline_at_ns: 0,
            treatment_at_ns: 100,
            usage: Default::default(),
            counts: Default::default(),
        };
        let pairs = [pair(0), pair(50)];
        assert_eq!(measured(&pairs, true), 200 + 250 + 50);
        assert_eq!(measured(&pairs, false), 200 + 250);
    }

    #[test]
    fn every_fork_must_have_the_parent_time() {
        assert_eq!(parent_time([Some(1_000), Some(500)]), Some(1_500));
        assert_eq!(parent_time([Some(1_000), None]), None, "an older fork");
        assert_eq!(parent_time([]), None, "no forks (imported pairs)");
    }
}
