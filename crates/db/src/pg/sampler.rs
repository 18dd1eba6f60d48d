//! What the clients of `clients = N` wait on, sampled from
//! `pg_stat_activity` while a run is going: on a connection of its own, a
//! thread reads every millisecond the `wait_event_type` of each client
//! that is active (running a statement), `CPU` for none. Lock waits are
//! the `Lock` samples; their share of all samples is the share of client
//! time spent waiting for a lock, within the sampling's resolution.
//!
//! Sampling rather than timing through `pg_locks`: it adds no statement
//! to the clients' own transactions and no work to their runs, it sees
//! every kind of wait (light-weight locks, I/O, buffer pins), not only
//! heavyweight locks, and its cost is one short query per millisecond on
//! another connection, the same for both arms. A run shorter than the
//! interval may get no sample; the share is over many runs.

use super::connect::{connect, pg};
use crate::waits::{Sample, KINDS};
use crate::DbError;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

const INTERVAL: Duration = Duration::from_millis(1);

pub struct Sampler {
    /// The run going on (its number plus one), 0 between runs.
    run: Arc<AtomicU32>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<Vec<Sample>, DbError>>>,
    /// The sampler's own backend, whose CPU time is the run's.
    pid: Option<u32>,
}

impl Sampler {
    pub fn start(url: &str, pids: Vec<i32>) -> Result<Sampler, DbError> {
        let (mut client, _) = connect(url)?;
        client
            .batch_execute("SET application_name TO 'runner wait sampler'")
            .map_err(pg("start the wait sampler"))?;
        let pid = client
            .query_one("SELECT pg_backend_pid()", &[])
            .ok()
            .map(|r| r.get::<_, i32>(0) as u32);
        let query = client
            .prepare(
                "SELECT coalesce(wait_event_type, 'CPU') FROM pg_stat_activity \
                 WHERE pid = ANY($1) AND state = 'active'",
            )
            .map_err(pg("start the wait sampler"))?;
        let run = Arc::new(AtomicU32::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (r, s) = (run.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut samples = Vec::new();
            while !s.load(Ordering::Acquire) {
                let now = r.load(Ordering::Acquire);
                if now == 0 {
                    std::thread::park_timeout(INTERVAL);
                    continue;
                }
                for row in client.query(&query, &[&pids]).map_err(pg("sample waits"))? {
                    let kind: &str = row.get(0);
                    let k = KINDS
                        .iter()
                        .position(|x| *x == kind)
                        .unwrap_or(KINDS.len() - 1);
                    samples.push((now - 1, k as u8));
                }
                std::thread::sleep(INTERVAL);
            }
            Ok(samples)
        });
        Ok(Sampler {
            run,
            stop,
            thread: Some(thread),
            pid,
        })
    }

    /// The sampler connection's backend process.
    pub fn backend_pid(&self) -> Option<u32> {
        self.pid
    }

    /// Run `index` (counted from 0 over the instance's timed runs) starts.
    pub fn begin(&self, index: u32) {
        self.run.store(index + 1, Ordering::Release);
        if let Some(t) = &self.thread {
            t.thread().unpark();
        }
    }

    /// The run ended: no sample until the next begins.
    pub fn end(&self) {
        self.run.store(0, Ordering::Release);
    }

    /// Stops sampling and returns every sample taken.
    pub fn finish(&mut self) -> Result<Vec<Sample>, DbError> {
        self.stop.store(true, Ordering::Release);
        match self.thread.take() {
            Some(t) => {
                t.thread().unpark();
                t.join().unwrap_or(Ok(Vec::new()))
            }
            None => Ok(Vec::new()),
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}
