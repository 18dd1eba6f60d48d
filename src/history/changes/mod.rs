//! Where consecutive versions differ by more than separate runs on their
//! machine resolve.
//!
//! Two versions are two separate runs, and a run's forks are separate
//! processes: the reports' two-separate-runs comparison already treats
//! each fork as a run of its own. So per cell, every fork of a version is
//! compared with every fork of the version before it (`stats::apart`, the
//! Mann-Whitney U with its exact distribution) on the scale the reports
//! decide on, the fork's speed ratio less the injected delay, (median
//! treatment − delay) / median baseline, each fork on its own baseline;
//! the fork's median D less the delay, in ns, is compared beside it and
//! shown, but decides nothing (a machine uniformly slower during one run
//! moves the ns and not the ratio). A change is marked where the ratios
//! point one way with a chance of at most 1 − confidence divided by the
//! number of comparisons in the history (Bonferroni), and where the
//! interval of the change excludes no change on that side: the quotient
//! of the two versions' speed ratios, on the log scale, with a MOVER
//! interval. Only where a ratio cannot be taken (a baseline median of 0)
//! does D decide in its place. The chance that a history marks any change where none
//! happened is then at most 1 − confidence, if separate runs on the
//! machine vary as its forks do; the interval guards against a run whose
//! forks all moved together (a machine busy for that whole run), which
//! the forks alone cannot see.
//!
//! A comparison whose forks are too few to reach the level marks nothing,
//! and is said to be so ([`CellStep::can_mark`], [`forks_needed`]): too
//! few forks is not evidence that nothing changed.
//!
//! A version on another machine, or of another spec (any key but the ones
//! that only name, describe or size a run), is a step of its own: its move is
//! shown and never marked as a change of the code, and it does not count
//! among the comparisons.

use super::version::{CellPoint, Version};
use runner_stats::apart::{self, Bounded, Comparison, Side};

/// Why two consecutive versions are not compared as code.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Boundary {
    /// The spec's measured keys differ (named).
    Spec(Vec<String>),
    /// The machine differs: (what, before, now).
    Machine(Vec<(String, String, String)>),
}

/// One cell from one version to the next.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CellStep {
    pub label: String,
    /// The cell's injected delay, ns (the same in both versions).
    pub delay_ns: u64,
    /// The forks compared by median D less the injected delay, in ns.
    pub ns: Comparison,
    /// The forks compared by their speed ratio less the delay (none when
    /// a fork's baseline median is 0).
    pub ratio: Option<Comparison>,
    /// Median D now − before, ns.
    pub change_ns: Bounded,
    /// The cell's speed ratio less the delay, now over before, as a
    /// factor (1.5: the treatment takes 1.5 times as long against its
    /// baseline as before); interval on the log scale.
    pub change_ratio: Option<Bounded>,
    /// The rule marks a change (set by [`mark`]).
    pub marked: bool,
    /// Each arm's fork medians (baseline, treatment) compared as separate
    /// runs, in ns: the machine's state moves them as much as the code.
    pub arms: [Comparison; 2],
    /// Which arms moved at the rule's level (set by [`mark`]); never a
    /// change of the code on its own.
    pub arms_moved: [bool; 2],
}

impl CellStep {
    /// The deciding scale's comparison: the ratio's, D's only where no
    /// ratio could be taken.
    fn deciding(&self) -> &Comparison {
        self.ratio.as_ref().unwrap_or(&self.ns)
    }

    /// The chance of the comparison with nothing changed, on the deciding
    /// scale.
    pub(crate) fn p(&self) -> f64 {
        self.deciding().p
    }

    /// Which way the deciding scale points.
    pub(crate) fn side(&self) -> Option<Side> {
        self.deciding().side()
    }

    /// The smallest chance these fork counts can give.
    pub(crate) fn smallest_p(&self) -> f64 {
        apart::smallest_p(self.ns.n, self.ns.m)
    }

    /// Whether these fork counts can reach the level `each` at all.
    pub(crate) fn can_mark(&self, each: f64) -> bool {
        self.smallest_p() <= each
    }

    /// Every fork of one version beyond every fork of the other, on both
    /// scales the same way: as far apart as these forks can be.
    pub(crate) fn all_apart(&self) -> bool {
        self.side().is_some() && self.p() <= self.smallest_p() * (1.0 + 1e-9)
    }

    /// Whether the interval of the change, as a factor of the speed ratio
    /// (in ns where there is none), excludes no change on `side`.
    pub(crate) fn resolved(&self, side: Side) -> bool {
        let beyond = |b: &Bounded, none: f64| match side {
            Side::Above => b.lo > none,
            Side::Below => b.hi < none,
        };
        match (&self.ratio, &self.change_ratio) {
            (Some(_), Some(r)) => beyond(r, 1.0),
            _ => beyond(&self.change_ns, 0.0),
        }
    }

    /// A comparison with too few forks to mark a change whose forks and
    /// intervals all point one way: what more forks could have marked.
    pub(crate) fn unjudged_move(&self, each: f64) -> bool {
        !self.can_mark(each) && self.all_apart() && self.side().is_some_and(|s| self.resolved(s))
    }

    pub(crate) fn forks(&self) -> (usize, usize) {
        (self.ns.n, self.ns.m)
    }
}

/// The fewest forks per version at which every fork of one beyond every
/// fork of the other reaches `level` (none past 1000 forks).
pub(super) fn forks_needed(level: f64) -> Option<usize> {
    if level.is_nan() || level <= 0.0 {
        return None;
    }
    (1..=1000).find(|&n| apart::smallest_p(n, n) <= level)
}

/// A version against the one before it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Step {
    pub boundaries: Vec<Boundary>,
    pub cells: Vec<CellStep>,
}

#[cfg(test)]
impl Step {
    fn marked(&self) -> bool {
        self.cells.iter().any(|c| c.marked)
    }
}

/// The level of a history's rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Rule {
    /// 1 − confidence: the most the history's chance of any false mark can be.
    pub alpha: f64,
    /// Cell comparisons between versions on one machine and spec.
    pub comparisons: usize,
    /// The level each comparison must reach: alpha / comparisons.
    pub each: f64,
}

/// The values the rule compares for one cell, on each scale: median D
/// less the injected delay in ns, or the speed ratio less the delay,
/// (median treatment − delay) / median baseline (when every baseline
/// median is above 0).
fn rule_values(c: &CellPoint, ratio: bool) -> Vec<f64> {
    let d = c.delay_ns as f64;
    c.forks
        .iter()
        .map(|f| {
            if ratio {
                (f.treatment_ns - d) / f.baseline_ns
            } else {
                f.median_ns - d
            }
        })
        .collect()
}

/// The log of a cell's speed ratio less its injected delay, with its
/// interval; see [`CellPoint::ratio_less_delay`].
fn log_ratio(c: &CellPoint) -> Option<Bounded> {
    let r = c.ratio_less_delay()?;
    (r.lo > 0.0).then(|| Bounded {
        estimate: r.estimate.ln(),
        lo: r.lo.ln(),
        hi: r.hi.ln(),
    })
}

/// now / before of two ratios, from the difference of their logs.
fn quotient(before: Bounded, now: Bounded) -> Bounded {
    let d = apart::difference(before, now);
    Bounded {
        estimate: d.estimate.exp(),
        lo: d.lo.exp(),
        hi: d.hi.exp(),
    }
}

fn cell_step(before: &CellPoint, now: &CellPoint) -> Option<CellStep> {
    let ns = apart::compare(&rule_values(before, false), &rule_values(now, false)).ok()?;
    let arm = |treatment: bool| {
        let medians = |c: &CellPoint| -> Vec<f64> {
            c.forks
                .iter()
                .map(|f| {
                    if treatment {
                        f.treatment_ns
                    } else {
                        f.baseline_ns
                    }
                })
                .collect()
        };
        apart::compare(&medians(before), &medians(now)).ok()
    };
    let arms = [arm(false)?, arm(true)?];
    let ratios = before
        .forks
        .iter()
        .chain(&now.forks)
        .all(|f| f.baseline_ns > 0.0);
    let ratio = if ratios {
        apart::compare(&rule_values(before, true), &rule_values(now, true)).ok()
    } else {
        None
    };
    Some(CellStep {
        label: now.label.clone(),
        delay_ns: now.delay_ns,
        ns,
        ratio,
        change_ns: apart::difference(before.difference(), now.difference()),
        change_ratio: log_ratio(before)
            .zip(log_ratio(now))
            .map(|(x, y)| quotient(x, y)),
        marked: false,
        arms,
        arms_moved: [false; 2],
    })
}

/// `now` against `before`: boundaries, and every cell both have (none
/// marked yet: that needs the whole history, see [`mark`]).
pub(super) fn step(before: &Version, now: &Version) -> Step {
    let mut boundaries = Vec::new();
    let keys = runner_folder::verify::spec_differences(
        &before.experiment,
        &now.experiment,
        &runner_folder::verify::NOT_MEASURED,
    );
    if !keys.is_empty() {
        boundaries.push(Boundary::Spec(keys));
    }
    let moved = now.machine.changes_from(&before.machine);
    if !moved.is_empty() {
        boundaries.push(Boundary::Machine(moved));
    }
    let cells = now
        .cells
        .iter()
        .filter_map(|c| cell_step(before.cells.iter().find(|p| p.label == c.label)?, c))
        .collect();
    Step { boundaries, cells }
}

/// Marks the changes of a history's steps at `confidence` (see the module
/// doc) and returns the rule's level.
pub(super) fn mark(steps: &mut [&mut Step], confidence: f64) -> Rule {
    let alpha = 1.0 - confidence;
    let comparisons = steps
        .iter()
        .filter(|s| s.boundaries.is_empty())
        .map(|s| s.cells.len())
        .sum::<usize>();
    let each = alpha / comparisons.max(1) as f64;
    for s in steps.iter_mut().filter(|s| s.boundaries.is_empty()) {
        for c in &mut s.cells {
            c.marked = c.p() <= each && c.side().is_some_and(|side| c.resolved(side));
            c.arms_moved = c.arms.map(|a| a.p <= each && a.side().is_some());
        }
    }
    Rule {
        alpha,
        comparisons,
        each,
    }
}

#[cfg(test)]
mod tests;
