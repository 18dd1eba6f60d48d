//! The cluster bootstrap of a two-group contrast: forks are resampled with
//! replacement and each chosen fork brings its own values as they are
//! (Davison & Hinkley 1997, sec. 3.8, their first strategy; Field & Welsh
//! 2007, "Bootstrapping clustered data", JRSS B 69(3), show it consistent
//! whether forks differ by a random effect or not).
//!
//! Why not the two-level bootstrap of `hierarchical_median_diff` here: a
//! fork's values already carry their own sampling noise into the spread
//! of the fork medians, so resampling them again counts that noise twice
//! and widens the interval. With many forks the cluster bootstrap is the
//! accurate one. With few it is not: k forks give only C(2k - 1, k)
//! distinct resamples (10 for three forks) and its variance is (k - 1) / k
//! of the unbiased one, so below [`MIN_FORKS`] the two-level bootstrap,
//! wider on purpose, stays.
//!
//! Speed: a resample draws k numbers (the forks) and nothing else; its
//! median is found in a window of ranks around the sample median, as in
//! `grouped` (each fork's values below, inside and above the window are
//! known in advance; only the ranks inside are counted), and when the
//! median falls outside the window, the chosen forks' values on that side
//! are counted too. The result is the median of the full resample exactly.

use super::grouped::default_window;
use super::{check, percentile_interval, MedianEstimate, Ranked};
use crate::resample::{par_resamples, replay};
use crate::{StatsError, Value};
use rand::RngCore;

/// The fewest forks at which contrasts use the cluster bootstrap: its
/// variance is then within 5 % of the unbiased one ((k - 1) / k >= 0.95),
/// and 20 forks have about 7 10^10 distinct resamples.
pub const MIN_FORKS: usize = 20;

/// Whether a contrast over `forks` usable forks is the cluster bootstrap
/// ([`cluster_median_diff`]); else it is the two-level one. The analysis,
/// its trace and the report all ask here, so they cannot disagree.
pub fn resamples_whole_forks(forks: usize) -> bool {
    forks >= MIN_FORKS
}

/// Median(all a) - median(all b) and the cluster bootstrap's percentile
/// interval, where fork f holds `groups[f] = (a_f, b_f)`, both non-empty.
/// Per resample: k draws below k pick the forks (the draws of
/// [`cluster_indices`]); resamples in chunks as `resample::par_resamples`
/// draws them.
pub fn cluster_median_diff<T: Value, R: RngCore>(
    groups: &[(&[T], &[T])],
    resamples: u32,
    confidence: f64,
    rng: &mut R,
) -> Result<MedianEstimate, StatsError> {
    check(resamples, confidence)?;
    let a = Clusters::new(&groups.iter().map(|g| g.0).collect::<Vec<_>>())?;
    let b = Clusters::new(&groups.iter().map(|g| g.1).collect::<Vec<_>>())?;
    let k = groups.len() as u32;
    let diffs = par_resamples(
        rng,
        resamples,
        || (vec![0u32; k as usize], a.scratch(), b.scratch()),
        |s, (times, sa, sb)| {
            times.fill(0);
            for _ in 0..k {
                times[s.below(k) as usize] += 1;
            }
            a.median(times, sa) - b.median(times, sb)
        },
    );
    Ok(MedianEstimate {
        median: a.ranked.median() - b.ranked.median(),
        ci: percentile_interval(diffs, confidence)?,
    })
}

/// The forks [`cluster_median_diff`] chooses for `forks` forks, per
/// resample in draw order.
pub fn cluster_indices<R: RngCore>(rng: &mut R, forks: u32, resamples: u32) -> Vec<Vec<u32>> {
    replay(rng, resamples, |s| {
        (0..forks).map(|_| s.below(forks)).collect()
    })
}

/// The window of ranks a resample's median is looked for in: around the
/// middle rank, five of its standard deviations to each side (plus 32
/// ranks), and never wider than the default window of the two-level
/// bootstrap. Fork f holding b_f of its n_f values below the middle rank
/// where the pooled values hold a share p, a resample's count below it
/// moves with sd sqrt(sum_f (b_f - p n_f)^2) (the forks being drawn with
/// replacement), and its median's rank with it. A median outside the
/// window costs a count of one side of every chosen fork; it is exact
/// either way.
fn window(ranked: &Ranked, starts: &[usize], ends: &[usize]) -> (u32, u32) {
    let n = ranked.len() as u32;
    let (default_lo, default_hi) = default_window(n);
    let middle = n / 2;
    let share = f64::from(middle) / f64::from(n);
    let variance: f64 = starts
        .iter()
        .zip(ends)
        .map(|(&at, &end)| {
            let below = ranked.rank[at..end].partition_point(|&r| r < middle);
            (below as f64 - share * (end - at) as f64).powi(2)
        })
        .sum();
    let half = (5.0 * variance.sqrt()).ceil() as u32 + 32;
    (
        middle.saturating_sub(half).max(default_lo),
        middle.saturating_add(half).min(default_hi),
    )
}

/// Groups of values ranked together, laid out group by group, each sorted,
/// with each group's place against the window of ranks [lo, hi).
struct Clusters {
    ranked: Ranked,
    lo: u32,
    hi: u32,
    /// Per group: where its values start, how many lie below the window,
    /// inside it, and above it.
    groups: Vec<Place>,
}

struct Place {
    at: usize,
    below: u32,
    inside: u32,
    above: u32,
}

/// Per-resample counts of a [`Clusters`].
struct Scratch {
    /// Values per rank of the window (rank lo at 0).
    window: Vec<u32>,
    /// Values per global rank, only when the median left the window.
    full: Vec<u32>,
}

impl Clusters {
    fn new<T: Value>(groups: &[&[T]]) -> Result<Self, StatsError> {
        let (ranked, starts) = Ranked::of_groups(groups)?;
        let ends: Vec<usize> = starts
            .iter()
            .skip(1)
            .copied()
            .chain([ranked.len()])
            .collect();
        let (lo, hi) = window(&ranked, &starts, &ends);
        let groups = starts
            .iter()
            .zip(ends)
            .map(|(&at, end)| {
                let [below, inside, above] = ranked.against_window(at, end, lo, hi);
                Place {
                    at,
                    below,
                    inside,
                    above,
                }
            })
            .collect();
        Ok(Clusters {
            ranked,
            lo,
            hi,
            groups,
        })
    }

    fn scratch(&self) -> Scratch {
        Scratch {
            window: vec![0; (self.hi - self.lo) as usize],
            full: Vec::new(),
        }
    }

    /// The median of the resample that holds group g `times[g]` times.
    fn median(&self, times: &[u32], sc: &mut Scratch) -> f64 {
        sc.window.fill(0);
        let (mut below, mut inside, mut above) = (0, 0, 0);
        for (p, &t) in self.groups.iter().zip(times) {
            if t == 0 {
                continue;
            }
            below += t * p.below;
            inside += t * p.inside;
            above += t * p.above;
            let at = p.at + p.below as usize;
            for &r in &self.ranked.rank[at..at + p.inside as usize] {
                sc.window[(r - self.lo) as usize] += t;
            }
        }
        self.ranked.window_median(
            &sc.window,
            self.lo as usize,
            [below, inside, above],
            &mut sc.full,
            |low, full| {
                for (p, &t) in self.groups.iter().zip(times) {
                    let (from, count) = if low {
                        (p.at, p.below)
                    } else {
                        (p.at + (p.below + p.inside) as usize, p.above)
                    };
                    if t > 0 {
                        for &r in &self.ranked.rank[from..from + count as usize] {
                            full[r as usize] += t;
                        }
                    }
                }
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quantile::median;
    use rand::SeedableRng;
    use rand_pcg::Pcg64;

    type Fork = (Vec<f64>, Vec<f64>);
    type Side = fn(&Fork) -> &Vec<f64>;

    /// Every resample's difference recomputed from the replayed fork
    /// choices by pooling the chosen forks' values and taking plain medians.
    fn by_hand(groups: &[Fork], resamples: u32, seed: u64) -> Vec<f64> {
        let k = groups.len() as u32;
        cluster_indices(&mut Pcg64::seed_from_u64(seed), k, resamples)
            .iter()
            .map(|chosen| {
                let pool = |side: Side| -> f64 {
                    let v: Vec<f64> = chosen
                        .iter()
                        .flat_map(|&g| side(&groups[g as usize]).iter().copied())
                        .collect();
                    median(&v).unwrap()
                };
                pool(|g| &g.0) - pool(|g| &g.1)
            })
            .collect()
    }

    #[test]
    fn equals_pooling_the_chosen_forks_by_hand() {
        let mut rng = Pcg64::seed_from_u64(11);
        use rand::Rng;
        // Forks at different levels, so that medians often leave the window,
        // and sizes large enough that the window is not every rank.
        let groups: Vec<Fork> = (0..25)
            .map(|f| {
                let level = f64::from(f % 7) * 30.0;
                let a = (0..40 + f)
                    .map(|_| level + rng.gen_range(0..50) as f64)
                    .collect();
                let b = (0..30)
                    .map(|_| level + rng.gen_range(0..60) as f64)
                    .collect();
                (a, b)
            })
            .collect();
        let refs: Vec<(&[f64], &[f64])> = groups.iter().map(|(a, b)| (&a[..], &b[..])).collect();
        let e = cluster_median_diff(&refs, 600, 0.9, &mut Pcg64::seed_from_u64(5)).unwrap();
        let mut expected = by_hand(&groups, 600, 5);
        expected.sort_unstable_by(f64::total_cmp);
        let q = |p| crate::quantile(&expected, p).unwrap();
        assert_eq!((e.ci.lo, e.ci.hi), (q(0.05), q(0.95)));
        let all = |side: Side| -> Vec<f64> {
            groups
                .iter()
                .flat_map(|g| side(g).iter().copied())
                .collect()
        };
        let point = median(&all(|g| &g.0)).unwrap() - median(&all(|g| &g.1)).unwrap();
        assert_eq!(e.median, point);
    }

    #[test]
    fn the_same_for_any_thread_count() {
        let groups: Vec<(Vec<f64>, Vec<f64>)> = (0..30)
            .map(|f| {
                let a = (0..90).map(|i| f64::from((i * 37 + f) % 101)).collect();
                let b = (0..70).map(|i| f64::from((i * 53 + 3 * f) % 97)).collect();
                (a, b)
            })
            .collect();
        let refs: Vec<(&[f64], &[f64])> = groups.iter().map(|(a, b)| (&a[..], &b[..])).collect();
        let run = |t| {
            crate::pool::on_threads(t, || {
                cluster_median_diff(&refs, 700, 0.95, &mut Pcg64::seed_from_u64(3)).unwrap()
            })
        };
        let one = run(1);
        assert_eq!(run(2), one);
        assert_eq!(run(5), one);
    }

    #[test]
    fn refuses_empty_groups() {
        let mut r = Pcg64::seed_from_u64(1);
        assert!(cluster_median_diff::<i64, _>(&[(&[1], &[])], 10, 0.95, &mut r).is_err());
        assert!(cluster_median_diff::<i64, _>(&[], 10, 0.95, &mut r).is_err());
    }
}
