//! Strategies: the things a pair times. One file per kind behind one trait.
//!
//! A run takes the pair's input (a u64, the same for both arms of a pair;
//! see `exec::worker::draws`) with the cell's parameters already bound into
//! the strategy, and leaves behind an output fingerprint that the per-arm
//! checksums fold. The worker builds each strategy once per fork with
//! [`build`] (set-up, connections, `setup` commands happen there, outside
//! any timed region), then per run calls [`Strategy::before`] (untimed),
//! [`Strategy::run`] (the timed region) and [`Strategy::after`] (untimed).
//! Before any timing it compares [`Strategy::observe`] of the arms: the
//! full output, so a disagreement can say what differs.

pub mod agreement;
pub mod error;
pub use agreement::check_agreement;

mod client_record;
pub(crate) mod command;
pub(crate) mod failure;
mod in_memory;
mod noop;
pub(crate) mod observation;
mod prepared;
pub(crate) mod spin;
mod sql;
// Concurrent clients run on PostgreSQL only (the experiment file's check
// refuses them elsewhere).
#[cfg(feature = "postgres")]
mod sql_clients;
pub use client_record::ClientRecord;
mod tx_rollback;

pub use in_memory::InMemory;
pub use noop::Noop;
pub use observation::{Observation, Stdout, StdoutDigest};
pub use spin::Spin;
pub use tx_rollback::TxRollback;

use error::{fail, Doing, Result};
use runner_core::record::RunUsage;
use runner_db::DbTarget;
use runner_spec::{StrategyKind, WorkloadParams};

/// What a run left behind, read after the timed region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// Folded into the arm's checksum; equal outputs give equal fingerprints.
    pub fingerprint: u64,
    /// CPU time and peak memory of a child process (`command`).
    pub usage: Option<RunUsage>,
    /// The run failed and its arm allows it (`allow_failure` on `sql`).
    pub failed: Option<failure::FailCode>,
}

impl Outcome {
    pub fn of(fingerprint: u64) -> Outcome {
        Outcome {
            fingerprint,
            usage: None,
            failed: None,
        }
    }
}

/// How a worker counts a run's instructions (`design.measure`): the
/// valgrind it runs the command under, found by the parent before the
/// first fork, and whether it simulates the caches.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CountWith {
    pub valgrind: std::path::PathBuf,
    pub cache_sim: bool,
}

impl CountWith {
    /// The tool's name as run.json records it (`ForkCounted`).
    pub const TOOL: &'static str = "cachegrind";
}

/// What one counted run left behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counted {
    pub count: runner_core::record::RunCount,
    /// Folded into the arm's checksum, as a timed run's is.
    pub fingerprint: u64,
}

/// The fingerprint of a run that produces nothing (`spin`, `noop`).
pub const NOTHING: u64 = 0x006e_6f74_6869_6e67;

/// A thing the harness can time: set up once per fork, then run per input.
pub trait Strategy {
    /// Untimed, just before the timed region of each run (a command's
    /// `prepare`, a SQL `BEGIN`).
    fn before(&mut self, _input: u64) -> Result<()> {
        Ok(())
    }

    /// The timed region: one run on `input`. Kept free of avoidable
    /// allocation so the harness measures the strategy, not itself.
    fn run(&mut self, input: u64) -> Result<()>;

    /// Untimed, just after: the run's fingerprint (a SQL `ROLLBACK`, a
    /// command's exit status check happen here).
    fn after(&mut self) -> Result<Outcome>;

    /// One whole run on `input` with its full output, for the checks before
    /// timing. The default is a run's fingerprint alone.
    fn observe(&mut self, input: u64) -> Result<Observation> {
        self.before(input)?;
        self.run(input)?;
        self.after()?;
        Ok(Observation::Nothing)
    }

    /// Hash of a table the strategy keeps as committed (`None` if none).
    /// The worker compares it after seeding and after the fork: a
    /// difference means a leaked write.
    fn content_hash(&mut self) -> Result<Option<String>> {
        Ok(None)
    }

    /// The pid of a database server process serving this strategy (its
    /// PostgreSQL backend), for placement; none without one.
    fn backend_pid(&mut self) -> Result<Option<u32>> {
        Ok(None)
    }

    /// Every database server process serving this strategy: with
    /// concurrent clients, each client's backend and the wait sampler's
    /// besides the one [`Strategy::backend_pid`] gives. Their CPU time is
    /// the run's own, so the fork's load check does not count it as other
    /// processes' (placement still pins only the one).
    fn serving_pids(&mut self) -> Result<Vec<u32>> {
        Ok(self.backend_pid()?.into_iter().collect())
    }

    /// One run on `input` under the instruction counter, untimed: its
    /// counts. Only commands are counted (the experiment file's check
    /// refuses the others before anything runs).
    fn count(&mut self, _input: u64, _with: &CountWith) -> Result<Counted> {
        fail!("only `command` arms can be counted")
    }

    /// Once, after the fork's last run (a command's `teardown`).
    fn teardown(&mut self) -> Result<()> {
        Ok(())
    }

    /// The private copies its set-up made (an `sql` arm's).
    fn copies(&self) -> Vec<runner_db::plans::CopyMade> {
        Vec::new()
    }

    /// Once, after the fork's timed runs: an `sql` arm with `clients > 1`,
    /// its clients' times and wait samples (taken).
    fn client_times(&mut self) -> Result<Option<ClientRecord>> {
        Ok(None)
    }

    /// Once, after the fork's measured runs and untimed: its statements
    /// for `input` under EXPLAIN, rolled back (`None`: not SQL).
    fn explain(&mut self, _input: u64) -> Result<Option<Vec<runner_db::plans::StatementPlan>>> {
        Ok(None)
    }
}

/// The `[database]` options of a run without any.
static NO_SQL_OPTIONS: runner_db::SqlOptions = runner_db::SqlOptions {
    private_copies: Vec::new(),
    explain: false,
    check_inputs: runner_db::config::CHECK_INPUTS,
};

/// What building a strategy needs besides its kind.
#[derive(Debug, Clone, Copy)]
pub struct Setting<'a> {
    pub workload: WorkloadParams,
    /// The run's resolved database ([`runner_db::resolve`]); read only by
    /// kinds that need one. For PostgreSQL the run schema must exist,
    /// created by the parent with [`runner_db::pg::schema::create_run_schema`].
    pub db: Option<&'a DbTarget>,
    /// `b` or `t`: which arm this instance serves (an A/A instance is `b`);
    /// names its private schema and scratch directory.
    pub slot: &'a str,
    /// The strategy's name, for messages.
    pub name: &'a str,
    /// A `tx-rollback` instance's table on PostgreSQL, made and seeded by
    /// the exec parent before the fork (`exec::tables`); none: it makes
    /// its own.
    pub table: Option<&'a str>,
    /// `[database]` options of `sql` arms: private copies, explain.
    pub sql: &'a runner_db::SqlOptions,
}

impl<'a> Setting<'a> {
    pub fn new(workload: WorkloadParams, db: Option<&'a DbTarget>) -> Setting<'a> {
        Setting {
            workload,
            db,
            slot: "b",
            name: "strategy",
            table: None,
            sql: &NO_SQL_OPTIONS,
        }
    }
}

fn need_db<'a>(kind: &StrategyKind, db: Option<&'a DbTarget>) -> Result<&'a DbTarget> {
    db.doing(|| {
        format!(
            "strategy kind {} needs a database, and none is configured \
             (set database.url or RUNNER_DATABASE_URL, or use backend = \"sqlite\")",
            kind.label()
        )
    })
}

/// Sets up one strategy of `kind` for a fork.
pub fn build(kind: &StrategyKind, at: &Setting<'_>) -> Result<Box<dyn Strategy>> {
    Ok(match kind {
        StrategyKind::InMemory => Box::new(InMemory::new(at.workload)),
        StrategyKind::TxRollback => Box::new(TxRollback::new(
            at.workload,
            need_db(kind, at.db)?,
            at.table,
        )?),
        StrategyKind::Spin { duration_ns } => Box::new(Spin::new(*duration_ns)),
        StrategyKind::Noop => Box::new(Noop),
        StrategyKind::Command(spec) => Box::new(command::Command::new(spec, at)?),
        #[cfg(feature = "postgres")]
        StrategyKind::Sql(spec) if spec.clients > 1 => Box::new(sql_clients::SqlClients::new(
            spec,
            need_db(kind, at.db)?,
            at,
        )?),
        StrategyKind::Sql(spec) => Box::new(sql::Sql::new(spec, need_db(kind, at.db)?, at)?),
        StrategyKind::Imported => {
            fail!("an imported arm was measured by another harness; runner cannot run it")
        }
    })
}

#[cfg(test)]
mod tests;
