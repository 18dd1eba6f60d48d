//! The JSON of a gate's verdict: `analysis.json`'s `gate`, which CI
//! scripts read instead of parsing the report. Keys are part of what
//! scripts read (templates/README.md).

use runner_stats::gate::{lower_bound, upper_bound, Decision};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `analysis.json`'s `gate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateAnalysis {
    /// `max_slowdown` as the spec gives it: `2%`, `50us`.
    pub max_slowdown: String,
    /// What the threshold is held against: the speed ratio (a percentage:
    /// the ratio's interval against 1 + the percentage) or D (a duration).
    pub judges: Judged,
    /// The interval that decided: over the forks, or a sequential
    /// design's stopping interval.
    pub interval: crate::effect::IntervalKind,
    pub min_power: f64,
    /// The largest false-alarm or false-block rate the self-check may
    /// show (by its lower bound) before the gate is inconclusive.
    pub max_false_block: f64,
    pub self_check: bool,
    /// (1 - confidence) / 2: the rate at which the rule may block a change
    /// within the budget.
    pub nominal_false_alarm: f64,
    pub verdict: Verdict,
    /// Why, as a code: `interval-below-threshold`, `regression`,
    /// `interval-reaches-threshold`, `low-power`, `self-check-failed`,
    /// `too-few-forks`, `load`.
    pub reason: Reason,
    /// The exit code of `runner exec`: 0, 3 or 4.
    pub exit_code: i32,
    pub groups: Vec<GateGroup>,
    /// Every group's d = 0 self-check forks together; null without a self-check.
    pub false_alarms: Option<Share>,
    /// Whether the self-check ran enough forks per rate for a clean one to
    /// bound that rate at `max_false_block` (29 at 10 %); fewer only guard
    /// against grossly invalid intervals.
    pub self_check_bounds: bool,
    /// Every group's 0.5x self-check forks together; null without one.
    pub false_blocks: Option<Share>,
    /// The deciding interval's computed power at twice the threshold, of
    /// the cell where it is lowest (`stats::gate::interval_power`).
    pub power: Option<IntervalPower>,
    /// When the verdict is inconclusive for the deciding interval (it
    /// straddles the threshold, or its power is short): the design
    /// predicted to decide, from the cell's variance components; never
    /// fewer forks or pairs than ran. Null otherwise, or when no design
    /// would (the estimate sits on the threshold).
    pub advice: Option<Advice>,
}

/// What a gate's threshold is held against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Judged {
    /// The speed ratio's interval, against 1 + a percentage.
    Ratio,
    /// D's interval, against a duration.
    Difference,
    /// The instructions' ratio (`cells[].instructions`), against 1 + a
    /// percentage (`gate.metric = "instructions"`).
    Instructions,
}

impl Judged {
    /// Whether the judged statistic is a ratio (its interval held against
    /// 1 + a percentage, symmetric on the log scale).
    pub fn is_ratio(self) -> bool {
        self != Judged::Difference
    }
}

/// The computed power of one cell's deciding interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct IntervalPower {
    pub cell: u32,
    /// The chance that the rule, on an interval of this width and spread,
    /// blocks a true slowdown of `slowdown`.
    pub power: f64,
    /// Twice the cell's threshold: a ratio of 1 + twice the percentage,
    /// or twice the duration in ns.
    pub slowdown: f64,
    /// The standard error the interval implies, (hi - lo) / (2 z): of the
    /// log ratio, or in ns.
    pub spread: f64,
}

/// A design predicted to decide where this run could not.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Advice {
    /// What to change: forks, pairs or both.
    pub change: AdviceChange,
    pub forks: u32,
    pub pairs: u32,
    /// The half-width of D's interval the design is predicted to reach
    /// (null where the run had no fork-to-fork spread to predict from),
    /// and the one it must reach (a ratio's, translated at the baseline's
    /// median run).
    pub predicted_half_width_ns: Option<f64>,
    pub needed_half_width_ns: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AdviceChange {
    Forks,
    Pairs,
    Both,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Inconclusive,
    Regression,
}

impl Verdict {
    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::Pass => 0,
            Verdict::Regression => 3,
            Verdict::Inconclusive => 4,
        }
    }

    pub(crate) fn of(d: Decision) -> Verdict {
        match d {
            Decision::Pass => Verdict::Pass,
            Decision::Regression => Verdict::Regression,
            Decision::Inconclusive => Verdict::Inconclusive,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// Every interval lies below the threshold and the self-check (if any)
    /// has the power asked for.
    IntervalBelowThreshold,
    /// An interval lies wholly above the threshold.
    Regression,
    /// An interval reaches the threshold without showing a regression.
    IntervalReachesThreshold,
    /// Every interval lies below the threshold, but the deciding
    /// interval's computed power at twice the threshold is below
    /// `min_power`.
    LowPower,
    /// The self-check showed, by the lower bound of its false-alarm or
    /// false-block share, that forks' intervals block unchanged or
    /// within-budget code more often than `max_false_block`: on this
    /// machine the intervals are not valid to block on.
    SelfCheckFailed,
    /// A deciding cell ran fewer than [`MIN_FORKS`] forks: its interval
    /// over the forks rests on an assumption (normal fork effects) that
    /// nothing in two forks can check.
    TooFewForks,
    /// The baseline's fork medians spread by more than the threshold, and
    /// the ratio and D disagree about it: the machine's load changed how
    /// long runs took while the gate measured.
    Load,
}

impl Reason {
    /// The verdict this reason gives.
    pub fn verdict(self) -> Verdict {
        match self {
            Reason::IntervalBelowThreshold => Verdict::Pass,
            Reason::Regression => Verdict::Regression,
            _ => Verdict::Inconclusive,
        }
    }

    /// Which of several groups' reasons is the run's: the first in the
    /// order the verdict's rules apply (`analysis::gate`).
    pub(crate) fn rank(self) -> u8 {
        match self {
            Reason::TooFewForks => 0,
            Reason::SelfCheckFailed => 1,
            Reason::Load => 2,
            Reason::Regression => 3,
            Reason::IntervalReachesThreshold => 4,
            Reason::LowPower => 5,
            Reason::IntervalBelowThreshold => 6,
        }
    }
}

/// The fewest forks a gate decides on.
pub const MIN_FORKS: u32 = 3;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateGroup {
    /// The non-delay grid values the group's cells share.
    pub params: Map<String, Value>,
    /// Pooled median of the measured baseline runs of its experiment cells.
    pub baseline_median_ns: f64,
    /// The threshold in time: the duration, or the percentage of
    /// `baseline_median_ns` (what the self-check's delays are sized from).
    pub threshold_ns: f64,
    /// The threshold as the judged statistic holds it: 1 + the
    /// percentage, or the duration in ns.
    pub threshold: f64,
    /// How far the forks' baseline medians spread: max / min - 1.
    pub baseline_spread: f64,
    pub cells: Vec<GateCell>,
    pub false_alarms: Option<SelfCheck>,
    /// The lowest computed power of the group's deciding intervals.
    pub power: Option<IntervalPower>,
    /// The 0.5x cell; null without one.
    pub false_blocks: Option<SelfCheck>,
    pub verdict: Verdict,
}

/// One experiment cell's deciding interval and what the rule says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateCell {
    pub cell: u32,
    pub params: Map<String, Value>,
    pub delay_ns: u64,
    pub forks: u32,
    /// The judged statistic and its interval (the report's): a speed
    /// ratio, or D in ns.
    pub estimate: f64,
    pub ci: [f64; 2],
    pub decision: Verdict,
    /// D's own interval (over the forks, or at a sequential stop), and
    /// what it says against `threshold_ns`: the load check's second
    /// opinion.
    pub difference_ns: f64,
    pub difference_ci_ns: [f64; 2],
    pub difference_decision: Verdict,
}

/// A self-check cell: the rule applied to each of its forks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelfCheck {
    pub cell: u32,
    pub delay_ns: u64,
    #[serde(flatten)]
    pub share: Share,
    /// Each fork's interval and whether the rule flagged it.
    pub per_fork: Vec<SelfCheckFork>,
}

/// Forks the rule flagged as a regression, of how many.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Share {
    pub flagged: u32,
    pub forks: u32,
    /// flagged / forks.
    pub share: f64,
    /// One-sided Clopper-Pearson bounds at the run's confidence.
    pub upper_bound: f64,
    pub lower_bound: f64,
}

impl Share {
    pub(crate) fn of(flagged: u32, forks: u32, confidence: f64) -> Share {
        Share {
            flagged,
            forks,
            share: if forks == 0 {
                0.0
            } else {
                f64::from(flagged) / f64::from(forks)
            },
            upper_bound: upper_bound(flagged, forks, confidence).unwrap_or(1.0),
            lower_bound: lower_bound(flagged, forks, confidence).unwrap_or(0.0),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelfCheckFork {
    pub fork: u32,
    /// The fork's own judged statistic and interval (its ratio, or its
    /// median D in ns).
    pub estimate: f64,
    pub ci: [f64; 2],
    pub flagged: bool,
}
