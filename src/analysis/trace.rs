//! The resample indices behind every interval of an analysis, so that anyone
//! can recompute the intervals without this code (e.g. with numpy, as
//! `tests/fixtures/reference.py` does).
//!
//! Each list replays the stream of [`super::streams`] that `analyse` uses,
//! via the `stats::*_indices` functions. Indices refer to each sample sorted
//! ascending (see `stats::resample`); a hierarchical slot is `[g, indices]`
//! with g the position of the fork in ascending fork order. Sample contents
//! and order are as in the table of [`super::streams`].

use super::{carry_over, group, order, streams, AnalysisError, AnalysisInput, ForkData};
use crate::record::PairRecord;
use crate::spec::Ordering;
use crate::stats::{hierarchical_indices, resample_indices, two_sample_indices};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResampleTrace {
    pub resamples: u32,
    pub cells: Vec<CellTrace>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellTrace {
    pub cell: u32,
    pub forks: Vec<ForkTrace>,
    pub pooled: Vec<Vec<u32>>,
    pub hierarchical: Vec<Vec<(u32, Vec<u32>)>>,
    /// Null unless paired-random with both positions present.
    pub order: Option<Vec<(Vec<u32>, Vec<u32>)>>,
    /// Null when either predecessor group is empty.
    pub carry_over: Option<Vec<(Vec<u32>, Vec<u32>)>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForkTrace {
    pub fork: u32,
    pub indices: Vec<Vec<u32>>,
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
            let sizes: Vec<u32> = forks.iter().map(|f| f.measured.len() as u32).collect();
            let two = |a: usize, c: usize, mut rng| {
                (a > 0 && c > 0).then(|| two_sample_indices(&mut rng, a as u32, c as u32, b))
            };
            let (first, second) = order::position_groups(forks);
            let (after_t, after_b) = carry_over::predecessor_groups(forks);
            CellTrace {
                cell: info.cell,
                forks: forks
                    .iter()
                    .map(|f| ForkTrace {
                        fork: f.fork,
                        indices: resample_indices(
                            &mut streams::fork(seed, info.cell, f.fork),
                            f.measured.len() as u32,
                            b,
                        ),
                    })
                    .collect(),
                pooled: resample_indices(
                    &mut streams::pooled(seed, info.cell),
                    sizes.iter().sum(),
                    b,
                ),
                hierarchical: hierarchical_indices(
                    &mut streams::hierarchical(seed, info.cell),
                    &sizes,
                    b,
                ),
                order: match input.ordering {
                    Ordering::PairedRandom => {
                        two(first.len(), second.len(), streams::order(seed, info.cell))
                    }
                    Ordering::Blocked => None,
                },
                carry_over: two(
                    after_t.len(),
                    after_b.len(),
                    streams::carry_over(seed, info.cell),
                ),
            }
        })
        .collect();
    Ok(ResampleTrace {
        resamples: b,
        cells,
    })
}
