//! A sequential design's stops, as a run makes them (`[design.stop]`):
//! after each committed fork, its cell's rule is looked at
//! (`analysis::stop::look`, the function the analysis checks the stops
//! with); once the run's time passes `max_time`, every experiment cell
//! that has `min_forks` stops. Each stop goes into run.json (`stops`)
//! before the next fork starts, so a resume carries on from it; the jobs
//! of stopped cells are skipped.

use super::error::ExecError;
use super::measured::Measured;
use super::progress::Progress;
use runner_analysis::stop::StopInput;
use runner_analysis::{AnalysisInput, CellInfo};
use runner_core::error::Result;
use runner_folder::partial::Partial;
use runner_folder::RunInfo;
use runner_plan::stop::{StopReason, Stopped};
use std::collections::BTreeMap;

pub(super) struct Stopper {
    input: AnalysisInput,
    stop: StopInput,
    /// The experiment cells, the only ones a rule stops.
    cells: BTreeMap<u32, CellInfo>,
}

impl Stopper {
    /// The run's stopper; none for a fixed design.
    pub(super) fn new(info: &RunInfo) -> Option<Stopper> {
        let stop = runner_analysis::run::stop(info)?;
        let input = runner_analysis::run::input(info);
        let cells = input.cells.iter().map(|c| (c.cell, c.clone())).collect();
        Some(Stopper { input, stop, cells })
    }

    /// Whether `cell`'s jobs are done with (`stops` records it).
    pub(super) fn stopped(info: &RunInfo, cell: u32) -> bool {
        info.stops().iter().any(|s| s.cell == cell)
    }

    /// The stops `measured` calls for now that were not made yet: the
    /// rule (or `max_forks`) of `changed`, the cell whose fork was just
    /// committed (of every cell when `None`: a resume catching up), then,
    /// past `max_time`, every cell left with at least `min_forks`. In cell
    /// order. A cell's rule depends on its own forks alone, so looking at
    /// the one that changed is looking at all.
    pub(super) fn due(
        &self,
        info: &RunInfo,
        measured: &Measured,
        changed: Option<u32>,
    ) -> Result<Vec<Stopped>> {
        let over_time = self
            .stop
            .rule
            .max_time_s
            .is_some_and(|s| measured.run_time_ns() >= s.saturating_mul(1_000_000_000));
        let mut out = Vec::new();
        for (&cell, info_cell) in &self.cells {
            if Self::stopped(info, cell) {
                continue;
            }
            let forks_run = measured.forks_of(cell);
            if forks_run == 0 {
                continue;
            }
            let reason = if changed.is_none_or(|c| c == cell) {
                let rows: Vec<_> = measured.rows_of(&[cell]).cloned().collect();
                runner_analysis::stop::look(&self.input, &self.stop, info_cell, &rows)
                    .map_err(ExecError::StoppingRule)?
            } else {
                None
            };
            let reason = reason.or((over_time && forks_run >= self.stop.rule.min_forks.get())
                .then_some(StopReason::Time));
            if let Some(reason) = reason {
                out.push(Stopped {
                    cell,
                    forks_run,
                    reason,
                });
            }
        }
        Ok(out)
    }
}

/// The stops `stopper` finds due after a fork of `changed` (of every cell
/// for `None`), recorded in run.json before anything else runs; returns
/// the cells that stopped.
pub(super) fn record_stops(
    stopper: &Stopper,
    info: &mut RunInfo,
    partial: &Partial,
    measured: &Measured,
    changed: Option<u32>,
    progress: &Progress,
) -> Result<Vec<u32>> {
    let due = stopper.due(info, measured, changed)?;
    if due.is_empty() {
        return Ok(Vec::new());
    }
    let single = info.cells().len() == 1;
    for s in &due {
        progress.println(&format!(
            "{}stops after {} fork{}: {}",
            if single {
                String::new()
            } else {
                format!("cell {} ", s.cell)
            },
            s.forks_run,
            if s.forks_run == 1 { "" } else { "s" },
            s.reason.describe()
        ));
    }
    info.record_stops(due.iter().copied());
    partial.write_run_info(info)?;
    Ok(due.iter().map(|s| s.cell).collect())
}
