//! `noop`: returns at once, so a pair of them measures the harness's own floor.

use super::error::Result;
use super::{Outcome, Strategy, NOTHING};

pub struct Noop;

impl Strategy for Noop {
    #[inline(never)]
    fn run(&mut self, _input: u64) -> Result<()> {
        Ok(())
    }

    fn after(&mut self) -> Result<Outcome> {
        Ok(Outcome::of(NOTHING))
    }
}
