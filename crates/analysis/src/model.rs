//! The shape of `analysis.json` (docs/guide/output-folder.md): the template's context
//! and what scripts and CI gates read. Keys are part of the contract.
//!
//! Every key is always present; a number that cannot be computed (one fork,
//! an empty group) is `null`, usually beside a `note` saying why, so that
//! templates can test for it instead of failing on a missing key. The one
//! exceptions are `cells[].usage`, present only for runs that record CPU
//! time and memory, and `machines` / `cells[].machines`, present only for
//! runs over several hosts, so that other runs' analysis.json stays as it
//! was.

use runner_stats::{Class, MedianEstimate};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// The file's format (`output::format`): the current one, written
    /// and read (an older file is migrated before it is parsed).
    pub format_version: u32,
    pub confidence: f64,
    pub resamples: u32,
    pub cells: Vec<CellAnalysis>,
    pub headline: Headline,
    /// A regression gate's verdict and self-check; absent for runs without
    /// a gate, so their analysis.json stays as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<super::gate::GateAnalysis>,
    /// Every host of a run over several (see `machines.rs`); the key is
    /// absent for a run on one host, so its analysis.json is unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machines: Option<super::machines::Machines>,
    /// The spread of fork medians under each memory layout (see
    /// `layout.rs`); absent unless some fork recorded a layout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<super::layout::LayoutAnalysis>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellAnalysis {
    pub cell: u32,
    pub params: serde_json::Map<String, serde_json::Value>,
    pub delay_ns: u64,
    /// Measured pairs in the cell.
    pub n: u32,
    pub forks: Vec<ForkAnalysis>,
    pub forks_total: u32,
    pub forks_seen: u32,
    pub forks_reversed: u32,
    pub pooled: Pooled,
    /// D's interval over the forks (`pooled::over_forks`): what the
    /// calibration and a gate in time units judge.
    pub over_forks: OverForks,
    /// The effect in the user's terms (direction, difference, speed ratio
    /// and change), see `effect.rs`.
    pub effect: super::effect::Effect,
    pub cross_runs: CrossRuns,
    /// Pearson r of fork baseline medians vs treatment medians; null with
    /// fewer than two forks or no spread.
    pub correlation: Option<f64>,
    pub spread: Spread,
    pub order: Order,
    pub carry_over: CarryOver,
    pub calibration: Calibration,
    /// Null with one fork: no between-fork variance to estimate.
    pub variance: Option<Variance>,
    pub steady_state: CellSteadyState,
    /// CPU time and peak memory; the key is absent (not null) for runs that
    /// record none, so analysis.json of other runs is unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<super::usage::Usage>,
    /// The machines level; absent (not null) unless the cell's forks ran
    /// on more than one host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machines: Option<super::machines::CellMachines>,
    /// A sequential design's stop: forks run, why, and the deciding
    /// interval; absent (not null) for fixed designs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<super::stop::CellStop>,
    /// The instructions of the cell's counted pairs, with their own
    /// effect (`instructions.rs`); absent (not null) for runs that do not
    /// count, so their analysis.json is unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<super::instructions::Instructions>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// The whole CI of median D is above 0.
    #[serde(rename = "seen")]
    Seen,
    #[serde(rename = "not seen")]
    NotSeen,
    /// The whole CI is below 0: the treatment looked faster.
    #[serde(rename = "reversed")]
    Reversed,
}

impl Verdict {
    pub fn of(ci: [f64; 2]) -> Verdict {
        if ci[0] > 0.0 {
            Verdict::Seen
        } else if ci[1] < 0.0 {
            Verdict::Reversed
        } else {
            Verdict::NotSeen
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForkAnalysis {
    pub fork: u32,
    pub n: u32,
    /// median(D) of the fork's measured pairs.
    pub median_ns: f64,
    pub ci_ns: [f64; 2],
    pub verdict: Verdict,
    pub baseline_median_ns: f64,
    pub treatment_median_ns: f64,
    /// The fork's speed ratio, median(treatment) / median(baseline) on its
    /// own runs, and its interval (`stats::ratio::paired_ratio`): positive.
    pub ratio: f64,
    pub ratio_ci: [f64; 2],
    pub steady_state: ForkSteadyState,
}

/// A speed ratio and its interval (both bounds positive).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RatioFigure {
    pub ratio: f64,
    pub ratio_ci: [f64; 2],
}

/// Changepoints and class of each arm's measured phase (see `steady.rs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForkSteadyState {
    /// Both arms flat.
    pub steady: bool,
    pub baseline: ArmSteadyState,
    pub treatment: ArmSteadyState,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArmSteadyState {
    /// "flat", "warm-up", "slowdown" or "no steady state".
    pub class: Class,
    /// Measured pair numbers where a new segment starts.
    pub changepoints: Vec<u32>,
}

/// The steady-state classes counted over a cell's forks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellSteadyState {
    pub baseline: ClassCounts,
    pub treatment: ClassCounts,
    /// Forks whose two arms were both flat.
    pub forks_steady: u32,
    /// Every fork steady: false is the warning that the measured phase had
    /// not settled (too few warm-up pairs, or a level change mid-run).
    pub measured_phase_steady: bool,
}

/// Forks per class, for one arm.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassCounts {
    pub flat: u32,
    pub warm_up: u32,
    pub slowdown: u32,
    pub no_steady_state: u32,
}

/// A median with its percentile bootstrap CI.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub median_ns: f64,
    pub ci_ns: [f64; 2],
}

impl From<MedianEstimate> for Estimate {
    fn from(e: MedianEstimate) -> Self {
        Estimate {
            median_ns: e.median,
            ci_ns: [e.ci.lo, e.ci.hi],
        }
    }
}

/// D over the forks: the mean of the forks' median D and Student's t
/// interval of it with n - 1 degrees of freedom; with one fork, that
/// fork's median and its own interval (its pairs' spread only).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OverForks {
    pub estimate_ns: f64,
    pub ci_ns: [f64; 2],
}

/// All pairs of the cell as one sample, as the original study did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pooled {
    pub n: u32,
    /// Fraction of pairs where the treatment took longer (D > 0); for a
    /// comparison of two strategies, "how often was B slower".
    pub share_slower: f64,
    /// Fraction of pairs with D = 0 exactly: ties from a clock that moves
    /// in steps. A tie at the median is what makes an interval of a median
    /// conservative (the report says so when false positives are rarer
    /// than chance allows).
    pub share_tied: f64,
    pub median_ns: f64,
    pub ci_ns: [f64; 2],
    pub baseline_median_ns: f64,
    pub treatment_median_ns: f64,
}

/// Every ordered pair of distinct forks (f, g): median(treatment of g) -
/// median(baseline of f), i.e. "compare two separate runs".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossRuns {
    pub comparisons: u32,
    /// Estimates > 0 when d > 0; null when d = 0, where no sign is right
    /// (read `slower`: the false "it got slower" calls).
    pub correct: Option<u32>,
    /// Estimates > 0, for any d.
    pub slower: u32,
    /// Estimates < 0, for any d.
    pub faster: u32,
    pub min_ns: Option<f64>,
    pub max_ns: Option<f64>,
    pub note: Option<String>,
}

/// Range over forks of the per-fork medians of each arm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub baseline_min_ns: f64,
    pub baseline_max_ns: f64,
    pub treatment_min_ns: f64,
    pub treatment_max_ns: f64,
}

/// Does running first or second change a run's time? See `order.rs`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Order {
    PairedRandom {
        treatment_first_n: u32,
        treatment_first_median_ns: Option<f64>,
        treatment_second_n: u32,
        treatment_second_median_ns: Option<f64>,
        /// median D (treatment first) - median D (treatment second).
        difference_ns: Option<f64>,
        /// Bootstrap over the forks used (`analysis::contrast`): whole
        /// forks from `stats::CLUSTER_MIN_FORKS` on, else forks and then
        /// each fork's two groups.
        ci_ns: Option<[f64; 2]>,
        /// Forks whose pairs all had the treatment in one position.
        forks_left_out: u32,
        note: Option<String>,
    },
    Blocked {
        forks: u32,
        /// Forks where the second (treatment) block ran faster than the
        /// first once d is taken out: `faster_by_ns > 0`.
        forks_second_faster: u32,
        /// Per fork: median(baseline) - (median(treatment) - d).
        faster_by_min_ns: f64,
        faster_by_median_ns: f64,
        faster_by_max_ns: f64,
    },
}

/// Does the run before a run change it? Each arm's first-in-pair runs,
/// after the other arm vs after itself (see `carry_over.rs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CarryOver {
    /// Whether each baseline run was followed by an untimed wait of d.
    pub padded: bool,
    /// Which runs the two groups hold, in words.
    pub comparison: String,
    pub baseline: ArmCarryOver,
    pub treatment: ArmCarryOver,
    /// The speed ratio from runs that followed their own arm only (each
    /// fork's two groups unpaired, combined across forks); null when no
    /// fork has both.
    pub own_ratio: Option<RatioFigure>,
    pub note: Option<String>,
}

/// One arm's carry-over contrast.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArmCarryOver {
    pub after_other_n: u32,
    pub after_other_median_ns: Option<f64>,
    pub after_same_n: u32,
    pub after_same_median_ns: Option<f64>,
    /// after the other arm - after the same arm.
    pub difference_ns: Option<f64>,
    /// Bootstrap over the forks used, as the order's.
    pub ci_ns: Option<[f64; 2]>,
    /// Forks with such runs after only one of the arms.
    pub forks_left_out: u32,
    /// The difference lies beyond its interval and is large (a tenth of
    /// the arm's median, or a quarter of a resolved effect): the Finding
    /// names it.
    pub inflates: bool,
}

/// How well the harness recovers the delay it injected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Pooled median D - d.
    pub error_ns: f64,
    /// Whether the pooled CI contains d.
    pub ci_covers_delay: bool,
    /// Median wait actually injected (`spin_ns`: the treatment's wait minus
    /// the baseline's).
    pub spin_median_ns: f64,
    /// median(spin_ns) - d: what the busy-wait itself overshoots.
    pub spin_error_ns: f64,
    /// Pooled median D - median(spin_ns): what the mechanism adds beyond
    /// the wait it injected (about 0 when both arms' timed regions carry it).
    pub residual_bias_ns: f64,
    /// Whether the pooled CI covers the wait actually injected, pair by
    /// pair: the pooled (exact) bootstrap interval of D − spin_ns contains 0. See `pooled::calibration` for why not
    /// median(spin_ns).
    pub ci_covers_spin: bool,
    /// Forks whose CI contains d.
    pub forks_covering_delay: u32,
    /// Forks whose CI covers their injected wait, pair by pair: the
    /// (exact) bootstrap interval of the fork's D − spin_ns contains 0.
    pub forks_covering_spin: u32,
    /// Forks whose speed-ratio interval holds their true ratio, (median
    /// baseline + median wait) / median baseline on the fork's own runs (at
    /// d = 0: holds 1; the others are the ratio's false positives).
    pub forks_ratio_covering: u32,
    /// Forks whose speed ratio, with each pair's own wait taken out of its
    /// treatment run, holds 1: the ratio judged pair by pair, as
    /// `forks_covering_spin` judges D (the wait jitters by more than a
    /// quiet fork's interval of a short run).
    pub forks_ratio_covering_spin: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Variance {
    /// ANOVA components of D (Kalibera & Jones 2013): for the mean.
    pub between_ns2: f64,
    pub within_ns2: f64,
    /// Robust components for the median: between-fork variance of the fork
    /// medians (sampling noise removed) and the per-pair variance a median
    /// carries (a fork median of m pairs varies as median_within_ns2 / m).
    /// The recommendation is sized from these.
    pub median_between_ns2: f64,
    pub median_within_ns2: f64,
    pub target_half_width_ns: f64,
    /// Null when no design in the search reaches the target.
    pub recommended: Option<Recommended>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recommended {
    pub forks: u32,
    pub pairs: u32,
    pub half_width_ns: f64,
    /// forks x (pairs + the fork overhead counted in pairs).
    pub cost_pairs: u64,
}

/// The answer across cells: see `headline.rs` for the grouping rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Headline {
    /// The first group's numbers, at top level for templates.
    #[serde(flatten)]
    pub first: GroupHeadline,
    /// One entry per combination of non-delay params, in cell order.
    pub groups: Vec<GroupHeadline>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupHeadline {
    /// The params shared by the group (every key not starting with `delay`).
    pub params: serde_json::Map<String, serde_json::Value>,
    pub cells: Vec<u32>,
    /// Smallest d > 0 whose cell every fork saw; null if none.
    pub smallest_delay_seen_by_all_ns: Option<u64>,
    /// That d as % of its cell's pooled median baseline.
    pub as_pct_of_baseline: Option<f64>,
    /// Smallest d > 0 whose cross-run comparisons were all correct (and at
    /// least one was made).
    pub smallest_delay_all_cross_runs_correct_ns: Option<u64>,
    /// Over the d = 0 cells: forks whose CI lay above 0.
    pub zero_delay_forks_seen: Option<u32>,
    /// Over the d = 0 cells: forks whose CI lay below 0.
    pub zero_delay_forks_reversed: Option<u32>,
    /// Seen + reversed at d = 0: in an A/A cell a difference either way is
    /// a false one, so counting only *seen* would halve the error rate.
    pub zero_delay_false_positives: Option<u32>,
    pub zero_delay_forks_total: Option<u32>,
}
