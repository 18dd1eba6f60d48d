//! Resample indices: the one place random numbers become bootstrap draws.
//!
//! The bootstrap functions and the `*_indices` functions below consume the
//! generator in exactly the same order, so a reader can dump the indices for a
//! seed and recompute every interval independently (e.g. with numpy). For
//! the two-level shapes this holds while the window of `bootstrap`'s
//! two-level draws is every rank (samples below 64 values, as in the
//! reference fixture); above, those draw counts through the window and the
//! indices here are a plain resample's, with the same distribution. An
//! index refers to the sample sorted ascending (for hierarchical data: to the
//! chosen group sorted ascending); which of several equal values an index
//! names makes no difference to any statistic.
//!
//! A draw below `n` takes 16 random bits (32 when n > 65536) and maps them
//! with Lemire's multiply-and-reject method (Lemire 2019, "Fast random integer
//! generation in an interval"), which is exactly uniform. Each `next_u64` of
//! the generator is cut into four 16-bit chunks, lowest first: the bootstrap
//! is the hot path and the generator was the larger part of its cost.

use rand::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

/// Resamples per chunk of a nested bootstrap (see [`chunk_streams`]).
pub const CHUNK: u32 = 256;

/// The streams of a nested bootstrap's chunks: one `next_u64` of `rng` is
/// the base, and chunk c (resamples c * CHUNK onwards, [`CHUNK`] of them,
/// the last one fewer) draws from `Pcg64::seed_from_u64(base + c)`. The
/// split is fixed by the resample count alone, so which thread runs a chunk
/// cannot change a draw, and the `*_indices` functions replay the chunks in
/// order.
pub fn chunk_streams<R: RngCore>(rng: &mut R, resamples: u32) -> Vec<(Pcg64, u32)> {
    let base = rng.next_u64();
    (0..resamples.div_ceil(CHUNK))
        .map(|c| {
            let count = CHUNK.min(resamples - c * CHUNK);
            (Pcg64::seed_from_u64(base.wrapping_add(u64::from(c))), count)
        })
        .collect()
}

/// `resamples` statistics, resample b computed by `one` from chunk
/// b / CHUNK's sampler, on the analysis's pool (`stats::pool`); returned in
/// resample order. `state` makes each chunk's scratch space (e.g. draw
/// counts).
pub fn par_resamples<R, S, F>(
    rng: &mut R,
    resamples: u32,
    state: impl Fn() -> S + Sync,
    one: F,
) -> Vec<f64>
where
    R: RngCore,
    F: Fn(&mut IndexSampler<'_, Pcg64>, &mut S) -> f64 + Sync,
{
    let streams = chunk_streams(rng, resamples);
    let run = |chunk: &(Pcg64, u32)| -> Vec<f64> {
        let (mut r, count) = chunk.clone();
        let mut st = state();
        let mut s = IndexSampler::new(&mut r);
        (0..count).map(|_| one(&mut s, &mut st)).collect()
    };
    super::pool::map_in_order(&streams, run)
        .into_iter()
        .flatten()
        .collect()
}

/// Uniform integers below `n` from a generator, four 16-bit chunks per output.
pub struct IndexSampler<'a, R: RngCore> {
    rng: &'a mut R,
    bits: u64,
    left: u32,
}

impl<'a, R: RngCore> IndexSampler<'a, R> {
    pub fn new(rng: &'a mut R) -> Self {
        IndexSampler {
            rng,
            bits: 0,
            left: 0,
        }
    }

    #[inline]
    fn chunk16(&mut self) -> u32 {
        if self.left == 0 {
            self.bits = self.rng.next_u64();
            self.left = 4;
        }
        let x = (self.bits & 0xFFFF) as u32;
        self.bits >>= 16;
        self.left -= 1;
        x
    }

    /// A uniform integer in `0..n`; `n` must be positive.
    #[inline]
    pub fn below(&mut self, n: u32) -> u32 {
        debug_assert!(n > 0);
        if n <= 1 << 16 {
            let mut m = self.chunk16() * n;
            if (m & 0xFFFF) < n {
                // Reject the few low products that would make some results more likely.
                let threshold = (1 << 16) % n;
                while (m & 0xFFFF) < threshold {
                    m = self.chunk16() * n;
                }
            }
            m >> 16
        } else {
            let mut m = u64::from(self.chunk32()) * u64::from(n);
            if (m as u32) < n {
                let threshold = n.wrapping_neg() % n;
                while (m as u32) < threshold {
                    m = u64::from(self.chunk32()) * u64::from(n);
                }
            }
            (m >> 32) as u32
        }
    }

    /// `draws` draws below `n`, each handed to `sink`: the same sequence as
    /// calling [`Self::below`] `draws` times, unrolled four chunks at a time
    /// for the common case that none of the four is rejected.
    #[inline]
    pub fn for_each_below(&mut self, n: u32, draws: u32, mut sink: impl FnMut(u32)) {
        debug_assert!(n > 0);
        let mut remaining = draws;
        if n > 1 << 16 {
            (0..remaining).for_each(|_| sink(self.below(n)));
            return;
        }
        // Accepting m iff its low half >= 2^16 mod n is Lemire's test in one step.
        let threshold = (1 << 16) % n;
        while remaining > 0 && self.left > 0 {
            sink(self.below(n));
            remaining -= 1;
        }
        while remaining >= 4 {
            let v = self.rng.next_u64();
            let m = [
                (v & 0xFFFF) as u32 * n,
                ((v >> 16) & 0xFFFF) as u32 * n,
                ((v >> 32) & 0xFFFF) as u32 * n,
                (v >> 48) as u32 * n,
            ];
            if m.iter().all(|&x| (x & 0xFFFF) >= threshold) {
                m.iter().for_each(|&x| sink(x >> 16));
                remaining -= 4;
            } else {
                // Rare: replay these chunks one by one, rejections and all.
                self.bits = v;
                self.left = 4;
                while remaining > 0 && self.left > 0 {
                    sink(self.below(n));
                    remaining -= 1;
                }
            }
        }
        (0..remaining).for_each(|_| sink(self.below(n)));
    }

    /// A uniform float in [0, 1): the top 53 bits of one `next_u64`, which
    /// leaves the 16-bit chunks of [`Self::below`] as they were.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard normal deviate, by inverting one [`Self::unit`] draw. The
    /// inversion is Acklam's approximation, whose 1.2e-9 relative error is
    /// far below a random draw's own spread: the two-level bootstrap draws
    /// millions of these, and statrs's quantile (exact to the last bits,
    /// what every interval's z uses) costs several times more per draw.
    pub fn normal(&mut self) -> f64 {
        acklam(self.unit().max(f64::MIN_POSITIVE))
    }

    fn chunk32(&mut self) -> u32 {
        let low = self.chunk16();
        low | (self.chunk16() << 16)
    }
}

/// The indices of `resamples` plain bootstrap resamples of a sample of size `n`:
/// resample b is `n` draws below `n`, each an index into the sorted sample.
pub fn resample_indices<R: RngCore>(rng: &mut R, n: u32, resamples: u32) -> Vec<Vec<u32>> {
    let mut s = IndexSampler::new(rng);
    (0..resamples)
        .map(|_| (0..n).map(|_| s.below(n)).collect())
        .collect()
}

/// The indices of a hierarchical bootstrap over groups of the given sizes,
/// drawn chunk by chunk as [`par_resamples`] does: per resample, for each of the `k` slots one draw below `k` picks a group, and
/// then that group's `n_g` draws below `n_g` pick its members (interleaved:
/// group, its members, next group, ...).
pub fn hierarchical_indices<R: RngCore>(
    rng: &mut R,
    sizes: &[u32],
    resamples: u32,
) -> Vec<Vec<(u32, Vec<u32>)>> {
    let k = sizes.len() as u32;
    replay(rng, resamples, |s| {
        (0..k)
            .map(|_| {
                let g = s.below(k);
                let n = sizes[g as usize];
                (g, (0..n).map(|_| s.below(n)).collect())
            })
            .collect()
    })
}

/// Every resample drawn by `one`, chunk by chunk in order: what
/// [`par_resamples`] draws, on one thread.
pub fn replay<R: RngCore, T>(
    rng: &mut R,
    resamples: u32,
    mut one: impl FnMut(&mut IndexSampler<'_, Pcg64>) -> T,
) -> Vec<T> {
    chunk_streams(rng, resamples)
        .into_iter()
        .flat_map(|(mut r, count)| {
            let mut s = IndexSampler::new(&mut r);
            (0..count).map(|_| one(&mut s)).collect::<Vec<_>>()
        })
        .collect()
}

/// The indices of a hierarchical two-group bootstrap
/// (`bootstrap::hierarchical_median_diff`) over forks whose groups have the
/// given sizes `(n_a, n_b)`: per resample, for each of the `k` slots one
/// draw below `k` picks a fork, then `n_a` draws below `n_a` (into its a
/// values), then `n_b` draws below `n_b` (into its b values).
pub fn hierarchical_two_sample_indices<R: RngCore>(
    rng: &mut R,
    sizes: &[(u32, u32)],
    resamples: u32,
) -> Vec<Vec<TwoSampleSlot>> {
    let k = sizes.len() as u32;
    replay(rng, resamples, |s| {
        (0..k)
            .map(|_| {
                let g = s.below(k);
                let (na, nb) = sizes[g as usize];
                let a = (0..na).map(|_| s.below(na)).collect();
                let b = (0..nb).map(|_| s.below(nb)).collect();
                (g, a, b)
            })
            .collect()
    })
}

/// One slot of a hierarchical two-group resample: the fork's position, then
/// indices into its sorted a values and into its sorted b values.
pub type TwoSampleSlot = (u32, Vec<u32>, Vec<u32>);

/// Acklam's rational approximation of the standard normal quantile
/// (relative error below 1.2e-9), for [`IndexSampler::normal`] alone.
fn acklam(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e+01,
        2.209460984245205e+02,
        -2.759285104469687e+02,
        1.38357751867269e+02,
        -3.066479806614716e+01,
        2.506628277459239e+00,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e+01,
        1.615858368580409e+02,
        -1.556989798598866e+02,
        6.680131188771972e+01,
        -1.328068155288572e+01,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-03,
        -3.223964580411365e-01,
        -2.400758277161838e+00,
        -2.549732539343734e+00,
        4.374664141464968e+00,
        2.938163982698783e+00,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-03,
        3.224671290700398e-01,
        2.445134137142996e+00,
        3.754408661907416e+00,
    ];
    const P_LOW: f64 = 0.02425;
    if !(p > 0.0 && p < 1.0) {
        return if p == 0.0 {
            f64::NEG_INFINITY
        } else if p == 1.0 {
            f64::INFINITY
        } else {
            f64::NAN
        };
    }
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < P_LOW {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - P_LOW {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
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
            assert!(s.below(1 << 16) < 1 << 16);
            assert!(s.below(100_000) < 100_000);
            assert!(s.below(u32::MAX) < u32::MAX);
        }
    }

    #[test]
    fn unrolled_draws_equal_one_by_one_draws() {
        for n in [1, 3, 300, 3000, 40_000, 65_536, 70_000] {
            for warm in [0, 1, 3] {
                let (mut r1, mut r2) = (
                    Pcg64::seed_from_u64(n as u64),
                    Pcg64::seed_from_u64(n as u64),
                );
                let (mut a, mut b) = (IndexSampler::new(&mut r1), IndexSampler::new(&mut r2));
                for _ in 0..warm {
                    assert_eq!(a.below(n), b.below(n));
                }
                let mut fast = Vec::new();
                a.for_each_below(n, 1001, |i| fast.push(i));
                let slow: Vec<u32> = (0..1001).map(|_| b.below(n)).collect();
                assert_eq!(fast, slow, "n = {n}, warm = {warm}");
                assert_eq!(a.below(n), b.below(n));
            }
        }
    }

    #[test]
    fn thread_count_changes_no_statistic() {
        let run = |threads| {
            crate::pool::on_threads(threads, || {
                par_resamples(
                    &mut Pcg64::seed_from_u64(4),
                    CHUNK * 5 + 17,
                    || 0u64,
                    |s, calls| {
                        *calls += 1;
                        f64::from(s.below(1000)) + *calls as f64 * 1e-3
                    },
                )
            })
        };
        let one = run(1);
        assert_eq!(one.len() as u32, CHUNK * 5 + 17);
        for t in [2, 3, 8] {
            assert_eq!(run(t), one, "{t} threads");
        }
        let replayed = replay(&mut Pcg64::seed_from_u64(4), CHUNK * 5 + 17, |s| {
            s.below(1000)
        });
        let draws: Vec<u32> = one.iter().map(|x| x.floor() as u32).collect();
        assert_eq!(draws, replayed);
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
