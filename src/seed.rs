//! Seed derivation: every random stream in a run comes from the master seed.
//!
//! A derived seed is a pure function of the master seed and a path of small
//! integers (a domain tag, then e.g. cell and fork), so any stream can be
//! recomputed from `run.json` alone and reports reproduce byte for byte.
//! The mixer is SplitMix64 (Steele, Lea & Flood 2014), applied once per path
//! element; the streams themselves are `rand_pcg::Pcg64`.

use rand::SeedableRng;
use rand_pcg::Pcg64;

/// Domain tags, so that streams for different purposes never coincide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub enum Domain {
    /// Order of (cell, fork) jobs.
    Schedule = 1,
    /// A job's own seed (inputs and coin flips in the worker).
    Job = 2,
    /// Bootstrap resampling for one (cell, fork) or a cell's pooled statistics.
    Bootstrap = 3,
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed for `domain` at `path` (e.g. `[cell, fork]`) under `master`.
pub fn derive(master: u64, domain: Domain, path: &[u64]) -> u64 {
    let mut h = splitmix64(master ^ (domain as u64).wrapping_mul(0xA24B_AED4_963E_E407));
    for &p in path {
        h = splitmix64(h ^ p.wrapping_mul(0x9FB2_1C65_1E98_DF25));
    }
    h
}

/// A PCG stream for `domain` at `path`.
pub fn rng(master: u64, domain: Domain, path: &[u64]) -> Pcg64 {
    Pcg64::seed_from_u64(derive(master, domain, path))
}

/// The seeds of one cell's pooled bootstrap streams, as recorded in
/// run.json (paths in the table of `analysis::streams`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CellSeeds {
    pub cell: u32,
    pub pooled: u64,
    pub hierarchical: u64,
    pub order: u64,
    pub carry_over: u64,
}

/// The seed of the bootstrap of one fork's CI.
pub fn fork_seed(master: u64, cell: u32, fork: u32) -> u64 {
    derive(
        master,
        Domain::Bootstrap,
        &[u64::from(cell), u64::from(fork)],
    )
}

/// The seeds of a cell's pooled, hierarchical, order and carry-over streams.
pub fn cell_seeds(master: u64, cell: u32) -> CellSeeds {
    let at = |k: u64| derive(master, Domain::Bootstrap, &[u64::from(cell), u64::MAX - k]);
    CellSeeds {
        cell,
        pooled: at(0),
        hierarchical: at(1),
        order: at(2),
        carry_over: at(3),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_seeds_are_stable_and_distinct() {
        let a = derive(42, Domain::Job, &[0, 1]);
        assert_eq!(a, derive(42, Domain::Job, &[0, 1]));
        assert_ne!(a, derive(42, Domain::Job, &[1, 0]));
        assert_ne!(a, derive(42, Domain::Bootstrap, &[0, 1]));
        assert_ne!(a, derive(43, Domain::Job, &[0, 1]));
    }
}
