//! `noop`: returns at once, so a pair of them measures the harness's own floor.

use super::{Outcome, Strategy, NOTHING};

pub struct Noop;

impl Strategy for Noop {
    #[inline(never)]
    fn run(&mut self, _input: u64) -> anyhow::Result<()> {
        Ok(())
    }

    fn after(&mut self) -> anyhow::Result<Outcome> {
        Ok(Outcome::of(NOTHING))
    }
}
