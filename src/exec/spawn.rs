//! Runs one job in a fresh worker process and streams its records.
//!
//! The parent blocks on the worker's stdout while it measures: no polling,
//! no work of its own beyond appending the lines that arrive.

use super::protocol::{CheckReport, ForkSummary, JobRequest, WorkerMessage};
use crate::record::PairRecord;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Lines of the worker's stderr kept for an error message.
const STDERR_TAIL: usize = 12;

/// How a fork ended, when it did not finish.
#[derive(Debug)]
pub struct ForkFailure {
    pub reason: String,
    /// The worker's last stderr lines.
    pub stderr_tail: Vec<String>,
    /// The worker died of SIGINT: a Ctrl-C, even if the parent's own
    /// handler has not run yet.
    pub sigint: bool,
}

pub struct ForkResult {
    pub checks: CheckReport,
    pub summary: ForkSummary,
    pub wall_ns: u64,
}

/// Runs `job`; `on_pair` sees every record as it arrives (to store it and
/// move the progress bar). Kills the worker after `timeout`.
pub fn run_worker(
    job: &JobRequest,
    timeout: Duration,
    mut on_pair: impl FnMut(&PairRecord) -> crate::error::Result<()>,
) -> Result<ForkResult, ForkFailure> {
    let fail = |reason: String| ForkFailure {
        reason,
        stderr_tail: Vec::new(),
        sigint: false,
    };
    let exe = std::env::current_exe().map_err(|e| fail(format!("cannot find own binary: {e}")))?;
    let started = Instant::now();
    let mut child = Command::new(exe)
        .arg("worker")
        // A worker's panic should show its message and place in the few
        // stderr lines the parent quotes, not a backtrace.
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(format!("cannot start a worker process: {e}")))?;
    let pid = child.id() as i32;
    super::interrupt::set_child(pid);

    // Collect the tail of stderr on a thread, so a chatty worker never blocks.
    let tail = Arc::new(Mutex::new(VecDeque::new()));
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let tail_writer = Arc::clone(&tail);
    let stderr_thread = std::thread::spawn(move || {
        let mut buf = String::new();
        let _ = stderr.read_to_string(&mut buf);
        let mut t = tail_writer.lock().unwrap();
        for line in buf.lines() {
            if t.len() == STDERR_TAIL {
                t.pop_front();
            }
            t.push_back(line.to_string());
        }
    });

    // The watchdog kills a worker that outlives its timeout.
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if done_rx.recv_timeout(timeout) == Err(mpsc::RecvTimeoutError::Timeout) {
            unsafe { libc::kill(pid, libc::SIGKILL) };
            return true;
        }
        false
    });

    let mut stdin = child.stdin.take().expect("stdin is piped");
    let request = serde_json::to_string(job).expect("job serializes");
    let _ = writeln!(stdin, "{request}");
    drop(stdin);

    let stdout = child.stdout.take().expect("stdout is piped");
    let outcome = read_messages(BufReader::new(stdout), &mut on_pair);
    if outcome.is_err() {
        let _ = child.kill();
    }
    let status = child.wait();
    super::interrupt::clear_child();
    let _ = done_tx.send(());
    let timed_out = watchdog.join().unwrap_or(false);
    let _ = stderr_thread.join();
    let stderr_tail: Vec<String> = tail.lock().unwrap().iter().cloned().collect();
    let wall_ns = started.elapsed().as_nanos() as u64;

    let sigint = {
        use std::os::unix::process::ExitStatusExt;
        matches!(&status, Ok(s) if s.signal() == Some(libc::SIGINT))
    };
    let failure = |reason: String| ForkFailure {
        reason,
        stderr_tail: stderr_tail.clone(),
        sigint,
    };
    if timed_out {
        return Err(failure(format!(
            "the worker was still running after the fork timeout of {} s (design.fork_timeout_s) and was killed",
            timeout.as_secs()
        )));
    }
    let status = status.map_err(|e| failure(format!("cannot wait for the worker: {e}")))?;
    let (checks, summary) = match outcome {
        Ok(done) => done,
        // A worker that died mid-stream: how it died says more than the
        // missing lines do.
        Err(Ended::Early) if !status.success() => return Err(failure(describe_exit(status))),
        Err(Ended::Early) => {
            return Err(failure(
                "the worker's output ended before the fork finished".into(),
            ))
        }
        Err(Ended::Because(reason)) => return Err(failure(reason)),
    };
    if !status.success() {
        return Err(failure(describe_exit(status)));
    }
    Ok(ForkResult {
        checks,
        summary,
        wall_ns,
    })
}

/// Why the stream of messages stopped short.
enum Ended {
    /// End of output without a `Done`.
    Early,
    Because(String),
}

fn describe_exit(s: std::process::ExitStatus) -> String {
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

/// Reads messages until `Done`.
fn read_messages(
    reader: impl BufRead,
    on_pair: &mut impl FnMut(&PairRecord) -> crate::error::Result<()>,
) -> Result<(CheckReport, ForkSummary), Ended> {
    let because = Ended::Because;
    let mut checks = None;
    for (n, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| because(format!("cannot read the worker's output: {e}")))?;
        let msg: WorkerMessage = serde_json::from_str(&line).map_err(|e| {
            let shown: String = line.chars().take(120).collect();
            because(format!(
                "the worker printed a malformed record on line {}: {e}: {shown:?}",
                n + 1
            ))
        })?;
        match msg {
            WorkerMessage::Checked(c) => checks = Some(c),
            WorkerMessage::Pair(p) => on_pair(&p).map_err(|e| because(e.to_string()))?,
            WorkerMessage::Done(s) => {
                let c = checks.ok_or_else(|| {
                    because("the worker finished without reporting its checks".into())
                })?;
                return Ok((c, s));
            }
            WorkerMessage::Failed { message } => return Err(because(message)),
        }
    }
    Err(Ended::Early)
}
