//! The worker's messages, as the parent receives them: the stdout thread
//! turns lines into events, [`receive`] stores records and watches the
//! deadline, the signals and (while the worker sets up) its lock waits,
//! and [`reap`] waits for the worker's exit, cancelling its database
//! queries (`db::pg::cancel`) before any kill.

use super::super::protocol::{CheckReport, ForkSummary, TrialReport, WorkerMessage};
use runner_core::record::PairRecord;
use runner_os::interrupt;
use std::io::BufRead;
use std::process::{Child, ExitStatus};
use std::sync::mpsc;
use std::time::Instant;
use wait_timeout::ChildExt;

/// What a worker reported before its `Done`.
pub(super) struct Received {
    pub checks: CheckReport,
    pub summary: ForkSummary,
    pub trial: Option<Box<TrialReport>>,
}

/// What the stdout thread hands over.
pub(super) enum Event {
    Message(WorkerMessage),
    /// A line that is not a protocol message, or a read error.
    Bad(String),
    End,
}

/// Why the stream of messages stopped short.
pub(super) enum Ended {
    /// End of output without a `Done`.
    Early,
    TimedOut,
    Interrupted,
    Because(String),
    /// The worker's own `Failed`: it is on its way out, its connections idle.
    Failed(String),
    /// The worker's agreement check found the arms' outputs differ.
    Disagreed(String),
}

/// How long the parent gives the database server to cancel and end a
/// stopped fork's sessions: part of the 2 s in which runner answers a
/// timeout or a signal.
#[cfg(feature = "postgres")]
pub(super) const CANCEL_BUDGET: std::time::Duration = std::time::Duration::from_millis(1500);

/// Cancels what the server processes `backends` of a stopped fork run and
/// ends their sessions (`db::pg::cancel`); what was done, one sentence each.
/// Nothing to do without PostgreSQL; a server that does not answer is
/// said, and the fork is stopped all the same.
pub(super) fn stop_backends(
    database: Option<&runner_db::DbTarget>,
    backends: &[u32],
) -> Vec<String> {
    #[cfg(feature = "postgres")]
    if let Some(runner_db::DbTarget::Postgres { url, .. }) = database {
        return match runner_db::pg::cancel::stop_backends(url, backends, CANCEL_BUDGET) {
            Ok(done) => done,
            Err(e) => vec![format!(
                "could not cancel the queries of server processes {backends:?}: {e}"
            )],
        };
    }
    let _ = (database, backends);
    Vec::new()
}

/// Messages until `Done`, a failure, the deadline or a signal; the
/// database server processes the worker announces go into `backends`.
/// Until the worker reports its checks (it times nothing before), `watch`
/// looks at what those processes wait for.
pub(super) fn receive(
    rx: &mpsc::Receiver<Event>,
    on_pair: &mut impl FnMut(&PairRecord) -> runner_core::error::Result<()>,
    timing_over: impl FnOnce(),
    deadline: Instant,
    backends: &mut Vec<u32>,
    watch: &mut impl FnMut(&[u32]),
) -> Result<Received, Ended> {
    let mut checks = None;
    let mut trial = None;
    let mut timing_over = Some(timing_over);
    loop {
        if interrupt::interrupted() {
            return Err(Ended::Interrupted);
        }
        if Instant::now() >= deadline {
            return Err(Ended::TimedOut);
        }
        let event = match rx.recv_timeout(interrupt::POLL) {
            Ok(e) => e,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if checks.is_none() {
                    watch(backends);
                }
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Event::End,
        };
        // Records and the summary are sent only after the timed runs.
        if matches!(
            event,
            Event::Message(WorkerMessage::Pair(_) | WorkerMessage::Done(_))
        ) {
            if let Some(f) = timing_over.take() {
                f();
            }
        }
        match event {
            Event::Message(WorkerMessage::Backend { pid }) => backends.push(pid),
            Event::Message(WorkerMessage::Trial(t)) => trial = Some(Box::new(t)),
            Event::Message(WorkerMessage::Checked(c)) => checks = Some(c),
            Event::Message(WorkerMessage::Pair(p)) => {
                on_pair(&p).map_err(|e| Ended::Because(e.to_string()))?
            }
            Event::Message(WorkerMessage::Done(summary)) => {
                return match checks.take() {
                    Some(checks) => Ok(Received {
                        checks,
                        summary,
                        trial,
                    }),
                    None => Err(Ended::Because(
                        "the worker finished without reporting its checks".into(),
                    )),
                }
            }
            Event::Message(WorkerMessage::Failed {
                message,
                disagreement: true,
            }) => return Err(Ended::Disagreed(message)),
            Event::Message(WorkerMessage::Failed { message, .. }) => {
                return Err(Ended::Failed(message))
            }
            Event::Bad(reason) => return Err(Ended::Because(reason)),
            Event::End => return Err(Ended::Early),
        }
    }
}

/// Waits for the worker to exit, killing it first when the fork did not
/// finish cleanly, and still answering the deadline and signals (a worker
/// may hang on its way out). Before a kill, `stop_queries` cancels what
/// the worker's connections run on the database server. Returns its exit
/// status (`None`: could not be waited for) and the outcome, turned into a
/// timeout or an interruption when that is why it had to be killed.
pub(super) fn reap(
    child: &mut Child,
    outcome: Result<Received, Ended>,
    deadline: Instant,
    stop_queries: &mut impl FnMut(),
) -> (Option<ExitStatus>, Result<Received, Ended>) {
    let mut outcome = outcome;
    // Anything but a clean `Done` or a worker's own `Failed`: stop it now.
    if matches!(
        outcome,
        Err(Ended::TimedOut | Ended::Interrupted) | Err(Ended::Because(_))
    ) {
        stop_queries();
        let _ = child.kill();
    } else if matches!(outcome, Err(Ended::Failed(_))) {
        let _ = child.kill();
    } else if matches!(outcome, Err(Ended::Early)) {
        // A worker that died mid-query left the query running on the server.
        stop_queries();
    }
    loop {
        match child.wait_timeout(interrupt::POLL) {
            Ok(Some(status)) => return (Some(status), outcome),
            Ok(None) => {}
            Err(_) => {
                let _ = child.kill();
                return (child.wait().ok(), outcome);
            }
        }
        // Still running: only a deadline or a signal makes this wait end.
        if interrupt::interrupted() {
            stop_queries();
            let _ = child.kill();
            if outcome.is_ok() {
                outcome = Err(Ended::Interrupted);
            }
        } else if Instant::now() >= deadline {
            stop_queries();
            let _ = child.kill();
            outcome = Err(Ended::TimedOut);
        }
    }
}

pub(super) fn describe_exit(s: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("the worker exited with code {c}"),
        (None, Some(sig)) => format!(
            "the worker was killed by signal {sig} ({})",
            signal_name(sig)
        ),
        _ => "the worker ended abnormally".into(),
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        _ => "see man 7 signal",
    }
}

/// The stdout thread: one event per line, then `End`.
pub(super) fn read_messages(reader: impl BufRead, tx: mpsc::Sender<Event>) {
    for (n, line) in reader.lines().enumerate() {
        let event = match line {
            Err(e) => Event::Bad(format!("cannot read the worker's output: {e}")),
            Ok(line) => match serde_json::from_str::<WorkerMessage>(&line) {
                Ok(m) => Event::Message(m),
                Err(e) => {
                    let shown: String = line.chars().take(120).collect();
                    Event::Bad(format!(
                        "the worker printed a malformed record on line {}: {e}: {shown:?}",
                        n + 1
                    ))
                }
            },
        };
        let stop = matches!(event, Event::Bad(_));
        if tx.send(event).is_err() || stop {
            return;
        }
    }
    let _ = tx.send(Event::End);
}
