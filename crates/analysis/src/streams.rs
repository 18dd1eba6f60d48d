//! The bootstrap streams of one run, all under [`runner_core::seed::Domain::Bootstrap`] of the
//! master seed, so any interval can be recomputed from `run.json` alone.
//!
//! | statistic            | path                  | sample order                          |
//! |----------------------|-----------------------|---------------------------------------|
//! | order CI             | `[cell, u64::MAX - 2]`| per fork, a: D with treatment first, b: second |
//! | carry-over CI        | `[cell, u64::MAX - 3]`| per fork, a: first-in-pair baseline after a treatment, b: after a baseline |
//! | treatment carry-over | `[cell, u64::MAX - 4]`| per fork, a: first-in-pair treatment after a baseline, b: after a treatment |
//! | machines CI          | `[cell, u64::MAX - 32]`| hosts by name; each host's forks ascending; D by `pair` |
//! | layout spread ratio  | `[u64::MAX - 64]`     | fixed cells, then random cells, ascending; each cell's forks ascending |
//! | layout factor i      | `[u64::MAX - 64, i]`  | permutations of ln(baseline median) within each random cell, cells ascending |
//!
//! The per-fork, pooled and CPU/RSS intervals of a median are exact
//! (`stats::exact_median`) and the intervals over the forks are Student's
//! t: they resample nothing. Each fork's seed
//! (`[cell, fork]`, run.json `seeds.bootstrap`) drives its dither: one
//! uniform draw per measured pair, in pair order (`dither`). The pooled,
//! hierarchical and CPU/RSS seeds (`[cell, u64::MAX]`, `[cell, u64::MAX -
//! 1]`, `[cell, u64::MAX - 16..18]`) are still derived and recorded in
//! run.json, unused, so older runs keep their meaning. Forks are u32, so the pooled paths can never meet a fork's. The order and
//! carry-over streams are hierarchical over the forks that have values in
//! both groups (ascending fork order; each group in pair, resp. run, order).
//! Draw order per stream is that of `stats::resample`.

use rand::SeedableRng;
use rand_pcg::Pcg64;

// The seeds themselves are derived in `runner_core::seed`, the lowest layer, so
// that `run_folder` records and checks them without importing the analysis.
pub(crate) use runner_core::seed::{cell_seeds, fork_seed};

/// The machines -> forks -> pairs stream of a run over several hosts.
pub(crate) fn machines(master: u64, cell: u32) -> Pcg64 {
    Pcg64::seed_from_u64(runner_core::seed::machines_seed(master, cell))
}

/// The bootstrap of the Layout section's spread ratio (one per run).
pub(crate) fn layout(master: u64) -> Pcg64 {
    runner_core::seed::rng(
        master,
        runner_core::seed::Domain::Bootstrap,
        &[u64::MAX - 64],
    )
}

/// The permutations behind the p-value of layout factor `i`
/// (`analysis::layout::FACTORS[i]`).
pub(crate) fn layout_factor(master: u64, i: u64) -> Pcg64 {
    runner_core::seed::rng(
        master,
        runner_core::seed::Domain::Bootstrap,
        &[u64::MAX - 64, i],
    )
}

pub(crate) fn fork(master: u64, cell: u32, fork: u32) -> Pcg64 {
    Pcg64::seed_from_u64(fork_seed(master, cell, fork))
}

pub(crate) fn order(master: u64, cell: u32) -> Pcg64 {
    Pcg64::seed_from_u64(cell_seeds(master, cell).order)
}

pub(crate) fn carry_over(master: u64, cell: u32) -> Pcg64 {
    Pcg64::seed_from_u64(cell_seeds(master, cell).carry_over)
}

/// The treatment's carry-over contrast (the baseline's is [`carry_over`]).
pub(crate) fn carry_over_treatment(master: u64, cell: u32) -> Pcg64 {
    cell_stream(master, cell, 4)
}

/// A cell's stream at path `[cell, u64::MAX - k]`.
fn cell_stream(master: u64, cell: u32, k: u64) -> Pcg64 {
    runner_core::seed::rng(
        master,
        runner_core::seed::Domain::Bootstrap,
        &[u64::from(cell), u64::MAX - k],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngCore;

    /// The recorded seeds are the ones the streams use.
    #[test]
    fn recorded_seeds_drive_the_streams() {
        let s = cell_seeds(9, 3);
        let expect = |seed: u64| Pcg64::seed_from_u64(seed).next_u64();
        assert_eq!(order(9, 3).next_u64(), expect(s.order));
        assert_eq!(carry_over(9, 3).next_u64(), expect(s.carry_over));
        let same = runner_core::seed::rng(9, runner_core::seed::Domain::Bootstrap, &[3, u64::MAX])
            .next_u64();
        assert_eq!(same, expect(s.pooled));
        assert_eq!(fork(9, 3, 1).next_u64(), expect(fork_seed(9, 3, 1)));
    }
}
