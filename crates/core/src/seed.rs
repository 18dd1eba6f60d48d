//! Seed derivation: every random stream in a run comes from the master seed.
//!
//! A derived seed is a pure function of the master seed and a path of small
//! integers (a domain tag, then e.g. cell and fork), so any stream can be
//! recomputed from `run.json` alone and reports reproduce byte for byte.
//! The mixer is SplitMix64 (Steele, Lea & Flood 2014), applied once per path
//! element; the streams themselves are `rand_pcg::Pcg64`.
//!
//! Draws from a stream go through runner's own sampler ([`below`],
//! [`shuffle`]) rather than `rand`'s `gen_range` or `SliceRandom::shuffle`,
//! whose algorithms `rand` may change in any release: an old seed must give
//! the same schedule after a dependency upgrade. The sampler reads nothing
//! but `next_u64`, and the PCG-64 (XSL RR 128/64) output for a seed is fixed
//! by its specification (O'Neill 2014); the tests pin both.

use rand::{RngCore, SeedableRng};
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
    /// `runner compare`: the bootstrap of one cell and arm of two runs.
    Compare = 4,
    /// A fork's memory layout (`design.layout`, see `runner_os::memory_layout`).
    Layout = 5,
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

/// A uniform integer in `0..n` (`n` > 0) from `next_u64`, exactly unbiased.
///
/// Lemire's multiply-and-reject method (Lemire 2019, "Fast random integer
/// generation in an interval", ACM TOMACS 29(1)): the high 64 bits of
/// x * n are the draw; products whose low 64 bits fall below 2^64 mod n are
/// rejected and x drawn again, so every result has the same number of x
/// mapping to it. The remainder is computed only when a rejection is
/// possible at all (low bits < n), which is rare for small n.
pub fn below<R: RngCore>(rng: &mut R, n: u64) -> u64 {
    assert!(n > 0, "below(0) has no value to return");
    let mut m = u128::from(rng.next_u64()) * u128::from(n);
    if (m as u64) < n {
        let threshold = n.wrapping_neg() % n;
        while (m as u64) < threshold {
            m = u128::from(rng.next_u64()) * u128::from(n);
        }
    }
    (m >> 64) as u64
}

/// Shuffles `items` in place: Fisher-Yates as Durstenfeld wrote it (1964,
/// CACM 7(7), Algorithm 235): for i from the last index down to 1, swap
/// item i with item `below(i + 1)`. Every permutation is equally likely.
pub fn shuffle<T, R: RngCore>(rng: &mut R, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let j = below(rng, i as u64 + 1) as usize;
        items.swap(i, j);
    }
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
    /// User CPU, system CPU and peak RSS streams (used only by runs that
    /// record usage; absent from run.json files older than them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<[u64; 3]>,
    /// The machines level's stream (machines, forks, pairs), recorded only
    /// by merged runs whose forks ran on more than one host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machines: Option<u64>,
}

/// The `k` of the usage streams' paths (`[cell, u64::MAX - k]`).
pub const USAGE_USER: u64 = 16;
pub const USAGE_SYS: u64 = 17;
pub const USAGE_RSS: u64 = 18;
/// The `k` of the machines level's stream.
pub const MACHINES: u64 = 32;

/// The seed of a cell's machines -> forks -> pairs bootstrap.
pub fn machines_seed(master: u64, cell: u32) -> u64 {
    derive(
        master,
        Domain::Bootstrap,
        &[u64::from(cell), u64::MAX - MACHINES],
    )
}

/// The seed of the bootstrap of one fork's CI.
pub fn fork_seed(master: u64, cell: u32, fork: u32) -> u64 {
    derive(
        master,
        Domain::Bootstrap,
        &[u64::from(cell), u64::from(fork)],
    )
}

/// The seeds of a cell's pooled, hierarchical, order, carry-over and usage streams.
pub fn cell_seeds(master: u64, cell: u32) -> CellSeeds {
    let at = |k: u64| derive(master, Domain::Bootstrap, &[u64::from(cell), u64::MAX - k]);
    CellSeeds {
        cell,
        pooled: at(0),
        hierarchical: at(1),
        order: at(2),
        carry_over: at(3),
        usage: Some([at(USAGE_USER), at(USAGE_SYS), at(USAGE_RSS)]),
        machines: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The expected values below were computed independently, by a Python
    // transcription of rand_core's `seed_from_u64`, PCG-64 XSL RR 128/64
    // and the two algorithms above (integer arithmetic, no libraries).

    /// The generator itself: if rand_pcg or rand_core ever changed the
    /// stream for a seed, this fails before the schedule tests do.
    #[test]
    fn pcg64_stream_is_pinned() {
        assert_eq!(Pcg64::seed_from_u64(42).next_u64(), 0x39fc_b970_a300_1809);
    }

    #[test]
    fn shuffle_is_pinned_on_fixed_seeds() {
        let mut v: Vec<u32> = (0..10).collect();
        shuffle(&mut Pcg64::seed_from_u64(42), &mut v);
        assert_eq!(v, [7, 8, 4, 0, 1, 5, 3, 6, 9, 2]);
        let mut v: Vec<u32> = (0..20).collect();
        shuffle(&mut Pcg64::seed_from_u64(20260814), &mut v);
        let expect = [
            1, 14, 7, 5, 19, 12, 2, 13, 10, 15, 4, 9, 3, 11, 17, 18, 6, 8, 0, 16,
        ];
        assert_eq!(v, expect);
    }

    #[test]
    fn below_is_pinned_on_a_fixed_seed() {
        let mut rng = Pcg64::seed_from_u64(7);
        let draws: Vec<u64> = (0..10).map(|_| below(&mut rng, 6)).collect();
        assert_eq!(draws, [0, 1, 5, 5, 2, 3, 0, 1, 3, 3]);
        let mut rng = Pcg64::seed_from_u64(7);
        let small: Vec<u64> = (0..5).map(|_| below(&mut rng, 3)).collect();
        assert_eq!(small, [0, 0, 2, 2, 1]);
        assert_eq!(below(&mut rng, (1 << 63) + 1), 826_093_296_043_369_143);
        assert_eq!(below(&mut rng, 1 << 63), 2_987_309_527_623_874_225);
    }

    /// A generator whose outputs are given, to reach the rejection branch.
    struct Fixed(Vec<u64>);
    impl RngCore for Fixed {
        fn next_u64(&mut self) -> u64 {
            self.0.remove(0)
        }
        fn next_u32(&mut self) -> u32 {
            self.next_u64() as u32
        }
        fn fill_bytes(&mut self, _: &mut [u8]) {
            unimplemented!()
        }
        fn try_fill_bytes(&mut self, _: &mut [u8]) -> Result<(), rand::Error> {
            unimplemented!()
        }
    }

    /// n = 3: 2^64 mod 3 = 1, so exactly the x whose product has low bits 0
    /// (x = 0) is rejected; x = 0 would otherwise make 0 too likely.
    #[test]
    fn below_rejects_the_biased_products() {
        assert_eq!(below(&mut Fixed(vec![0, u64::MAX]), 3), 2);
        assert_eq!(below(&mut Fixed(vec![1]), 3), 0);
        assert_eq!(below(&mut Fixed(vec![u64::MAX / 3 + 1]), 3), 1);
        assert_eq!(below(&mut Fixed(vec![u64::MAX]), 1), 0);
    }

    #[test]
    fn shuffle_of_short_slices_is_a_no_op_or_permutation() {
        let mut rng = Pcg64::seed_from_u64(1);
        let mut empty: [u8; 0] = [];
        shuffle(&mut rng, &mut empty);
        let mut one = [5];
        shuffle(&mut rng, &mut one);
        assert_eq!(one, [5]);
        let mut v: Vec<u32> = (0..100).collect();
        shuffle(&mut rng, &mut v);
        let mut sorted = v.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..100).collect::<Vec<_>>());
        assert_ne!(v, sorted);
    }

    #[test]
    fn derived_seeds_are_stable_and_distinct() {
        let a = derive(42, Domain::Job, &[0, 1]);
        assert_eq!(a, derive(42, Domain::Job, &[0, 1]));
        assert_ne!(a, derive(42, Domain::Job, &[1, 0]));
        assert_ne!(a, derive(42, Domain::Bootstrap, &[0, 1]));
        assert_ne!(a, derive(43, Domain::Job, &[0, 1]));
    }
}
