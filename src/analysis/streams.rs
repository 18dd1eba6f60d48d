//! The bootstrap streams of one run, all under [`Domain::Bootstrap`] of the
//! master seed, so any interval can be recomputed from `run.json` alone.
//!
//! | statistic            | path                  | sample order                          |
//! |----------------------|-----------------------|---------------------------------------|
//! | fork CI              | `[cell, fork]`        | the fork's measured D by `pair`       |
//! | pooled CI            | `[cell, u64::MAX]`    | D by fork, then `pair`                |
//! | hierarchical CI      | `[cell, u64::MAX - 1]`| forks ascending; D by `pair` in each  |
//! | order CI             | `[cell, u64::MAX - 2]`| a: D with treatment first, b: second  |
//! | carry-over CI        | `[cell, u64::MAX - 3]`| a: baseline after treatment, b: after baseline |
//!
//! Forks are u32, so the pooled paths can never meet a fork's. Two-sample
//! samples are in fork order, then run order. Draw order per stream is that
//! of `stats::resample`.

use crate::seed::{self, Domain};
use rand_pcg::Pcg64;

pub fn fork(master: u64, cell: u32, fork: u32) -> Pcg64 {
    seed::rng(
        master,
        Domain::Bootstrap,
        &[u64::from(cell), u64::from(fork)],
    )
}

pub fn pooled(master: u64, cell: u32) -> Pcg64 {
    seed::rng(master, Domain::Bootstrap, &[u64::from(cell), u64::MAX])
}

pub fn hierarchical(master: u64, cell: u32) -> Pcg64 {
    seed::rng(master, Domain::Bootstrap, &[u64::from(cell), u64::MAX - 1])
}

pub fn order(master: u64, cell: u32) -> Pcg64 {
    seed::rng(master, Domain::Bootstrap, &[u64::from(cell), u64::MAX - 2])
}

pub fn carry_over(master: u64, cell: u32) -> Pcg64 {
    seed::rng(master, Domain::Bootstrap, &[u64::from(cell), u64::MAX - 3])
}
