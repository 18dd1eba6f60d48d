//! Where consecutive versions differ by more than separate runs on their
//! machine resolve.
//!
//! Two versions are two separate runs, and a run's forks are separate
//! processes: the reports' two-separate-runs comparison already treats
//! each fork as a run of its own. So per cell, every fork of a version is
//! compared with every fork of the version before it, on the fork's
//! effect: its median D less the injected delay, as a share of its own
//! baseline median. A machine uniformly slower during one run moves both
//! arms and not this share; the injected delay is the harness's, the same
//! in every version, and adds to D rather than scaling with the machine
//! (in ns when a baseline median is 0). The rule marks a change when all
//! those comparisons point the same way (`stats::apart`). If nothing
//! changed, that happens by chance with probability 2 / C(n + m, n) for n
//! and m forks, exactly, whatever the distribution, as long as separate
//! runs on the machine vary as its forks do; a comparison whose forks are
//! too few for that chance to be at most 1 − confidence marks nothing.
//! The size of a change is the difference of the two versions'
//! hierarchical estimates (forks, then pairs) with a MOVER interval.
//!
//! A version on another machine, or of another spec (any key but the
//! ones that only name or describe a run), is a step of its own: its move
//! is shown and never marked as a change of the code.

use super::version::{CellPoint, Version};
use crate::stats::apart::{self, Bounded, Side};

/// Why two consecutive versions are not compared as code.
#[derive(Debug, Clone, PartialEq)]
pub enum Boundary {
    /// The spec's measured keys differ (named).
    Spec(Vec<String>),
    /// The machine differs: (what, before, now).
    Machine(Vec<(String, String, String)>),
}

/// One cell from one version to the next.
#[derive(Debug, Clone, PartialEq)]
pub struct CellStep {
    pub label: String,
    /// Where every fork of this version lies from every fork of the one
    /// before, when all agree.
    pub side: Option<Side>,
    /// The chance of `side` being set with nothing changed.
    pub by_chance: f64,
    /// Forks before and now.
    pub forks: (usize, usize),
    /// Median D now − before, ns.
    pub change_ns: Bounded,
    /// The change of (median D − d) in points of each version's baseline
    /// median: the rule's scale.
    pub change_relative: Option<Bounded>,
    /// The rule marks a change: apart, by chance at most 1 − confidence,
    /// same machine and spec.
    pub marked: bool,
}

/// A version against the one before it.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub boundaries: Vec<Boundary>,
    pub cells: Vec<CellStep>,
}

impl Step {
    pub fn marked(&self) -> bool {
        self.cells.iter().any(|c| c.marked)
    }
}

/// The values the rule compares for one cell: relative when every fork of
/// both versions has a baseline median above 0.
fn rule_values(before: &CellPoint, now: &CellPoint) -> (Vec<f64>, Vec<f64>) {
    let relative = before
        .forks
        .iter()
        .chain(&now.forks)
        .all(|f| f.baseline_ns > 0.0);
    let values = |c: &CellPoint| {
        let d = c.delay_ns as f64;
        c.forks
            .iter()
            .map(|f| {
                if relative {
                    (f.median_ns - d) / f.baseline_ns
                } else {
                    f.median_ns - d
                }
            })
            .collect::<Vec<f64>>()
    };
    (values(before), values(now))
}

/// A cell's effect less its injected delay, as a share of its baseline
/// median: the scale of the rule, for the size of a change.
fn arms_share(c: &CellPoint) -> Option<Bounded> {
    let (b, d) = (c.baseline_ns, c.delay_ns as f64);
    (b > 0.0).then(|| Bounded {
        estimate: (c.effect.estimate - d) / b,
        lo: (c.effect.lo - d) / b,
        hi: (c.effect.hi - d) / b,
    })
}

fn cell_step(before: &CellPoint, now: &CellPoint, alpha: f64, comparable: bool) -> CellStep {
    let (b, n) = rule_values(before, now);
    let side = apart::apart(&b, &n).ok().flatten();
    let by_chance = apart::apart_by_chance(b.len(), n.len());
    CellStep {
        label: now.label.clone(),
        side,
        by_chance,
        forks: (b.len(), n.len()),
        change_ns: apart::difference(before.effect, now.effect),
        change_relative: arms_share(before)
            .zip(arms_share(now))
            .map(|(x, y)| apart::difference(x, y)),
        marked: comparable && side.is_some() && by_chance <= alpha,
    }
}

/// `now` against `before`: boundaries, and every cell both have.
pub fn step(before: &Version, now: &Version) -> Step {
    let mut boundaries = Vec::new();
    let keys = crate::run_folder::check::spec_differences(&before.experiment, &now.experiment);
    if !keys.is_empty() {
        boundaries.push(Boundary::Spec(keys));
    }
    let moved = now.machine.changes_from(&before.machine);
    if !moved.is_empty() {
        boundaries.push(Boundary::Machine(moved));
    }
    let alpha = 1.0 - now.confidence.max(before.confidence);
    let comparable = boundaries.is_empty();
    let cells = now
        .cells
        .iter()
        .filter_map(|c| {
            let b = before.cells.iter().find(|p| p.label == c.label)?;
            Some(cell_step(b, c, alpha, comparable))
        })
        .collect();
    Step { boundaries, cells }
}

/// The false marks a history's comparisons would make on average if
/// nothing had changed: the sum of the chances of those that can mark.
pub fn expected_false_marks(steps: &[&Step], alpha: f64) -> (usize, f64) {
    let able: Vec<f64> = steps
        .iter()
        .filter(|s| s.boundaries.is_empty())
        .flat_map(|s| s.cells.iter().map(|c| c.by_chance))
        .filter(|&p| p <= alpha)
        .collect();
    (able.len(), able.iter().sum())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::version::{ForkPoint, Machine};

    fn cell(label: &str, fork_d: &[f64], base: f64) -> CellPoint {
        let m = fork_d.iter().sum::<f64>() / fork_d.len() as f64;
        CellPoint {
            label: label.into(),
            delay_ns: 0,
            effect: Bounded {
                estimate: m,
                lo: m - 10.0,
                hi: m + 10.0,
            },
            relative: Some(Bounded {
                estimate: m / base,
                lo: (m - 10.0) / base,
                hi: (m + 10.0) / base,
            }),
            baseline_ns: base,
            treatment_ns: base + m,
            forks: fork_d
                .iter()
                .map(|&d| ForkPoint {
                    median_ns: d,
                    baseline_ns: base,
                    treatment_ns: base + d,
                })
                .collect(),
        }
    }

    fn version(cells: Vec<CellPoint>, host: &str, forks: u32) -> Version {
        let toml = format!(
            "[strategies.n]\nkind = \"noop\"\n[design]\nbaseline = \"n\"\ntreatment = \"n\"\nforks = {forks}\n"
        );
        let exp = crate::spec::parse_recorded("h.toml", &toml, &Default::default()).unwrap();
        Version {
            run_id: "r".into(),
            machine: Machine::named(host),
            experiment: exp,
            confidence: 0.95,
            gate: None,
            cells,
        }
    }

    #[test]
    fn a_change_is_marked_when_every_fork_moved_one_way() {
        let before = version(vec![cell("d = 0", &[-3.0, 1.0, 2.0, 0.0], 1000.0)], "a", 4);
        let after = version(
            vec![cell("d = 0", &[900.0, 950.0, 880.0, 910.0], 1000.0)],
            "a",
            4,
        );
        let s = step(&before, &after);
        assert!(s.boundaries.is_empty());
        let c = &s.cells[0];
        assert_eq!(c.side, Some(Side::Above));
        assert!((c.by_chance - 2.0 / 70.0).abs() < 1e-12);
        assert!(c.marked);
        assert!(c.change_ns.lo > 0.0);
        // Overlapping forks: no mark, however far the estimates moved.
        let mixed = version(
            vec![cell("d = 0", &[-5.0, 900.0, 950.0, 880.0], 1000.0)],
            "a",
            4,
        );
        assert!(!step(&before, &mixed).marked());
    }

    #[test]
    fn too_few_forks_mark_nothing() {
        // 3 and 3 forks: apart by chance 1 time in 10, above 5 %.
        let before = version(vec![cell("d = 0", &[0.0, 1.0, 2.0], 1000.0)], "a", 3);
        let after = version(vec![cell("d = 0", &[900.0, 950.0, 880.0], 1000.0)], "a", 3);
        let s = step(&before, &after);
        assert_eq!(s.cells[0].side, Some(Side::Above));
        assert!(!s.marked());
    }

    #[test]
    fn a_machine_or_spec_change_is_a_boundary_not_a_mark() {
        let before = version(vec![cell("d = 0", &[0.0, 1.0, 2.0, 3.0], 1000.0)], "a", 4);
        let moved = version(
            vec![cell("d = 0", &[900.0, 950.0, 880.0, 910.0], 1000.0)],
            "b",
            4,
        );
        let s = step(&before, &moved);
        assert!(matches!(&s.boundaries[..], [Boundary::Machine(w)] if w[0].0 == "host"));
        assert_eq!(s.cells[0].side, Some(Side::Above));
        assert!(!s.marked());
        let respec = version(
            vec![cell("d = 0", &[900.0, 950.0, 880.0, 910.0], 1000.0)],
            "a",
            5,
        );
        let s = step(&before, &respec);
        assert!(
            matches!(&s.boundaries[..], [Boundary::Spec(k)] if k == &["design.forks".to_string()])
        );
        assert!(!s.marked());
    }

    #[test]
    fn an_injected_delay_adds_and_does_not_scale() {
        // d = 500 in both; the baseline twice as fast in the second run:
        // D / baseline doubles, (D - d) / baseline stays near 0.
        let mut before = cell("d = 500", &[500.0, 501.0, 499.0, 500.5], 1000.0);
        let mut after = cell("d = 500", &[500.2, 499.5, 500.8, 499.9], 500.0);
        before.delay_ns = 500;
        after.delay_ns = 500;
        let s = step(
            &version(vec![before], "a", 4),
            &version(vec![after], "a", 4),
        );
        assert!(!s.marked(), "{s:?}");
    }

    #[test]
    fn a_uniformly_slower_machine_state_does_not_move_the_rule() {
        // Both arms 2x slower in the second run, the effect 10 % in both.
        let before = version(
            vec![cell("d = 0", &[100.0, 101.0, 99.0, 100.5], 1000.0)],
            "a",
            4,
        );
        let after = version(
            vec![cell("d = 0", &[200.0, 201.0, 198.0, 199.0], 2000.0)],
            "a",
            4,
        );
        assert!(!step(&before, &after).marked());
    }
}
