//! Which jobs a shard runs: the one seeded plan dealt over N shards.
//!
//! The jobs are numbered cell by cell (cell 0's forks 0..F, then cell 1's,
//! ...) and dealt like cards: job (cell c, fork f) goes to shard
//! `(c x F + f) mod N`. Per cell that is a round-robin over the shards that
//! starts where the previous cell stopped (a per-cell rotation), so:
//!
//! - every cell has forks on min(F, N) shards: on every shard whenever it
//!   has at least as many forks as there are shards. A cell measured on one
//!   machine only would be confounded with that machine: its difference
//!   from the other cells could be the machine's, and the machines level of
//!   the analysis could not separate them;
//! - the shards' sizes differ by at most one job (the rotation spreads the
//!   cells' remainders F mod N over different shards instead of piling
//!   them on the first ones).
//!
//! Each shard runs its jobs in the order of the seeded schedule (shuffled or
//! sequential, as the spec says), and with each job's own seed, so the
//! union of the shards is exactly the job list of one run.

use super::Job;

/// The 0-based shard of job (cell, fork) when `forks` forks per cell are
/// dealt over `count` shards (see the module doc).
pub fn shard_of(cell: u32, fork: u32, forks: u32, count: u32) -> u32 {
    let k = u64::from(cell) * u64::from(forks) + u64::from(fork);
    (k % u64::from(count.max(1))) as u32
}

/// The jobs of shard `index` (1-based) of `count`, in the order of `jobs`
/// (the plan's schedule).
pub fn share(jobs: &[Job], forks: u32, index: u32, count: u32) -> Vec<Job> {
    jobs.iter()
        .filter(|j| shard_of(j.cell, j.fork, forks, count) + 1 == index)
        .copied()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn jobs(cells: u32, forks: u32) -> Vec<Job> {
        (0..cells)
            .flat_map(|cell| {
                (0..forks).map(move |fork| Job {
                    cell,
                    fork,
                    seed: 0,
                })
            })
            .collect()
    }

    /// 3 cells x 2 forks over 4 shards: numbers 0..6 dealt mod 4.
    #[test]
    fn deals_cell_by_cell_like_cards() {
        let got: Vec<u32> = jobs(3, 2)
            .iter()
            .map(|j| shard_of(j.cell, j.fork, 2, 4))
            .collect();
        assert_eq!(got, [0, 1, 2, 3, 0, 1]);
    }

    /// Every job once; sizes within one; every cell on min(F, N) shards.
    #[test]
    fn shares_partition_the_plan_evenly_and_spread_every_cell() {
        for (cells, forks, count) in [(8, 10, 2), (8, 10, 3), (3, 2, 4), (5, 7, 7), (1, 1, 1)] {
            let all = jobs(cells, forks);
            let shares: Vec<Vec<Job>> = (1..=count).map(|i| share(&all, forks, i, count)).collect();
            let union: BTreeSet<(u32, u32)> =
                shares.iter().flatten().map(|j| (j.cell, j.fork)).collect();
            assert_eq!(union.len(), all.len(), "{cells}x{forks}/{count}");
            assert_eq!(shares.iter().map(Vec::len).sum::<usize>(), all.len());
            let sizes: Vec<usize> = shares.iter().map(Vec::len).collect();
            let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            assert!(hi - lo <= 1, "{sizes:?}");
            for cell in 0..cells {
                let on = shares
                    .iter()
                    .filter(|s| s.iter().any(|j| j.cell == cell))
                    .count();
                assert_eq!(on as u32, forks.min(count), "cell {cell}");
            }
        }
    }

    /// A shard keeps the schedule's order.
    #[test]
    fn a_share_keeps_the_schedule_order() {
        let mut all = jobs(2, 2);
        all.reverse();
        let s = share(&all, 2, 1, 2);
        assert_eq!(
            s.iter().map(|j| (j.cell, j.fork)).collect::<Vec<_>>(),
            [(1, 0), (0, 0)]
        );
    }
}
