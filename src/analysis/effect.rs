//! The treatment's effect in the user's terms: a direction and three sizes
//! of one interval.
//!
//! A user comparing two versions of their code asks "is it faster, and by
//! how much?". The answer is the paired median difference D with its
//! interval, stated three ways: as a duration per run, as a share of the
//! baseline's median run (the relative change), and as a ratio of run times
//! (hyperfine's "1.46 times faster", criterion's "-31 %"). All three are the
//! one bootstrap interval of D, divided by the baseline's pooled median:
//! relative = D / median(baseline), time ratio = 1 + relative. So they can
//! never disagree on the direction, which is decided once, by whether the
//! interval of D lies wholly below 0 (faster), wholly above (slower) or
//! covers it (no difference resolved). The baseline's median is taken as
//! the scale, not resampled with D: its own uncertainty is that of a median
//! of every baseline run, a small fraction of D's in every committed report.
//!
//! The interval is the hierarchical one (forks, then pairs inside each) when
//! the cell has two forks or more, since a fork effect is part of what a
//! user's next run will see; with one fork only the pooled one exists. A
//! cell of a sequential design stopped where its data said so, which a
//! fixed-n interval does not allow for: its effect is its stopping interval,
//! the confidence sequence over its forks' estimates.

use super::{CellAnalysis, Estimate, ForkAnalysis, Pooled, Verdict};
use serde::{Deserialize, Serialize};

/// Which way the treatment moved the run time, decided by the interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// The whole interval of D lies below 0.
    Faster,
    /// The whole interval of D lies above 0.
    Slower,
    /// The interval covers 0.
    NoDifference,
}

impl Direction {
    pub fn of(ci: [f64; 2]) -> Direction {
        match Verdict::of(ci) {
            Verdict::Seen => Direction::Slower,
            Verdict::Reversed => Direction::Faster,
            Verdict::NotSeen => Direction::NoDifference,
        }
    }
}

/// Which interval of D an effect carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IntervalKind {
    /// Forks, then pairs inside each.
    Hierarchical,
    /// Every pair of the cell as one sample.
    Pooled,
    /// The anytime-valid confidence sequence over the forks' estimates
    /// that stopped a sequential design's cell (`cells[].stop`).
    Sequence,
}

/// One cell's effect (`analysis.json` `cells[].effect`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Effect {
    pub direction: Direction,
    pub interval: IntervalKind,
    /// Median D = treatment - baseline, and its interval (ns).
    pub difference_ns: f64,
    pub difference_ci_ns: [f64; 2],
    /// The scale of the two figures below: the pooled median baseline run.
    pub baseline_median_ns: f64,
    /// D as a fraction of `baseline_median_ns` (-0.34 is 34 % less time).
    pub relative: f64,
    pub relative_ci: [f64; 2],
    /// The treatment's run time over the baseline's: 1 + `relative`. Below
    /// 1 the treatment is faster; "1.52x faster" is 1 / 0.658.
    pub time_ratio: f64,
    pub time_ratio_ci: [f64; 2],
    /// Forks whose own interval lay wholly below / above 0.
    pub forks_faster: u32,
    pub forks_slower: u32,
    pub forks: u32,
}

/// The effect from a cell's pooled and hierarchical estimates and its forks.
pub(crate) fn effect(pooled: &Pooled, hierarchical: &Estimate, forks: &[ForkAnalysis]) -> Effect {
    let (interval, median, ci) = if forks.len() >= 2 {
        (
            IntervalKind::Hierarchical,
            hierarchical.median_ns,
            hierarchical.ci_ns,
        )
    } else {
        (IntervalKind::Pooled, pooled.median_ns, pooled.ci_ns)
    };
    sized(pooled, interval, median, ci, forks)
}

/// The effect of a stopped cell: its stopping interval, in the same sizes.
pub(crate) fn stopped(
    pooled: &Pooled,
    stop: &super::stop::CellStop,
    forks: &[ForkAnalysis],
) -> Effect {
    sized(
        pooled,
        IntervalKind::Sequence,
        stop.estimate_ns,
        stop.interval_ns,
        forks,
    )
}

/// One interval of D as a direction and three sizes.
fn sized(
    pooled: &Pooled,
    interval: IntervalKind,
    median: f64,
    ci: [f64; 2],
    forks: &[ForkAnalysis],
) -> Effect {
    let count = |v: Verdict| forks.iter().filter(|f| f.verdict == v).count() as u32;
    Effect::new(
        interval,
        median,
        ci,
        pooled.baseline_median_ns,
        [count(Verdict::Reversed), count(Verdict::Seen)],
        forks.len() as u32,
    )
}

impl Effect {
    /// The difference `median` (interval `ci`) of one interval, against a baseline
    /// whose median run takes `baseline_median_ns`, as a direction and
    /// three sizes; `faster_slower`: the forks whose own interval says so,
    /// of `forks`. The % and the ratio are the interval over the baseline
    /// median (NaN without a positive one), so all three sizes agree.
    pub fn new(
        interval: IntervalKind,
        median: f64,
        ci: [f64; 2],
        baseline_median_ns: f64,
        [forks_faster, forks_slower]: [u32; 2],
        forks: u32,
    ) -> Effect {
        let base = baseline_median_ns;
        let rel = |x: f64| if base > 0.0 { x / base } else { f64::NAN };
        Effect {
            direction: Direction::of(ci),
            interval,
            difference_ns: median,
            difference_ci_ns: ci,
            baseline_median_ns: base,
            relative: rel(median),
            relative_ci: [rel(ci[0]), rel(ci[1])],
            time_ratio: 1.0 + rel(median),
            time_ratio_ci: [1.0 + rel(ci[0]), 1.0 + rel(ci[1])],
            forks_faster,
            forks_slower,
            forks,
        }
    }
}

impl CellAnalysis {
    /// The cell's effect; computed from the cell's own figures for an
    /// analysis.json written before cells carried one.
    pub fn effect(&self) -> Effect {
        self.effect
            .clone()
            .unwrap_or_else(|| effect(&self.pooled, &self.hierarchical, &self.forks))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }

    fn pooled(median: f64, ci: [f64; 2], base: f64) -> Pooled {
        Pooled {
            n: 100,
            share_slower: 0.5,
            share_tied: 0.0,
            median_ns: median,
            ci_ns: ci,
            baseline_median_ns: base,
            treatment_median_ns: base + median,
        }
    }

    fn fork(ci: [f64; 2]) -> ForkAnalysis {
        ForkAnalysis {
            fork: 0,
            n: 10,
            median_ns: (ci[0] + ci[1]) / 2.0,
            ci_ns: ci,
            verdict: Verdict::of(ci),
            baseline_median_ns: 0.0,
            treatment_median_ns: 0.0,
            steady_state: crate::analysis::ForkSteadyState {
                steady: true,
                baseline: crate::analysis::ArmSteadyState {
                    class: crate::stats::Class::Flat,
                    changepoints: vec![],
                },
                treatment: crate::analysis::ArmSteadyState {
                    class: crate::stats::Class::Flat,
                    changepoints: vec![],
                },
            },
        }
    }

    #[test]
    fn a_faster_treatment_has_ratios_below_one() {
        let h = Estimate {
            median_ns: -1000.0,
            ci_ns: [-1100.0, -900.0],
        };
        let forks = [fork([-1200.0, -800.0]), fork([-50.0, 30.0])];
        let e = effect(&pooled(-990.0, [-1010.0, -970.0], 4000.0), &h, &forks);
        assert_eq!(e.direction, Direction::Faster);
        assert_eq!(e.interval, IntervalKind::Hierarchical);
        assert_eq!(e.difference_ns, -1000.0);
        close(e.relative, -0.25);
        close(e.relative_ci[0], -0.275);
        close(e.relative_ci[1], -0.225);
        close(e.time_ratio, 0.75);
        close(e.time_ratio_ci[0], 0.725);
        close(e.time_ratio_ci[1], 0.775);
        assert_eq!((e.forks_faster, e.forks_slower, e.forks), (1, 0, 2));
    }

    #[test]
    fn one_fork_uses_the_pooled_interval() {
        let h = Estimate {
            median_ns: 5.0,
            ci_ns: [-100.0, 100.0],
        };
        let e = effect(&pooled(5.0, [2.0, 8.0], 100.0), &h, &[fork([1.0, 9.0])]);
        assert_eq!(e.interval, IntervalKind::Pooled);
        assert_eq!(e.direction, Direction::Slower);
        assert_eq!(e.difference_ci_ns, [2.0, 8.0]);
        close(e.time_ratio_ci[0], 1.02);
        close(e.time_ratio_ci[1], 1.08);
    }

    #[test]
    fn an_interval_over_zero_resolves_no_difference() {
        let h = Estimate {
            median_ns: 1.0,
            ci_ns: [-3.0, 4.0],
        };
        let e = effect(
            &pooled(1.0, [-1.0, 2.0], 100.0),
            &h,
            &[fork([-1.0, 1.0]), fork([-1.0, 1.0])],
        );
        assert_eq!(e.direction, Direction::NoDifference);
    }
}
