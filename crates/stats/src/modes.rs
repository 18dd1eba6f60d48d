//! Do a set of fork medians fall into two speeds?
//!
//! Fresh processes sometimes land in a slow mode (measured here: 15 of 80
//! PostgreSQL forks at ~2 ms instead of ~0.55 ms). A report should name
//! that split rather than call it spread. The test: split the sorted log
//! values where the within-cluster sum of squares is smallest (the optimal
//! 1-D two-means split, Fisher 1958), then call it two speeds when the
//! clusters are far apart for their own widths — Ashman's D = |m1 - m2| /
//! sqrt((s1² + s2²) / 2) (Ashman et al. 1994) of at least [`MIN_SEPARATION`]
//! — their medians differ by at least [`MIN_RATIO`], and the smaller holds
//! at least 2 values and 5 % of them. Splitting one normal (or uniform)
//! sample at its optimum gives D of about 2.7 (3.5), so 4 asks for a real gap.

/// Ashman's D the split must reach.
pub const MIN_SEPARATION: f64 = 4.0;
/// Ratio of the clusters' medians the split must reach.
pub const MIN_RATIO: f64 = 1.5;

/// Two speeds found in a sample: each cluster's size and value range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TwoSpeeds {
    pub fast_n: usize,
    pub fast_min: f64,
    pub fast_max: f64,
    pub slow_n: usize,
    pub slow_min: f64,
    pub slow_max: f64,
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn ss(v: &[f64]) -> f64 {
    let m = mean(v);
    v.iter().map(|x| (x - m) * (x - m)).sum()
}

fn median_sorted(v: &[f64]) -> f64 {
    super::quantile::median_sorted(v).unwrap_or(f64::NAN)
}

/// The two speeds of `values` (positive durations), or `None` when they do
/// not split into two clusters by the rule above.
pub fn two_speeds(values: &[f64]) -> Option<TwoSpeeds> {
    let mut sorted: Vec<f64> = values
        .iter()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let min_size = 2usize.max((n as f64 * 0.05).ceil() as usize);
    if n < 2 * min_size {
        return None;
    }
    let logs: Vec<f64> = sorted.iter().map(|v| v.ln()).collect();
    let split = (min_size..=n - min_size)
        .min_by(|&a, &b| {
            let cost = |i: usize| ss(&logs[..i]) + ss(&logs[i..]);
            cost(a).total_cmp(&cost(b))
        })
        .expect("the range is not empty");
    let (fast, slow) = logs.split_at(split);
    let sd = |v: &[f64]| (ss(v) / v.len() as f64).sqrt();
    let spread = ((sd(fast).powi(2) + sd(slow).powi(2)) / 2.0).sqrt();
    let separation = (mean(slow) - mean(fast)) / spread;
    let ratio = median_sorted(&sorted[split..]) / median_sorted(&sorted[..split]);
    (separation >= MIN_SEPARATION && ratio >= MIN_RATIO).then(|| TwoSpeeds {
        fast_n: split,
        fast_min: sorted[0],
        fast_max: sorted[split - 1],
        slow_n: n - split,
        slow_min: sorted[split],
        slow_max: sorted[n - 1],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_mode_is_found_with_its_sizes_and_ranges() {
        let mut v: Vec<f64> = (0..16).map(|i| 500.0 + 10.0 * f64::from(i)).collect();
        v.extend([2000.0, 2100.0, 2050.0, 1980.0]);
        let s = two_speeds(&v).expect("two speeds");
        assert_eq!((s.fast_n, s.slow_n), (16, 4));
        assert_eq!((s.fast_min, s.fast_max), (500.0, 650.0));
        assert_eq!((s.slow_min, s.slow_max), (1980.0, 2100.0));
    }

    #[test]
    fn one_speed_with_spread_is_not_split() {
        // Evenly spread over a factor of 3: a wide but single mode.
        let v: Vec<f64> = (0..40)
            .map(|i| 500.0 * 3f64.powf(f64::from(i) / 39.0))
            .collect();
        assert_eq!(two_speeds(&v), None);
        // Two tight clusters only 10 % apart: not two speeds.
        let mut close = vec![100.0; 10];
        close.extend(vec![110.0; 10]);
        close[0] = 99.0;
        close[19] = 111.0;
        assert_eq!(two_speeds(&close), None);
    }

    #[test]
    fn a_single_outlier_is_not_a_mode() {
        let mut v: Vec<f64> = (0..19).map(|i| 500.0 + f64::from(i)).collect();
        v.push(5000.0);
        assert_eq!(two_speeds(&v), None);
        assert_eq!(two_speeds(&[1.0, 2.0, 3.0]), None);
        assert_eq!(two_speeds(&[]), None);
    }
}
