//! What one finished fork leaves in `run.json`: the worker's own summary and
//! checks (sent over the protocol, defined here so `run_folder` sits below
//! `exec`), and what the parent adds: wall time and the digest of its rows.

use runner_core::record::{Arm, Phase};
use serde::{Deserialize, Serialize};

/// The agreement checks run before any timing (docs/guide/how-a-run-works.md).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CheckReport {
    /// Baseline and treatment returned the identical result on one input
    /// (`None` when one side computes no preview, e.g. spin or noop).
    pub arms_agree: Option<bool>,
    /// Every arm that computes the preview returned the identical result as
    /// the in-memory calculator on the same input (`None`: no arm computes it).
    pub matches_in_memory: Option<bool>,
    /// Each strategy returned the identical result when run twice.
    pub repeatable: bool,
    /// Content hash of the seeded table, for strategies with a database.
    pub seeded_hash: Option<String>,
}

/// A finished fork, as the worker reports it.
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
    pub resource_usage: bool,
    /// What the worker pinned, and the CPUs its runs used; absent in runs
    /// recorded before runner had placement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Box<runner_os::placement::ForkPlacement>>,
    /// Processes that the fork's commands left running after they exited
    /// (each was killed by runner); absent when none, and in runs recorded
    /// before runner counted them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub left_processes: u64,
    /// The fork's commands ran under runner's process containment (own
    /// process groups, subreapers, the sweep after every run): the report
    /// says so only for runs that had it (absent: no command, or recorded
    /// before runner had it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub commands_contained: bool,
    /// The fork's memory layout, planned and as the worker saw it; absent
    /// under `layout = "system"` and in runs recorded before runner had it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<Box<runner_os::memory_layout::ForkLayout>>,
    /// What the fork's `sql` arms made and planned besides their runs:
    /// private copies, and with `explain = true` each arm's plans; absent
    /// without either.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sql: Option<Box<ForkSql>>,
    /// What counted the fork's counted runs' instructions (`design.measure`);
    /// absent for a fork that counted nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted: Option<ForkCounted>,
}

/// What counted a fork's instructions.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ForkCounted {
    /// `cachegrind`: valgrind's tool, run as `valgrind --tool=cachegrind
    /// --trace-children=yes`, its counts of every process of a run summed.
    pub tool: String,
    /// With `--cache-sim=yes`: the rows carry L1 and last-level misses.
    pub cache_sim: bool,
}

/// A fork's private copies and plans (`[database]` private_copies, explain).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ForkSql {
    /// Every copy the fork made (each arm makes its own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub copies: Vec<runner_db::plans::CopyMade>,
    /// Each arm's statements and plans, run once after the measured runs,
    /// untimed and rolled back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plans: Option<ArmPlans>,
    /// Runs that failed in arms with `allow_failure = true`, warm-up
    /// included, with their codes; absent when none failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<FailedRun>,
    /// Arms with `clients > 1`: each measured run's client times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<ArmClients>,
}

/// Each client's own time (its release to its last row) in every measured
/// run, N per run in run order, per arm; an arm of one client has none.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ArmClients {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<ClientTimes>,
    /// None also when one instance serves both arms (A/A): its runs are
    /// all in `baseline`, both arms' in pair order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub treatment: Option<ClientTimes>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ClientTimes {
    pub clients: u32,
    pub ns: Vec<u64>,
    /// Samples of active clients by wait event type (`CPU`: none, `Lock`:
    /// a heavyweight lock) over the measured runs (`db::waits`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub waits: std::collections::BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ArmPlans {
    pub baseline: Vec<runner_db::plans::StatementPlan>,
    /// None: one instance serves both arms (A/A).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub treatment: Option<Vec<runner_db::plans::StatementPlan>>,
}

impl ForkSummary {
    /// The summary of a fork whose runs were not measured here: no
    /// checksums, hashes, timing, placement or layout (a `check` trial, or
    /// pairs imported from another harness).
    pub fn unmeasured(cell: u32, fork: u32) -> ForkSummary {
        ForkSummary {
            cell,
            fork,
            checksum_baseline: String::new(),
            checksum_treatment: String::new(),
            seeded_hash: None,
            final_hash: None,
            timed_ns: 0,
            resource_usage: false,
            placement: None,
            left_processes: 0,
            commands_contained: false,
            layout: None,
            sql: None,
            counted: None,
        }
    }

    /// The columns of the fork's rows: with counts, every row has the
    /// usage and count columns (a timed row's counts empty, a counted
    /// row's usage empty), so its lines all have one width.
    pub fn columns(&self) -> runner_core::record::Columns {
        match &self.counted {
            None => runner_core::record::Columns::usage(self.resource_usage),
            Some(c) => runner_core::record::Columns {
                usage: true,
                instructions: true,
                cache: c.cache_sim,
            },
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A finished fork: the worker's summary plus what the parent saw.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ForkRecord {
    #[serde(flatten)]
    pub summary: ForkSummary,
    pub checks: CheckReport,
    /// Process start to exit, as the parent saw it. The next fork's worker
    /// starts when this fork's timing ends, so two forks' `wall_ns` overlap.
    pub wall_ns: u64,
    /// The parent's time for the job, from the previous fork's record being
    /// stored (for the first fork of an `exec`, from the start of its
    /// forks) to this one's: the worker's set-up, its timing, and what the
    /// parent did around it (sentinel snapshots, the database guard, the
    /// tables, storing the rows). The forks' `job_ns` add up to the run's
    /// wall time, so a run's overhead counts everything but writing the
    /// last record. Absent in runs recorded before runner kept it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_ns: Option<u64>,
    /// Rows the fork wrote (warm-up + measured pairs).
    pub rows: u64,
    /// SHA-256 of the fork's rows exactly as written (CSV lines, each ending
    /// in `\n`, no header): in `forks/c<cell>-f<fork>.csv` while the run is
    /// in progress, then as a contiguous run of lines in `pairs.csv`.
    pub sha256: String,
    /// The machine that ran the fork, recorded by shards (`--shard`) and
    /// kept by `runner merge`: the machines level of the analysis groups
    /// forks by it. Absent in runs that were not sharded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// CPU steal and other processes' share of the machine while the fork
    /// ran, with its flags (docs/guide/how-a-run-works.md); absent in runs recorded
    /// before runner had sentinels, or where /proc is unreadable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sentinel: Option<runner_os::environment::ForkSentinel>,
    /// The fingerprint of the database outside runner's schemas, compared
    /// before and after the fork (PostgreSQL only; docs/guide/own-code.md); absent
    /// in runs without it or recorded before runner had it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_guard: Option<runner_db::fingerprint::GuardRecord>,
}

impl ForkRecord {
    /// `forks/c<cell>-f<fork>`: how errors name a fork's data.
    pub fn file_stem(&self) -> String {
        file_stem(self.summary.cell, self.summary.fork)
    }
}

/// `c<cell>-f<fork>`, the stem of a fork's files in `DIR.partial/forks/`.
pub fn file_stem(cell: u32, fork: u32) -> String {
    format!("c{cell}-f{fork}")
}

/// One failed run as run.json records it (a fork's `sql.failures`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct FailedRun {
    pub phase: Phase,
    pub pair: u32,
    pub arm: Arm,
    /// The SQLSTATE (PostgreSQL) or `SQLITE_<extended code>` (SQLite).
    pub code: String,
}
