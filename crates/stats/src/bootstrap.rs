//! Percentile bootstrap intervals for medians (Efron & Tibshirani 1993,
//! "An Introduction to the Bootstrap", ch. 13), in three shapes:
//!
//! - [`bootstrap_median`]: one sample; resample n values with replacement,
//!   take the median; repeat; the interval is the (1-c)/2 and (1+c)/2
//!   quantiles (numpy "linear") of those medians.
//! - [`hierarchical_median`]: two-level data (forks, pairs inside forks).
//!   Resample k forks with replacement, then, inside each chosen fork, its own
//!   n_f pairs with replacement; the statistic is the median of the pooled
//!   resample. Resampling only the top level or both levels are the options
//!   Davison & Hinkley 1997 (sec. 3.8) discuss; both levels is the
//!   conservative choice, as recommended by Ren et al. 2010 ("Nonparametric
//!   bootstrapping for hierarchical data", J. Appl. Stat. 37(9)).
//! - [`hierarchical_median_diff`]: the same two levels for a contrast of two
//!   groups of values inside each fork (e.g. D with the treatment first vs
//!   second): a chosen fork brings both its groups, each resampled on its
//!   own; statistic median(pooled a*) - median(pooled b*). Pooling the
//!   pairs of all forks instead would treat them as independent, which
//!   they are not when forks differ. Over many forks the analysis uses
//!   [`cluster_median_diff`] instead (module `cluster`): forks resampled,
//!   each keeping its values.
//!
//! The two-level shapes split their resamples into fixed chunks, each with
//! its own stream derived from the generator, and run the chunks on every
//! core ([`super::resample::par_resamples`]): the output is the same for any
//! thread count. [`bootstrap_median`] stays on one stream (its draws are
//! those of [`super::resample::resample_indices`]); the analysis uses its
//! exact limit ([`super::exact`]) instead.
//!
//! Speed: values are sorted once and a resample is kept as draw counts per
//! rank, walked to the middle, so the median of a resample costs no sort.
//! A two-level resample of k forks of n values is still k n draws, and the
//! median only depends on the few of them near the middle. So the
//! two-level shapes draw through a window of ranks around the sample
//! median (the central 10 %, module `grouped`): per chosen fork, how many of its
//! n draws fall below, inside and above the window is one multinomial
//! (two binomials), and only the draws inside are drawn as values. When
//! the resample's median falls outside the window (rare: the window is wide
//! against the median's spread), the values of the category holding it are
//! drawn then, for every slot, from the counts already drawn; conditional
//! on the counts each category's values are independent and uniform, so
//! the median has exactly the distribution of a full resample's, not an
//! approximation. The cost per slot is two binomial draws plus about a
//! tenth of the values, and the walk is over the window alone. Below 64
//! values the window is every rank, no binomial draws anything, and the
//! draws are those of a plain two-level resample (the `*_indices`
//! functions of [`super::resample`] replay them); above, the draws differ
//! from the plain ones and only their distribution is the same.

use super::quantile::{mid, quantile};
use super::resample::{par_resamples, IndexSampler};
use super::{to_finite_vec, StatsError, Value};
use rand::RngCore;

/// A closed interval `[lo, hi]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

impl Interval {
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }
}

/// A sample median and its bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MedianEstimate {
    pub median: f64,
    pub ci: Interval,
}

/// Percentile bootstrap of the median of `data`.
pub fn bootstrap_median<T: Value, R: RngCore>(
    data: &[T],
    resamples: u32,
    confidence: f64,
    rng: &mut R,
) -> Result<MedianEstimate, StatsError> {
    check(resamples, confidence)?;
    let ranked = Ranked::new(to_finite_vec(data)?);
    let medians = ranked.bootstrap_medians(resamples, &mut IndexSampler::new(rng));
    Ok(MedianEstimate {
        median: ranked.median(),
        ci: percentile_interval(medians, confidence)?,
    })
}

/// Two-level bootstrap of the median of all groups pooled (see module docs).
pub fn hierarchical_median<T: Value, R: RngCore>(
    groups: &[&[T]],
    resamples: u32,
    confidence: f64,
    rng: &mut R,
) -> Result<MedianEstimate, StatsError> {
    check(resamples, confidence)?;
    let grouped = Grouped::new(groups)?;
    let medians = hierarchical_medians(&grouped, resamples, rng);
    Ok(MedianEstimate {
        median: grouped.ranked.median(),
        ci: percentile_interval(medians, confidence)?,
    })
}

/// The medians of `resamples` two-level resamples of `grouped`, in order.
fn hierarchical_medians<R: RngCore>(grouped: &Grouped, resamples: u32, rng: &mut R) -> Vec<f64> {
    let k = grouped.groups();
    par_resamples(
        rng,
        resamples,
        || grouped.scratch(),
        |s, sc| {
            grouped.start(sc);
            for _ in 0..k {
                grouped.draw(s.below(k) as usize, s, sc);
            }
            grouped.median(s, sc)
        },
    )
}

/// Two-level bootstrap of median(all a) - median(all b), where fork f holds
/// `groups[f] = (a_f, b_f)`, both non-empty (see module docs). Per resample
/// and slot: one draw picks a fork, then its a values are resampled, then
/// its b values.
pub fn hierarchical_median_diff<T: Value, R: RngCore>(
    groups: &[(&[T], &[T])],
    resamples: u32,
    confidence: f64,
    rng: &mut R,
) -> Result<MedianEstimate, StatsError> {
    check(resamples, confidence)?;
    let a = Grouped::new(&groups.iter().map(|g| g.0).collect::<Vec<_>>())?;
    let b = Grouped::new(&groups.iter().map(|g| g.1).collect::<Vec<_>>())?;
    let diffs = hierarchical_diffs(&a, &b, resamples, rng);
    Ok(MedianEstimate {
        median: a.ranked.median() - b.ranked.median(),
        ci: percentile_interval(diffs, confidence)?,
    })
}

/// median(a*) - median(b*) of `resamples` two-level resamples of forks
/// holding the groups of `a` and `b` at the same positions, in order.
fn hierarchical_diffs<R: RngCore>(
    a: &Grouped,
    b: &Grouped,
    resamples: u32,
    rng: &mut R,
) -> Vec<f64> {
    let k = a.groups();
    par_resamples(
        rng,
        resamples,
        || (a.scratch(), b.scratch()),
        |s, (sa, sb)| {
            a.start(sa);
            b.start(sb);
            for _ in 0..k {
                let g = s.below(k) as usize;
                a.draw(g, s, sa);
                b.draw(g, s, sb);
            }
            a.median(s, sa) - b.median(s, sb)
        },
    )
}

pub(super) fn check(resamples: u32, confidence: f64) -> Result<(), StatsError> {
    if resamples == 0 {
        return Err(StatsError::NoResamples);
    }
    if !(confidence > 0.0 && confidence < 1.0) {
        return Err(StatsError::BadConfidence(confidence));
    }
    Ok(())
}

/// The (1-c)/2 and (1+c)/2 quantiles of the bootstrap distribution.
pub(super) fn percentile_interval(
    mut stats: Vec<f64>,
    confidence: f64,
) -> Result<Interval, StatsError> {
    stats.sort_unstable_by(f64::total_cmp);
    Ok(Interval {
        lo: quantile(&stats, (1.0 - confidence) / 2.0)?,
        hi: quantile(&stats, (1.0 + confidence) / 2.0)?,
    })
}

/// A sample ranked once: `sorted` ascending, `rank[i]` = where value i went
/// (hierarchical data is laid out group by group, each group sorted).
pub(super) struct Ranked {
    sorted: Vec<f64>,
    rank: Vec<u32>,
}

impl Ranked {
    fn new(values: Vec<f64>) -> Self {
        // Ascending by value (f64::total_cmp), ties by position: each value
        // as an integer that orders as total_cmp does (the sign bit set
        // flips every bit, else only the sign bit), beside its position, so
        // the sort compares plain integers instead of looking values up.
        let key = |x: f64| {
            let bits = x.to_bits();
            bits ^ (((bits as i64 >> 63) as u64) | (1 << 63))
        };
        let mut order: Vec<(u64, u32)> = (0..values.len() as u32)
            .map(|i| (key(values[i as usize]), i))
            .collect();
        order.sort_unstable();
        let mut rank = vec![0u32; values.len()];
        for (r, &(_, i)) in order.iter().enumerate() {
            rank[i as usize] = r as u32;
        }
        let sorted = order.iter().map(|&(_, i)| values[i as usize]).collect();
        Ranked { sorted, rank }
    }

    /// Groups of values ranked together, laid out group by group, each
    /// group sorted (so an index into a group's sorted values finds its
    /// rank), with where each group starts. Refuses no groups, an empty
    /// group and NaN.
    pub(super) fn of_groups<T: Value>(groups: &[&[T]]) -> Result<(Ranked, Vec<usize>), StatsError> {
        if groups.is_empty() {
            return Err(StatsError::Empty);
        }
        let (mut starts, mut all) = (Vec::new(), Vec::new());
        for g in groups {
            if g.is_empty() {
                return Err(StatsError::Empty);
            }
            starts.push(all.len());
            let mut v = to_finite_vec(g)?;
            v.sort_unstable_by(f64::total_cmp);
            all.extend(v);
        }
        if all.len() > u32::MAX as usize {
            return Err(StatsError::TooLarge);
        }
        Ok((Ranked::new(all), starts))
    }

    /// How many of the values at `at..end` (one group, sorted, so its
    /// ranks rise) rank below the window [lo, hi), inside it, and above it.
    pub(super) fn against_window(&self, at: usize, end: usize, lo: u32, hi: u32) -> [u32; 3] {
        let rank = &self.rank[at..end];
        let below = rank.partition_point(|&r| r < lo) as u32;
        let inside = rank.partition_point(|&r| r < hi) as u32 - below;
        [below, inside, (end - at) as u32 - below - inside]
    }

    pub(super) fn len(&self) -> usize {
        self.sorted.len()
    }

    pub(super) fn median(&self) -> f64 {
        let n = self.len();
        if n % 2 == 1 {
            self.sorted[n / 2]
        } else {
            mid(self.sorted[n / 2 - 1], self.sorted[n / 2])
        }
    }

    fn bootstrap_medians<R: RngCore>(
        &self,
        resamples: u32,
        s: &mut IndexSampler<'_, R>,
    ) -> Vec<f64> {
        let mut counts = vec![0u32; self.len()];
        (0..resamples)
            .map(|_| self.resample_median(s, &mut counts))
            .collect()
    }

    /// Draws one resample of size n (indices into `sorted`) into `counts` and
    /// returns its median.
    #[inline]
    fn resample_median<R: RngCore>(&self, s: &mut IndexSampler<'_, R>, counts: &mut [u32]) -> f64 {
        counts.fill(0);
        let n = self.len() as u32;
        s.for_each_below(n, n, |i| counts[i as usize] += 1);
        self.median_of_counts(counts, n)
    }

    /// The median of a resample given as draw counts per rank (`total` draws).
    pub(super) fn median_of_counts(&self, counts: &[u32], total: u32) -> f64 {
        self.median_at(counts, 0, (total - 1) / 2, total / 2)
    }

    /// The median of a resample counted through a window of ranks: draws
    /// per rank from rank `lo` in `window`, and `[below, inside, above]`
    /// draws below, in and above it. When the median lies in the window,
    /// the window is walked. Else `full` gets the window's counts and
    /// `side(low, full)` adds, rank by rank, the draws of each side that
    /// holds a middle position (the low side first); a side that does not
    /// keeps its count on one rank of its own, which the walk passes whole.
    pub(super) fn window_median(
        &self,
        window: &[u32],
        lo: usize,
        [below, inside, above]: [u32; 3],
        full: &mut Vec<u32>,
        mut side: impl FnMut(bool, &mut [u32]),
    ) -> f64 {
        let total = below + inside + above;
        let (k_lo, k_hi) = ((total - 1) / 2, total / 2);
        if below <= k_lo && k_hi < below + inside {
            return self.median_at(window, lo, k_lo - below, k_hi - below);
        }
        let n = self.len();
        full.clear();
        full.resize(n, 0);
        full[lo..lo + window.len()].copy_from_slice(window);
        if k_lo < below {
            side(true, full);
        } else if below > 0 {
            full[0] += below;
        }
        if k_hi >= below + inside {
            side(false, full);
        } else if above > 0 {
            full[n - 1] += above;
        }
        self.median_of_counts(full, total)
    }

    /// The mean of the draws at 0-based positions `k_lo` and `k_hi` of a
    /// resample sorted, given as draw counts `counts[i]` for rank
    /// `first + i` (positions counted from rank `first`).
    pub(super) fn median_at(&self, counts: &[u32], first: usize, k_lo: u32, k_hi: u32) -> f64 {
        // Skip whole blocks below the middle first: summing 16 counts is
        // cheaper than 16 tests, and the middle is about n / 2 ranks in.
        const BLOCK: usize = 16;
        let (mut cum, mut start) = (0u32, 0usize);
        for block in counts.chunks_exact(BLOCK) {
            let sum: u32 = block.iter().sum();
            if cum + sum > k_lo {
                break;
            }
            cum += sum;
            start += BLOCK;
        }
        let mut lower = None;
        for (r, &c) in counts.iter().enumerate().skip(start) {
            cum += c;
            if lower.is_none() && cum > k_lo {
                lower = Some(self.sorted[first + r]);
            }
            if cum > k_hi {
                let upper = self.sorted[first + r];
                return match lower {
                    Some(l) if k_lo != k_hi => mid(l, upper),
                    _ => upper,
                };
            }
        }
        unreachable!("counts sum to total")
    }
}

mod cluster;
mod grouped;
mod runs;
pub use cluster::{
    cluster_indices, cluster_median_diff, resamples_whole_forks, MIN_FORKS as CLUSTER_MIN_FORKS,
};
pub(super) use grouped::Grouped;
pub use runs::hierarchical_median_shift;

#[cfg(test)]
mod tests;
