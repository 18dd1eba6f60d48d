//! The messages parent and worker exchange: one job as JSON on the worker's
//! stdin, then one JSON message per line on its stdout. Both sides use these
//! types, so the protocol cannot drift.

use crate::db::DbTarget;
use crate::record::PairRecord;
use crate::spec::{Ordering, StrategyKind, WorkloadParams};
use serde::{Deserialize, Serialize};

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
}

/// What a worker says, one per line.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WorkerMessage {
    /// The pre-timing checks passed; timing starts now.
    Checked(CheckReport),
    Pair(PairRecord),
    Done(ForkSummary),
    /// The worker hit an error it could describe; it exits 1 after this.
    Failed {
        message: String,
    },
}

/// The agreement checks run before any timing (design section 3).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CheckReport {
    /// Baseline and treatment returned the identical result on one input
    /// (`None` when one side computes no preview, e.g. spin or noop).
    pub arms_agree: Option<bool>,
    /// Every arm that computes the preview returned the identical result as
    /// the in-memory calculator on the same input (`None`: no arm computes it).
    #[serde(default)]
    pub matches_in_memory: Option<bool>,
    /// Each strategy returned the identical result when run twice.
    pub repeatable: bool,
    /// Content hash of the seeded table, for strategies with a database.
    pub seeded_hash: Option<String>,
}

/// A finished fork.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ForkSummary {
    pub cell: u32,
    pub fork: u32,
    /// Fold of every measured and warm-up result, per arm, in pair order.
    pub checksum_baseline: String,
    pub checksum_treatment: String,
    pub seeded_hash: Option<String>,
    /// Content hash after the last preview; must equal `seeded_hash`.
    pub final_hash: Option<String>,
    /// From the first timed run to the last.
    pub timed_ns: u64,
    /// The fork's pairs carry per-run CPU time and peak RSS (a `command`
    /// arm), so `pairs.csv` gets the usage columns.
    #[serde(default)]
    pub resource_usage: bool,
}
