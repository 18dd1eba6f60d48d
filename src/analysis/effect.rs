//! The treatment's effect in the user's terms: a direction and three sizes.
//!
//! A user comparing two versions of their code asks "is it faster, and by
//! how much?". The answer has three sizes, each with its own interval:
//!
//! - the difference per run: the paired median difference D;
//! - the speed ratio, median(treatment) / median(baseline): the figure
//!   the arms' median runs printed beside it imply. Each fork's ratio is on
//!   its own runs and its own baseline (`stats::ratio`), so forks that ran
//!   at different speeds agree whenever their treatments do, and forks are
//!   combined on the log scale, so both bounds are positive ratios however
//!   large the change (a 66x win is 66x, never a negative run time);
//! - the change in run time, ratio - 1.
//!
//! D and the ratio are two statistics of the same pairs, and near the edge
//! of what a run resolves one interval can leave 0 (or 1) while the other
//! does not. The stated rule: a direction (faster, slower) is said only
//! where both intervals say it; otherwise no difference is resolved, and
//! `difference_direction` and `ratio_direction` record what each said, so
//! the report can name the one that did. The same rule counts the forks
//! that were faster or slower on their own.
//!
//! Which intervals: with two forks or more, D's is the hierarchical one
//! (forks, then pairs inside each) and the ratio's the two-level one of
//! the forks' log ratios, since a fork effect is part of what a user's
//! next run will see; with one fork, the pooled D and the fork's own
//! ratio. A cell of a sequential design stopped where its data said so,
//! which a fixed-n interval does not allow for: its intervals are the
//! confidence sequences over its forks' estimates (D's, which the stopping
//! rule reads, and the log ratios'), valid at any stopping time.

use super::{CellAnalysis, Estimate, ForkAnalysis, Pooled, Verdict};
use crate::stats::ratio::RatioEstimate;
use serde::{Deserialize, Serialize};

/// Which way the treatment moved the run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// Less time.
    Faster,
    /// More time.
    Slower,
    /// The interval covers no change.
    NoDifference,
}

impl Direction {
    /// D's direction: its interval wholly below 0 is faster.
    pub fn of(ci: [f64; 2]) -> Direction {
        match Verdict::of(ci) {
            Verdict::Seen => Direction::Slower,
            Verdict::Reversed => Direction::Faster,
            Verdict::NotSeen => Direction::NoDifference,
        }
    }

    /// A ratio's direction: its interval wholly below 1 is faster.
    pub fn of_ratio(ci: [f64; 2]) -> Direction {
        Direction::of([ci[0] - 1.0, ci[1] - 1.0])
    }

    /// The stated rule (module doc): a direction where both say it.
    pub fn agreed(difference: Direction, ratio: Direction) -> Direction {
        if difference == ratio {
            difference
        } else {
            Direction::NoDifference
        }
    }
}

/// Which intervals an effect carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IntervalKind {
    /// Forks, then pairs inside each.
    Hierarchical,
    /// One fork: every pair of the cell as one sample.
    Pooled,
    /// The anytime-valid confidence sequences over the forks' estimates
    /// that stopped a sequential design's cell (`cells[].stop`).
    Sequence,
}

/// One cell's effect (`analysis.json` `cells[].effect`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Effect {
    /// What both intervals say (module doc).
    pub direction: Direction,
    /// What D's interval alone says, and the ratio's.
    pub difference_direction: Direction,
    pub ratio_direction: Direction,
    pub interval: IntervalKind,
    /// Median D = treatment - baseline, and its interval (ns).
    pub difference_ns: f64,
    pub difference_ci_ns: [f64; 2],
    /// The pooled median baseline run: the scale a reader holds D against.
    pub baseline_median_ns: f64,
    /// The speed ratio median(treatment) / median(baseline), combined
    /// across forks on the log scale, and its interval: both positive.
    /// Below 1 the treatment is faster; "1.52x faster" is 1 / 0.658.
    pub ratio: f64,
    pub ratio_ci: [f64; 2],
    /// The change in run time, ratio - 1 (-0.34 is 34 % less time).
    pub change: f64,
    pub change_ci: [f64; 2],
    /// Forks whose own intervals (D's and the ratio's) both lay below /
    /// above no change.
    pub forks_faster: u32,
    pub forks_slower: u32,
    pub forks: u32,
}

/// The effect from a cell's pooled and hierarchical D, its forks and its
/// combined ratio.
pub(crate) fn effect(
    pooled: &Pooled,
    hierarchical: &Estimate,
    forks: &[ForkAnalysis],
    ratio: &RatioEstimate,
) -> Effect {
    let (interval, median, ci) = if forks.len() >= 2 {
        (
            IntervalKind::Hierarchical,
            hierarchical.median_ns,
            hierarchical.ci_ns,
        )
    } else {
        (IntervalKind::Pooled, pooled.median_ns, pooled.ci_ns)
    };
    Effect::new(
        interval,
        median,
        ci,
        pooled.baseline_median_ns,
        (ratio.ratio, ratio.ci),
        fork_counts(forks),
        forks.len() as u32,
    )
}

/// The effect of a stopped cell: its confidence sequences, D's (`stop`)
/// and the log ratios' (`ratio_ci`, around the forks' geometric mean
/// `ratio`).
pub(crate) fn stopped(
    pooled: &Pooled,
    stop: &super::stop::CellStop,
    forks: &[ForkAnalysis],
    (ratio, ratio_ci): (f64, [f64; 2]),
) -> Effect {
    Effect::new(
        IntervalKind::Sequence,
        stop.estimate_ns,
        stop.interval_ns,
        pooled.baseline_median_ns,
        (ratio, ratio_ci),
        fork_counts(forks),
        forks.len() as u32,
    )
}

/// Forks faster and slower on their own, by the stated rule.
fn fork_counts(forks: &[ForkAnalysis]) -> [u32; 2] {
    let said = |f: &ForkAnalysis| {
        Direction::agreed(Direction::of(f.ci_ns), Direction::of_ratio(f.ratio_ci))
    };
    let count = |d: Direction| forks.iter().filter(|f| said(f) == d).count() as u32;
    [count(Direction::Faster), count(Direction::Slower)]
}

impl Effect {
    /// An effect from D's `median` and interval `ci`, the pooled median
    /// baseline run, the speed ratio and its interval, the forks faster
    /// and slower on their own, of `forks`.
    pub fn new(
        interval: IntervalKind,
        median: f64,
        ci: [f64; 2],
        baseline_median_ns: f64,
        (ratio, ratio_ci): (f64, [f64; 2]),
        [forks_faster, forks_slower]: [u32; 2],
        forks: u32,
    ) -> Effect {
        let difference_direction = Direction::of(ci);
        let ratio_direction = Direction::of_ratio(ratio_ci);
        Effect {
            direction: Direction::agreed(difference_direction, ratio_direction),
            difference_direction,
            ratio_direction,
            interval,
            difference_ns: median,
            difference_ci_ns: ci,
            baseline_median_ns,
            ratio,
            ratio_ci,
            change: ratio - 1.0,
            change_ci: [ratio_ci[0] - 1.0, ratio_ci[1] - 1.0],
            forks_faster,
            forks_slower,
            forks,
        }
    }
}

impl CellAnalysis {
    /// The cell's effect.
    pub fn effect(&self) -> Effect {
        self.effect.clone()
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

    fn fork(ci: [f64; 2], ratio_ci: [f64; 2]) -> ForkAnalysis {
        ForkAnalysis {
            fork: 0,
            n: 10,
            median_ns: (ci[0] + ci[1]) / 2.0,
            ci_ns: ci,
            verdict: Verdict::of(ci),
            baseline_median_ns: 0.0,
            treatment_median_ns: 0.0,
            ratio: (ratio_ci[0] * ratio_ci[1]).sqrt(),
            ratio_ci,
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

    fn ratio(r: f64, ci: [f64; 2]) -> RatioEstimate {
        RatioEstimate {
            ratio: r,
            ci,
            log: r.ln(),
            log_se: 0.01,
        }
    }

    #[test]
    fn a_faster_treatment_has_ratios_below_one() {
        let h = Estimate {
            median_ns: -1000.0,
            ci_ns: [-1100.0, -900.0],
        };
        let forks = [
            fork([-1200.0, -800.0], [0.7, 0.8]),
            fork([-50.0, 30.0], [0.98, 1.01]),
        ];
        let p = pooled(-990.0, [-1010.0, -970.0], 4000.0);
        let e = effect(&p, &h, &forks, &ratio(0.75, [0.725, 0.775]));
        assert_eq!(e.direction, Direction::Faster);
        assert_eq!(e.interval, IntervalKind::Hierarchical);
        assert_eq!(e.difference_ns, -1000.0);
        close(e.change, -0.25);
        close(e.change_ci[0], -0.275);
        close(e.change_ci[1], -0.225);
        assert_eq!((e.ratio, e.ratio_ci), (0.75, [0.725, 0.775]));
        assert_eq!((e.forks_faster, e.forks_slower, e.forks), (1, 0, 2));
    }

    #[test]
    fn one_fork_uses_the_pooled_interval() {
        let h = Estimate {
            median_ns: 5.0,
            ci_ns: [-100.0, 100.0],
        };
        let p = pooled(5.0, [2.0, 8.0], 100.0);
        let forks = [fork([1.0, 9.0], [1.01, 1.09])];
        let e = effect(&p, &h, &forks, &ratio(1.05, [1.02, 1.08]));
        assert_eq!(e.interval, IntervalKind::Pooled);
        assert_eq!(e.direction, Direction::Slower);
        assert_eq!(e.difference_ci_ns, [2.0, 8.0]);
        assert_eq!(e.forks_slower, 1);
    }

    #[test]
    fn an_interval_over_zero_resolves_no_difference() {
        let h = Estimate {
            median_ns: 1.0,
            ci_ns: [-3.0, 4.0],
        };
        let forks = [fork([-1.0, 1.0], [0.9, 1.1]), fork([-1.0, 1.0], [0.9, 1.1])];
        let e = effect(
            &pooled(1.0, [-1.0, 2.0], 100.0),
            &h,
            &forks,
            &ratio(1.0, [0.97, 1.04]),
        );
        assert_eq!(e.direction, Direction::NoDifference);
    }

    #[test]
    fn a_direction_is_said_only_where_both_intervals_say_it() {
        let h = Estimate {
            median_ns: -10.0,
            ci_ns: [-20.0, -1.0],
        };
        // D's interval below 0, the ratio's across 1; a fork likewise.
        let forks = [
            fork([-20.0, -1.0], [0.95, 1.01]),
            fork([-20.0, -1.0], [0.9, 0.99]),
        ];
        let p = pooled(-10.0, [-20.0, -1.0], 1000.0);
        let e = effect(&p, &h, &forks, &ratio(0.99, [0.97, 1.01]));
        assert_eq!(e.difference_direction, Direction::Faster);
        assert_eq!(e.ratio_direction, Direction::NoDifference);
        assert_eq!(e.direction, Direction::NoDifference);
        assert_eq!(e.forks_faster, 1, "only the fork whose two intervals agree");
    }
}
