//! The order a run's jobs go in, and what is made ahead of them.
//!
//! The order is the plan's, less the forks already finished and, in a
//! sequential design, less the jobs of cells that stopped: a cell can stop
//! after any of its forks, so "the next job" is the next one whose cell
//! still goes on, looked up when it is needed. What is prepared ahead (the
//! next worker, started when a fork's timing ends; the `tx-rollback`
//! tables, made a fork ahead) is prepared for the job that is next at that
//! moment; when the fork then stops its own cell and that job was one of
//! its, the prepared worker is dropped (killed) and its tables with the
//! next step.

use super::protocol::JobRequest;
use super::tables::Tables;
use runner_core::error::Result;
use std::collections::BTreeSet;

/// The jobs still to run (indices into the run's requests) and the cells
/// that stopped.
pub(super) struct Queue<'a> {
    requests: &'a [JobRequest],
    stopped: BTreeSet<u32>,
}

impl<'a> Queue<'a> {
    pub(super) fn new(requests: &'a [JobRequest]) -> Queue<'a> {
        Queue {
            requests,
            stopped: BTreeSet::new(),
        }
    }

    /// The first job after `after` (from the start for `None`) whose cell
    /// goes on.
    pub(super) fn next(&self, after: Option<usize>) -> Option<usize> {
        let from = after.map_or(0, |i| i + 1);
        (from..self.requests.len()).find(|&i| !self.stopped.contains(&self.requests[i].cell))
    }

    /// `cell` receives no more forks.
    pub(super) fn stop(&mut self, cell: u32) {
        self.stopped.insert(cell);
    }

    /// How many jobs after `i` will still run.
    pub(super) fn left_after(&self, i: usize) -> usize {
        (i + 1..self.requests.len())
            .filter(|&k| self.goes_on(k))
            .count()
    }

    fn goes_on(&self, i: usize) -> bool {
        !self.stopped.contains(&self.requests[i].cell)
    }
}

/// The `tx-rollback` tables of a PostgreSQL run, made ahead of their
/// workers (`exec::tables`); nothing on other runs.
pub(super) struct Ahead {
    tables: Option<Tables>,
    made: BTreeSet<usize>,
}

impl Ahead {
    pub(super) fn open(db: Option<&runner_db::DbTarget>, requests: &[JobRequest]) -> Result<Ahead> {
        Ok(Ahead {
            tables: Tables::open(db, requests.first())?,
            made: BTreeSet::new(),
        })
    }

    /// Whether job `i`'s worker may start: its tables exist (or it needs none).
    pub(super) fn ready(&self, i: usize) -> bool {
        self.tables.is_none() || self.made.contains(&i)
    }

    /// In one transaction: drops the tables of `done` and of every job made
    /// ahead whose cell has since stopped, and makes those of `ahead` not
    /// made yet.
    pub(super) fn step(
        &mut self,
        queue: &Queue<'_>,
        done: Option<usize>,
        ahead: &[Option<usize>],
    ) -> Result<()> {
        let Some(t) = &mut self.tables else {
            return Ok(());
        };
        let gone: Vec<usize> = self
            .made
            .iter()
            .copied()
            .filter(|&k| Some(k) == done || !queue.goes_on(k))
            .collect();
        let new: Vec<usize> = ahead
            .iter()
            .flatten()
            .copied()
            .filter(|k| !self.made.contains(k))
            .collect();
        let requests = queue.requests;
        let drop: Vec<&JobRequest> = gone.iter().map(|&k| &requests[k]).collect();
        let make: Vec<&JobRequest> = new.iter().map(|&k| &requests[k]).collect();
        t.step(&drop, &make)?;
        for k in gone {
            self.made.remove(&k);
        }
        self.made.extend(new);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(cell: u32, fork: u32) -> JobRequest {
        JobRequest {
            cell,
            fork,
            seed: 1,
            delay_ns: 0,
            workload: Default::default(),
            baseline: runner_spec::StrategyKind::Noop,
            treatment: runner_spec::StrategyKind::Noop,
            baseline_name: "b".into(),
            treatment_name: "t".into(),
            shared_instance: true,
            warmup_pairs: 0,
            pairs: 1,
            ordering: runner_spec::Ordering::PairedRandom,
            pad_baseline: true,
            database: None,
            placement: runner_os::placement::Placement::None,
            claim: None,
            premade_tables: false,
            layout: None,
            temp_dir: None,
            trial: false,
            sql: Default::default(),
            count: None,
        }
    }

    #[test]
    fn stopped_cells_are_passed_over_and_counted() {
        let requests = [request(0, 0), request(1, 0), request(0, 1), request(1, 1)];
        let mut q = Queue::new(&requests);
        assert_eq!(q.next(None), Some(0));
        assert_eq!(q.next(Some(0)), Some(1));
        q.stop(0);
        assert_eq!(q.next(Some(1)), Some(3));
        assert_eq!(q.left_after(1), 1);
        q.stop(1);
        assert_eq!(q.next(Some(1)), None);
        assert_eq!(q.next(None), None);
        let ahead = Ahead {
            tables: None,
            made: BTreeSet::new(),
        };
        assert!(ahead.ready(2), "a run without tables is always ready");
    }
}
