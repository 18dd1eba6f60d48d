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
    /// The 2x cell's injected delay: twice the threshold, in whole ns, at
    /// most 1 s (`cells::power_delay_ns`).
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

/// The sizing `check` assumes for its time estimate, before anything ran:
/// each group's baseline median is the per-run cost `run_ns` guesses for
/// its first cell. `None` unless the run must size a percentage gate.
pub fn estimate(
    exp: &Experiment,
    cells: &[Cell],
    run_ns: impl Fn(&Cell) -> u64,
) -> Option<GateSizing> {
    if !super::cells::needs_sizing(exp, None) {
        return None;
    }
    let max = exp.gate?.max_slowdown;
    let groups = groups(cells)
        .into_iter()
        .map(|(_, members)| {
            let median = run_ns(&cells[members[0] as usize]) as f64;
            let threshold_ns = max.threshold_ns(median);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Arm, Phase};

    fn experiment(text: &str) -> Experiment {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.toml");
        std::fs::write(&path, text).unwrap();
        crate::spec::load(&path, &[]).unwrap().experiment
    }

    const SLOW_SPIN: &str = r#"
name = "cap"
seed = 1
[strategies.spin]
kind = "spin"
duration_us = 60000
[design]
baseline = "spin"
treatment = "spin"
forks = 2
warmup_pairs = 2
pairs = 10
[gate]
max_slowdown = "1000%"
"#;

    fn row(cell: u32, baseline_ns: u64) -> PairRecord {
        PairRecord {
            cell,
            fork: 0,
            phase: Phase::Measure,
            pair: 0,
            first: Arm::Baseline,
            baseline_ns,
            treatment_ns: baseline_ns,
            delay_ns: 0,
            spin_ns: 0,
            baseline_at_ns: 0,
            treatment_at_ns: 0,
            usage: Default::default(),
        }
    }

    /// Item 11, on the numbers the red team recorded: 1000 % of a 60 ms
    /// baseline is a 600 ms threshold, whose 2x cell would inject 1.2 s;
    /// it injects runner's largest delay, 1 s, and the recorded sizing
    /// checks out against the spec.
    #[test]
    fn a_percentage_of_a_slow_baseline_injects_at_most_one_second() {
        let exp = experiment(SLOW_SPIN);
        let cells = crate::plan::cells(&exp);
        let rows: Vec<PairRecord> = [59_900_000, 60_000_000, 60_100_000]
            .into_iter()
            .map(|ns| row(0, ns))
            .collect();
        let s = size(&exp, &cells, &rows).unwrap();
        assert_eq!(s.groups[0].baseline_median_ns, 60_000_000.0);
        assert_eq!(s.groups[0].threshold_ns, 600_000_000.0);
        assert_eq!(s.groups[0].delay_ns, crate::spec::limits::MAX_DELAY_NS);
        check(&exp, &cells, Some(&s)).unwrap();
        let all = crate::plan::all_cells(&exp, Some(&s));
        assert!(all.iter().all(|c| c.delay_ns <= 1_000_000_000));
        // A recorded 1.2 s (what runner injected before) is refused.
        let mut over = s.clone();
        over.groups[0].delay_ns = 1_200_000_000;
        let e = check(&exp, &cells, Some(&over)).unwrap_err();
        assert!(e.contains("delay_ns is 1200000000"), "{e}");
        // Below the cap: twice the threshold, exactly.
        let fast: Vec<PairRecord> = [1_000_000].into_iter().map(|ns| row(0, ns)).collect();
        assert_eq!(
            size(&exp, &cells, &fast).unwrap().groups[0].delay_ns,
            20_000_000
        );
    }

    /// `check` sizes the 2x cells from its per-run guess, so its estimate
    /// counts them, at the capped delay.
    #[test]
    fn checks_estimate_counts_the_capped_2x_cells() {
        let exp = experiment(SLOW_SPIN);
        let cells = crate::plan::cells(&exp);
        let s = estimate(&exp, &cells, |c| {
            crate::plan::estimate_run_ns(&exp, c, "spin", false)
        })
        .unwrap();
        assert_eq!(s.groups[0].delay_ns, 1_000_000_000);
        let all = crate::plan::all_cells(&exp, Some(&s));
        let total: u64 = all
            .iter()
            .map(|c| crate::plan::estimate_job_ns(&exp, c, false) * 2)
            .sum();
        // 2 forks x 12 pairs x (2 x 60 ms + 2 x 1 s padded) for the 2x cell
        // alone: about 51 s; the d = 0 cells add about 6 s.
        assert!((50e9..65e9).contains(&(total as f64)), "{total}");
    }
}
