//! Ctrl-C, `kill` and a closed terminal (SIGINT, SIGTERM, SIGHUP), in every
//! phase: measuring, analysing, rendering, talking to a database. Once
//! [`install`]ed, a signal no longer ends the process; it is counted (by
//! signal-hook, on a thread of its own), and every wait of runner polls the
//! count, stops, and leaves a folder that can be resumed or re-rendered.
//!
//! Long work that cannot poll (the analysis, a blocking database call) runs
//! through [`run`] on a thread of its own while the caller watches the count,
//! so the statistics stay pure functions with no signal checks inside.
//!
//! The running worker is stopped by the parent's own loop (it polls the count
//! while it waits for the worker), never from a signal handler: only the
//! thread that reaps the worker kills it, so a reused pid is never signalled.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Once};
use std::time::Duration;

static COUNT: AtomicUsize = AtomicUsize::new(0);
static INSTALL: Once = Once::new();

/// How often a wait looks at the count: a signal is answered within this.
pub const POLL: Duration = Duration::from_millis(50);

/// The work was cut short by a signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("interrupted (Ctrl-C or a termination signal)")]
pub struct Interrupted;

impl runner_core::error::Coded for Interrupted {
    /// The input was fine and what finished is kept: a stopped run is
    /// resumed, a stopped report rendered again (exit 1).
    fn failure(&self) -> runner_core::error::Failure {
        runner_core::error::Failure::RunFailed
    }
}

/// Counts SIGINT, SIGTERM and SIGHUP for the rest of the process.
pub fn install() {
    INSTALL.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        match signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) {
            Ok(mut signals) => {
                std::thread::spawn(move || {
                    for _ in signals.forever() {
                        COUNT.fetch_add(1, Ordering::SeqCst);
                    }
                });
            }
            // Without the handler the default action (exit) stays: no worse
            // than before, and a finished fork is on disk either way.
            Err(e) => runner_core::console::warn(&format!("cannot catch signals: {e}")),
        }
    });
}

/// Signals received so far.
pub fn count() -> usize {
    COUNT.load(Ordering::SeqCst)
}

pub fn interrupted() -> bool {
    count() > 0
}

/// Runs `work` on a thread of its own and waits for it, or returns
/// `Err(Interrupted)` as soon as more than `since` signals have come (pass
/// [`count()`] from before the phase, so a clean-up that runs after a first
/// Ctrl-C can still be cut short by a second). An abandoned thread goes on
/// until the process exits, which is what the caller does next.
pub fn run<T: Send + 'static>(
    since: usize,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Interrupted> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(work());
    });
    loop {
        if count() > since {
            return Err(Interrupted);
        }
        match rx.recv_timeout(POLL) {
            Ok(t) => return Ok(t),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // The work panicked: say so as the panic would have.
                panic!("a runner thread panicked")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_returns_the_work_result() {
        assert_eq!(run(usize::MAX - 1, || 6 * 7), Ok(42));
    }

    #[test]
    fn run_stops_waiting_once_a_signal_was_counted_after_since() {
        // `since` below the count: as if a signal came during the phase.
        let before = count();
        COUNT.fetch_add(1, Ordering::SeqCst);
        let r = run(before, || {
            std::thread::sleep(Duration::from_secs(30));
        });
        COUNT.fetch_sub(1, Ordering::SeqCst);
        assert_eq!(r, Err(Interrupted));
    }
}
