//! The fork loop of `runner exec` as a small state machine: one fork at a
//! time, its worker started a fork ahead, each finished fork judged and
//! either kept or the run stopped.
//!
//! Everything the loop carries from one fork to the next lives in
//! [`ForkLoop`], so each step is a method that says what it changes
//! instead of a closure mutating the caller's variables, and every way a
//! fork can fail ends in [`ForkLoop::fail`], the one place that discards
//! the unfinished fork and clears the progress line.

use super::db_guard::{backend_pids, DatabaseGuard};
use super::error::ExecError;
use super::measured::Measured;
use super::progress::Progress;
use super::protocol::JobRequest;
use super::queue::{Ahead, Queue};
use super::spawn::{ForkFailure, ForkResult};
use super::stopper::{record_stops, Stopper};
use super::upcoming::{own, Upcoming};
use runner_core::error::{run_failed, Result, RunnerError};
use runner_folder::digest::check_rows;
use runner_folder::partial::{ForkWriter, ParentSaw, Partial};
use runner_folder::RunInfo;
use runner_os::environment::sentinel::{self, Snapshot};
use runner_os::interrupt;
use runner_plan::Job;
use runner_spec::Experiment;
use std::time::{Duration, Instant};

/// What the loop reads and writes besides its own state: the run's
/// experiment, run.json (stops are recorded in it), the partial folder
/// forks are committed to, and the forks kept so far.
pub(super) struct RunState<'a> {
    pub exp: &'a Experiment,
    pub info: &'a mut RunInfo,
    pub partial: &'a Partial,
    pub measured: &'a mut Measured,
}

/// The jobs still to run, in order, and their workers' requests (one per
/// job, same index).
pub(super) struct Todo<'a> {
    pub jobs: &'a [Job],
    pub requests: &'a [JobRequest],
}

/// The fork loop's state between two forks.
pub(super) struct ForkLoop<'a> {
    run: RunState<'a>,
    jobs: &'a [Job],
    progress: Progress,
    guard: DatabaseGuard,
    /// A sequential design's rule; none for a fixed one.
    stopper: Option<Stopper>,
    /// The jobs ahead: their order, their tables, the next worker. A
    /// field of its own so the fork's two callbacks (a pair stored, its
    /// timing over) borrow disjoint parts of the loop.
    upcoming: Upcoming<'a>,
    /// Each fork's job_ns runs from the previous fork's commit (the first
    /// fork's from the loop's start) to its own: the forks' job_ns add up
    /// to the run's wall time however their workers overlap.
    since: Instant,
    /// Forks kept by this loop.
    forks_run: usize,
    /// Forks kept before this loop (a resume, an earlier phase).
    kept_before: usize,
    pairs_per_job: u64,
    /// A shard records the machine of every fork (a resume may run elsewhere).
    host: Option<String>,
}

/// What a fork's end means for the run.
enum Judged {
    /// It finished and the database held: keep it.
    Keep(Box<ForkResult>),
    /// The run stops with this error; the fork is discarded.
    Stop(RunnerError),
}

impl<'a> ForkLoop<'a> {
    /// The loop over `todo`; opens the tables made ahead (PostgreSQL), so
    /// it comes after anything that must run before them (the estimate's
    /// trial runs).
    pub(super) fn open(
        run: RunState<'a>,
        todo: Todo<'a>,
        db: Option<&runner_db::DbTarget>,
        progress: Progress,
        guard: DatabaseGuard,
        stopper: Option<Stopper>,
    ) -> Result<ForkLoop<'a>> {
        let exp = run.exp;
        let host = run
            .info
            .shard()
            .as_ref()
            .map(|_| crate::shard::current_host().0);
        let kept_before = run.measured.len();
        let since = Instant::now();
        let upcoming = Upcoming {
            queue: Queue::new(todo.requests),
            ahead: Ahead::open(db, todo.requests)?,
            requests: todo.requests,
            timeout: Duration::from_secs(exp.design.fork_timeout_s),
            next: None,
            previous: None,
        };
        Ok(ForkLoop {
            run,
            jobs: todo.jobs,
            progress,
            guard,
            stopper,
            upcoming,
            since,
            forks_run: 0,
            kept_before,
            pairs_per_job: runner_plan::Plan::pairs_per_job(exp),
            host,
        })
    }

    /// Runs every job the queue still holds, one fork at a time.
    pub(super) fn run(mut self) -> Result<()> {
        let mut current = self.upcoming.queue.next(None);
        while let Some(i) = current {
            if interrupt::interrupted() {
                return Err(self.fail(None, ExecError::Interrupted(interrupt::Interrupted).into()));
            }
            self.fork(i)?;
            self.upcoming.previous = Some(i);
            current = self.upcoming.queue.next(Some(i));
        }
        self.progress.finish(self.forks_run);
        if interrupt::interrupted() {
            return Err(ExecError::Interrupted(interrupt::Interrupted).into());
        }
        Ok(())
    }

    /// Job `i`, from its worker's go to its fork kept (or the run's error).
    fn fork(&mut self, i: usize) -> Result<()> {
        let jobs = self.jobs;
        let job = &jobs[i];
        // One cell: its jobs are its forks, named as such.
        let label = if self.run.info.cells().len() == 1 {
            format!("fork {}", job.fork)
        } else {
            format!("cell {} fork {}", job.cell, job.fork)
        };
        let mut writer =
            self.run
                .partial
                .fork_writer(job.cell, job.fork, self.run.exp.design.counting)?;
        let mut rows = Vec::with_capacity(self.pairs_per_job as usize);
        let worker = self.upcoming.take_worker(i)?;
        self.progress.start_fork(&label, self.pairs_per_job);
        let print_before = self.guard.take()?;
        // The sentinel's window is the fork's timing, from the go to its
        // first record (and the next worker's start); nothing else of
        // runner's runs in it.
        let before = Snapshot::take(&own());
        let mut after = None;
        let mut tables_made = Ok(());
        let outcome = worker.and_then(|w| {
            w.run(
                |p| {
                    self.progress.pair();
                    rows.push(p.clone());
                    writer.push(p)
                },
                || {
                    (after, tables_made) = self.upcoming.start_next(i);
                },
            )
        });
        if let Err(e) = tables_made {
            return Err(self.fail(Some(writer), e));
        }
        if outcome.is_err() {
            // The run stops here: the next worker goes before the guard
            // looks for the run's connections.
            self.upcoming.next = None;
        }
        let backends = outcome.as_ref().ok().map(|r| backend_pids(&r.summary));
        let database_guard = self.guard.compare(print_before, backends.as_deref())?;
        let changed = self
            .guard
            .failure(&label, database_guard.as_ref())
            .map(|f| format!("{f}; the fork's data is discarded"));
        if let Some(g) = database_guard
            .as_ref()
            .filter(|g| !g.other_sessions.is_empty())
        {
            // Not the run's: tables its SQL does not name. Said, kept in
            // run.json, and not held against the fork.
            self.say(
                "note",
                &format!(
                    "{label}: another session changed what this experiment does not name: {}",
                    g.other_sessions.join("; ")
                ),
            );
        }
        let r = match judge(&label, job.seed, outcome, changed) {
            Judged::Keep(r) => *r,
            Judged::Stop(e) => return Err(self.fail(Some(writer), e)),
        };
        if r.summary.left_processes > 0 {
            // A warning is shown even with --quiet.
            self.say("warning", &format!(
                "{label}: {} process(es) started by the commands were still running after their run ended; runner killed them (forks[].left_processes in run.json)",
                r.summary.left_processes
            ));
        }
        let seconds = r.wall_ns as f64 / 1e9;
        let backend_ticks = r.summary.placement.as_ref().map_or(0, |p| p.backend_ticks);
        let sentinel = before
            .zip(after)
            .map(|(b, a)| sentinel::compare(&b, &a.with_own_ticks(backend_ticks)));
        let job_ns = self.since.elapsed().as_nanos() as u64;
        self.since = Instant::now();
        let saw = ParentSaw {
            wall_ns: r.wall_ns,
            job_ns: Some(job_ns),
            host: self.host.clone(),
            sentinel,
            database_guard,
        };
        // The rows go on to the analysis from memory: checked here as
        // every reader checks a stored fork.
        if let Err(e) = check_rows(&rows, job.cell, job.fork, self.run.exp, &label) {
            return Err(self.fail(Some(writer), ExecError::Rows(e).into()));
        }
        let record = self
            .run
            .partial
            .commit_fork(writer, r.summary, r.checks, saw)?;
        self.run.measured.add(record, rows);
        self.progress.finish_fork(&label, seconds);
        self.forks_run += 1;
        self.record_stops(job.cell, i)
    }

    /// A sequential design's stops due after a fork of `cell`, recorded
    /// in run.json before anything else runs; their cells' remaining jobs
    /// are passed over from now on.
    fn record_stops(&mut self, cell: u32, i: usize) -> Result<()> {
        let Some(st) = &self.stopper else {
            return Ok(());
        };
        let run = &mut self.run;
        for cell in record_stops(
            st,
            run.info,
            run.partial,
            run.measured,
            Some(cell),
            &self.progress,
        )? {
            self.upcoming.queue.stop(cell);
        }
        let left = self.upcoming.queue.left_after(i);
        self.progress
            .skip_to((self.kept_before + self.forks_run + left) as u64);
        Ok(())
    }

    /// The one way out of a failed fork: its unfinished files discarded
    /// (when it had begun writing), the progress line cleared so the error
    /// starts on a line of its own, and the error handed back to return.
    /// Whatever finished before stays committed in the partial folder.
    fn fail(&self, writer: Option<ForkWriter>, e: RunnerError) -> RunnerError {
        if let Some(w) = writer {
            w.discard();
        }
        self.progress.clear();
        e
    }

    /// Says `msg` as a `label:` line under the progress, or as a warning
    /// on stderr under --quiet, so it is seen either way.
    fn say(&self, label: &str, msg: &str) {
        match self.progress {
            Progress::Quiet => runner_core::console::warn(msg),
            _ => self.progress.println(&format!("{label}: {msg}")),
        }
    }
}

/// Judge-outcome: what a fork's end means, from the worker's outcome and
/// what the database guard found (`changed`: the database changed outside
/// runner's schemas). A fork is kept only when it finished, its table's
/// content held through its previews and the database held; arms whose
/// outputs differ are the experiment file's to fix ([`RunnerError::ArmsDisagree`],
/// exit 2); anything else fails the run.
fn judge(
    label: &str,
    seed: u64,
    outcome: std::result::Result<ForkResult, ForkFailure>,
    changed: Option<String>,
) -> Judged {
    let disagreement = matches!(&outcome, Err(f) if f.disagreement);
    let failure = match outcome {
        Ok(r) if r.summary.seeded_hash != r.summary.final_hash => format!(
            "{label}: the table's content changed during the fork (hash {:?} after seeding, {:?} after the last preview): a preview leaked a write",
            r.summary.seeded_hash, r.summary.final_hash
        ),
        Ok(r) if changed.is_none() => return Judged::Keep(Box::new(r)),
        // The fork ran, but the database changed: that alone fails it.
        Ok(_) => String::new(),
        Err(f) if f.interrupted => format!(
            "{} during {label}; the worker was stopped and its unfinished fork discarded{}",
            interrupt::Interrupted,
            f.on_server
        ),
        Err(f) => {
            let mut msg = format!("{label} (job seed {seed}) failed: {}", f.reason);
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
    Judged::Stop(if disagreement {
        runner_core::error::arms_disagree(failure)
    } else {
        run_failed(failure)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(reason: &str) -> ForkFailure {
        ForkFailure::before_start(reason.into())
    }

    fn stopped(j: Judged) -> RunnerError {
        match j {
            Judged::Stop(e) => e,
            Judged::Keep(_) => panic!("a failed fork was kept"),
        }
    }

    #[test]
    fn a_failed_fork_stops_the_run_naming_its_seed_and_stderr() {
        let mut f = failure("exit status 3");
        f.stderr_tail = vec!["one".into(), "two".into()];
        let e = stopped(judge("cell 0 fork 1", 42, Err(f), None));
        assert_eq!(e.failure(), runner_core::error::Failure::RunFailed, "{e:?}");
        assert_eq!(
            e.to_string(),
            run_failed(
                "cell 0 fork 1 (job seed 42) failed: exit status 3\nworker stderr (last lines):\n  one\n  two"
            )
            .to_string()
        );
    }

    #[test]
    fn arms_that_disagree_are_the_experiment_files_to_fix() {
        let mut f = failure("the arms' outputs differ");
        f.disagreement = true;
        let e = stopped(judge("cell 0 fork 0", 1, Err(f), None));
        assert_eq!(
            e.failure(),
            runner_core::error::Failure::ArmsDisagree,
            "{e:?}"
        );
    }

    #[test]
    fn an_interrupted_fork_says_so_and_a_database_change_is_added() {
        let mut f = failure("killed");
        f.interrupted = true;
        let e = stopped(judge("cell 2 fork 0", 1, Err(f), Some("changed".into())));
        let msg = e.to_string();
        assert!(
            msg.contains("during cell 2 fork 0; the worker was stopped"),
            "{msg}"
        );
        assert!(msg.contains("\nalso, changed"), "{msg}");
    }
}
