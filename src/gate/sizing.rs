//! Sizing the 2x self-check cells of a percentage threshold: the
//! threshold is a share of the baseline's median run, which only the run
//! itself can measure. Once every first-phase fork has finished, each
//! group's threshold is taken from the pooled median of the measured
//! baseline runs of its experiment cells (the same median the report shows
//! as the baseline's), and its 2x cell is planned with twice that.
//!
//! The sizing is recorded in run.json (`gate_sizing`); a reader checks it
//! twice: against the spec here ([`check`]: groups, threshold, delay), and
//! against the data in the analysis (the baseline median of the rows).

use super::cells::{groups, power_delay_ns};
use crate::analysis::gate::baseline_median;
use crate::plan::Cell;
use crate::record::PairRecord;
use crate::spec::{Experiment, MaxSlowdown};
use serde::{Deserialize, Serialize};

/// Each group's threshold and the delay of its 2x cell.
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
    /// The 2x cell's injected delay: twice the threshold, in whole ns.
    pub delay_ns: u64,
}

/// The sizing of a percentage gate from the first phase's rows (those of
/// the experiment cells at least). `None` without a percentage gate.
pub fn size(exp: &Experiment, cells: &[Cell], rows: &[PairRecord]) -> Result<GateSizing, String> {
    let Some(MaxSlowdown::Percent(_)) = exp.gate.map(|g| g.max_slowdown) else {
        return Err("only a percentage threshold is sized from the run".into());
    };
    let max = exp.gate.expect("a gate").max_slowdown;
    groups(cells)
        .into_iter()
        .map(|(_, members)| {
            let median = baseline_median(rows, &members).ok_or_else(|| {
                format!("cells {members:?} have no measured baseline runs to size the gate from")
            })?;
            let threshold_ns = max.threshold_ns(median);
            Ok(GroupSizing {
                cells: members,
                baseline_median_ns: median,
                threshold_ns,
                delay_ns: power_delay_ns(threshold_ns),
            })
        })
        .collect::<Result<Vec<_>, String>>()
        .map(|groups| GateSizing { groups })
}

/// A recorded sizing agrees with the spec: one entry per group of
/// experiment cells, each threshold the spec's share of its median, each
/// delay twice the threshold. The message names the key.
pub fn check(exp: &Experiment, cells: &[Cell], sizing: Option<&GateSizing>) -> Result<(), String> {
    let gate = exp.gate.filter(|g| g.self_check);
    let Some(sizing) = sizing else {
        return Ok(());
    };
    let Some(MaxSlowdown::Percent(_)) = gate.map(|g| g.max_slowdown) else {
        return Err("gate_sizing is recorded, but the spec has no self-checking gate with a percentage threshold".into());
    };
    let max = gate.expect("checked above").max_slowdown;
    let groups = groups(cells);
    if groups.len() != sizing.groups.len() {
        return Err(format!(
            "gate_sizing has {} groups, but the spec's cells form {}",
            sizing.groups.len(),
            groups.len()
        ));
    }
    for (i, ((_, members), s)) in groups.iter().zip(&sizing.groups).enumerate() {
        if *members != s.cells {
            return Err(format!(
                "gate_sizing.groups[{i}].cells is {:?}, but the group's cells are {members:?}",
                s.cells
            ));
        }
        if s.threshold_ns != max.threshold_ns(s.baseline_median_ns) {
            return Err(format!(
                "gate_sizing.groups[{i}].threshold_ns is {}, but {max} of its baseline median {} is {}",
                s.threshold_ns,
                s.baseline_median_ns,
                max.threshold_ns(s.baseline_median_ns)
            ));
        }
        if s.delay_ns != power_delay_ns(s.threshold_ns) {
            return Err(format!(
                "gate_sizing.groups[{i}].delay_ns is {}, but twice its threshold is {}",
                s.delay_ns,
                power_delay_ns(s.threshold_ns)
            ));
        }
    }
    Ok(())
}
