//! `noop`: returns at once, so a pair of them measures the harness's own floor.

use super::{Outcome, Strategy};
use crate::workload::Overrides;

pub struct Noop;

impl Strategy for Noop {
    #[inline(never)]
    fn run(&mut self, _input: &Overrides) -> anyhow::Result<Outcome> {
        Ok(Outcome::Nothing)
    }
}
