//! The messages parent and worker exchange: one job as JSON on the worker's
//! stdin, then one JSON message per line on its stdout; after its checks
//! the worker waits for a second stdin line, [`GO`], before it times
//! anything. Both sides use these types, so the protocol cannot drift.

use crate::db::DbTarget;
use crate::record::PairRecord;
use crate::spec::{Ordering, StrategyKind, WorkloadParams};
use serde::{Deserialize, Serialize};

/// The parent's word that the worker may start timing: everything else of
/// runner's (the previous fork's worker, its backends, the parent's
/// bookkeeping) has stopped.
pub const GO: &str = "go";

/// Everything a worker needs; it reads nothing else (no spec, no files).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobRequest {
    pub cell: u32,
    pub fork: u32,
    pub seed: u64,
    pub delay_ns: u64,
    pub workload: WorkloadParams,
    /// The arms' strategies as they run in this cell: swept keys applied,
    /// grid placeholders filled (`plan::bind`).
    pub baseline: StrategyKind,
    pub treatment: StrategyKind,
    /// Their names in the experiment file, for messages.
    pub baseline_name: String,
    pub treatment_name: String,
    /// Baseline and treatment name the same strategy: one instance serves both.
    pub shared_instance: bool,
    pub warmup_pairs: u32,
    pub pairs: u32,
    pub ordering: Ordering,
    pub pad_baseline: bool,
    pub database: Option<DbTarget>,
    /// Where the worker pins itself and its database backend.
    pub placement: crate::placement::Placement,
    /// The parent made and seeded this job's `tx-rollback` tables on
    /// PostgreSQL before the fork (`exec::tables`); false: each instance
    /// makes its own.
    #[serde(default)]
    pub premade_tables: bool,
    /// The fork's memory layout; none under `layout = "system"`. The
    /// parent has already applied its padding and personality.
    #[serde(default)]
    pub layout: Option<crate::layout::LayoutPlan>,
}

/// What a worker says, one per line.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WorkerMessage {
    /// The pre-timing checks passed; timing starts at the parent's [`GO`].
    Checked(CheckReport),
    Pair(PairRecord),
    Done(ForkSummary),
    /// The worker hit an error it could describe; it exits 1 after this.
    Failed {
        message: String,
    },
}

// The checks and the summary are recorded in run.json, so they are defined
// beside it (`run_folder` must not import `exec`); both sides use them here.
pub use crate::run_folder::{CheckReport, ForkSummary};
