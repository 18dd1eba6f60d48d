//! Strategies: the things a pair times. One file per kind behind one trait.

use crate::workload::{Overrides, Projection};

/// What one run of a strategy returned. Compared bit for bit between arms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// The strategy computed the preview.
    Preview(Projection),
    /// The strategy computes nothing (`spin`, `noop`); nothing to compare.
    Nothing,
}

/// A thing the harness can time: set up once per fork, then run per input.
pub trait Strategy {
    /// Runs one preview for the slider position in `input`.
    fn run(&mut self, input: &Overrides) -> anyhow::Result<Outcome>;
}
