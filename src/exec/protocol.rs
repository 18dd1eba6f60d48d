//! The messages parent and worker exchange: one job as JSON on the worker's
//! stdin, then one JSON message per line on its stdout; after its checks
//! the worker waits for a second stdin line, [`GO`], before it times
//! anything. Both sides use these types, so the protocol cannot drift.

use runner_core::record::PairRecord;
use runner_db::DbTarget;
use runner_spec::{Ordering, StrategyKind, WorkloadParams};
use serde::{Deserialize, Serialize};

/// The parent's word that the worker may start timing: everything else of
/// runner's (the previous fork's worker, its backends, the parent's
/// bookkeeping) has stopped.
pub(crate) const GO: &str = "go";

/// Everything a worker needs; it reads nothing else (no spec, no files).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct JobRequest {
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
    pub placement: runner_os::placement::Placement,
    /// The CPUs the parent locked for it (`placement::lock`); none: the
    /// worker places itself by `placement` alone (trial runs).
    #[serde(default)]
    pub claim: Option<runner_os::placement::Claim>,
    /// The parent made and seeded this job's `tx-rollback` tables on
    /// PostgreSQL before the fork (`exec::tables`); false: each instance
    /// makes its own.
    #[serde(default)]
    pub premade_tables: bool,
    /// The fork's memory layout; none under `layout = "system"`. The
    /// parent has already applied its padding and personality.
    #[serde(default)]
    pub layout: Option<runner_os::memory_layout::LayoutPlan>,
    /// The parent's private temporary folder (`temp`), where the worker
    /// puts its scratch folders; the parent removes it however the run ends.
    #[serde(default)]
    pub temp_dir: Option<std::path::PathBuf>,
    /// A trial job (`check`, exec's estimate): after the checks and the go,
    /// the worker times a few runs of each arm instead of the pairs, and
    /// reports them in a [`WorkerMessage::Trial`].
    #[serde(default)]
    pub trial: bool,
    /// `[database]` options of `sql` arms: private copies, explain.
    #[serde(default)]
    pub sql: runner_db::SqlOptions,
    /// The run counts instructions (`design.measure`); none: it times alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<CountJob>,
}

/// How a fork counts: with what, and which of its pairs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct CountJob {
    pub with: crate::strategy::CountWith,
    /// The warm-up and measured pairs are timed, and `pairs` counted pairs
    /// follow them; false: the warm-up and measured pairs are counted.
    pub timed: bool,
    pub pairs: u32,
}

/// A trial job's timings: each instance's median run (ns) after one run
/// that is not counted, and how many runs that median is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TrialReport {
    pub baseline_ns: u64,
    /// None: one instance serves both arms (A/A), timed once.
    pub treatment_ns: Option<u64>,
    pub runs: u32,
    /// The fork's own set-up, untimed by a run: the arms built (a
    /// connection, `setup`, private copies, a command's `setup`) and the
    /// agreement check; part of every fork's wall time.
    #[serde(default)]
    pub setup_ns: u64,
    /// Each instance's median whole run as a fork makes it: the timed
    /// region and what surrounds it untimed (`prepare`, building and
    /// reaping a command's process), which is what a fork's time is made
    /// of; `treatment_cycle_ns` is none where `treatment_ns` is.
    #[serde(default)]
    pub baseline_cycle_ns: u64,
    #[serde(default)]
    pub treatment_cycle_ns: Option<u64>,
    /// A run that counts (`design.measure`): one counted run of each
    /// instance, whole, under valgrind, what each counted run of a fork
    /// costs; none when it does not count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_counted_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub treatment_counted_ns: Option<u64>,
}

/// What a worker says, one per line.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum WorkerMessage {
    /// The pre-timing checks passed; timing starts at the parent's [`GO`].
    Checked(CheckReport),
    Pair(PairRecord),
    Done(ForkSummary),
    /// A trial job's timings, before its `Done`.
    Trial(TrialReport),
    /// A database server process the worker connected to, said as soon as
    /// it is connected and before any of the user's SQL runs on it, so the
    /// parent can cancel what it runs if the fork has to be stopped.
    Backend {
        pid: u32,
    },
    /// The worker hit an error it could describe; it exits 1 after this.
    Failed {
        message: String,
        /// The arms' outputs differ (`strategy::agreement::Disagreement`):
        /// the experiment file must change; running again cannot help.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        disagreement: bool,
    },
}

// The checks and the summary are recorded in run.json, so they are defined
// beside it (`run_folder` must not import `exec`); both sides use them here.
pub(crate) use runner_folder::{CheckReport, ForkSummary};
