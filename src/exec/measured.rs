//! The forks a run holds, in memory: the ones a resumed run kept (read and
//! checked once, when it starts) and the ones it measures. The gate's
//! sizing, the stopping rule and the analysis read them from here; the
//! files under `DIR.partial/forks/` exist so that a stopped run can be
//! resumed, not to be read back by the run that wrote them.

use runner_core::error::Result;
use runner_core::record::PairRecord;
use runner_folder::partial::Partial;
use runner_folder::{ForkRecord, RunInfo};
use std::collections::BTreeMap;

/// Finished forks by (cell, fork), each with its record and its rows.
#[derive(Default)]
pub(super) struct Measured {
    forks: BTreeMap<(u32, u32), (ForkRecord, Vec<PairRecord>)>,
}

impl Measured {
    /// The forks `partial` kept from an earlier attempt, each checked
    /// against its digest, the spec and the job list.
    pub(super) fn load(partial: &Partial, info: &RunInfo) -> Result<Measured> {
        let forks = partial
            .kept(info)?
            .into_iter()
            .map(|(rec, rows)| ((rec.summary.cell, rec.summary.fork), (rec, rows)))
            .collect();
        Ok(Measured { forks })
    }

    /// A fork just committed, with the rows its worker streamed.
    pub(super) fn add(&mut self, record: ForkRecord, rows: Vec<PairRecord>) {
        let key = (record.summary.cell, record.summary.fork);
        self.forks.insert(key, (record, rows));
    }

    pub(super) fn contains(&self, cell: u32, fork: u32) -> bool {
        self.forks.contains_key(&(cell, fork))
    }

    pub(super) fn len(&self) -> usize {
        self.forks.len()
    }

    /// How many finished forks `cell` has.
    pub(super) fn forks_of(&self, cell: u32) -> u32 {
        self.forks.range((cell, 0)..=(cell, u32::MAX)).count() as u32
    }

    /// The run's time so far: its forks' `job_ns` (each from the previous
    /// fork's commit to its own), summed over this attempt and any before
    /// it; a fork recorded without one counts its worker's wall time.
    pub(super) fn run_time_ns(&self) -> u64 {
        self.forks
            .values()
            .map(|(rec, _)| rec.job_ns.unwrap_or(rec.wall_ns))
            .sum()
    }

    /// The rows of `cells`' finished forks, in (cell, fork) order.
    pub(super) fn rows_of<'a>(&'a self, cells: &'a [u32]) -> impl Iterator<Item = &'a PairRecord> {
        self.forks
            .iter()
            .filter(|((cell, _), _)| cells.contains(cell))
            .flat_map(|(_, (_, rows))| rows)
    }

    /// Every record and every row, in (cell, fork) order: pairs.csv's order.
    pub(super) fn into_parts(self) -> (Vec<ForkRecord>, Vec<PairRecord>) {
        let rows = self.forks.values().map(|(_, r)| r.len()).sum();
        let mut records = Vec::with_capacity(self.forks.len());
        let mut all = Vec::with_capacity(rows);
        for (rec, rows) in self.forks.into_values() {
            records.push(rec);
            all.extend(rows);
        }
        (records, all)
    }
}
