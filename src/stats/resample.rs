//! Resample indices: the one place random numbers become bootstrap draws.
//!
//! The bootstrap functions and the `*_indices` functions below consume the
//! generator in exactly the same order, so a reader can dump the indices for a
//! seed and recompute every interval independently (e.g. with numpy).
//!
//! A draw below `n` takes 32 random bits and maps them with Lemire's
//! multiply-and-reject method (Lemire 2019, "Fast random integer generation in
//! an interval"), which is exactly uniform. Each `next_u64` of the generator
//! supplies two draws, low half first: the bootstrap is the hot path and the
//! generator is the larger part of its cost.

use rand::RngCore;

/// Uniform integers below `n` from a generator, two per 64-bit output.
pub struct IndexSampler<'a, R: RngCore> {
    rng: &'a mut R,
    spare: Option<u32>,
}

impl<'a, R: RngCore> IndexSampler<'a, R> {
    pub fn new(rng: &'a mut R) -> Self {
        IndexSampler { rng, spare: None }
    }

    fn next_u32(&mut self) -> u32 {
        match self.spare.take() {
            Some(x) => x,
            None => {
                let v = self.rng.next_u64();
                self.spare = Some((v >> 32) as u32);
                v as u32
            }
        }
    }

    /// A uniform integer in `0..n`; `n` must be positive.
    #[inline]
    pub fn below(&mut self, n: u32) -> u32 {
        debug_assert!(n > 0);
        let mut m = u64::from(self.next_u32()) * u64::from(n);
        if (m as u32) < n {
            // Reject the few low products that would make some results more likely.
            let threshold = n.wrapping_neg() % n;
            while (m as u32) < threshold {
                m = u64::from(self.next_u32()) * u64::from(n);
            }
        }
        (m >> 32) as u32
    }
}

/// The indices of `resamples` plain bootstrap resamples of a sample of size `n`:
/// resample b is `n` draws below `n`.
pub fn resample_indices<R: RngCore>(rng: &mut R, n: u32, resamples: u32) -> Vec<Vec<u32>> {
    let mut s = IndexSampler::new(rng);
    (0..resamples)
        .map(|_| (0..n).map(|_| s.below(n)).collect())
        .collect()
}

/// The indices of a two-sample bootstrap: per resample, `n_a` draws below
/// `n_a` (into sample a), then `n_b` draws below `n_b` (into sample b).
pub fn two_sample_indices<R: RngCore>(
    rng: &mut R,
    n_a: u32,
    n_b: u32,
    resamples: u32,
) -> Vec<(Vec<u32>, Vec<u32>)> {
    let mut s = IndexSampler::new(rng);
    (0..resamples)
        .map(|_| {
            let a = (0..n_a).map(|_| s.below(n_a)).collect();
            let b = (0..n_b).map(|_| s.below(n_b)).collect();
            (a, b)
        })
        .collect()
}

/// The indices of a hierarchical bootstrap over groups of the given sizes: per
/// resample, for each of the `k` slots one draw below `k` picks a group, and
/// then that group's `n_g` draws below `n_g` pick its members (interleaved:
/// group, its members, next group, ...).
pub fn hierarchical_indices<R: RngCore>(
    rng: &mut R,
    sizes: &[u32],
    resamples: u32,
) -> Vec<Vec<(u32, Vec<u32>)>> {
    let mut s = IndexSampler::new(rng);
    let k = sizes.len() as u32;
    (0..resamples)
        .map(|_| {
            (0..k)
                .map(|_| {
                    let g = s.below(k);
                    let n = sizes[g as usize];
                    (g, (0..n).map(|_| s.below(n)).collect())
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64;

    #[test]
    fn draws_stay_below_n_and_cover_it() {
        let mut rng = Pcg64::seed_from_u64(1);
        let mut s = IndexSampler::new(&mut rng);
        let mut seen = [0u32; 7];
        for _ in 0..7000 {
            seen[s.below(7) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c > 800 && c < 1200), "{seen:?}");
        for _ in 0..100 {
            assert_eq!(s.below(1), 0);
        }
    }

    #[test]
    fn same_seed_same_indices() {
        let a = resample_indices(&mut Pcg64::seed_from_u64(9), 5, 3);
        let b = resample_indices(&mut Pcg64::seed_from_u64(9), 5, 3);
        assert_eq!(a, b);
        assert_eq!(a.len(), 3);
        assert!(a.iter().all(|r| r.len() == 5 && r.iter().all(|&i| i < 5)));
    }

    #[test]
    fn hierarchical_members_fit_their_group() {
        let sizes = [3, 1, 4];
        let plan = hierarchical_indices(&mut Pcg64::seed_from_u64(2), &sizes, 20);
        for resample in plan {
            assert_eq!(resample.len(), 3);
            for (g, members) in resample {
                assert_eq!(members.len() as u32, sizes[g as usize]);
                assert!(members.iter().all(|&i| i < sizes[g as usize]));
            }
        }
    }
}
