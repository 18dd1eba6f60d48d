//! Start-next for the fork loop (`fork_loop`): which job runs after the
//! current fork, its tables made a fork ahead, and its worker started the
//! moment the current fork's timing ends, so it sets up while this fork is
//! stored.

use super::protocol::JobRequest;
use super::queue::{Ahead, Queue};
use super::spawn::{self, ForkFailure, Worker};
use runner_core::error::Result;
use runner_os::environment::sentinel::Snapshot;
use std::time::Duration;

/// Runner and its workers are "own" CPU time to the sentinel.
pub(super) fn own() -> [u32; 1] {
    [std::process::id()]
}

/// The jobs ahead of the current fork.
pub(super) struct Upcoming<'a> {
    /// Which job comes next, once stopped cells are passed over.
    pub queue: Queue<'a>,
    /// The tables of tx-rollback arms on PostgreSQL, made a fork ahead.
    pub ahead: Ahead,
    pub requests: &'a [JobRequest],
    pub timeout: Duration,
    /// The next fork's worker, started when this fork's timing ended: it
    /// sets up and checks its arms while this fork is stored, and waits for
    /// its go.
    pub next: Option<(usize, std::result::Result<Worker, ForkFailure>)>,
    /// The fork run before this one, whose tables go when this one's
    /// timing ends.
    pub previous: Option<usize>,
}

impl Upcoming<'_> {
    /// The worker of job `i`: the one started ahead, unless none was or
    /// its cell has since stopped (dropped here, which kills it).
    pub(super) fn take_worker(
        &mut self,
        i: usize,
    ) -> Result<std::result::Result<Worker, ForkFailure>> {
        Ok(match self.next.take() {
            Some((k, w)) if k == i => w,
            _ => {
                if !self.ahead.ready(i) {
                    let after = self.queue.next(Some(i));
                    self.ahead.step(&self.queue, None, &[Some(i), after])?;
                }
                self.start(i)
            }
        })
    }

    fn start(&self, i: usize) -> std::result::Result<Worker, ForkFailure> {
        spawn::Worker::start(&self.requests[i], self.timeout)
    }

    /// Start-next, called the moment job `i`'s timing ends: the next
    /// worker first, since its start-up is the longest part of the time
    /// between two forks' timing (runner's own CPU time to the sentinel's
    /// snapshot, taken here right after). Its tables were made a fork
    /// ahead, unless a stop changed which job is next: then they are made
    /// first, and no worker starts if that fails. The fork before last is
    /// long done; the tables of the fork after next are made only once
    /// the next worker runs. Returns the snapshot and whether the tables
    /// were made.
    pub(super) fn start_next(&mut self, i: usize) -> (Option<Snapshot>, Result<()>) {
        let n = self.queue.next(Some(i));
        let then = n.and_then(|n| self.queue.next(Some(n)));
        let ready = n.is_none_or(|n| self.ahead.ready(n));
        let mut made = Ok(());
        if !ready {
            made = self.ahead.step(&self.queue, self.previous, &[n, then]);
        }
        self.next = n.filter(|_| made.is_ok()).map(|n| (n, self.start(n)));
        let after = Snapshot::take(&own());
        if ready {
            made = self.ahead.step(&self.queue, self.previous, &[then]);
        }
        (after, made)
    }
}
