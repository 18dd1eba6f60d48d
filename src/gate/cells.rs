//! The gate's self-check cells (design section 2). For every group of
//! experiment cells (cells that differ only in their delay, as the headline
//! groups them), the baseline runs against itself twice more: at d = 0
//! (`GateNull`: whatever the rule flags there is a false alarm) and at twice
//! the threshold (`GatePower`: what the rule flags there is its power).
//!
//! A duration threshold sizes the 2x cell from the spec, so every cell runs
//! in one shuffled schedule. A percentage threshold needs the baseline's
//! median first: the 2x cells run in a second phase, sized from the
//! experiment cells of the first ([`super::sizing`]), and the sizing is
//! recorded in run.json (`gate_sizing`) so the plan can be derived again.

use super::GateSizing;
use crate::plan::{number, Cell, Role};
use crate::spec::{Experiment, MaxSlowdown};
use serde_json::{Map, Value};

/// The grid values of a cell without its delay: what its group shares.
pub fn group_params(params: &Map<String, Value>) -> Map<String, Value> {
    params
        .iter()
        .filter(|(k, _)| !k.starts_with("delay"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
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
    ((2.0 * threshold_ns).round() as u64).min(crate::spec::limits::MAX_DELAY_NS)
}

/// Whether [`power_delay_ns`] capped the 2x cell of `threshold_ns`.
pub fn power_delay_capped(threshold_ns: f64) -> bool {
    (2.0 * threshold_ns).round() as u64 > crate::spec::limits::MAX_DELAY_NS
}

/// The self-check cells that follow `experiment` (numbered after them):
/// every group's d = 0 cell, then every group's 2x cell whose delay is
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
        });
    };
    for g in 0..groups.len() {
        push(g, Role::GateNull, 0);
    }
    for g in 0..groups.len() {
        let delay = match (gate.max_slowdown, sizing) {
            (MaxSlowdown::Ns(ns), _) => Some(power_delay_ns(ns as f64)),
            (MaxSlowdown::Percent(_), Some(s)) => s.groups.get(g).map(|s| s.delay_ns),
            (MaxSlowdown::Percent(_), None) => None,
        };
        if let Some(d) = delay {
            push(g, Role::GatePower, d);
        }
    }
    out
}

/// 1 for the 2x cells of a percentage threshold (sized from phase 0), 0
/// for every other cell.
pub fn phase(exp: &Experiment, cell: &Cell) -> u32 {
    let percent = matches!(
        exp.gate.map(|g| g.max_slowdown),
        Some(MaxSlowdown::Percent(_))
    );
    u32::from(percent && cell.role == Role::GatePower)
}

/// Whether the run must size its 2x cells before it can finish: a
/// self-checking gate with a percentage threshold and no sizing yet.
pub fn needs_sizing(exp: &Experiment, sizing: Option<&GateSizing>) -> bool {
    sizing.is_none()
        && exp
            .gate
            .is_some_and(|g| g.self_check && matches!(g.max_slowdown, MaxSlowdown::Percent(_)))
}
