//! Runs one job in a fresh worker process and streams its records.
//!
//! A worker is started ([`Worker::start`]) before its fork's turn: it sets
//! up and checks its arms while the previous fork's records are stored, then
//! waits. [`Worker::run`] tells it to go and receives its records; nothing
//! else of runner's runs from the go to the end of its timed runs
//! (docs/guide/how-a-run-works.md, "One fork at a time").
//!
//! The worker's stdout is read on a thread of its own and handed over a
//! channel; this thread stores each record as it arrives and, between
//! messages, looks at the clock (the fork timeout) and at the signal count
//! (Ctrl-C). It is the only thread that kills or reaps the worker, and it
//! kills only before reaping, so a pid that the system has reused is never
//! signalled. The worker dies with the parent (PR_SET_PDEATHSIG), so a
//! `kill -9` of runner leaves no worker measuring on alone.
//!
//! The parent is a child subreaper too: what a killed worker's commands
//! leave (the worker cannot clean up after a SIGKILL) is re-parented here
//! and killed after each fork (`reaper::after_worker`).

mod stream;

use super::protocol::{CheckReport, ForkSummary, JobRequest, TrialReport, WorkerMessage, GO};
use runner_core::record::PairRecord;
use runner_os::interrupt;
use std::collections::BTreeSet;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use stream::{describe_exit, read_messages, reap, receive, stop_backends, Ended, Event, Received};

/// Lines of the worker's stderr kept for an error message.
const STDERR_TAIL: usize = 12;
/// How long to wait, once the worker has exited, for its last stderr lines
/// (a process it started may still hold the pipe open).
const STDERR_GRACE: Duration = Duration::from_secs(2);

/// How a fork ended, when it did not finish.
#[derive(Debug)]
pub(crate) struct ForkFailure {
    pub reason: String,
    /// The worker's last stderr lines.
    pub stderr_tail: Vec<String>,
    /// Stopped by Ctrl-C or a termination signal (the parent's, or the
    /// worker's own SIGINT from a terminal).
    pub interrupted: bool,
    /// The arms' outputs differ: the experiment file must change, and no
    /// re-run (or resume) can help.
    pub disagreement: bool,
    /// Processes its commands left, killed by the parent's sweep.
    pub left_processes: u64,
    /// Killed at the fork timeout.
    pub timed_out: bool,
    /// What was cancelled on the database server before the worker was
    /// killed (`; on the database server, runner cancelled ...`; empty when
    /// nothing was), also at the end of `reason`.
    pub on_server: String,
}

impl ForkFailure {
    /// A failure before the worker ran anything: no stderr, nothing
    /// interrupted, left behind or cancelled.
    pub(crate) fn before_start(reason: String) -> ForkFailure {
        ForkFailure {
            reason,
            stderr_tail: Vec::new(),
            interrupted: false,
            disagreement: false,
            left_processes: 0,
            timed_out: false,
            on_server: String::new(),
        }
    }
}

pub(crate) struct ForkResult {
    pub checks: CheckReport,
    pub summary: ForkSummary,
    pub wall_ns: u64,
    /// A trial job's timings (boxed: most forks have none).
    pub trial: Option<Box<TrialReport>>,
}

/// The children this process had before it became a subreaper (a shell's
/// `cmd & exec runner ...`): not runner's, never swept.
static OWN_BEFORE: OnceLock<BTreeSet<i32>> = OnceLock::new();

fn kept_children() -> &'static BTreeSet<i32> {
    OWN_BEFORE.get_or_init(|| {
        let before = runner_os::reaper::children().into_iter().collect();
        runner_os::reaper::become_subreaper();
        before
    })
}

/// Kills what the last worker left behind; how many there were. A worker
/// still running (the next fork's, setting up) is not left behind.
fn sweep_after_worker() -> u64 {
    let mut keep = kept_children().clone();
    keep.extend(live().iter().copied());
    runner_os::reaper::after_worker(&keep) as u64
}

/// The environment variable that gives a worker its parent's pid, so that
/// it can tie its life to the parent's ([`die_with_parent`]).
pub(crate) const PARENT_VAR: &str = runner_core::settings::PARENT_PID;

/// Starts the worker process with `job` (one line) already in its stdin,
/// and returns the pipe's write end for the go. No code runs in the child
/// before exec, so the standard library can use `posix_spawn` (a vfork:
/// the parent's page tables are not copied); the worker sets its death
/// signal itself.
///
/// The job is written before the spawn: a freshly started worker otherwise
/// waited a millisecond or more for its parent to be scheduled again
/// (measured between two forks, where both CPUs are busy). A job longer
/// than the pipe holds is finished after the spawn.
fn spawn(
    exe: &std::path::Path,
    layout: Option<&runner_os::memory_layout::LayoutPlan>,
    job: &str,
) -> std::io::Result<(Child, std::io::PipeWriter)> {
    let (reader, mut writer) = std::io::pipe()?;
    let line = format!("{job}\n");
    set_nonblocking(&writer, true)?;
    let sent = match writer.write(line.as_bytes()) {
        Ok(n) => n,
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => 0,
        Err(e) => return Err(e),
    };
    set_nonblocking(&writer, false)?;
    let mut cmd = Command::new(exe);
    // The padding is in the environment exec lays out, so it moves the
    // worker's initial stack, and the commands it starts inherit it.
    if let Some(l) = layout {
        cmd.env(runner_os::memory_layout::PAD_VAR, l.padding());
    }
    cmd.arg("worker")
        .env(PARENT_VAR, std::process::id().to_string())
        // A worker's panic should show its message and place in the few
        // stderr lines the parent quotes, not a backtrace.
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::from(reader))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // ASLR is a persona the child inherits from the thread that starts it
    // and that exec reads: set on this (the main) thread for the spawn and
    // put back after it. A refusal is not fatal: the worker records ASLR as
    // it finds it.
    let restore = layout.and_then(|l| runner_os::memory_layout::set_aslr_for_exec(l.aslr_asked()));
    let child = cmd.spawn();
    if let Some(persona) = restore {
        runner_os::memory_layout::restore_persona(persona);
    }
    let child = child?;
    // A worker that died at once shows in its exit status, not here.
    let _ = writer.write_all(&line.as_bytes()[sent..]);
    Ok((child, writer))
}

fn set_nonblocking(pipe: &std::io::PipeWriter, on: bool) -> std::io::Result<()> {
    use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
    let mut flags = fcntl_getfl(pipe)?;
    flags.set(OFlags::NONBLOCK, on);
    Ok(fcntl_setfl(pipe, flags)?)
}

/// The worker's first act: it is killed when the parent's spawning thread
/// ends (PR_SET_PDEATHSIG), so a `kill -9` of runner leaves no worker
/// measuring on alone; and if the parent died before that was set, the
/// worker ends at once (nobody would reap it). A worker started by hand
/// (no [`PARENT_VAR`]) skips the check.
pub(crate) fn die_with_parent() -> crate::strategy::error::Result<()> {
    let Some(parent) = runner_core::settings::get().parent_pid else {
        return Ok(());
    };
    use rustix::process::{getppid, set_parent_process_death_signal, Signal};
    if let Err(e) = set_parent_process_death_signal(Some(Signal::KILL)) {
        crate::strategy::error::fail!(
            "cannot tie the worker to its parent: {}",
            std::io::Error::from(e)
        );
    }
    if getppid().map(|p| p.as_raw_nonzero().get()) != Some(parent) {
        crate::strategy::error::fail!("the parent ended before the worker started");
    }
    Ok(())
}

/// The workers started and not yet reaped: the next fork's worker starts
/// while the previous fork's bookkeeping runs, and the sweep after a worker
/// must leave it (and what it starts) alone.
static LIVE: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

fn live() -> std::sync::MutexGuard<'static, BTreeSet<i32>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// A worker process that has its job: it sets up and checks its arms,
/// reports `Checked`, and then waits for [`Worker::run`]'s go before its
/// first timed run. Dropped without running, it is killed and reaped.
pub(crate) struct Worker {
    child: Child,
    stdin: Option<std::io::PipeWriter>,
    rx: mpsc::Receiver<Event>,
    tail: Arc<Mutex<VecDeque<String>>>,
    stderr_closed: mpsc::Receiver<()>,
    started: Instant,
    deadline: Instant,
    reaped: bool,
    /// Where its connections go, to cancel what they run if it is stopped.
    database: Option<runner_db::DbTarget>,
    /// The database server processes it said it connected to.
    backends: Vec<u32>,
    /// `cell 0 fork 1`, for what is said while it runs.
    label: String,
}

impl Worker {
    /// Starts a worker on `job`; it is killed after `timeout` from now, or on
    /// a signal.
    pub(crate) fn start(job: &JobRequest, timeout: Duration) -> Result<Worker, ForkFailure> {
        let fail = ForkFailure::before_start;
        let exe =
            std::env::current_exe().map_err(|e| fail(format!("cannot find own binary: {e}")))?;
        let started = Instant::now();
        kept_children();
        let request = serde_json::to_string(job).expect("job serializes");
        let (mut child, stdin) = spawn(&exe, job.layout.as_ref(), &request)
            .map_err(|e| fail(format!("cannot start a worker process: {e}")))?;
        live().insert(child.id() as i32);

        // The tail of stderr, collected line by line so that what came is
        // there even if the pipe never closes.
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let stderr = child.stderr.take().expect("stderr is piped");
        let tail_writer = Arc::clone(&tail);
        let (stderr_done, stderr_closed) = mpsc::channel::<()>();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let mut t = tail_writer.lock().unwrap_or_else(|p| p.into_inner());
                if t.len() == STDERR_TAIL {
                    t.pop_front();
                }
                t.push_back(line);
            }
            let _ = stderr_done.send(());
        });

        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || read_messages(BufReader::new(stdout), tx));

        Ok(Worker {
            child,
            stdin: Some(stdin),
            rx,
            tail,
            stderr_closed,
            started,
            deadline: started + timeout,
            reaped: false,
            database: job.database.clone(),
            backends: Vec::new(),
            label: if job.trial {
                format!("the trial run of cell {}", job.cell)
            } else {
                format!("cell {} fork {}", job.cell, job.fork)
            },
        })
    }

    /// Tells the worker to start timing, then streams its records: `on_pair`
    /// sees every record as it arrives (to store it and move the progress
    /// bar); `timing_over` runs once, when the first message after the
    /// worker's timed runs arrives (its records are sent only then), before
    /// anything else is done for this fork. Kills the worker at the
    /// deadline or on a signal.
    pub(crate) fn run(
        mut self,
        mut on_pair: impl FnMut(&PairRecord) -> runner_core::error::Result<()>,
        timing_over: impl FnOnce(),
    ) -> Result<ForkResult, ForkFailure> {
        if let Some(mut stdin) = self.stdin.take() {
            // Closed after the word: the worker reads nothing more.
            let _ = writeln!(stdin, "{GO}");
        }
        let (outcome, waited) = self.receive_watching_locks(&mut on_pair, timing_over);
        let (status, outcome, cancelled) = self.reap_cancelling(outcome);
        let swept = sweep_after_worker();
        let stderr_tail = self.stderr_tail(&outcome);
        let wall_ns = self.started.elapsed().as_nanos() as u64;
        let ending = Ending {
            swept,
            stderr_tail,
            worker_sigint: {
                use std::os::unix::process::ExitStatusExt;
                matches!(&status, Some(s) if s.signal() == Some(libc::SIGINT))
            },
            on_server: on_server(cancelled, waited, outcome.is_err()),
        };
        let Received {
            checks,
            mut summary,
            trial,
        } = match outcome {
            Ok(done) => done,
            Err(ended) => {
                return Err(ending.failure_of(ended, status, self.deadline - self.started))
            }
        };
        summary.left_processes += swept;
        match status {
            Some(s) if s.success() => Ok(ForkResult {
                checks,
                summary,
                wall_ns,
                trial,
            }),
            Some(s) => Err(ending.failure(describe_exit(s), false)),
            None => Err(ending.failure("cannot wait for the worker".into(), false)),
        }
    }

    /// The worker's messages until its fork ends, with an eye on what its
    /// server processes wait for while it sets up, since a set-up stuck
    /// behind another session's lock otherwise looks like a hang; the last
    /// such wait comes back with the outcome, for a failure to name.
    fn receive_watching_locks(
        &mut self,
        on_pair: &mut impl FnMut(&PairRecord) -> runner_core::error::Result<()>,
        timing_over: impl FnOnce(),
    ) -> (Result<Received, Ended>, Option<String>) {
        // What the worker's server processes wait for while it sets up
        // (PostgreSQL only: an embedded database has no other sessions).
        #[cfg(feature = "postgres")]
        let mut watch = runner_db::pg::locks::LockWatch::new(match &self.database {
            Some(runner_db::DbTarget::Postgres { url, .. }) => Some(url.as_str()),
            _ => None,
        });
        let label = self.label.clone();
        let outcome = receive(
            &self.rx,
            on_pair,
            timing_over,
            self.deadline,
            &mut self.backends,
            &mut |backends: &[u32]| {
                #[cfg(feature = "postgres")]
                for said in watch.poll(backends) {
                    runner_core::console::warn(&format!("{label}: {said}"));
                }
                let _ = (backends, &label);
            },
        );
        #[cfg(feature = "postgres")]
        let waited = watch.last.take().map(|w| w.sentence());
        #[cfg(not(feature = "postgres"))]
        let waited: Option<String> = None;
        (outcome, waited)
    }

    /// Waits for the worker's exit and forgets it, so that the sweep after
    /// it does not spare what it left. A fork that is stopped has its queries
    /// cancelled on the server before the worker is killed
    /// (`db::pg::cancel`), once: what was cancelled comes back, for the
    /// failure to say.
    fn reap_cancelling(
        &mut self,
        outcome: Result<Received, Ended>,
    ) -> (
        Option<std::process::ExitStatus>,
        Result<Received, Ended>,
        Option<Vec<String>>,
    ) {
        let mut cancelled: Option<Vec<String>> = None;
        let (database, backends) = (self.database.clone(), self.backends.clone());
        let mut stop_queries = || {
            cancelled.get_or_insert_with(|| stop_backends(database.as_ref(), &backends));
        };
        let (status, outcome) = reap(&mut self.child, outcome, self.deadline, &mut stop_queries);
        self.reaped = true;
        live().remove(&(self.child.id() as i32));
        (status, outcome, cancelled)
    }

    /// The worker's last stderr lines, for a failure to quote: waited for
    /// a moment, since a process it started may still hold the pipe open,
    /// and without the lines that repeat the message the worker sent.
    fn stderr_tail(&self, outcome: &Result<Received, Ended>) -> Vec<String> {
        let _ = self.stderr_closed.recv_timeout(STDERR_GRACE);
        // The worker's own `error: ...` line repeats the message it sent.
        let said = match outcome {
            Err(Ended::Failed(m) | Ended::Disagreed(m)) => m.as_str(),
            _ => "",
        };
        self.tail
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|l| said.is_empty() || !said.contains(l.trim_start_matches("error: ")))
            .cloned()
            .collect()
    }
}

/// What is known of a fork once its worker is reaped and swept: every way
/// it can fail reports the same leftovers, so they are gathered once.
struct Ending {
    /// Processes its commands left, killed by the sweep.
    swept: u64,
    stderr_tail: Vec<String>,
    /// The worker died of a SIGINT of its own (from a terminal).
    worker_sigint: bool,
    /// What was done on the database server (see [`ForkFailure::on_server`]).
    on_server: String,
}

impl Ending {
    /// A failure for `reason`: the processes swept and what was done on
    /// the server end the reason, since they may be why the fork failed.
    fn failure(&self, reason: String, interrupted: bool) -> ForkFailure {
        let (swept, on_server) = (self.swept, &self.on_server);
        ForkFailure {
            reason: if swept > 0 {
                format!("{reason} ({swept} process(es) started by its commands were still running and were killed){on_server}")
            } else {
                format!("{reason}{on_server}")
            },
            stderr_tail: self.stderr_tail.clone(),
            interrupted: interrupted || self.worker_sigint || interrupt::interrupted(),
            disagreement: false,
            left_processes: swept,
            timed_out: false,
            on_server: on_server.clone(),
        }
    }

    /// The failure of a stream that stopped short, marked as a timeout or a
    /// disagreement where the caller acts on that (a disagreement cannot be
    /// helped by a re-run); `timeout` is the fork's, for the message.
    fn failure_of(
        &self,
        ended: Ended,
        status: Option<std::process::ExitStatus>,
        timeout: Duration,
    ) -> ForkFailure {
        match ended {
            Ended::Interrupted => self.failure("interrupted".into(), true),
            Ended::TimedOut => ForkFailure {
                timed_out: true,
                ..self.failure(
                    format!(
                        "the worker was still running after the fork timeout of {} s (design.fork_timeout_s) and was killed",
                        timeout.as_secs()
                    ),
                    false,
                )
            },
            // A worker that died mid-stream: how it died says more than the
            // missing lines do.
            Ended::Early => {
                let reason = match status {
                    Some(s) if !s.success() => describe_exit(s),
                    _ => "the worker's output ended before the fork finished".into(),
                };
                self.failure(reason, false)
            }
            Ended::Because(reason) | Ended::Failed(reason) => self.failure(reason, false),
            Ended::Disagreed(reason) => ForkFailure {
                disagreement: true,
                ..self.failure(reason, false)
            },
        }
    }
}

/// What runner did on the database server, to end a failure's reason: the
/// cancellations, or else a lock wait seen while the worker set up, which
/// may be why a fork that failed did not finish.
fn on_server(cancelled: Option<Vec<String>>, waited: Option<String>, failed: bool) -> String {
    let mut on_server = cancelled
        .filter(|c| !c.is_empty())
        .map(|c| format!("; on the database server, runner {}", c.join("; ")))
        .unwrap_or_default();
    // A lock wait seen while it set up, if nothing above says it.
    if let Some(w) = waited.filter(|_| failed && on_server.is_empty()) {
        on_server = format!("; before that, {w}");
    }
    on_server
}

impl Drop for Worker {
    /// A worker that was never told to go (the run stopped before its
    /// fork) is killed and reaped, with whatever it started.
    fn drop(&mut self) {
        if !self.reaped {
            // Its set-up may be running the user's SQL on the server.
            while let Ok(e) = self.rx.try_recv() {
                if let Event::Message(WorkerMessage::Backend { pid }) = e {
                    self.backends.push(pid);
                }
            }
            stop_backends(self.database.as_ref(), &self.backends);
            let _ = self.child.kill();
            let _ = self.child.wait();
            live().remove(&(self.child.id() as i32));
            sweep_after_worker();
        }
    }
}
