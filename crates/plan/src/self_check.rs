//! The gate's self-check cells (docs/guide/gate.md). For every group of
//! experiment cells (cells that differ only in their delay, and for several
//! variants in nothing else: they share one baseline), the baseline runs
//! against itself twice more: at d = 0 (`GateNull`: whatever the rule flags
//! there is a false alarm) and at half the threshold (`GateWithin`: a
//! slowdown within the budget, so what the rule flags is a false block).
//! Both test whether a fork's interval is valid; the gate's power is not
//! measured by a cell but computed from the deciding interval itself
//! (`stats::gate::interval_power`), so there is no cell at twice the
//! threshold any more.
//!
//! The self-check is small on purpose: each of its cells runs a quarter of
//! the forks of its group's experiment cells (rounded up, at most
//! `design.forks`), so the two together add at most about half of the
//! comparison's forks ([`forks_of`]).
//!
//! A duration threshold sizes the injected cell from the spec, so every
//! cell runs in one shuffled schedule. A percentage threshold needs the
//! baseline's median first: the 0.5x cells run in a second phase, sized
//! from the experiment cells of the first (`analysis::gate::sizing`), and
//! the sizing is recorded in run.json (`gate_sizing`) so the plan can be
//! derived again.

use super::{number, Cell, PlanMismatch, Role};
use runner_spec::{Experiment, MaxSlowdown};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What the cells of one gate group share: every grid value but the delay
/// and the variant (all variants are measured against one baseline, so
/// one self-check serves them all).
pub fn group_params(params: &Map<String, Value>) -> Map<String, Value> {
    let mut out = super::group_params(params);
    out.remove(super::TREATMENT_KEY);
    out
}

/// The experiment cells grouped by their non-delay params, in order of
/// first appearance: (shared params, cell numbers).
pub fn groups(cells: &[Cell]) -> Vec<(Map<String, Value>, Vec<u32>)> {
    let mut out: Vec<(Map<String, Value>, Vec<u32>)> = Vec::new();
    for c in cells.iter().filter(|c| c.role.is_experiment()) {
        let key = group_params(&c.params);
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(c.cell),
            None => out.push((key, vec![c.cell])),
        }
    }
    out
}

/// The injected delay of a 2x cell: twice the threshold, in whole ns, but
/// never past runner's largest delay (1 s, `spec::limits::MAX_DELAY_NS`):
/// a duration threshold is refused above half of it at validation, but a
/// percentage of a slow baseline (1000 % of 60 ms) would otherwise inject
/// 1.2 s per run. A capped self-check measures power at a smaller
/// slowdown, so it can only understate it (the gate leans to
/// inconclusive, never to a false pass).
pub fn power_delay_ns(threshold_ns: f64) -> u64 {
    ((2.0 * threshold_ns).round() as u64).min(runner_spec::limits::MAX_DELAY_NS)
}

/// The injected delay of a 0.5x cell: half the threshold, in whole ns.
pub fn within_delay_ns(threshold_ns: f64) -> u64 {
    (0.5 * threshold_ns).round() as u64
}

/// Whether [`power_delay_ns`] capped the 2x cell of `threshold_ns`.
pub fn power_delay_capped(threshold_ns: f64) -> bool {
    (2.0 * threshold_ns).round() as u64 > runner_spec::limits::MAX_DELAY_NS
}

/// The self-check cells that follow `experiment` (numbered after them):
/// every group's d = 0 cell, then every group's 0.5x cell whose delay is
/// known (a duration threshold, or a percentage once `sizing` is given).
pub fn self_check(exp: &Experiment, experiment: &[Cell], sizing: Option<&GateSizing>) -> Vec<Cell> {
    let Some(gate) = exp.gate.filter(|g| g.self_check) else {
        return Vec::new();
    };
    let groups = groups(experiment);
    let mut out: Vec<Cell> = Vec::new();
    let mut push = |group: usize, role: Role, delay_ns: u64| {
        let (shared, members) = &groups[group];
        let mut params = Map::new();
        params.insert("delay_us".into(), number(delay_ns as f64 / 1000.0));
        params.extend(shared.clone());
        out.push(Cell {
            cell: (experiment.len() + out.len()) as u32,
            delay_ns,
            workload: experiment[members[0] as usize].workload,
            params,
            role,
            treatment: None,
        });
    };
    for g in 0..groups.len() {
        push(g, Role::GateNull, 0);
    }
    let threshold = |g: usize| match (gate.max_slowdown, sizing) {
        (MaxSlowdown::Ns(ns), _) => Some(ns as f64),
        (MaxSlowdown::Percent(_), Some(s)) => s.groups.get(g).map(|s| s.threshold_ns),
        (MaxSlowdown::Percent(_), None) => None,
    };
    if gate.within_check {
        for g in 0..groups.len() {
            if let Some(t) = threshold(g) {
                push(g, Role::GateWithin, within_delay_ns(t));
            }
        }
    }
    out
}

/// The forks a cell runs: `design.forks` for an experiment cell; for a
/// self-check cell a quarter of its group's experiment forks (the group's
/// cells x `design.forks`), rounded up, at least 1 and at most
/// `design.forks`. Two such cells add at most about half of the
/// comparison's forks: the self-check tests whether a fork's interval is
/// valid, which a sample of forks shows, instead of repeating the
/// comparison three times over.
pub fn forks_of(exp: &Experiment, experiment: &[Cell], cell: &Cell) -> u32 {
    let forks = exp.design.forks.get();
    if cell.role.is_experiment() {
        return forks;
    }
    let key = group_params(&cell.params);
    let members = experiment
        .iter()
        .filter(|c| c.role.is_experiment() && group_params(&c.params) == key)
        .count()
        .max(1) as u64;
    let quarter = (u64::from(forks) * members).div_ceil(4);
    quarter.clamp(1, u64::from(forks)) as u32
}

/// The jobs (cell x fork) of `cells`, each cell with its [`forks_of`].
pub fn job_count(exp: &Experiment, cells: &[Cell]) -> u64 {
    cells
        .iter()
        .map(|c| u64::from(forks_of(exp, cells, c)))
        .sum()
}

/// 1 for the 0.5x cells of a percentage threshold (sized from phase 0),
/// 0 for every other cell.
pub fn phase(exp: &Experiment, cell: &Cell) -> u32 {
    let percent = matches!(
        exp.gate.map(|g| g.max_slowdown),
        Some(MaxSlowdown::Percent(_))
    );
    u32::from(percent && matches!(cell.role, Role::GatePower | Role::GateWithin))
}

/// Whether the run must size its 0.5x cells before it can finish: a
/// self-checking gate on time with a percentage threshold and no sizing
/// yet (a gate on instructions has no 0.5x cell: a delay is time).
pub fn needs_sizing(exp: &Experiment, sizing: Option<&GateSizing>) -> bool {
    sizing.is_none()
        && exp.gate.is_some_and(|g| {
            g.self_check
                && g.metric == runner_spec::Metric::Time
                && matches!(g.max_slowdown, MaxSlowdown::Percent(_))
        })
}

/// Each group's threshold (and twice it, as sizings have always recorded).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateSizing {
    pub groups: Vec<GroupSizing>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupSizing {
    /// The group's experiment cells.
    pub cells: Vec<u32>,
    /// Pooled median of their measured baseline runs.
    pub baseline_median_ns: f64,
    /// `max_slowdown` of that median.
    pub threshold_ns: f64,
    /// Twice the threshold, in whole ns, at most 1 s (`power_delay_ns`):
    /// the delay a cell at twice the threshold would inject. Kept so a
    /// sizing reads and checks as before; the 0.5x cell injects half the
    /// threshold.
    pub delay_ns: u64,
}

/// The sizing `check` assumes for its time estimate, before anything ran:
/// each group's baseline median is the per-run cost `run_ns` guesses for
/// its first cell. `None` unless the run must size a percentage gate.
pub fn estimate(
    exp: &Experiment,
    cells: &[Cell],
    run_ns: impl Fn(&Cell) -> u64,
) -> Option<GateSizing> {
    if !needs_sizing(exp, None) {
        return None;
    }
    let max = exp.gate?.max_slowdown;
    let groups = groups(cells)
        .into_iter()
        .map(|(_, members)| {
            let median = run_ns(&cells[members[0] as usize]) as f64;
            let threshold_ns = max.ns_for(median);
            GroupSizing {
                cells: members,
                baseline_median_ns: median,
                threshold_ns,
                delay_ns: power_delay_ns(threshold_ns),
            }
        })
        .collect();
    Some(GateSizing { groups })
}

/// A recorded sizing agrees with the spec: one entry per group of
/// experiment cells, each threshold the spec's share of its median, each
/// delay twice the threshold. The message names the key.
pub fn check(
    exp: &Experiment,
    cells: &[Cell],
    sizing: Option<&GateSizing>,
) -> Result<(), PlanMismatch> {
    let gate = exp.gate.filter(|g| g.self_check);
    let Some(sizing) = sizing else {
        return Ok(());
    };
    let Some(MaxSlowdown::Percent(_)) = gate.map(|g| g.max_slowdown) else {
        return Err(PlanMismatch::SizingWithoutGate);
    };
    let max = gate.expect("checked above").max_slowdown;
    let groups = groups(cells);
    if groups.len() != sizing.groups.len() {
        return Err(PlanMismatch::SizingGroupCount {
            recorded: sizing.groups.len(),
            expected: groups.len(),
        });
    }
    for (i, ((_, members), s)) in groups.iter().zip(&sizing.groups).enumerate() {
        if *members != s.cells {
            return Err(PlanMismatch::SizingCells {
                group: i,
                recorded: s.cells.clone(),
                expected: members.clone(),
            });
        }
        if s.threshold_ns != max.ns_for(s.baseline_median_ns) {
            return Err(PlanMismatch::SizingThreshold {
                group: i,
                recorded: s.threshold_ns,
                max,
                median_ns: s.baseline_median_ns,
                expected: max.ns_for(s.baseline_median_ns),
            });
        }
        if s.delay_ns != power_delay_ns(s.threshold_ns) {
            return Err(PlanMismatch::SizingDelay {
                group: i,
                recorded: s.delay_ns,
                expected: power_delay_ns(s.threshold_ns),
            });
        }
    }
    Ok(())
}
