//! Runs every job that has no finished fork yet, one worker at a time.

use super::progress::Progress;
use super::spawn;
use crate::environment::sentinel::{self, Snapshot};
use crate::error::{run_failed, Result};
use crate::interrupt;
use crate::plan::{self, Job};
use crate::run_folder::partial::{ParentSaw, Partial};
use crate::run_folder::RunInfo;
use crate::spec::Experiment;
use std::collections::HashSet;
use std::time::Duration;

pub(super) fn run_jobs(
    exp: &Experiment,
    info: &RunInfo,
    partial: &Partial,
    db: Option<&crate::db::DbTarget>,
    quiet: bool,
    announce: bool,
) -> Result<()> {
    let done: HashSet<(u32, u32)> = partial
        .finished_forks(info)?
        .iter()
        .map(|f| (f.summary.cell, f.summary.fork))
        .collect();
    let todo: Vec<Job> = info
        .jobs
        .iter()
        .filter(|j| !done.contains(&(j.cell, j.fork)))
        .copied()
        .collect();
    let todo_len = todo.len();
    let mut progress = Progress::new(quiet, info.jobs.len() as u64, done.len() as u64);
    // The estimate `check` gives, for the jobs still to run; its trial runs
    // happen here, before any worker starts.
    if announce && !quiet && todo_len > 0 {
        let e = super::estimate::estimate(exp, &info.cells, db);
        // The estimate covers every cell x fork; a shard or a resume runs
        // a share of them.
        let planned = info.cells.len() as u64 * u64::from(exp.design.forks.get());
        let share = todo_len as f64 / planned.max(1) as f64;
        let e = super::estimate::Estimate {
            total_ns: (e.total_ns as f64 * share) as u64,
            ..e
        };
        progress.println(&format!(
            "estimate: {} jobs (cell x fork), {}",
            todo_len,
            e.describe()
        ));
    }
    let timeout = Duration::from_secs(exp.design.fork_timeout_s);
    let pairs_per_job = plan::Plan::pairs_per_job(exp);
    // A shard records the machine of every fork (a resume may run elsewhere).
    let host = info.shard.as_ref().map(|_| crate::shard::current_host().0);
    // Runner and its workers are "own" CPU time to the sentinel.
    let own = [std::process::id()];
    let mut guard = DatabaseGuard::open(db)?;
    for job in todo {
        if interrupt::interrupted() {
            progress.clear();
            return Err(run_failed(interrupt::Interrupted.to_string()));
        }
        let job_started = std::time::Instant::now();
        let label = format!("cell {} fork {}", job.cell, job.fork);
        let request = super::job_request(exp, info, &job, db);
        let mut writer = partial.fork_writer(job.cell, job.fork)?;
        progress.start_fork(&label, pairs_per_job);
        // The sentinel's two snapshots bracket the worker's whole life, so
        // what else the machine did during the fork is in them; they are
        // taken while no worker measures.
        let before = Snapshot::take(&own);
        let print_before = guard.take()?;
        let outcome = spawn::run_worker(&request, timeout, |p| {
            progress.pair();
            writer.push(p)
        });
        let after = Snapshot::take(&own);
        let database_guard = guard.compare(print_before)?;
        let changed = database_guard.as_ref().filter(|g| !g.held).map(|g| {
            format!(
                "outside runner's schemas, the database changed during {label}: {}. runner never commits what the user's SQL writes, so this is an effect PostgreSQL does not roll back (a sequence, a function that opens its own connection) or another session's commit during the fork; the fork's data is discarded",
                g.changes.join("; ")
            )
        });
        let failure = match outcome {
            Ok(r) if r.summary.seeded_hash != r.summary.final_hash => format!(
                "{label}: the table's content changed during the fork (hash {:?} after seeding, {:?} after the last preview): a preview leaked a write",
                r.summary.seeded_hash, r.summary.final_hash
            ),
            Ok(r) if changed.is_none() => {
                if r.summary.left_processes > 0 {
                    let msg = format!(
                        "{label}: {} process(es) started by the commands were still running after their run ended; runner killed them (forks[].left_processes in run.json)",
                        r.summary.left_processes
                    );
                    // A warning is shown even with --quiet.
                    match progress {
                        Progress::Quiet => crate::console::warn(&msg),
                        _ => progress.println(&format!("warning: {msg}")),
                    }
                }
                let seconds = r.wall_ns as f64 / 1e9;
                let backend_ticks = r.summary.placement.as_ref().map_or(0, |p| p.backend_ticks);
                let sentinel = before
                    .zip(after)
                    .map(|(b, a)| sentinel::compare(&b, &a.with_own_ticks(backend_ticks)));
                let saw = ParentSaw {
                    wall_ns: r.wall_ns,
                    job_ns: Some(job_started.elapsed().as_nanos() as u64),
                    host: host.clone(),
                    sentinel,
                    database_guard,
                };
                partial.commit_fork(writer, r.summary, r.checks, saw)?;
                progress.finish_fork(&label, seconds);
                continue;
            }
            // The fork ran, but the database changed: that alone fails it.
            Ok(_) => String::new(),
            Err(f) if f.interrupted => format!(
                "{} during {label}; the worker was stopped and its unfinished fork discarded",
                interrupt::Interrupted
            ),
            Err(f) => {
                let mut msg = format!("{label} (job seed {}) failed: {}", job.seed, f.reason);
                if !f.stderr_tail.is_empty() {
                    msg.push_str("\nworker stderr (last lines):\n  ");
                    msg.push_str(&f.stderr_tail.join("\n  "));
                }
                msg
            }
        };
        let failure = match changed {
            Some(c) if failure.is_empty() => c,
            Some(c) => format!("{failure}\nalso, {c}"),
            None => failure,
        };
        writer.discard();
        progress.clear();
        return Err(run_failed(failure));
    }
    progress.finish(todo_len);
    if interrupt::interrupted() {
        return Err(run_failed(interrupt::Interrupted.to_string()));
    }
    Ok(())
}

/// The fingerprint of the database outside runner's schemas, taken before
/// and after each fork on a PostgreSQL run (`db::guard`); nothing to do on
/// SQLite or without a database.
///
/// One fork's "after" is the next fork's "before": nothing of runner's
/// touches the database between them, a change made there by someone else
/// is still caught (by the next fork's comparison instead of by none), and
/// a fingerprint costs a few milliseconds of the run's wall time per fork.
struct DatabaseGuard {
    guard: Option<crate::db::guard::Guard>,
    last: Option<crate::db::guard::Fingerprint>,
}

/// How long the parent waits for a fork's connections to end, so their
/// statistics are in the views it reads.
const CONNECTIONS_CLOSE: Duration = Duration::from_secs(10);

impl DatabaseGuard {
    fn open(db: Option<&crate::db::DbTarget>) -> Result<DatabaseGuard> {
        let Some(crate::db::DbTarget::Postgres { url, schema }) = db else {
            return Ok(DatabaseGuard {
                guard: None,
                last: None,
            });
        };
        let guard = crate::db::guard::Guard::connect(url, schema)
            .map_err(|e| run_failed(format!("the database guard: {e}")))?;
        Ok(DatabaseGuard {
            guard: Some(guard),
            last: None,
        })
    }

    /// The fingerprint before a fork: the previous fork's "after" when
    /// there is one.
    fn take(&mut self) -> Result<Option<crate::db::guard::Fingerprint>> {
        if let Some(last) = self.last.take() {
            return Ok(Some(last));
        }
        let Some(g) = &mut self.guard else {
            return Ok(None);
        };
        g.take()
            .map(Some)
            .map_err(|e| run_failed(format!("the database guard: {e}")))
    }

    fn compare(
        &mut self,
        before: Option<crate::db::guard::Fingerprint>,
    ) -> Result<Option<crate::db::guard::GuardRecord>> {
        let (Some(g), Some(before)) = (&mut self.guard, before) else {
            return Ok(None);
        };
        let after = g
            .wait_for_workers(CONNECTIONS_CLOSE)
            .and_then(|()| g.take())
            .map_err(|e| run_failed(format!("the database guard: {e}")))?;
        let record = before.compare(&after);
        self.last = Some(after);
        Ok(Some(record))
    }
}
