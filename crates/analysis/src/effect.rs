//! The treatment's effect in the user's terms: a direction and three sizes
//! of one statistic.
//!
//! A user comparing two versions of their code asks "is it faster, and by
//! how much?". The effect is the speed ratio, median(treatment) /
//! median(baseline): each fork's ratio is on its own runs and its own
//! baseline (`stats::ratio`), so forks that ran at different speeds agree
//! whenever their treatments do, and forks are combined on the log scale,
//! so both bounds are positive ratios however large the change (a 66x win
//! is 66x, never a negative run time). Its interval decides the direction
//! (faster, slower, or no difference resolved), and it is printed in two
//! more units:
//!
//! - the change in run time, ratio - 1;
//! - the difference per run, the ratio translated into time at the
//!   baseline's median run: median(baseline) x (ratio - 1), with the
//!   interval translated alike. So the three sizes always say the same
//!   thing; D's own paired interval (`cells[].over_forks`) is the
//!   calibration's, where a known time is judged.
//!
//! Which interval: with two forks or more, Student's t over the forks' log
//! ratios ([`IntervalKind::Forks`]); with one fork, that fork's own
//! ([`IntervalKind::OneFork`]: it describes that process, not the next);
//! in a sequential design, the interval it stopped on
//! ([`IntervalKind::Sequence`], `analysis::stop`), valid at any look.

use super::{ForkAnalysis, Pooled};
use runner_stats::ratio::RatioEstimate;
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
    /// A difference's direction: its interval wholly below 0 is faster.
    pub fn of(ci: [f64; 2]) -> Direction {
        if ci[1] < 0.0 {
            Direction::Faster
        } else if ci[0] > 0.0 {
            Direction::Slower
        } else {
            Direction::NoDifference
        }
    }

    /// A ratio's direction: its interval wholly below 1 is faster.
    pub fn of_ratio(ci: [f64; 2]) -> Direction {
        Direction::of([ci[0] - 1.0, ci[1] - 1.0])
    }
}

/// Which interval an effect carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IntervalKind {
    /// Student's t over the forks' log ratios.
    Forks,
    /// One fork: its own interval, from its pairs alone.
    OneFork,
    /// The interval a sequential design's cell stopped on
    /// (`cells[].stop`), valid at whichever look it stopped.
    Sequence,
}

/// One cell's effect (`analysis.json` `cells[].effect`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Effect {
    /// What the ratio's interval says.
    pub direction: Direction,
    pub interval: IntervalKind,
    /// The ratio in time per run, median(baseline) x (ratio - 1), and its
    /// interval translated alike (ns).
    pub difference_ns: f64,
    pub difference_ci_ns: [f64; 2],
    /// The pooled median baseline run: the scale of that translation.
    pub baseline_median_ns: f64,
    /// The speed ratio median(treatment) / median(baseline), combined
    /// across forks on the log scale, and its interval: both positive.
    /// Below 1 the treatment is faster; "1.52x faster" is 1 / 0.658.
    pub ratio: f64,
    pub ratio_ci: [f64; 2],
    /// The change in run time, ratio - 1 (-0.34 is 34 % less time).
    pub change: f64,
    pub change_ci: [f64; 2],
    /// Forks whose own ratio interval lay below / above 1.
    pub forks_faster: u32,
    pub forks_slower: u32,
    pub forks: u32,
}

/// The effect of a fixed design's cell from its pooled baseline median,
/// its forks and their ratio combined (`stats::ratio::over_forks`).
pub(crate) fn effect(pooled: &Pooled, forks: &[ForkAnalysis], ratio: &RatioEstimate) -> Effect {
    let interval = if forks.len() >= 2 {
        IntervalKind::Forks
    } else {
        IntervalKind::OneFork
    };
    Effect::new(
        interval,
        pooled.baseline_median_ns,
        (ratio.ratio, ratio.ci),
        fork_counts(forks),
        forks.len() as u32,
    )
}

/// Forks faster and slower on their own ratio's interval.
pub(crate) fn fork_counts(forks: &[ForkAnalysis]) -> [u32; 2] {
    let count = |d: Direction| {
        forks
            .iter()
            .filter(|f| Direction::of_ratio(f.ratio_ci) == d)
            .count() as u32
    };
    [count(Direction::Faster), count(Direction::Slower)]
}

/// Of ratio intervals, how many lie wholly below and wholly above 1.
pub(crate) fn fork_counts_of(cis: &[[f64; 2]]) -> [u32; 2] {
    let count = |d: Direction| {
        cis.iter()
            .filter(|ci| Direction::of_ratio(**ci) == d)
            .count() as u32
    };
    [count(Direction::Faster), count(Direction::Slower)]
}

impl Effect {
    /// An effect from the pooled median baseline run, the speed ratio and
    /// its interval, the forks faster and slower on their own, of `forks`.
    pub fn new(
        interval: IntervalKind,
        baseline_median_ns: f64,
        (ratio, ratio_ci): (f64, [f64; 2]),
        [forks_faster, forks_slower]: [u32; 2],
        forks: u32,
    ) -> Effect {
        let change = ratio - 1.0;
        let change_ci = [ratio_ci[0] - 1.0, ratio_ci[1] - 1.0];
        Effect {
            direction: Direction::of_ratio(ratio_ci),
            interval,
            difference_ns: baseline_median_ns * change,
            difference_ci_ns: [
                baseline_median_ns * change_ci[0],
                baseline_median_ns * change_ci[1],
            ],
            baseline_median_ns,
            ratio,
            ratio_ci,
            change,
            change_ci,
            forks_faster,
            forks_slower,
            forks,
        }
    }
}

impl super::CellAnalysis {
    /// The cell's effect.
    pub fn effect(&self) -> Effect {
        self.effect.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Verdict;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9, "{a} vs {b}");
    }

    fn pooled(base: f64) -> Pooled {
        Pooled {
            n: 100,
            share_slower: 0.5,
            share_tied: 0.0,
            median_ns: 0.0,
            ci_ns: [-1.0, 1.0],
            baseline_median_ns: base,
            treatment_median_ns: base,
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
            steady_state: crate::ForkSteadyState {
                steady: true,
                baseline: crate::ArmSteadyState {
                    class: runner_stats::Class::Flat,
                    changepoints: vec![],
                },
                treatment: crate::ArmSteadyState {
                    class: runner_stats::Class::Flat,
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

    /// The three sizes are one statistic: the change is the ratio less 1,
    /// and the difference per run that change at the baseline's median.
    #[test]
    fn a_faster_treatment_has_ratios_below_one_in_every_unit() {
        let forks = [
            fork([-1200.0, -800.0], [0.7, 0.8]),
            fork([-50.0, 30.0], [0.98, 1.01]),
        ];
        let e = effect(&pooled(4000.0), &forks, &ratio(0.75, [0.725, 0.775]));
        assert_eq!(e.direction, Direction::Faster);
        assert_eq!(e.interval, IntervalKind::Forks);
        close(e.change, -0.25);
        close(e.change_ci[0], -0.275);
        close(e.change_ci[1], -0.225);
        close(e.difference_ns, -1000.0);
        close(e.difference_ci_ns[0], -1100.0);
        close(e.difference_ci_ns[1], -900.0);
        assert_eq!((e.ratio, e.ratio_ci), (0.75, [0.725, 0.775]));
        assert_eq!((e.forks_faster, e.forks_slower, e.forks), (1, 0, 2));
    }

    #[test]
    fn one_fork_carries_its_own_interval() {
        let forks = [fork([1.0, 9.0], [1.01, 1.09])];
        let e = effect(&pooled(100.0), &forks, &ratio(1.05, [1.02, 1.08]));
        assert_eq!(e.interval, IntervalKind::OneFork);
        assert_eq!(e.direction, Direction::Slower);
        assert_eq!(e.forks_slower, 1);
    }

    /// The ratio alone decides: a fork's D interval below 0 does not make
    /// it faster when its ratio's interval holds 1, and a cell whose ratio
    /// interval holds 1 resolves no difference in every unit.
    #[test]
    fn the_ratio_alone_decides() {
        let forks = [
            fork([-20.0, -1.0], [0.95, 1.01]),
            fork([-20.0, -1.0], [0.9, 0.99]),
        ];
        let e = effect(&pooled(1000.0), &forks, &ratio(0.99, [0.97, 1.01]));
        assert_eq!(e.direction, Direction::NoDifference);
        assert!(e.difference_ci_ns[0] < 0.0 && e.difference_ci_ns[1] > 0.0);
        assert_eq!(e.forks_faster, 1, "only the fork whose ratio says so");
    }
}
