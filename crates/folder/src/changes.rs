//! The ways a run's record changes while its run goes on, each named for
//! what happened. exec records through these; [`crate::partial::Partial`]
//! writes the record after each, through the one writer and its check.

use crate::{ForkRecord, RunInfo};
use runner_plan::runs::Costs;
use runner_plan::self_check::GateSizing;
use runner_plan::stop::Stopped;

impl RunInfo {
    /// A resumed run is made by this build too (see [`crate::BuildInfo::add`]).
    pub fn record_resumed_by(&mut self, build: crate::BuildInfo) {
        self.build.add(build);
    }

    /// The database the strategies use, once it is prepared (a resume
    /// checks it runs on the same one).
    pub fn record_database(&mut self, database: Option<serde_json::Value>) {
        self.database = database;
    }

    /// A percentage gate's self-check cells, sized from the first phase:
    /// the cells and jobs they add are planned at once.
    pub fn record_gate_sizing(&mut self, sizing: GateSizing) {
        self.gate_sizing = Some(sizing);
        self.replan();
    }

    /// The counts of a fork's pairs the file left to the trial runs,
    /// chosen from `costs`; whether the design changed.
    pub fn record_runs_chosen(&mut self, costs: Costs, jobs: u64) -> bool {
        runner_plan::runs::apply(&mut self.spec.experiment.design, costs, jobs)
    }

    /// Cells of a sequential design that stopped after their last fork.
    pub fn record_stops(&mut self, stops: impl IntoIterator<Item = Stopped>) {
        self.stops.extend(stops);
    }

    /// Every fork finished: their records, the digest of the pairs.csv they
    /// make, the load after the run, and the time it finished.
    pub fn finish(&mut self, forks: Vec<ForkRecord>, pairs_sha256: String, load_after: [f64; 3]) {
        self.forks = forks;
        self.environment.load_after = Some(load_after);
        self.pairs_sha256 = Some(pairs_sha256);
        self.finished_at = Some(crate::assemble::now_rfc3339());
    }
}
