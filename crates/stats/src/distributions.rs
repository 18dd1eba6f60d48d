//! The textbook distributions the statistics read a quantile or a tail
//! from: the standard normal, Student's t, the binomial and the beta (for
//! Clopper-Pearson bounds), all from `statrs`, so their accuracy is a
//! well-tested library's and not five hand-written approximations'. The
//! exact, hierarchical and cluster bootstraps, the confidence sequence and
//! PELT stay this crate's own.

use statrs::distribution::{Beta, Binomial, ContinuousCDF, DiscreteCDF, Normal, StudentsT};

/// The standard normal quantile: -inf at 0, +inf at 1, NaN outside [0, 1].
pub fn normal_quantile(p: f64) -> f64 {
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    if !(p > 0.0 && p < 1.0) {
        return f64::NAN;
    }
    Normal::standard().inverse_cdf(p)
}

/// P(|T| <= t) for Student's t with `df` >= 1 degrees of freedom.
pub fn t_central(t: f64, df: u32) -> f64 {
    let dist = StudentsT::new(0.0, 1.0, f64::from(df.max(1))).expect("df >= 1 is a valid t");
    2.0 * dist.cdf(t.abs()) - 1.0
}

/// The t such that P(|T| <= t) = `central` (e.g. 0.95 for a two-sided
/// 95 % interval).
pub fn t_quantile(central: f64, df: u32) -> f64 {
    let dist = StudentsT::new(0.0, 1.0, f64::from(df.max(1))).expect("df >= 1 is a valid t");
    dist.inverse_cdf((1.0 + central) / 2.0)
}

/// P(X <= k) for X ~ Binomial(n, p); p outside (0, 1) is its limit.
pub fn binomial_cdf(k: u32, n: u32, p: f64) -> f64 {
    if p <= 0.0 {
        return 1.0;
    }
    if p >= 1.0 {
        return if k >= n { 1.0 } else { 0.0 };
    }
    Binomial::new(p, u64::from(n))
        .expect("0 < p < 1 is a valid binomial")
        .cdf(u64::from(k))
}

/// One-sided Clopper-Pearson upper bound at `confidence` on a share seen as
/// `k` of `n`: the `confidence` quantile of Beta(k + 1, n - k), the largest
/// p under which seeing k or fewer still has probability at least
/// 1 - confidence. `None` for n = 0; 1 when every one was seen.
pub fn clopper_pearson_upper(k: u32, n: u32, confidence: f64) -> Option<f64> {
    if n == 0 {
        return None;
    }
    if k >= n {
        return Some(1.0);
    }
    let beta = Beta::new(f64::from(k) + 1.0, f64::from(n - k)).expect("positive shapes");
    Some(beta.inverse_cdf(confidence))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_match_the_tables() {
        assert!((normal_quantile(0.975) - 1.959963984540054).abs() < 1e-9);
        assert!((normal_quantile(0.995) - 2.5758293035489).abs() < 1e-9);
        assert!((normal_quantile(0.01) + 2.3263478740408408).abs() < 1e-9);
        assert_eq!(normal_quantile(0.0), f64::NEG_INFINITY);
        assert!(normal_quantile(1.5).is_nan());
        // Two-sided 95 %: 12.706 (1), 4.303 (2), 2.262 (9); 99 %, 4 df: 4.604.
        for (central, df, t) in [
            (0.95, 1, 12.7062),
            (0.95, 2, 4.3027),
            (0.95, 9, 2.2622),
            (0.99, 4, 4.6041),
        ] {
            assert!((t_quantile(central, df) - t).abs() < 1e-4, "df {df}");
        }
        // df = 1 is Cauchy: P(|T| <= 1) = 1/2.
        assert!((t_central(1.0, 1) - 0.5).abs() < 1e-12);
    }

    /// 0 of n: the bound is 1 - (1 - confidence)^(1/n) in closed form.
    #[test]
    fn clopper_pearson_of_none_seen_is_closed_form() {
        for n in [1, 5, 30, 200] {
            let want = 1.0 - 0.05f64.powf(1.0 / f64::from(n));
            let got = clopper_pearson_upper(0, n, 0.95).unwrap();
            assert!((got - want).abs() < 1e-9, "n {n}: {got} vs {want}");
        }
        assert_eq!(clopper_pearson_upper(3, 3, 0.95), Some(1.0));
        assert_eq!(clopper_pearson_upper(0, 0, 0.95), None);
    }
}
