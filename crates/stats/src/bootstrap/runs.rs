//! Two separate runs, each a set of forks: how much did the median move?
//!
//! [`hierarchical_median_shift`] is the two-level bootstrap of
//! `bootstrap::hierarchical_median` done for two independent runs at once:
//! per resample, run A's k_a forks are drawn with replacement (each chosen
//! fork then brings a resample of its own values), then run B's k_b forks
//! the same way; the statistic is median(B*) - median(A*). The two runs
//! share no process, so nothing pairs a fork of one with a fork of the
//! other, and the fork-to-fork spread of both runs goes into the interval
//! (Davison & Hinkley 1997, sec. 3.8, for each level; Ren et al. 2010).

use super::{check, percentile_interval, Grouped, MedianEstimate};
use crate::resample::par_resamples;
use crate::{StatsError, Value};
use rand::RngCore;

/// See the module doc. `a` and `b` are the forks of each run, every fork
/// non-empty. Draw order per resample: A's k_a slots (a draw below k_a,
/// then that fork's n draws below n), then B's k_b slots; resamples in
/// chunks as `resample::par_resamples` draws them.
pub fn hierarchical_median_shift<T: Value, R: RngCore>(
    a: &[&[T]],
    b: &[&[T]],
    resamples: u32,
    confidence: f64,
    rng: &mut R,
) -> Result<MedianEstimate, StatsError> {
    check(resamples, confidence)?;
    let ga = Grouped::new(a)?;
    let gb = Grouped::new(b)?;
    let (ka, kb) = (a.len() as u32, b.len() as u32);
    let shifts = par_resamples(
        rng,
        resamples,
        || (ga.scratch(), gb.scratch()),
        |s, (sa, sb)| {
            ga.start(sa);
            gb.start(sb);
            for _ in 0..ka {
                ga.draw(s.below(ka) as usize, s, sa);
            }
            for _ in 0..kb {
                gb.draw(s.below(kb) as usize, s, sb);
            }
            let a = ga.median(s, sa);
            gb.median(s, sb) - a
        },
    );
    Ok(MedianEstimate {
        median: gb.ranked.median() - ga.ranked.median(),
        ci: percentile_interval(shifts, confidence)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quantile::median;
    use crate::resample::{hierarchical_indices, replay, IndexSampler};
    use crate::Interval;
    use rand::SeedableRng;
    use rand_pcg::Pcg64;

    #[test]
    fn constant_runs_shift_exactly() {
        let a: [&[i64]; 2] = [&[10, 10], &[10]];
        let b: [&[i64]; 3] = [&[13], &[13, 13, 13], &[13]];
        let e = hierarchical_median_shift(&a, &b, 200, 0.95, &mut Pcg64::seed_from_u64(1)).unwrap();
        assert_eq!(e.median, 3.0);
        assert_eq!(e.ci, Interval { lo: 3.0, hi: 3.0 });
    }

    #[test]
    fn the_estimate_is_the_difference_of_the_pooled_medians() {
        // A pooled: 1 2 3 4 -> 2.5; B pooled: 5 7 9 -> 7.
        let a: [&[i64]; 2] = [&[4, 1], &[3, 2]];
        let b: [&[i64]; 2] = [&[9], &[5, 7]];
        let e = hierarchical_median_shift(&a, &b, 100, 0.9, &mut Pcg64::seed_from_u64(2)).unwrap();
        assert_eq!(e.median, 4.5);
        assert!(e.ci.lo <= e.ci.hi);
    }

    /// Replaying the draws the slow way (A's slots, then B's, by the same
    /// sampler) gives the same interval.
    #[test]
    fn replayed_draws_reproduce_the_interval() {
        let a: Vec<Vec<i64>> = vec![vec![5, 1, 9, 3], vec![8, 2, 7], vec![4, 4, 6, 1, 0]];
        let b: Vec<Vec<i64>> = vec![vec![11, 3], vec![9, 8, 12, 6]];
        let ar: Vec<&[i64]> = a.iter().map(Vec::as_slice).collect();
        let br: Vec<&[i64]> = b.iter().map(Vec::as_slice).collect();
        let (resamples, c) = (400, 0.9);
        let e = hierarchical_median_shift(&ar, &br, resamples, c, &mut Pcg64::seed_from_u64(7))
            .unwrap();
        let sorted = |v: &Vec<i64>| {
            let mut s = v.clone();
            s.sort_unstable();
            s
        };
        let (sa, sb): (Vec<_>, Vec<_>) = (
            a.iter().map(sorted).collect(),
            b.iter().map(sorted).collect(),
        );
        fn slot(groups: &[Vec<i64>], s: &mut IndexSampler<'_, Pcg64>) -> Vec<i64> {
            let k = groups.len() as u32;
            let mut out = Vec::new();
            for _ in 0..k {
                let g = &groups[s.below(k) as usize];
                let n = g.len() as u32;
                out.extend((0..n).map(|_| g[s.below(n) as usize]));
            }
            out
        }
        let shifts: Vec<f64> = replay(&mut Pcg64::seed_from_u64(7), resamples, |s| {
            let ra = slot(&sa, s);
            let rb = slot(&sb, s);
            median(&rb).unwrap() - median(&ra).unwrap()
        });
        assert_eq!(e.ci, percentile_interval(shifts, c).unwrap());
        // One run alone draws as `hierarchical_indices` does.
        let sizes: Vec<u32> = a.iter().map(|g| g.len() as u32).collect();
        let plan = hierarchical_indices(&mut Pcg64::seed_from_u64(7), &sizes, 1);
        assert_eq!(plan[0].len(), 3);
    }

    #[test]
    fn refuses_an_empty_run() {
        let a: [&[i64]; 1] = [&[1]];
        let none: [&[i64]; 0] = [];
        let r = hierarchical_median_shift(&a, &none, 100, 0.9, &mut Pcg64::seed_from_u64(1));
        assert_eq!(r, Err(StatsError::Empty));
    }
}
