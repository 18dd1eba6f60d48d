//! Runs every job that has no finished fork yet, one worker at a time.

use super::measured::Measured;
use super::progress::Progress;
use super::queue::{Ahead, Queue};
use super::spawn;
use super::stopper::Stopper;
use crate::environment::sentinel::{self, Snapshot};
use crate::error::{run_failed, Result};
use crate::interrupt;
use crate::plan::{self, Job};
use crate::run_folder::digest::check_rows;
use crate::run_folder::partial::{ParentSaw, Partial};
use crate::run_folder::RunInfo;
use crate::spec::Experiment;
use std::time::Duration;

/// Runs the jobs of `info` that `measured` does not hold yet, adding each
/// finished fork to it (its files committed to `partial` first). In a
/// sequential design, each fork's cell is looked at once it is committed
/// (`stopper`): a cell that is done is recorded in run.json and its
/// remaining jobs are passed over (`queue`).
pub(super) fn run_jobs(
    exp: &Experiment,
    info: &mut RunInfo,
    partial: &Partial,
    measured: &mut Measured,
    db: Option<&crate::db::DbTarget>,
    quiet: bool,
    announce: bool,
) -> Result<()> {
    let stopper = Stopper::new(info);
    if let Some(st) = &stopper {
        // A run stopped between a fork's commit and its cell's stop.
        record_stops(st, info, partial, measured, None, &Progress::Quiet)?;
    }
    let todo: Vec<Job> = crate::plan::stop::remaining(&info.jobs, &info.stops)
        .into_iter()
        .filter(|j| !measured.contains(j.cell, j.fork))
        .collect();
    let (todo_len, kept) = (todo.len(), measured.len());
    let mut progress = Progress::new(quiet, (kept + todo_len) as u64, kept as u64);
    let requests: Vec<_> = todo
        .iter()
        .map(|job| super::job_request(exp, info, job, db))
        .collect();
    // The guard checks what the user's SQL or commands did; a run of
    // runner's built-in kinds runs only runner's own statements.
    let user_code = requests
        .iter()
        .any(|r| r.baseline.runs_user_code() || r.treatment.runs_user_code());
    // The catalog's answers before anything of the user's runs: what
    // cannot run as written stops here (exit 2), and the tables the SQL
    // names are the ones the guard holds against the run.
    let findings = if todo_len > 0 {
        super::preflight::run(exp, &info.cells, db)?
    } else {
        None
    };
    let mut guard = DatabaseGuard::open(db.filter(|_| user_code), findings.map(|f| f.named))?;
    // The estimate `check` gives, for the jobs still to run; its trial runs
    // happen here, before any worker starts, inside the guard as forks are.
    if announce && !quiet && todo_len > 0 {
        let print_before = guard.take()?;
        let e = super::estimate::estimate(exp, &info.cells, db);
        if let Some(g) = guard.compare(print_before, None)? {
            for other in &g.other_sessions {
                progress.println(&format!(
                    "note: during exec's trial runs, another session's work: {other}"
                ));
            }
            if !g.held {
                progress.clear();
                return Err(run_failed(format!(
                    "outside runner's schemas, the database changed during exec's trial runs, before any fork: {}. runner never commits what the user's SQL writes, so this is an effect PostgreSQL does not roll back (a sequence, a function that opens its own connection) or another session's commit to a table the experiment names",
                    g.changes.join("; ")
                )));
            }
        }
        // The estimate covers every cell x fork; a shard or a resume runs
        // a share of them.
        let planned = plan::self_check::job_count(exp, &info.cells);
        let share = todo_len as f64 / planned.max(1) as f64;
        let e = super::estimate::Estimate {
            total_ns: (e.total_ns as f64 * share) as u64,
            ..e
        };
        let most = if stopper.is_some() { "at most " } else { "" };
        progress.println(&format!(
            "estimate: {most}{} jobs (cell x fork), {}",
            todo_len,
            e.describe()
        ));
        if let Some(stop) = e.blocking() {
            progress.clear();
            return Err(stop);
        }
    }
    let timeout = Duration::from_secs(exp.design.fork_timeout_s);
    let pairs_per_job = plan::Plan::pairs_per_job(exp);
    // A shard records the machine of every fork (a resume may run elsewhere).
    let host = info.shard.as_ref().map(|_| crate::shard::current_host().0);
    // Runner and its workers are "own" CPU time to the sentinel.
    let own = [std::process::id()];
    let start = |i: usize| spawn::Worker::start(&requests[i], timeout);
    // Each fork's job_ns runs from the previous fork's commit (the first
    // fork's from here) to its own: the forks' job_ns add up to the run's
    // wall time however their workers overlap.
    let mut since = std::time::Instant::now();
    let mut queue = Queue::new(&requests);
    // The tables of tx-rollback arms on PostgreSQL, made a fork ahead.
    let mut ahead = Ahead::open(db, &requests)?;
    // The next fork's worker, started when this fork's timing ended: it sets
    // up and checks its arms while this fork is stored, and waits for its go.
    let mut next: Option<(
        usize,
        std::result::Result<spawn::Worker, spawn::ForkFailure>,
    )> = None;
    // The fork run before this one, whose tables go when this one's timing ends.
    let mut previous: Option<usize> = None;
    let mut run = 0;
    let mut current = queue.next(None);
    while let Some(i) = current {
        let job = &todo[i];
        if interrupt::interrupted() {
            progress.clear();
            return Err(run_failed(interrupt::Interrupted.to_string()));
        }
        let label = format!("cell {} fork {}", job.cell, job.fork);
        let mut writer = partial.fork_writer(job.cell, job.fork)?;
        let mut rows = Vec::with_capacity(pairs_per_job as usize);
        // The worker started ahead, unless none was or its cell has since
        // stopped (dropped here, which kills it).
        let worker = match next.take() {
            Some((k, w)) if k == i => w,
            _ => {
                if !ahead.ready(i) {
                    ahead.step(&queue, None, &[Some(i), queue.next(Some(i))])?;
                }
                start(i)
            }
        };
        progress.start_fork(&label, pairs_per_job);
        let print_before = guard.take()?;
        // The sentinel's window is the fork's timing, from the go to its
        // first record (and the next worker's start); nothing else of
        // runner's runs in it.
        let before = Snapshot::take(&own);
        let mut after = None;
        let mut tables_made = Ok(());
        let outcome = worker.and_then(|w| {
            w.run(
                |p| {
                    progress.pair();
                    rows.push(p.clone());
                    writer.push(p)
                },
                || {
                    // The next worker first: its start-up is the longest
                    // part of the time between two forks' timing. It is
                    // runner's own CPU time to the snapshot. Its tables
                    // were made a fork ahead, unless a stop changed which
                    // job is next.
                    let n = queue.next(Some(i));
                    let then = n.and_then(|n| queue.next(Some(n)));
                    let ready = n.is_none_or(|n| ahead.ready(n));
                    if !ready {
                        tables_made = ahead.step(&queue, previous, &[n, then]);
                    }
                    next = n.filter(|_| tables_made.is_ok()).map(|n| (n, start(n)));
                    after = Snapshot::take(&own);
                    // The fork before last is long done; the fork after
                    // next starts only when the next one's timing ends.
                    if ready {
                        tables_made = ahead.step(&queue, previous, &[then]);
                    }
                },
            )
        });
        if let Err(e) = tables_made {
            writer.discard();
            progress.clear();
            return Err(e);
        }
        if outcome.is_err() {
            // The run stops here: the next worker goes before the guard
            // looks for the run's connections.
            next = None;
        }
        let backends = match &outcome {
            Ok(r) => Some(backend_pids(&r.summary)),
            Err(_) => None,
        };
        // Arms whose outputs differ are the experiment file's to fix (exit 2).
        let disagreement = matches!(&outcome, Err(f) if f.disagreement);
        let database_guard = guard.compare(print_before, backends.as_deref())?;
        let changed = database_guard.as_ref().filter(|g| !g.held).map(|g| {
            format!(
                "outside runner's schemas, the database changed during {label}: {}. runner never commits what the user's SQL writes, so this is an effect PostgreSQL does not roll back (a sequence, a function that opens its own connection) or another session's commit to a table the experiment names; the fork's data is discarded",
                g.changes.join("; ")
            )
        });
        if let Some(g) = database_guard
            .as_ref()
            .filter(|g| !g.other_sessions.is_empty())
        {
            // Not the run's: tables its SQL does not name. Said, kept in
            // run.json, and not held against the fork.
            let msg = format!(
                "{label}: another session changed tables this experiment does not name: {}",
                g.other_sessions.join("; ")
            );
            match progress {
                Progress::Quiet => crate::console::warn(&msg),
                _ => progress.println(&format!("note: {msg}")),
            }
        }
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
                let job_ns = since.elapsed().as_nanos() as u64;
                since = std::time::Instant::now();
                let saw = ParentSaw {
                    wall_ns: r.wall_ns,
                    job_ns: Some(job_ns),
                    host: host.clone(),
                    sentinel,
                    database_guard,
                };
                // The rows go on to the analysis from memory: checked here as
                // every reader checks a stored fork.
                if let Err(e) = check_rows(&rows, job.cell, job.fork, exp, &label) {
                    writer.discard();
                    progress.clear();
                    return Err(run_failed(format!("the worker's rows: {e}")));
                }
                let record = partial.commit_fork(writer, r.summary, r.checks, saw)?;
                measured.add(record, rows);
                progress.finish_fork(&label, seconds);
                run += 1;
                if let Some(st) = &stopper {
                    for cell in record_stops(st, info, partial, measured, Some(job.cell), &progress)? {
                        queue.stop(cell);
                    }
                    progress.skip_to((kept + run + queue.left_after(i)) as u64);
                }
                previous = Some(i);
                current = queue.next(Some(i));
                continue;
            }
            // The fork ran, but the database changed: that alone fails it.
            Ok(_) => String::new(),
            Err(f) if f.interrupted => format!(
                "{} during {label}; the worker was stopped and its unfinished fork discarded{}",
                interrupt::Interrupted,
                f.on_server
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
        return Err(if disagreement {
            crate::error::RunnerError::ArmsDisagree(failure)
        } else {
            run_failed(failure)
        });
    }
    progress.finish(run);
    if interrupt::interrupted() {
        return Err(run_failed(interrupt::Interrupted.to_string()));
    }
    Ok(())
}

/// The stops `stopper` finds due after a fork of `changed` (of every cell
/// for `None`), recorded in run.json before anything else runs; returns
/// the cells that stopped.
fn record_stops(
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
    for s in &due {
        progress.println(&format!(
            "cell {} stops after {} fork{}: {}",
            s.cell,
            s.forks_run,
            if s.forks_run == 1 { "" } else { "s" },
            s.reason.describe()
        ));
    }
    info.stops.extend(due.iter().copied());
    partial.write_run_info(info)?;
    Ok(due.iter().map(|s| s.cell).collect())
}

/// The fingerprint of the database outside runner's schemas, taken before
/// and after each fork on a PostgreSQL run whose arms run the user's SQL or
/// commands (`db::guard`); nothing to do on SQLite, without a database, or
/// when both arms are runner's built-in kinds.
///
/// One fork's "after" is the next fork's "before": nothing of runner's
/// touches the database between them, a change made there by someone else
/// is still caught (by the next fork's comparison instead of by none), and
/// a fingerprint costs a few milliseconds of the run's wall time per fork.
struct DatabaseGuard {
    guard: Option<crate::db::guard::Guard>,
    last: Option<crate::db::guard::Fingerprint>,
    /// The relations the experiment's SQL names (`db::preflight`);
    /// `None`: every change is the run's.
    named: Option<std::collections::BTreeSet<String>>,
}

/// How long the parent waits for a fork's connections to end, so their
/// statistics are in the views it reads.
const CONNECTIONS_CLOSE: Duration = Duration::from_secs(10);

impl DatabaseGuard {
    fn open(
        db: Option<&crate::db::DbTarget>,
        named: Option<std::collections::BTreeSet<String>>,
    ) -> Result<DatabaseGuard> {
        let Some(crate::db::DbTarget::Postgres { url, schema }) = db else {
            return Ok(DatabaseGuard {
                guard: None,
                last: None,
                named,
            });
        };
        let guard = crate::db::guard::Guard::connect(url, schema)
            .map_err(|e| run_failed(format!("the database guard: {e}")))?;
        Ok(DatabaseGuard {
            guard: Some(guard),
            last: None,
            named,
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

    /// The fingerprint after a fork, once its connections are gone: the
    /// backends it reported when it finished (the next fork's worker is
    /// connected by then), or every worker connection of the run when it
    /// failed (its next worker has been stopped).
    fn compare(
        &mut self,
        before: Option<crate::db::guard::Fingerprint>,
        backends: Option<&[u32]>,
    ) -> Result<Option<crate::db::guard::GuardRecord>> {
        let (Some(g), Some(before)) = (&mut self.guard, before) else {
            return Ok(None);
        };
        let after = g
            .wait_for_workers(backends, CONNECTIONS_CLOSE)
            .and_then(|()| g.take())
            .map_err(|e| run_failed(format!("the database guard: {e}")))?;
        let record = before.compare(&after, self.named.as_ref());
        self.last = Some(after);
        Ok(Some(record))
    }
}

/// The database server processes that served a finished fork.
fn backend_pids(summary: &crate::run_folder::ForkSummary) -> Vec<u32> {
    summary.placement.as_ref().map_or_else(Vec::new, |p| {
        p.database.backends().iter().map(|b| b.pid).collect()
    })
}
