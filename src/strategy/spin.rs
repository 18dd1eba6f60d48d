//! `spin`: a noise-free target of known cost, to calibrate the harness.

use super::error::Result;
use super::{Outcome, Strategy, NOTHING};
use std::time::{Duration, Instant};

/// Busy-waits rather than sleeps: a sleep hands the core to the scheduler
/// and wakes up late by a variable amount, which is exactly the noise this
/// strategy exists to exclude.
pub struct Spin {
    duration: Duration,
}

impl Spin {
    pub fn new(duration_ns: u64) -> Spin {
        Spin {
            duration: Duration::from_nanos(duration_ns),
        }
    }
}

/// Spins until the monotonic clock passes `start + d`; returns the time spent.
pub(crate) fn spin_for(d: Duration) -> Duration {
    let start = Instant::now();
    let end = start + d;
    loop {
        let now = Instant::now();
        if now >= end {
            return now - start;
        }
        std::hint::spin_loop();
    }
}

impl Strategy for Spin {
    fn run(&mut self, _input: u64) -> Result<()> {
        spin_for(self.duration);
        Ok(())
    }

    fn after(&mut self) -> Result<Outcome> {
        Ok(Outcome::of(NOTHING))
    }
}
