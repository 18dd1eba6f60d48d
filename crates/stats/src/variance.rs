//! How much of the noise lives between forks and how much inside them, and
//! what that means for the next experiment's size.
//!
//! Variance components of a one-way random-effects design (forks x pairs) by
//! the ANOVA method of moments (Searle, Casella & McCulloch 1992, ch. 3):
//! MSB = sum n_i (mean_i - mean)^2 / (k - 1), MSW = sum (y - mean_i)^2 / (N - k),
//! n0 = (N - sum n_i^2 / N) / (k - 1) (= pairs per fork when balanced),
//! within = MSW, between = max(0, (MSB - MSW) / n0). The clamp is the usual
//! one: a negative estimate means "no detectable between-fork variance".
//!
//! The recommendation follows Kalibera & Jones 2013 ("Rigorous benchmarking in
//! reasonable time", ISMM): with n forks of m pairs,
//! Var(grand mean) = between / n + within / (n m), and the CI half-width is
//! z sqrt(Var). Because between-fork variance only shrinks with more forks,
//! more pairs per fork stop helping once between / n dominates.

use super::distributions::normal_quantile;
use super::{to_finite_vec, StatsError, Value};

/// Between- and within-group variance estimates, in squared input units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VarianceComponents {
    pub between: f64,
    pub within: f64,
}

/// ANOVA estimates from groups (forks) of observations (one D per pair).
/// Needs at least two groups, no empty group, and more observations than groups.
pub fn variance_components<T: Value>(groups: &[&[T]]) -> Result<VarianceComponents, StatsError> {
    let k = groups.len();
    if k < 2 {
        return Err(StatsError::TooFewGroups(2));
    }
    let groups: Vec<Vec<f64>> = groups
        .iter()
        .map(|g| to_finite_vec(g))
        .collect::<Result<_, _>>()?;
    let big_n: usize = groups.iter().map(Vec::len).sum();
    if big_n <= k {
        return Err(StatsError::TooFewGroups(2));
    }
    let means: Vec<f64> = groups
        .iter()
        .map(|g| g.iter().sum::<f64>() / g.len() as f64)
        .collect();
    let grand = groups.iter().flatten().sum::<f64>() / big_n as f64;
    let ssb: f64 = groups
        .iter()
        .zip(&means)
        .map(|(g, m)| g.len() as f64 * (m - grand).powi(2))
        .sum();
    let ssw: f64 = groups
        .iter()
        .zip(&means)
        .map(|(g, m)| g.iter().map(|y| (y - m).powi(2)).sum::<f64>())
        .sum();
    let msb = ssb / (k - 1) as f64;
    let msw = ssw / (big_n - k) as f64;
    let sum_sq: f64 = groups.iter().map(|g| (g.len() as f64).powi(2)).sum();
    let n0 = (big_n as f64 - sum_sq / big_n as f64) / (k - 1) as f64;
    Ok(VarianceComponents {
        between: ((msb - msw) / n0).max(0.0),
        within: msw,
    })
}

/// A design: forks x pairs, its predicted half-width and its cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Recommendation {
    pub forks: u32,
    pub pairs: u32,
    pub half_width: f64,
    /// forks x (pairs + fork_overhead_pairs): pairs, counting a fork's start-up.
    pub cost_pairs: u64,
}

/// The same two components for the *median*, which is what runner reports,
/// estimated robustly from each fork's median of D, its bootstrap interval
/// and its number of pairs. The ANOVA components above are for the mean, and
/// with the heavy right tail of real timings (a few slow runs of several
/// milliseconds) they overstate the noise a median carries by orders of
/// magnitude, so a design sized from them is far larger than needed.
///
/// The bootstrap interval of fork i gives the sampling variance of its
/// median, v_i = ((hi - lo) / (2 z))^2 with z the normal quantile of the
/// confidence; a median of m pairs varies about as 1/m (asymptotic normality
/// of the sample median), so `within` = mean(v_i n_i) is the per-pair
/// contribution. The fork medians scatter by their true between-fork spread
/// plus that sampling noise, so `between` = max(0, s^2 - mean(v_i)) with s^2
/// the sample variance (n - 1) of the fork medians. Plugged into the formula
/// of [`recommend`], this sizes a design for the fork-median estimate.
pub fn median_components(
    medians: &[f64],
    intervals: &[[f64; 2]],
    pairs: &[u32],
    confidence: f64,
) -> Result<VarianceComponents, StatsError> {
    let k = medians.len();
    if k < 2 || intervals.len() != k || pairs.len() != k {
        return Err(StatsError::TooFewGroups(2));
    }
    if !(confidence > 0.0 && confidence < 1.0) {
        return Err(StatsError::BadConfidence(confidence));
    }
    if medians
        .iter()
        .chain(intervals.iter().flatten())
        .any(|x| !x.is_finite())
    {
        return Err(StatsError::NotANumber);
    }
    let z = normal_quantile((1.0 + confidence) / 2.0);
    let v: Vec<f64> = intervals
        .iter()
        .map(|[lo, hi]| ((hi - lo) / (2.0 * z)).powi(2))
        .collect();
    let kf = k as f64;
    let within = v
        .iter()
        .zip(pairs)
        .map(|(v, &n)| v * f64::from(n))
        .sum::<f64>()
        / kf;
    let mean = medians.iter().sum::<f64>() / kf;
    let s2 = medians.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (kf - 1.0);
    let between = (s2 - v.iter().sum::<f64>() / kf).max(0.0);
    Ok(VarianceComponents { between, within })
}

/// The half-width t(n - 1) sqrt(between / n + within / (n m)) that
/// `forks` (n) x `pairs` (m) would reach, the interval over forks being
/// Student's t; one fork's own interval, z sqrt(within / m), sees no fork
/// effect. E.g. for the design that ran, to set beside a recommendation.
/// NaN for a confidence outside (0, 1) or zero forks/pairs.
pub fn predicted_half_width(
    vc: VarianceComponents,
    confidence: f64,
    forks: u32,
    pairs: u32,
) -> f64 {
    if !(confidence > 0.0 && confidence < 1.0) || forks == 0 || pairs == 0 {
        return f64::NAN;
    }
    half_width_with(confidence, vc, forks, pairs)
}

fn half_width_with(confidence: f64, vc: VarianceComponents, forks: u32, pairs: u32) -> f64 {
    let n = f64::from(forks);
    if forks == 1 {
        return normal_quantile((1.0 + confidence) / 2.0) * (vc.within / f64::from(pairs)).sqrt();
    }
    crate::distributions::t_quantile(confidence, forks - 1)
        * (vc.between / n + vc.within / (n * f64::from(pairs))).sqrt()
}

/// The cheapest design reaching `target_half_width`.
///
/// Search: for each candidate pairs-per-fork m in `pairs_options`, the
/// smallest n >= 2 forks (two: a fork-to-fork spread needs two forks to be
/// seen at all) with t(n - 1) sqrt(between / n + within / (n m)) <= target, up to
/// `max_forks`; among those the one with the lowest n (m + fork_overhead_pairs),
/// ties to fewer forks. `None` when no candidate reaches the target.
pub fn recommend(
    vc: VarianceComponents,
    confidence: f64,
    target_half_width: f64,
    pairs_options: &[u32],
    fork_overhead_pairs: u32,
    max_forks: u32,
) -> Option<Recommendation> {
    let usable = target_half_width > 0.0 && confidence > 0.0 && confidence < 1.0;
    if !usable {
        return None;
    }
    let z = normal_quantile((1.0 + confidence) / 2.0);
    let half_width = |n: u32, m: u32| half_width_with(confidence, vc, n, m);
    pairs_options
        .iter()
        .filter(|&&m| m > 0)
        .filter_map(|&m| {
            let per_fork = z * z * (vc.between + vc.within / f64::from(m));
            let guess = (per_fork / (target_half_width * target_half_width)).ceil();
            let mut n = if guess.is_finite() && guess < f64::from(max_forks) {
                (guess as u32).max(2)
            } else {
                max_forks
            };
            // The closed form can be off by one either way after rounding.
            while n > 2 && half_width(n - 1, m) <= target_half_width {
                n -= 1;
            }
            while n <= max_forks && half_width(n, m) > target_half_width {
                n += 1;
            }
            (n <= max_forks).then(|| Recommendation {
                forks: n,
                pairs: m,
                half_width: half_width(n, m),
                cost_pairs: u64::from(n) * u64::from(m + fork_overhead_pairs),
            })
        })
        .min_by_key(|r| (r.cost_pairs, r.forks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balanced_layout_by_hand() {
        // means 2 and 5, grand 3.5: MSB = 3 (1.5^2 + 1.5^2) / 1 = 13.5;
        // MSW = (1 + 0 + 1 + 1 + 0 + 1) / 4 = 1; n0 = 3 -> between = 12.5 / 3.
        let vc = variance_components(&[&[1_i64, 2, 3][..], &[4, 5, 6]]).unwrap();
        assert_eq!(vc.within, 1.0);
        assert!((vc.between - 12.5 / 3.0).abs() < 1e-12, "{vc:?}");
    }

    #[test]
    fn negative_between_is_clamped() {
        // equal means: MSB = 0, MSW = (1 + 1 + 0 + 0) / 2 = 1 -> between = -1/2 -> 0.
        let vc = variance_components(&[&[1.0, 3.0][..], &[2.0, 2.0]]).unwrap();
        assert_eq!(
            vc,
            VarianceComponents {
                between: 0.0,
                within: 1.0
            }
        );
    }

    #[test]
    fn unbalanced_layout_by_hand() {
        // groups [0, 2] and [6]: N = 3, means 1 and 6, grand 8/3.
        // SSB = 2 (5/3)^2 + (10/3)^2 = 150/9; MSB = 150/9; SSW = 2, MSW = 2;
        // n0 = (3 - 5/3) / 1 = 4/3; between = (150/9 - 2) * 3/4 = 11.
        let vc = variance_components(&[&[0_i64, 2][..], &[6]]).unwrap();
        assert_eq!(vc.within, 2.0);
        assert!((vc.between - 11.0).abs() < 1e-12, "{vc:?}");
    }

    #[test]
    fn too_little_data_is_refused() {
        assert_eq!(
            variance_components(&[&[1_i64, 2][..]]),
            Err(StatsError::TooFewGroups(2))
        );
        assert_eq!(
            variance_components(&[&[1_i64][..], &[2]]),
            Err(StatsError::TooFewGroups(2))
        );
        assert_eq!(
            variance_components(&[&[1_i64][..], &[]]),
            Err(StatsError::Empty)
        );
    }

    #[test]
    fn recommendation_reaches_the_target_cheaply() {
        let vc = VarianceComponents {
            between: 100.0,
            within: 10_000.0,
        };
        let r = recommend(vc, 0.95, 5.0, &[100, 300, 1000], 100, 10_000).unwrap();
        // m = 100: t(n - 1)^2 (100 + 100) / n <= 25 first at n = 34
        // (t(33) = 2.0345: 24.35; t(32) = 2.0369 at 33: 25.15), cost 6800;
        // m = 300: t(n - 1)^2 133.3 / n <= 25 at 23, cost 9200; m = 1000 more.
        assert_eq!((r.forks, r.pairs, r.cost_pairs), (34, 100, 6800));
        assert!(r.half_width <= 5.0);
        let none = recommend(vc, 0.95, 0.01, &[100], 100, 50);
        assert_eq!(none, None);
        let zero = VarianceComponents {
            between: 0.0,
            within: 0.0,
        };
        let r = recommend(zero, 0.95, 1.0, &[100, 300], 100, 10).unwrap();
        assert_eq!((r.forks, r.pairs), (2, 100));
    }

    /// Medians 10, 20, 30 (sample variance 100), each interval 2z wide (a
    /// median's sampling variance of 1) from 100 pairs: within = 1 x 100,
    /// between = 100 - 1.
    #[test]
    fn median_components_by_hand() {
        let z = normal_quantile(0.975);
        let w = [[-z, z], [20.0 - z, 20.0 + z], [30.0 - z, 30.0 + z]];
        let vc = median_components(&[10.0, 20.0, 30.0], &w, &[100, 100, 100], 0.95).unwrap();
        assert!((vc.within - 100.0).abs() < 1e-9, "{vc:?}");
        assert!((vc.between - 99.0).abs() < 1e-9, "{vc:?}");
        // Fork medians closer together than their own noise: no between part.
        let vc =
            median_components(&[5.0, 5.0], &[[0.0, 10.0], [0.0, 10.0]], &[50, 50], 0.95).unwrap();
        assert_eq!(vc.between, 0.0);
        assert!(median_components(&[5.0], &[[0.0, 1.0]], &[9], 0.95).is_err());
        assert!(median_components(&[5.0, f64::NAN], &[[0.0, 1.0]; 2], &[9, 9], 0.95).is_err());
    }
}
