//! Pearson's correlation, here used across forks: do forks that run slow on
//! the baseline also run slow on the treatment? A high value says the
//! fork-to-fork spread is a property of the process, not of the arm.

use super::Value;

/// Pearson's r of paired samples; `None` when undefined: fewer than two
/// pairs, lengths that differ, NaN, or a sample with zero variance.
pub fn pearson<T: Value>(x: &[T], y: &[T]) -> Option<f64> {
    let n = x.len();
    if n < 2 || y.len() != n {
        return None;
    }
    let xs: Vec<f64> = x.iter().map(|v| v.to_f64()).collect();
    let ys: Vec<f64> = y.iter().map(|v| v.to_f64()).collect();
    let mean_x = xs.iter().sum::<f64>() / n as f64;
    let mean_y = ys.iter().sum::<f64>() / n as f64;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in xs.iter().zip(&ys) {
        let (dx, dy) = (a - mean_x, b - mean_y);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    let r = sxy / (sxx * syy).sqrt();
    // `!(sxx > 0)` also catches NaN input, which poisons every sum.
    if !(sxx > 0.0 && syy > 0.0) || r.is_nan() {
        return None;
    }
    Some(r.clamp(-1.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_data() {
        // x = 1..5, y = 2, 4, 5, 4, 5: sxy = 6, sxx = 10, syy = 6 -> r = 6 / sqrt(60)
        let r = pearson(&[1.0, 2.0, 3.0, 4.0, 5.0], &[2.0, 4.0, 5.0, 4.0, 5.0]).unwrap();
        assert!((r - 6.0 / 60f64.sqrt()).abs() < 1e-15, "{r}");
        assert_eq!(pearson(&[1_i64, 2, 3], &[30, 20, 10]), Some(-1.0));
        assert_eq!(pearson(&[1_i64, 2], &[5, 7]), Some(1.0));
    }

    #[test]
    fn undefined_cases_are_none() {
        assert_eq!(pearson::<f64>(&[], &[]), None);
        assert_eq!(pearson(&[1.0], &[2.0]), None);
        assert_eq!(pearson(&[1.0, 2.0], &[3.0, 3.0]), None);
        assert_eq!(pearson(&[1.0, 2.0], &[3.0]), None);
        assert_eq!(pearson(&[1.0, f64::NAN, 3.0], &[1.0, 2.0, 3.0]), None);
    }
}
