//! N connections that run an arm's statements at once (`clients = N`):
//! each on a thread of its own with its session, all released together by
//! one barrier and waited for by another. The caller's thread only opens
//! and closes the gates, so a run's time (taken around [`Clients::go`]) is
//! from the release until the last client has ended.
//!
//! Every step (begin, run, close) goes through the same two barriers, so
//! no client is ever a step ahead of another; the untimed steps are
//! released the same way as the timed one.
//!
//! A client rolls back to its savepoint as soon as its statements end,
//! within the run: the locks it took are released then, as a client that
//! commits releases them, so another client waiting for one of its rows
//! goes on. (Were the rollback a later step, a client done with its
//! statements would hold its row locks until every client was done, and
//! one waiting for them never would be.) A run's time therefore ends with
//! the last client's rollback; a client's own time ends with its last row.

use super::session::{SqlSession, StatementRows};
use super::DbError;
use std::sync::{Arc, Barrier, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    Begin,
    Run,
    /// A run that keeps its rows (the checks before timing).
    Collect,
    Close,
}

/// One client's mailbox: what to run, and what came of it.
#[derive(Default)]
struct Slot {
    step: Option<Step>,
    statements: Vec<String>,
    result: Option<Result<u64, DbError>>,
    rows: Vec<StatementRows>,
    /// The client's own time: from its release to its last row.
    ns: u64,
}

pub struct Clients {
    slots: Vec<Arc<Mutex<Slot>>>,
    start: Arc<Barrier>,
    end: Arc<Barrier>,
    threads: Vec<JoinHandle<()>>,
    closed: bool,
}

/// What one client's run came to.
pub struct ClientRun {
    pub result: Result<u64, DbError>,
    pub ns: u64,
    pub rows: Vec<StatementRows>,
}

impl Clients {
    /// Moves each session onto a thread of its own.
    pub fn start(sessions: Vec<Box<dyn SqlSession + Send>>) -> Clients {
        let n = sessions.len();
        let start = Arc::new(Barrier::new(n + 1));
        let end = Arc::new(Barrier::new(n + 1));
        let mut slots = Vec::with_capacity(n);
        let mut threads = Vec::with_capacity(n);
        for session in sessions {
            let slot = Arc::new(Mutex::new(Slot::default()));
            slots.push(slot.clone());
            let (start, end) = (start.clone(), end.clone());
            threads.push(std::thread::spawn(move || {
                serve(session, &slot, &start, &end)
            }));
        }
        Clients {
            slots,
            start,
            end,
            threads,
            closed: false,
        }
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Client `i`'s statements for the next run, written by `fill` into
    /// its own buffers (no allocation once they have grown).
    pub fn set_statements(&mut self, i: usize, fill: impl FnOnce(&mut Vec<String>)) {
        fill(&mut lock(&self.slots[i]).statements);
    }

    fn cycle(&self, step: Step) {
        for s in &self.slots {
            lock(s).step = Some(step);
        }
        self.start.wait();
        self.end.wait();
    }

    /// Every client opens its run's savepoint.
    pub fn begin(&mut self) -> Result<(), DbError> {
        self.cycle(Step::Begin);
        self.results().map(|_| ())
    }

    /// The timed part: releases every client and returns when the last has
    /// ended. Results are read with [`Clients::take_runs`].
    pub fn go(&mut self) {
        self.cycle(Step::Run);
    }

    /// Like [`Clients::go`], keeping every row.
    pub fn go_collecting(&mut self) {
        self.cycle(Step::Collect);
    }

    /// Each client's result, time and rows from the last run, in order.
    pub fn take_runs(&mut self) -> Vec<ClientRun> {
        self.slots
            .iter()
            .map(|s| {
                let mut s = lock(s);
                ClientRun {
                    result: s.result.take().unwrap_or(Ok(0)),
                    ns: s.ns,
                    rows: std::mem::take(&mut s.rows),
                }
            })
            .collect()
    }

    /// Every client rolls back its fork's transaction and its thread ends.
    pub fn close(&mut self) -> Result<(), DbError> {
        if std::mem::replace(&mut self.closed, true) {
            return Ok(());
        }
        self.cycle(Step::Close);
        let result = self.results();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        result.map(|_| ())
    }

    /// The first error of the last step, else the fingerprints.
    fn results(&mut self) -> Result<Vec<u64>, DbError> {
        self.take_runs().into_iter().map(|r| r.result).collect()
    }
}

impl Drop for Clients {
    /// A fork that failed still ends its clients (their transactions roll
    /// back with the connections).
    fn drop(&mut self) {
        let _ = self.close();
    }
}

fn lock(slot: &Mutex<Slot>) -> std::sync::MutexGuard<'_, Slot> {
    slot.lock().unwrap_or_else(|e| e.into_inner())
}

/// A client's thread: one step per release, until `Close`.
fn serve(
    mut session: Box<dyn SqlSession + Send>,
    slot: &Mutex<Slot>,
    start: &Barrier,
    end: &Barrier,
) {
    loop {
        start.wait();
        let (step, statements) = {
            let mut s = lock(slot);
            (s.step.take(), std::mem::take(&mut s.statements))
        };
        let t = Instant::now();
        let mut rows = Vec::new();
        let mut ns = 0;
        let result = match step {
            Some(Step::Begin) => session.begin().map(|_| 0),
            Some(s @ (Step::Run | Step::Collect)) => {
                let keep = (s == Step::Collect).then_some(&mut rows);
                let ran = session.run(&statements, keep);
                ns = t.elapsed().as_nanos() as u64;
                // Back to the savepoint at once, whatever the run did; a
                // checked run also looks at the tables the arm copied.
                match session.rollback() {
                    Ok(()) if s == Step::Collect => session.copies_untouched().and(ran),
                    Ok(()) => ran,
                    Err(e) => Err(e),
                }
            }
            Some(Step::Close) => session.close().map(|_| 0),
            None => Ok(0),
        };
        {
            let mut s = lock(slot);
            s.statements = statements;
            s.result = Some(result);
            s.rows = rows;
            s.ns = ns;
        }
        end.wait();
        if step == Some(Step::Close) {
            return;
        }
    }
}
