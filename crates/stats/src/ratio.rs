//! The speed ratio of two arms measured in pairs: median(treatment) /
//! median(baseline), the figure a "median run" line beside it implies, and
//! its interval.
//!
//! **Per fork.** The ratio is taken on the log scale, l = ln m_T - ln m_B,
//! each fork on its own baseline, so forks that ran at different speeds
//! agree whenever their treatments do. Its interval is that of resampling
//! the fork's pairs together (one index draws both arms of a pair), computed
//! rather than drawn: resampling 2000 times per fork costs 2000 x n draws
//! and two medians each, which on a run of 800 forks of 300 pairs is
//! seconds, where the whole analysis takes under one. What the resampling
//! would give is, to the order that matters:
//!
//! - the spread of each arm's resampled log median, *exactly*: the
//!   bootstrap distribution of a median is known in closed form
//!   ([`super::exact`]), and its variance on the log scale is read from it
//!   (v_T, v_B);
//! - their dependence, by its large-sample form: two sample medians of
//!   pairs correlate as 4 F - 1, where F is the share of pairs lying below
//!   both medians at once (the quadrant probability; Serfling 1980, sec.
//!   2.3.3, the Bahadur representation of sample quantiles). Paired runs
//!   that share a slow moment move together (F above 1/4), and pairing then
//!   narrows the ratio's interval as it narrows D's;
//! - its shape: normal on the log scale, l ± z sqrt(v_T + v_B - 2 r
//!   sqrt(v_T v_B)), so both bounds are positive ratios whatever the size
//!   of the change (a 66x win is `0.0152 [0.0139, 0.0166]`, never a
//!   negative time).
//!
//! The median of per-pair ratios would be cheaper and is a different
//! estimand: with an additive change and a wide baseline it drifts from the
//! ratio of the medians the arms' own figures show.
//!
//! **Across forks.** Fork log ratios are combined by their mean (the
//! geometric mean of the fork ratios), with Student's t interval over the
//! forks ([`over_forks`]): a fork's log ratio holds its own pairs' noise
//! and its fork's effect, so their spread is the whole of what a next
//! fork would vary by, and t's n - 1 degrees of freedom keep the level
//! at 3 forks as at 30, where a percentile bootstrap of 2 or 3 forks
//! (which can draw only 3 or 10 distinct fork sets) is far too narrow.

use super::distributions::normal_quantile;
use super::exact::median_moments;
use super::quantile::median;
use super::{check_confidence, StatsError};

/// A ratio of medians with its interval, and the log-scale figures behind
/// them (what a combination across forks reads).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioEstimate {
    /// median(treatment) / median(baseline); per fork exactly that.
    pub ratio: f64,
    /// Both bounds positive.
    pub ci: [f64; 2],
    /// ln(ratio).
    pub log: f64,
    /// The standard error of `log` (0 when every resample gives one value).
    pub log_se: f64,
}

impl RatioEstimate {
    /// The estimate behind a recorded ratio and its interval at
    /// `confidence` (the log-scale standard error read back from the
    /// interval's width).
    pub fn from_interval(ratio: f64, ci: [f64; 2], confidence: f64) -> RatioEstimate {
        let z = normal_quantile((1.0 + confidence) / 2.0);
        RatioEstimate {
            ratio,
            ci,
            log: ratio.ln(),
            log_se: (ci[1].ln() - ci[0].ln()) / (2.0 * z),
        }
    }
}

/// The ratio of one fork's medians with its interval (module doc):
/// `baseline[i]` and `treatment[i]` are pair i. Refuses empty or unequal
/// samples, NaN, and a value that is not positive (a run time of 0 has no
/// logarithm).
pub fn paired_ratio(
    baseline: &[f64],
    treatment: &[f64],
    confidence: f64,
) -> Result<RatioEstimate, StatsError> {
    check_confidence(confidence)?;
    if baseline.len() != treatment.len() {
        return Err(StatsError::Unpaired);
    }
    positive(baseline)?;
    positive(treatment)?;
    let (m_b, m_t) = (median(baseline)?, median(treatment)?);
    let v_b = log_median_variance(baseline)?;
    let v_t = log_median_variance(treatment)?;
    let r = quadrant_correlation(baseline, treatment, m_b, m_t);
    let log_se = (v_t + v_b - 2.0 * r * (v_t * v_b).sqrt()).max(0.0).sqrt();
    Ok(RatioEstimate {
        // The quotient itself, not exp(ln - ln): the figure the arms'
        // medians printed beside it give, to the last digit.
        ratio: m_t / m_b,
        ..from_log(m_t.ln() - m_b.ln(), log_se, confidence)
    })
}

/// The ratio of the medians of two unpaired samples (two groups of runs
/// with no pairing between them), on the log scale as [`paired_ratio`]
/// with the correlation taken as 0.
pub fn unpaired_ratio(
    baseline: &[f64],
    treatment: &[f64],
    confidence: f64,
) -> Result<RatioEstimate, StatsError> {
    check_confidence(confidence)?;
    positive(baseline)?;
    positive(treatment)?;
    let (m_b, m_t) = (median(baseline)?, median(treatment)?);
    let v = log_median_variance(baseline)? + log_median_variance(treatment)?;
    Ok(from_log(m_t.ln() - m_b.ln(), v.sqrt(), confidence))
}

/// A ratio from its log and the standard error of the log, with the
/// normal interval on the log scale.
fn from_log(log: f64, log_se: f64, confidence: f64) -> RatioEstimate {
    let z = normal_quantile((1.0 + confidence) / 2.0);
    RatioEstimate {
        ratio: log.exp(),
        ci: [(log - z * log_se).exp(), (log + z * log_se).exp()],
        log,
        log_se,
    }
}

/// Fork ratios combined on the log scale (module doc): the geometric mean
/// of the forks' ratios, and Student's t interval of the mean of their log
/// ratios with n - 1 degrees of freedom (`spending::fixed`). One fork is
/// its own interval (the pairs' spread only: nothing measured the forks').
pub fn over_forks(forks: &[RatioEstimate], confidence: f64) -> Result<RatioEstimate, StatsError> {
    check_confidence(confidence)?;
    match forks {
        [] => return Err(StatsError::Empty),
        [one] => return Ok(*one),
        _ => {}
    }
    let logs: Vec<f64> = forks.iter().map(|f| f.log).collect();
    let t = super::spending::fixed(&logs, confidence)?;
    let [lo, hi] = t.bounds.ok_or(StatsError::TooFewGroups(2))?;
    let k = forks.len() as f64;
    let spread = logs.iter().map(|l| (l - t.mean).powi(2)).sum::<f64>() / (k - 1.0);
    Ok(RatioEstimate {
        ratio: t.mean.exp(),
        ci: [lo.exp(), hi.exp()],
        log: t.mean,
        log_se: (spread / k).sqrt(),
    })
}

/// A ratio from a mean log ratio and a symmetric log-scale interval around
/// it (a confidence sequence's), or `None` while the interval is unbounded.
pub fn ratio_of_log_interval(log: f64, half_width: f64) -> Option<[f64; 2]> {
    half_width
        .is_finite()
        .then(|| [(log - half_width).exp(), (log + half_width).exp()])
}

/// The variance of ln(median) over the exact bootstrap distribution of the
/// median of `data` (taken on the log scale, where the median of an odd
/// sample is the log of its median, and of an even one the log of the
/// geometric mean of its two middle values: the same to far below the
/// interval's precision).
fn log_median_variance(data: &[f64]) -> Result<f64, StatsError> {
    let logs: Vec<f64> = data.iter().map(|x| x.ln()).collect();
    Ok(median_moments(&logs)?.1)
}

/// 4 F - 1 with F the share of pairs below both medians, a value equal to
/// its median counted as half below (so the median observation of an odd
/// sample weighs as the continuous case would); clamped to [-1, 1].
fn quadrant_correlation(baseline: &[f64], treatment: &[f64], m_b: f64, m_t: f64) -> f64 {
    let below = |x: f64, m: f64| {
        if x < m {
            1.0
        } else if x == m {
            0.5
        } else {
            0.0
        }
    };
    let f = baseline
        .iter()
        .zip(treatment)
        .map(|(&b, &t)| below(b, m_b) * below(t, m_t))
        .sum::<f64>()
        / baseline.len() as f64;
    (4.0 * f - 1.0).clamp(-1.0, 1.0)
}

fn positive(data: &[f64]) -> Result<(), StatsError> {
    if data.is_empty() {
        return Err(StatsError::Empty);
    }
    if data.iter().any(|x| x.is_nan()) {
        return Err(StatsError::NotANumber);
    }
    if data.iter().any(|&x| x <= 0.0) {
        return Err(StatsError::NotPositive);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
