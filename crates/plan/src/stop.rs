//! Where the cells of a sequential design (`[design.stop]`) stopped. The
//! plan holds every cell's `max_forks` jobs; a run follows it less the jobs
//! of cells that are done, so a cell that stopped after k forks ran forks
//! 0..k (`plan::rounds` numbers them so). exec records each stop in
//! run.json (`stops`) when the cell's last fork is committed; a reader
//! derives which jobs the folder must hold from them, and the analysis
//! checks them against the data.

use super::{Job, PlanMismatch};
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

/// The interval a sequential design stops on: a run records the method
/// it stopped by (run.json `stop_method`), so that a run made under an
/// earlier rule is checked against the rule that made its stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopMethod {
    /// Student's t over the forks' log ratios (or median D, for sizes in
    /// time units) at each look, with the error rate spent over the
    /// design's looks (`stats::spending`).
    Spending,
    /// Lai's confidence sequence over the forks' median D: how runs made
    /// before the spending rule stopped.
    SequenceOnDifference,
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

/// The stops `stops` of a run whose rule is `rule` and whose experiment
/// cells are `experiment`: only with a rule, each an experiment cell once
/// (the gate's self-check cells always run all their forks), within
/// `min_forks..=max_forks` (`max` only at `max_forks`, where a rule that
/// held is recorded instead); a `finished` run has one for every
/// experiment cell. Whether the rule really held there is the analysis's
/// check, which has the data. The error is one sentence naming the key.
pub fn check(
    rule: Option<&runner_spec::StopRule>,
    stops: &[Stopped],
    experiment: &[u32],
    finished: bool,
) -> Result<(), PlanMismatch> {
    let Some(rule) = rule else {
        if stops.is_empty() {
            return Ok(());
        }
        return Err(PlanMismatch::StopsWithoutRule);
    };
    let mut seen = std::collections::BTreeSet::new();
    let (min, max) = (rule.min_forks.get(), rule.max_forks.get());
    for (i, s) in stops.iter().enumerate() {
        if !experiment.contains(&s.cell) {
            return Err(PlanMismatch::StopNotExperiment {
                index: i,
                cell: s.cell,
            });
        }
        if !seen.insert(s.cell) {
            return Err(PlanMismatch::StopRepeated {
                index: i,
                cell: s.cell,
            });
        }
        if s.forks_run < min || s.forks_run > max {
            return Err(PlanMismatch::StopOutOfRange {
                index: i,
                forks_run: s.forks_run,
                min,
                max,
            });
        }
        if s.reason == StopReason::Max && s.forks_run != max {
            return Err(PlanMismatch::StopMaxEarly {
                index: i,
                cell: s.cell,
                forks_run: s.forks_run,
                max,
            });
        }
    }
    if finished {
        if let Some(c) = experiment.iter().find(|c| !seen.contains(c)) {
            return Err(PlanMismatch::StopMissing { cell: *c });
        }
    }
    Ok(())
}

/// A sequential design's shuffled order: round r holds fork r of every
/// cell, in an order of its own, so every cell has its k-th fork before
/// any has its (k+1)-th, and a cell that stops leaves the others' order
/// as it was (the schedule a run follows is the plan less the stopped
/// cells' jobs: the same seed gives the same prefix). Fork numbers count
/// up within each cell, so a cell that stopped after k forks ran forks
/// 0..k.
pub(crate) fn rounds(jobs: Vec<Job>, rng: &mut rand_pcg::Pcg64) -> Vec<Job> {
    let mut by_round: BTreeMap<u32, Vec<Job>> = BTreeMap::new();
    for j in jobs {
        by_round.entry(j.fork).or_default().push(j);
    }
    let mut out = Vec::new();
    for (_, mut round) in by_round {
        runner_core::seed::shuffle(rng, &mut round);
        out.extend(round);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_stops_are_held_to_the_rule() {
        use std::num::NonZeroU32;
        let rule = runner_spec::StopRule {
            half_width: None,
            decide: true,
            min_forks: NonZeroU32::new(3).unwrap(),
            max_forks: NonZeroU32::new(8).unwrap(),
            max_time_s: None,
        };
        let stop = |cell, forks_run, reason| Stopped {
            cell,
            forks_run,
            reason,
        };
        let ok = [stop(0, 8, StopReason::Decided), stop(1, 8, StopReason::Max)];
        assert_eq!(check(Some(&rule), &ok, &[0, 1], true), Ok(()));
        let err = |stops: &[Stopped], finished| {
            check(Some(&rule), stops, &[0, 1], finished)
                .unwrap_err()
                .to_string()
        };
        assert!(err(&[stop(0, 2, StopReason::Decided)], false)
            .contains("outside design.stop's 3 to 8 forks"));
        assert!(err(&[stop(0, 5, StopReason::Max)], false)
            .contains("for reason `max`, but max_forks is 8"));
        assert!(err(&[stop(2, 5, StopReason::Decided)], false)
            .contains("not one of the experiment's cells"));
        assert!(err(
            &[stop(0, 5, StopReason::Time), stop(0, 5, StopReason::Time)],
            false
        )
        .contains("repeats cell 0"));
        assert!(err(&[stop(0, 5, StopReason::Time)], true).contains("no stopping point for cell 1"));
        assert_eq!(
            check(None, &ok, &[0, 1], true),
            Err(PlanMismatch::StopsWithoutRule)
        );
        assert_eq!(check(None, &[], &[0, 1], true), Ok(()));
    }

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

    fn experiment(text: &str) -> runner_spec::Experiment {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.toml");
        std::fs::write(&path, text).unwrap();
        runner_spec::load(&path, &[]).unwrap().experiment
    }

    /// A sequential design's shuffled schedule goes round by round: round
    /// r is fork r of every cell, each round in its own seeded order; the
    /// jobs are the fixed design's, and the same seed gives the same order.
    #[test]
    fn a_sequential_design_runs_its_forks_in_rounds() {
        let text = r#"
[strategies.n]
kind = "noop"
[design]
baseline = "n"
treatment = "n"
[design.stop]
decide = true
max_forks = 5
[grid]
delay_us = [0, 1, 2, 3]
"#;
        let exp = experiment(text);
        let p = crate::plan(&exp, 9, None);
        assert_eq!(p.jobs.len(), 20);
        let orders: Vec<Vec<u32>> = p
            .jobs
            .chunks(4)
            .enumerate()
            .map(|(r, round)| {
                assert!(round.iter().all(|j| j.fork == r as u32), "{round:?}");
                let mut cells: Vec<u32> = round.iter().map(|j| j.cell).collect();
                let order = cells.clone();
                cells.sort_unstable();
                assert_eq!(cells, [0, 1, 2, 3]);
                order
            })
            .collect();
        assert!(
            orders.windows(2).any(|w| w[0] != w[1]),
            "each round is shuffled: {orders:?}"
        );
        assert_eq!(crate::plan(&exp, 9, None), p);
        let mut fixed = experiment(&text.replace(
            "[design.stop]\ndecide = true\nmax_forks = 5\n",
            "forks = 5\n",
        ));
        fixed.design.stop = None;
        let mut a: Vec<Job> = crate::plan(&fixed, 9, None).jobs;
        let mut b = p.jobs.clone();
        a.sort_by_key(|j| (j.cell, j.fork));
        b.sort_by_key(|j| (j.cell, j.fork));
        assert_eq!(a, b, "the same jobs and seeds as the fixed design");
    }
}
