//! The interval a sequential design stops on: Student's t over the fork
//! estimates at every look, each look at a share of the error rate fixed
//! before the run (alpha spending, in its Bonferroni form).
//!
//! A sequential design (`[design.stop]`) looks at a cell's interval after
//! every fork from `min_forks` to `max_forks` and stops once it decides, so
//! the interval it stops on must hold at whichever look the data chose.
//! With looks n_1 < ... < n_L and an error rate alpha_i spent at look i,
//! sum alpha_i = alpha, the t interval at look i with n_i - 1 degrees of
//! freedom at level 1 - alpha_i misses the true mean with probability at
//! most alpha_i; by the union bound all of them hold at once with
//! probability at least 1 - alpha, so the interval at any look, chosen by
//! any rule (this one's or another's), holds at level 1 - alpha (the
//! Bonferroni bound of group-sequential designs; Jennison & Turnbull 2000,
//! "Group Sequential Methods with Applications to Clinical Trials", sec.
//! 7.2, and Lan & DeMets 1983 for spending alpha over looks).
//!
//! The t intervals need the fork estimates to be independent and roughly
//! normal around their mean: fresh processes give the first; a fork's
//! median of tens of pairs, or its log ratio, is close to the second
//! unless forks fall into two speeds (docs/guide/statistics.md says where
//! this stops holding).
//!
//! How alpha is spent: [`FIRST_SHARE`] of it at the first look, so that
//! three forks that agree can decide (t with 2 degrees of freedom at
//! alpha = 0.02 is 6.96 standard errors; Lai's confidence sequence, which
//! this replaces, needed 13.2), and the rest over the later looks in
//! proportion to 1 / sqrt(k) for the k-th of them, so the early ones,
//! where a clear effect stops, get more than the late ones. Over 3 to 10
//! forks this decides sooner than Lai's sequence at every effect size; over
//! 3 to 20 about as soon; beyond that it is a little wider at the late
//! looks (docs/guide/statistics.md has the table).

use super::distributions::t_quantile;
use super::{check_confidence, StatsError};

/// The share of alpha spent at the first look.
pub const FIRST_SHARE: f64 = 0.4;

/// A design's looks and the error rate spent at each.
#[derive(Debug, Clone, PartialEq)]
pub struct Spending {
    first: usize,
    last: usize,
    confidence: f64,
}

/// A mean over the first `n` fork estimates and the interval that holds
/// there; `bounds` is `None` before the first look.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LookInterval {
    pub n: usize,
    pub mean: f64,
    pub bounds: Option<[f64; 2]>,
}

impl LookInterval {
    /// Half the interval's width; infinite while unbounded.
    pub fn half_width(&self) -> f64 {
        self.bounds
            .map_or(f64::INFINITY, |[lo, hi]| (hi - lo) / 2.0)
    }

    /// Whether the interval lies wholly on one side of `x`.
    pub fn excludes(&self, x: f64) -> bool {
        self.bounds.is_some_and(|[lo, hi]| lo > x || hi < x)
    }

    /// Whether `x` lies inside it (an unbounded interval holds everything).
    pub fn contains(&self, x: f64) -> bool {
        self.bounds.is_none_or(|[lo, hi]| lo <= x && x <= hi)
    }
}

impl Spending {
    /// Looks after every fork from `min_forks` (at least 2: one value has
    /// no spread) to `max_forks`.
    pub fn new(
        min_forks: usize,
        max_forks: usize,
        confidence: f64,
    ) -> Result<Spending, StatsError> {
        check_confidence(confidence)?;
        let first = min_forks.max(2);
        if max_forks < first {
            return Err(StatsError::TooFewGroups(first));
        }
        Ok(Spending {
            first,
            last: max_forks,
            confidence,
        })
    }

    /// The first look: the fewest forks whose interval is bounded.
    pub fn first_look(&self) -> usize {
        self.first
    }

    /// The error rate spent at the look after `n` forks; 0 where there is
    /// no look.
    pub fn alpha_at(&self, n: usize) -> f64 {
        let alpha = 1.0 - self.confidence;
        if n < self.first || n > self.last {
            return 0.0;
        }
        if self.first == self.last {
            return alpha;
        }
        if n == self.first {
            return FIRST_SHARE * alpha;
        }
        let weight = |k: usize| 1.0 / (k as f64).sqrt();
        let total: f64 = (1..=self.last - self.first).map(weight).sum();
        (1.0 - FIRST_SHARE) * alpha * weight(n - self.first) / total
    }

    /// The half-width at look `n` in units of s / sqrt(n), s the estimates'
    /// standard deviation (as t(n - 1) is a fixed design's); infinite where
    /// there is no look. What a forecast sizes a target with.
    pub fn multiplier(&self, n: usize) -> f64 {
        let alpha = self.alpha_at(n);
        if alpha <= 0.0 {
            return f64::INFINITY;
        }
        t_quantile(1.0 - alpha, (n - 1) as u32)
    }

    /// The interval over `values` (the first n fork estimates, n their
    /// number) at look n.
    pub fn interval(&self, values: &[f64]) -> Result<LookInterval, StatsError> {
        let (mean, s) = mean_and_sd(values)?;
        let n = values.len();
        let m = self.multiplier(n);
        let bounds = m.is_finite().then(|| {
            [
                mean - m * s / (n as f64).sqrt(),
                mean + m * s / (n as f64).sqrt(),
            ]
        });
        Ok(LookInterval { n, mean, bounds })
    }
}

/// Student's t interval of a mean for a number of values fixed in advance:
/// mean ± t(n - 1) s / sqrt(n); unbounded for one value.
pub fn fixed(values: &[f64], confidence: f64) -> Result<LookInterval, StatsError> {
    check_confidence(confidence)?;
    let (mean, s) = mean_and_sd(values)?;
    let n = values.len();
    let bounds = (n >= 2).then(|| {
        let h = t_quantile(confidence, (n - 1) as u32) * s / (n as f64).sqrt();
        [mean - h, mean + h]
    });
    Ok(LookInterval { n, mean, bounds })
}

/// Mean and sample standard deviation (0 for one value).
fn mean_and_sd(values: &[f64]) -> Result<(f64, f64), StatsError> {
    if values.is_empty() {
        return Err(StatsError::Empty);
    }
    if values.iter().any(|v| !v.is_finite()) {
        return Err(StatsError::NotANumber);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let q: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
    let s = if values.len() < 2 {
        0.0
    } else {
        (q / (n - 1.0)).sqrt()
    };
    Ok((mean, s))
}

#[cfg(test)]
mod tests;
