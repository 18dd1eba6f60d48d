//! Where the cells of a sequential design (`[design.stop]`) stopped. The
//! plan holds every cell's `max_forks` jobs; a run follows it less the jobs
//! of cells that are done, so a cell that stopped after k forks ran forks
//! 0..k (`plan::rounds` numbers them so). exec records each stop in
//! run.json (`stops`) when the cell's last fork is committed; a reader
//! derives which jobs the folder must hold from them, and the analysis
//! checks them against the data.

use super::Job;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Why a cell stopped receiving forks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StopReason {
    /// Its interval reached the half-width target.
    Target,
    /// Its interval left 0 (with a gate: the gate's verdict was decided).
    Decided,
    /// It ran `max_forks`.
    Max,
    /// The run passed `max_time`.
    Time,
}

impl StopReason {
    pub fn as_str(&self) -> &'static str {
        match self {
            StopReason::Target => "target",
            StopReason::Decided => "decided",
            StopReason::Max => "max",
            StopReason::Time => "time",
        }
    }
}

impl StopReason {
    /// Why, in words, for progress lines and the report.
    pub fn describe(&self) -> &'static str {
        match self {
            StopReason::Target => "its interval reached the half-width target",
            StopReason::Decided => "its answer is decided",
            StopReason::Max => "it ran max_forks",
            StopReason::Time => "the run passed max_time",
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One cell's stopping point, as run.json records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stopped {
    pub cell: u32,
    /// Its forks 0..forks_run ran.
    pub forks_run: u32,
    pub reason: StopReason,
}

/// `jobs` less those past each stopped cell's last fork: what a run with
/// these `stops` runs (and, finished, holds), in the plan's order.
pub fn remaining(jobs: &[Job], stops: &[Stopped]) -> Vec<Job> {
    let last: BTreeMap<u32, u32> = stops.iter().map(|s| (s.cell, s.forks_run)).collect();
    jobs.iter()
        .filter(|j| last.get(&j.cell).is_none_or(|&k| j.fork < k))
        .copied()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stopped_cell_keeps_its_first_forks_and_the_order_stays() {
        let job = |cell, fork| Job {
            cell,
            fork,
            seed: u64::from(cell * 10 + fork),
        };
        let plan = [
            job(1, 0),
            job(0, 0),
            job(0, 1),
            job(1, 1),
            job(1, 2),
            job(0, 2),
        ];
        let stops = [Stopped {
            cell: 1,
            forks_run: 1,
            reason: StopReason::Decided,
        }];
        assert_eq!(
            remaining(&plan, &stops),
            [job(1, 0), job(0, 0), job(0, 1), job(0, 2)]
        );
        assert_eq!(remaining(&plan, &[]), plan);
        assert_eq!(
            serde_json::to_string(&stops[0]).unwrap(),
            r#"{"cell":1,"forks_run":1,"reason":"decided"}"#
        );
    }
}
