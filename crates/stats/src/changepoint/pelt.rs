//! PELT (Killick, Fearnhead & Eckley 2012): the exact minimiser of
//! "sum of segment costs + penalty per changepoint", with pruning.
//!
//! F(t), the best cost of `x[..t]`, is min over the last changepoint tau of
//! F(tau) + C(x[tau..t]) + penalty, with F(0) = -penalty. A candidate tau
//! whose F(tau) + C(x[tau..t]) already exceeds F(t) can never be the best
//! last changepoint of any longer prefix (their Theorem 3.1, with K = 0,
//! which holds for a segment cost that is a maximised log-likelihood), so it
//! is dropped. With a minimum segment length m, that argument applies only
//! to prefixes at least m longer than t, so a pruned tau leaves the
//! candidate list m steps later; the result is the exact optimum.

use std::f64::consts::PI;

/// The cost of one segment: twice the negative maximised log-likelihood of
/// independent normal values with the segment's own mean and variance.
///
/// With sum of squared deviations ss over m values and s2 = max(ss / m,
/// floor): m ln(2 pi) + m ln(s2) + ss / s2. Without the floor that is the
/// usual m (ln(2 pi) + ln(ss / m) + 1), which goes to minus infinity for a
/// run of equal values (timings are integers, so that happens); the floor
/// caps how much a quiet stretch can gain, and maximising over variances
/// >= floor keeps the cost a maximised likelihood, so pruning stays exact.
pub(crate) struct NormalMeanVar {
    sum: Vec<f64>,
    sum_sq: Vec<f64>,
    floor: f64,
}

impl NormalMeanVar {
    pub(super) fn new(data: &[f64], variance_floor: f64) -> Self {
        // Centred first: prefix sums of squares of raw nanosecond timings
        // would lose the variance to cancellation.
        let centre = data.iter().sum::<f64>() / data.len().max(1) as f64;
        let (mut sum, mut sum_sq) = (vec![0.0], vec![0.0]);
        for &x in data {
            let y = x - centre;
            sum.push(sum.last().unwrap() + y);
            sum_sq.push(sum_sq.last().unwrap() + y * y);
        }
        NormalMeanVar {
            sum,
            sum_sq,
            floor: variance_floor,
        }
    }

    /// The cost of `x[a..b]`, `a < b` (what [`pelt`] computes in passes).
    #[cfg(test)]
    pub(super) fn cost(&self, a: usize, b: usize) -> f64 {
        let (m, ss, s2) = self.spread(a, b);
        Self::of_spread(m, ss, s2, s2.ln())
    }

    /// The length, sum of squared deviations and (floored) variance of
    /// `x[a..b]`: the part of the cost before its logarithm.
    #[inline]
    fn spread(&self, a: usize, b: usize) -> (f64, f64, f64) {
        let m = (b - a) as f64;
        let s = self.sum[b] - self.sum[a];
        let ss = ((self.sum_sq[b] - self.sum_sq[a]) - s * s / m).max(0.0);
        (m, ss, (ss / m).max(self.floor))
    }

    /// The cost from [`Self::spread`] and ln(s2).
    #[inline]
    fn of_spread(m: f64, ss: f64, s2: f64, ln_s2: f64) -> f64 {
        m * (2.0 * PI).ln() + m * ln_s2 + ss / s2
    }
}

/// The starts of the segments after the first (the changepoints) of the
/// optimal segmentation of the `n` values behind `cost`, every segment at
/// least `min_len` long. Ties go to the earliest last changepoint.
pub(crate) fn pelt(cost: &NormalMeanVar, n: usize, penalty: f64, min_len: usize) -> Vec<usize> {
    let m = min_len.max(1);
    if n < 2 * m {
        return Vec::new();
    }
    let mut f = vec![f64::INFINITY; n + 1];
    let mut last = vec![0usize; n + 1];
    f[0] = -penalty;
    // Candidates: (tau, the t from which it is pruned).
    let mut candidates: Vec<(usize, usize)> = vec![(0, usize::MAX)];
    let (mut spreads, mut logs, mut scores) = (Vec::new(), Vec::new(), Vec::<f64>::new());
    for t in m..=n {
        if t >= 2 * m {
            // tau = t - m became a possible changepoint: x[t - m..t] is the
            // shortest segment that may follow it.
            candidates.push((t - m, usize::MAX));
        }
        candidates.retain(|&(_, until)| t < until);
        // Each candidate's score in three passes (spreads, logarithms,
        // sums) rather than one: the candidates are independent, and
        // without a division and a call of `ln` in one chain the processor
        // overlaps them. The operations, and so the scores, are the same.
        spreads.clear();
        spreads.extend(candidates.iter().map(|&(tau, _)| cost.spread(tau, t)));
        logs.clear();
        logs.extend(spreads.iter().map(|&(_, _, s2)| s2.ln()));
        scores.clear();
        scores.extend(candidates.iter().zip(spreads.iter().zip(&logs)).map(
            |(&(tau, _), (&(m, ss, s2), &ln_s2))| {
                f[tau] + NormalMeanVar::of_spread(m, ss, s2, ln_s2)
            },
        ));
        let (mut best, mut best_tau) = (f64::INFINITY, 0);
        for (&(tau, _), &s) in candidates.iter().zip(&scores) {
            if s + penalty < best {
                best = s + penalty;
                best_tau = tau;
            }
        }
        f[t] = best;
        last[t] = best_tau;
        for (c, &s) in candidates.iter_mut().zip(&scores) {
            if s > best && c.1 == usize::MAX {
                c.1 = t + m;
            }
        }
    }
    let mut changepoints = Vec::new();
    let mut t = last[n];
    while t > 0 {
        changepoints.push(t);
        t = last[t];
    }
    changepoints.reverse();
    changepoints
}
