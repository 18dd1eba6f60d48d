//! The resample indices behind every resampled interval of an analysis, so
//! that anyone can recompute the intervals without this code (e.g. with
//! numpy, as `tests/fixtures/reference.py` does). The per-fork and pooled
//! intervals of a median are exact (`stats::exact_median`) and draw nothing,
//! and the intervals over the forks are Student's t, so only the nested
//! designs appear here.
//!
//! Each list replays the stream of [`super::streams`] that `analyse` uses,
//! via the `stats::*_indices` functions: exactly for samples below 64
//! values (the window of the two-level draws is then every rank; see
//! `stats::bootstrap`), a plain resample of the same distribution above. Indices refer to each sample sorted
//! ascending (see `stats::resample`); an order or
//! carry-over slot is `[g, a indices, b indices]`, g counting only the forks
//! that have values in both groups (from `stats::CLUSTER_MIN_FORKS` such
//! forks on, the cluster bootstrap: every index of the fork's a and b
//! values once). Sample contents
//! and order are as in the table of [`super::streams`].

use super::{carry_over, group, order, streams, AnalysisError, AnalysisInput, ForkData};
use rand_pcg::Pcg64;
use runner_core::record::PairRecord;
use runner_spec::Ordering;
use runner_stats::{
    cluster_indices, hierarchical_two_sample_indices, resamples_whole_forks, TwoSampleSlot,
};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResampleTrace {
    pub resamples: u32,
    pub cells: Vec<CellTrace>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellTrace {
    pub cell: u32,
    /// Slots `[g, a indices, b indices]`, g the position among the forks
    /// that have both groups. Null unless paired-random and some fork had
    /// the treatment in both positions.
    pub order: Option<Vec<Vec<TwoSampleSlot>>>,
    /// The same; null when no fork has first-in-pair baselines after both arms.
    pub carry_over: Option<Vec<Vec<TwoSampleSlot>>>,
}

/// The indices `analyse(input, pairs)` draws, cell by cell.
pub fn resample_trace(
    input: &AnalysisInput,
    pairs: &[PairRecord],
) -> Result<ResampleTrace, AnalysisError> {
    let grouped = group(input, pairs)?;
    let (seed, b) = (input.master_seed, input.resamples);
    let cells = input
        .cells
        .iter()
        .map(|info| {
            let forks: &[ForkData<'_>] = &grouped[&info.cell];
            fn two<T>(
                per_fork: &[(Vec<T>, Vec<T>)],
                mut rng: Pcg64,
                b: u32,
            ) -> Option<Vec<Vec<TwoSampleSlot>>> {
                let sizes: Vec<(u32, u32)> = super::usable(per_fork)
                    .0
                    .iter()
                    .map(|(x, y)| (x.len() as u32, y.len() as u32))
                    .collect();
                if sizes.is_empty() {
                    return None;
                }
                if !resamples_whole_forks(sizes.len()) {
                    return Some(hierarchical_two_sample_indices(&mut rng, &sizes, b));
                }
                // The cluster bootstrap: a chosen fork brings every value once.
                let every = |n: u32| (0..n).collect::<Vec<u32>>();
                let chosen = cluster_indices(&mut rng, sizes.len() as u32, b);
                Some(
                    chosen
                        .into_iter()
                        .map(|forks| {
                            forks
                                .into_iter()
                                .map(|g| {
                                    let (na, nb) = sizes[g as usize];
                                    (g, every(na), every(nb))
                                })
                                .collect()
                        })
                        .collect(),
                )
            }
            CellTrace {
                cell: info.cell,
                order: match input.ordering {
                    Ordering::PairedRandom => two(
                        &order::position_groups(forks),
                        streams::order(seed, info.cell),
                        b,
                    ),
                    Ordering::Blocked => None,
                },
                carry_over: two(
                    &carry_over::predecessor_groups(forks),
                    streams::carry_over(seed, info.cell),
                    b,
                ),
            }
        })
        .collect();
    Ok(ResampleTrace {
        resamples: b,
        cells,
    })
}
