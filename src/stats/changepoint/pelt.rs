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
    pub fn new(data: &[f64], variance_floor: f64) -> Self {
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

    /// The cost of `x[a..b]`, `a < b`.
    pub fn cost(&self, a: usize, b: usize) -> f64 {
        let m = (b - a) as f64;
        let s = self.sum[b] - self.sum[a];
        let ss = ((self.sum_sq[b] - self.sum_sq[a]) - s * s / m).max(0.0);
        let s2 = (ss / m).max(self.floor);
        m * (2.0 * PI).ln() + m * s2.ln() + ss / s2
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
    let mut scores: Vec<f64> = Vec::new();
    for t in m..=n {
        if t >= 2 * m {
            // tau = t - m became a possible changepoint: x[t - m..t] is the
            // shortest segment that may follow it.
            candidates.push((t - m, usize::MAX));
        }
        candidates.retain(|&(_, until)| t < until);
        scores.clear();
        let (mut best, mut best_tau) = (f64::INFINITY, 0);
        for &(tau, _) in &candidates {
            let s = f[tau] + cost.cost(tau, t);
            scores.push(s);
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
