//! Quantiles exactly as numpy computes them, so a reader can check any number
//! of a report with `np.quantile` / `np.median` and get the same bits.
//!
//! numpy's default method "linear" (Hyndman & Fan 1996, type 7): the virtual
//! index is `(n - 1) q`, and the two neighbours are blended by numpy's `_lerp`,
//! which interpolates from the nearer end (`b - (b - a)(1 - t)` when t >= 0.5)
//! to stay monotone; we copy that branch for bit-identical results.

use super::{to_finite_vec, StatsError, Value};

/// The q-quantile of ascending `sorted` data, numpy "linear" method.
pub fn quantile(sorted: &[f64], q: f64) -> Result<f64, StatsError> {
    if sorted.is_empty() {
        return Err(StatsError::Empty);
    }
    if !(0.0..=1.0).contains(&q) {
        return Err(StatsError::BadProbability(q));
    }
    if sorted.iter().any(|x| x.is_nan()) {
        return Err(StatsError::NotANumber);
    }
    let n = sorted.len();
    let virtual_index = (n - 1) as f64 * q;
    let below = virtual_index.floor();
    let t = virtual_index - below;
    let lo = (below as usize).min(n - 1);
    let hi = (lo + 1).min(n - 1);
    Ok(lerp(sorted[lo], sorted[hi], t))
}

/// numpy's `_lerp`, including its branch on `t >= 0.5`.
pub(crate) fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

/// The median: the middle value, or the mean of the two middle values for even n.
///
/// Selects instead of sorting (O(n)), on a copy, so the caller's order survives.
pub fn median<T: Value>(data: &[T]) -> Result<f64, StatsError> {
    let mut v = to_finite_vec(data)?;
    let n = v.len();
    let upper_index = n / 2;
    let (lower_part, upper, _) = v.select_nth_unstable_by(upper_index, f64::total_cmp);
    let upper = *upper;
    if n % 2 == 1 {
        return Ok(upper);
    }
    let lower = lower_part
        .iter()
        .copied()
        .max_by(f64::total_cmp)
        .expect("even n >= 2 leaves a lower half");
    Ok(mid(lower, upper))
}

/// The median of ascending data, without copying.
pub fn median_sorted<T: Value>(sorted: &[T]) -> Result<f64, StatsError> {
    let n = sorted.len();
    if n == 0 {
        return Err(StatsError::Empty);
    }
    let upper = sorted[n / 2].to_f64();
    let lower = sorted[(n - 1) / 2].to_f64();
    if upper.is_nan() || lower.is_nan() {
        return Err(StatsError::NotANumber);
    }
    Ok(if n % 2 == 1 { upper } else { mid(lower, upper) })
}

/// The nearest-rank percentile of ascending data: the value at rank
/// `ceil(p n)` (1-based), always one of the data, never interpolated; the
/// convention latency percentiles (p50, p90, p99) are quoted in. `None`
/// for no data.
pub fn nearest_rank<T: Value>(sorted: &[T], p: f64) -> Option<f64> {
    let n = sorted.len();
    (n > 0).then(|| {
        let rank = ((p * n as f64).ceil() as usize).clamp(1, n);
        sorted[rank - 1].to_f64()
    })
}

/// The value at index `round((n - 1) q)` of ascending data (rounding half
/// away from zero): one of the data, the nearer of [`quantile`]'s two
/// neighbours. A plot's axis range uses it, so its edge is a run that
/// happened. `None` for no data.
pub fn nearest_index<T: Value>(sorted: &[T], q: f64) -> Option<f64> {
    let n = sorted.len();
    (n > 0).then(|| sorted[((n - 1) as f64 * q).round() as usize].to_f64())
}

/// Mean of two middle values the way numpy's `mean` does it: sum, then divide.
pub(crate) fn mid(a: f64, b: f64) -> f64 {
    (a + b) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_of_one_value_is_that_value() {
        for q in [0.0, 0.3, 0.5, 1.0] {
            assert_eq!(quantile(&[7.0], q), Ok(7.0));
        }
    }

    #[test]
    fn quantile_of_two_values_interpolates() {
        let x = [10.0, 20.0];
        assert_eq!(quantile(&x, 0.0), Ok(10.0));
        assert_eq!(quantile(&x, 0.25), Ok(12.5));
        assert_eq!(quantile(&x, 0.5), Ok(15.0));
        assert_eq!(quantile(&x, 0.75), Ok(17.5));
        assert_eq!(quantile(&x, 1.0), Ok(20.0));
    }

    #[test]
    fn quantile_of_four_values_matches_numpy() {
        // np.quantile([1, 2, 4, 8], q): index 3q.
        let x = [1.0, 2.0, 4.0, 8.0];
        assert_eq!(quantile(&x, 0.025), Ok(1.075)); // 1 + 0.075 * 1
        assert_eq!(quantile(&x, 0.5), Ok(3.0)); // 2 + 0.5 * 2
        assert_eq!(quantile(&x, 0.9), Ok(6.800000000000001)); // index 2.7: 8 - 4 * 0.3, as numpy prints it
        assert_eq!(quantile(&x, 1.0), Ok(8.0));
    }

    #[test]
    fn quantile_of_five_values_matches_numpy() {
        // index 4q
        let x = [-3.0, 0.0, 1.0, 5.0, 9.0];
        assert_eq!(quantile(&x, 0.0), Ok(-3.0));
        assert_eq!(quantile(&x, 0.1), Ok(-1.7999999999999998)); // -3 + 3 * 0.4, as numpy prints it
        assert_eq!(quantile(&x, 0.5), Ok(1.0));
        assert_eq!(quantile(&x, 0.975), Ok(8.6)); // index 3.9: 9 - 4 * 0.1
    }

    #[test]
    fn quantile_refuses_bad_input() {
        assert_eq!(quantile(&[], 0.5), Err(StatsError::Empty));
        assert_eq!(quantile(&[1.0], 1.5), Err(StatsError::BadProbability(1.5)));
        assert_eq!(quantile(&[1.0, f64::NAN], 0.5), Err(StatsError::NotANumber));
        assert!(matches!(
            quantile(&[1.0], f64::NAN),
            Err(StatsError::BadProbability(_))
        ));
    }

    #[test]
    fn median_odd_and_even() {
        assert_eq!(median(&[5_i64, 1, 3]), Ok(3.0));
        assert_eq!(median(&[4_i64, 1, 3, 2]), Ok(2.5));
        assert_eq!(median(&[-1_i64, -2]), Ok(-1.5));
        assert_eq!(median(&[9.0]), Ok(9.0));
        assert_eq!(median_sorted(&[1_i64, 2, 3, 4]), Ok(2.5));
        assert_eq!(median_sorted(&[1_i64, 2, 3]), Ok(2.0));
    }

    #[test]
    fn median_refuses_empty_and_nan() {
        assert_eq!(median::<i64>(&[]), Err(StatsError::Empty));
        assert_eq!(median(&[1.0, f64::NAN, 2.0]), Err(StatsError::NotANumber));
        assert_eq!(median_sorted::<f64>(&[]), Err(StatsError::Empty));
    }

    #[test]
    fn nearest_rank_and_nearest_index_are_data_points() {
        let v = [10u64, 20, 30, 40];
        assert_eq!(nearest_rank(&v, 0.5), Some(20.0));
        assert_eq!(nearest_rank(&v, 0.51), Some(30.0));
        assert_eq!(nearest_rank(&v, 0.99), Some(40.0));
        assert_eq!(nearest_rank(&v, 0.0), Some(10.0));
        assert_eq!(nearest_index(&v, 0.5), Some(30.0));
        assert_eq!(nearest_index(&v, 0.01), Some(10.0));
        assert_eq!(nearest_rank::<u64>(&[], 0.5), None);
        assert_eq!(nearest_index::<u64>(&[], 0.5), None);
    }
}
