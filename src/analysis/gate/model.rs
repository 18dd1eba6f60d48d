//! The JSON of a gate's verdict: `analysis.json`'s `gate`. Keys are part
//! of what scripts read (templates/README.md).

use crate::spec::GateStatistic;
use crate::stats::gate::{lower_bound, upper_bound, Decision};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `analysis.json`'s `gate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateAnalysis {
    /// `max_slowdown` as the spec gives it: `2%`, `50us`.
    pub max_slowdown: String,
    pub statistic: GateStatistic,
    pub min_power: f64,
    /// The largest false-alarm or false-block rate, by its upper bound,
    /// the self-check may show.
    #[serde(default = "crate::spec::gate_default_max_false_block")]
    pub max_false_block: f64,
    pub self_check: bool,
    /// (1 - confidence) / 2: the rate at which the rule may block a change
    /// within the budget.
    pub nominal_false_alarm: f64,
    pub verdict: Verdict,
    /// Why, as a code: `interval-below-threshold`, `regression`,
    /// `interval-reaches-threshold`, `low-power`.
    pub reason: Reason,
    /// The exit code of `runner exec`: 0, 3 or 4.
    pub exit_code: i32,
    pub groups: Vec<GateGroup>,
    /// Every group's d = 0 self-check forks together; null without a self-check.
    pub false_alarms: Option<Share>,
    /// Every group's 0.5x self-check forks together; null without one.
    #[serde(default)]
    pub false_blocks: Option<Share>,
    /// The group with the lowest power; null without a self-check.
    pub power: Option<Share>,
    /// When the self-check was too small to bound the error rates or show
    /// the power asked for: the forks per cell that would, were every fork
    /// to come out right. Null otherwise.
    #[serde(default)]
    pub forks_needed: Option<u32>,
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
    /// Every interval lies below the threshold, but the 2x self-check's
    /// power, by its lower bound, is below `min_power`.
    LowPower,
    /// The self-check's false-alarm or false-block rate, by its upper
    /// bound, is above `max_false_block`: too few forks to bound it, or a
    /// rule that blocks within-budget changes too often on this machine.
    ErrorRateUnbounded,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateGroup {
    /// The non-delay grid values the group's cells share.
    pub params: Map<String, Value>,
    /// Pooled median of the measured baseline runs of its experiment cells.
    pub baseline_median_ns: f64,
    pub threshold_ns: f64,
    pub cells: Vec<GateCell>,
    pub false_alarms: Option<SelfCheck>,
    pub power: Option<SelfCheck>,
    /// The 0.5x cell; absent for runs made before it existed.
    #[serde(default)]
    pub false_blocks: Option<SelfCheck>,
    pub verdict: Verdict,
}

/// One experiment cell's deciding interval and what the rule says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateCell {
    pub cell: u32,
    pub params: Map<String, Value>,
    pub delay_ns: u64,
    pub estimate_ns: f64,
    pub ci_ns: [f64; 2],
    pub decision: Verdict,
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
    #[serde(default)]
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
    pub median_ns: f64,
    pub ci_ns: [f64; 2],
    pub flagged: bool,
}
