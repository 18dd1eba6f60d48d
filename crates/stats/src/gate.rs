//! The regression gate's rule and its self-check, as functions of numbers
//! (docs/guide/gate.md).
//!
//! The rule compares an estimate of the slowdown (median D, in ns) and its
//! interval [lo, hi] with a threshold t > 0, symmetrically:
//!
//! - **pass**: hi < t, the whole interval lies below t. Whatever the true
//!   slowdown is, at this confidence it is smaller than t.
//! - **regression**: lo > t, the whole interval lies above t. The slowdown
//!   is, at this confidence, larger than what the gate allows.
//! - **inconclusive**: the interval straddles t; the data cannot say on
//!   which side the slowdown lies.
//!
//! So a change within the budget (any true slowdown s <= t) is blocked only
//! when its interval lies wholly above its own true value: for a valid
//! interval, at most (1 - confidence) / 2 of the time, and less the further
//! s sits below t ([`nominal_false_alarm`]). The self-check measures that
//! on the machine, per fork: in A/A cells at d = 0 (a change of size 0:
//! the false-alarm rate) and at half the threshold (a change within the
//! budget: the false-block rate), and its power in cells at twice the
//! threshold (a change the gate must catch).
//!
//! A share seen in n forks is read through one-sided Clopper-Pearson
//! bounds (Clopper & Pearson 1934): [`upper_bound`] for the error rates,
//! [`lower_bound`] for the power, so 0 blocked of 2 forks says "at most
//! 77.6 %", and 2 caught of 2 "at least 22.4 %", not 0 % and 100 %.
//! [`forks_to_bound`] and [`forks_for_power`] are the fewest forks whose
//! perfect outcome would meet a required bound.

/// What the rule says about one estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Pass,
    Regression,
    Inconclusive,
}

/// The rule of the module doc. `ci` is `[lo, hi]`; `threshold` > 0. The
/// estimate is not consulted: the interval alone decides, on both sides.
pub fn decide(_estimate: f64, ci: [f64; 2], threshold: f64) -> Decision {
    let [lo, hi] = ci;
    if hi < threshold {
        Decision::Pass
    } else if lo > threshold {
        Decision::Regression
    } else {
        Decision::Inconclusive
    }
}

/// The power of a deciding interval: the chance that the rule, applied to
/// an interval like this one on a true slowdown of `slowdown`, shows a
/// regression (its lower end above `threshold`).
///
/// Computed, not measured, from the interval's own width and spread: the
/// estimate is taken as normal with the standard error the interval
/// implies, sigma = (hi - lo) / (2 z) at the interval's `confidence`; an
/// interval of the same shape around an estimate m' has its lower end at
/// m' - (m - lo), so the rule flags it when m' > threshold + (m - lo), and
/// power = Phi((slowdown - threshold - (m - lo)) / sigma). For a symmetric
/// interval that is Phi(threshold / sigma - z) at twice the threshold: an
/// interval a fifth as wide as the threshold has a power of 1 to many
/// decimals, one as wide as twice the threshold about a half.
///
/// A zero-width interval has power 1 or 0: the rule's outcome is certain.
pub fn interval_power(
    estimate: f64,
    ci: [f64; 2],
    threshold: f64,
    slowdown: f64,
    confidence: f64,
) -> f64 {
    let [lo, hi] = ci;
    let z = crate::normal_quantile((1.0 + confidence) / 2.0);
    let sigma = (hi - lo) / (2.0 * z);
    let lower_arm = (estimate - lo).max(0.0);
    let margin = slowdown - threshold - lower_arm;
    if sigma.is_nan() || sigma <= 0.0 {
        return if margin > 0.0 { 1.0 } else { 0.0 };
    }
    crate::apart::normal_cdf(margin / sigma)
}

/// The largest half-width a symmetric deciding interval may have for
/// [`interval_power`] at twice `threshold` to reach `min_power`:
/// Phi(t / sigma - z) >= p when sigma <= t / (z + z_p), so the half-width
/// z sigma is at most t z / (z + z_p).
pub fn half_width_for_power(threshold: f64, min_power: f64, confidence: f64) -> f64 {
    let z = crate::normal_quantile((1.0 + confidence) / 2.0);
    let zp = crate::normal_quantile(min_power.min(1.0 - 1e-12));
    threshold * z / (z + zp)
}

/// How many of `decisions` are regressions, and how many there are.
pub fn flagged<I: IntoIterator<Item = Decision>>(decisions: I) -> (u32, u32) {
    decisions.into_iter().fold((0, 0), |(f, n), d| {
        (f + u32::from(d == Decision::Regression), n + 1)
    })
}

/// The rate at which the rule may block a change within the budget: the
/// chance that a `confidence` interval lies wholly above the true value.
pub fn nominal_false_alarm(confidence: f64) -> f64 {
    (1.0 - confidence) / 2.0
}

pub use super::distributions::binomial_cdf;

/// One-sided Clopper-Pearson upper bound at `confidence` on a share seen as
/// `k` of `n` (`distributions::clopper_pearson_upper`). `None` for n = 0.
pub fn upper_bound(k: u32, n: u32, confidence: f64) -> Option<f64> {
    super::distributions::clopper_pearson_upper(k, n, confidence)
}

/// One-sided Clopper-Pearson lower bound at `confidence` on a share seen
/// as `k` of `n`: the smallest p under which seeing k or more still has
/// probability at least 1 - confidence. `None` for n = 0.
pub fn lower_bound(k: u32, n: u32, confidence: f64) -> Option<f64> {
    if n == 0 {
        return None;
    }
    if k == 0 {
        return Some(0.0);
    }
    // The lower bound on "caught" is one minus the upper bound on "missed".
    upper_bound(n - k, n, confidence).map(|u| 1.0 - u)
}

/// The fewest forks with which a self-check that blocks none of them
/// bounds the error rate at `max_share` or less: n >= ln(1 - confidence) /
/// ln(1 - max_share), since the bound of 0 of n is 1 - (1 - confidence)^(1/n).
pub fn forks_to_bound(max_share: f64, confidence: f64) -> u32 {
    let n = (1.0 - confidence).ln() / (1.0 - max_share).ln();
    fewest(n, |n| {
        upper_bound(0, n, confidence).is_some_and(|u| u <= max_share)
    })
}

/// The fewest forks with which a self-check that catches every one of them
/// shows a power of at least `min_power`: n >= ln(1 - confidence) /
/// ln(min_power), since the bound of n of n is (1 - confidence)^(1/n).
pub fn forks_for_power(min_power: f64, confidence: f64) -> u32 {
    if min_power <= 0.0 {
        return 1;
    }
    if min_power >= 1.0 {
        return u32::MAX;
    }
    let n = (1.0 - confidence).ln() / min_power.ln();
    fewest(n, |n| {
        lower_bound(n, n, confidence).is_some_and(|l| l >= min_power)
    })
}

/// The closed form `n` rounded up, checked against `holds` (the bounds are
/// found by bisection, so a value on the boundary can land either side).
fn fewest(n: f64, holds: impl Fn(u32) -> bool) -> u32 {
    if !n.is_finite() || n >= f64::from(u32::MAX) {
        return u32::MAX;
    }
    let mut k = (n.ceil() as u32).max(1);
    while k > 1 && holds(k - 1) {
        k -= 1;
    }
    while !holds(k) && k < u32::MAX {
        k += 1;
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_outcomes() {
        // t = 100: interval [20, 90] lies below it.
        assert_eq!(decide(50.0, [20.0, 90.0], 100.0), Decision::Pass);
        // Interval below t even when it reaches below 0 (a speed-up).
        assert_eq!(decide(-50.0, [-90.0, -10.0], 100.0), Decision::Pass);
        // The whole interval above t.
        assert_eq!(decide(150.0, [120.0, 180.0], 100.0), Decision::Regression);
        // The estimate over t is not enough: the interval reaches below it.
        assert_eq!(decide(150.0, [1.0, 300.0], 100.0), Decision::Inconclusive);
        assert_eq!(decide(70.0, [64.0, 86.0], 63.0), Decision::Regression);
        assert_eq!(decide(70.0, [60.0, 86.0], 63.0), Decision::Inconclusive);
        // Real (above 0) but within the budget only partly: straddles t.
        assert_eq!(decide(80.0, [30.0, 130.0], 100.0), Decision::Inconclusive);
        // Boundaries: hi == t is not "below"; lo == t is not "above".
        assert_eq!(decide(50.0, [0.0, 100.0], 100.0), Decision::Inconclusive);
        assert_eq!(decide(150.0, [100.0, 200.0], 100.0), Decision::Inconclusive);
    }

    #[test]
    fn flagged_counts_regressions_only() {
        use Decision::*;
        assert_eq!(
            flagged([Pass, Regression, Inconclusive, Regression]),
            (2, 4)
        );
        assert_eq!(flagged([]), (0, 0));
        assert_eq!(nominal_false_alarm(0.95), 0.025000000000000022);
    }

    #[test]
    fn power_of_the_deciding_interval() {
        // t = 100; a symmetric interval of half-width z sigma with sigma =
        // 10: power at 200 = Phi(100 / 10 - 1.96) = Phi(8.04), 1 to 1e-12.
        let z = crate::normal_quantile(0.975);
        let p = interval_power(0.0, [-10.0 * z, 10.0 * z], 100.0, 200.0, 0.95);
        assert!(p > 1.0 - 1e-12, "{p}");
        // sigma = t / z: Phi(z - z) = 0.5.
        let s = 100.0 / z;
        let p = interval_power(0.0, [-s * z, s * z], 100.0, 200.0, 0.95);
        assert!((p - 0.5).abs() < 1e-6, "{p}");
        // Wider, lower: sigma = t: Phi(1 - 1.96) = Phi(-0.96) = 0.1685.
        let p = interval_power(5.0, [5.0 - 100.0 * z, 5.0 + 100.0 * z], 100.0, 200.0, 0.95);
        assert!((p - 0.1685).abs() < 1e-3, "{p}");
        // Zero width: certain either way.
        assert_eq!(interval_power(0.0, [0.0, 0.0], 100.0, 200.0, 0.95), 1.0);
        assert_eq!(interval_power(0.0, [0.0, 0.0], 100.0, 50.0, 0.95), 0.0);
        // The half-width that gives exactly min_power gives it back.
        let h = half_width_for_power(100.0, 0.8, 0.95);
        let p = interval_power(0.0, [-h, h], 100.0, 200.0, 0.95);
        assert!((p - 0.8).abs() < 1e-6, "{h} {p}");
    }

    #[test]
    fn binomial_cdf_by_hand() {
        // n = 2, p = 0.5: P(0) = 0.25, P(<=1) = 0.75, P(<=2) = 1.
        // The cdf goes through the regularized incomplete beta function,
        // whose last bits depend on the machine's libm (1e-15 off here).
        assert!((binomial_cdf(0, 2, 0.5) - 0.25).abs() < 1e-12);
        assert!((binomial_cdf(1, 2, 0.5) - 0.75).abs() < 1e-12);
        assert!((binomial_cdf(2, 2, 0.5) - 1.0).abs() < 1e-12);
        // n = 3, p = 0.1: P(<=1) = 0.9^3 + 3 * 0.1 * 0.81 = 0.972.
        assert!((binomial_cdf(1, 3, 0.1) - 0.972).abs() < 1e-12);
    }

    #[test]
    fn clopper_pearson_upper_bounds() {
        // k = 0: the bound solves (1 - p)^n = alpha, p = 1 - alpha^(1/n);
        // for n = 200 at 95 %: 1 - 0.05^(1/200) = 0.014867...
        let u = upper_bound(0, 200, 0.95).unwrap();
        assert!(
            (u - (1.0 - 0.05_f64.powf(1.0 / 200.0))).abs() < 1e-12,
            "{u}"
        );
        // k = 1, n = 10: solves (1-p)^10 + 10 p (1-p)^9 = 0.05; p = 0.3942
        // (the tabulated one-sided 95 % Clopper-Pearson bound).
        let u = upper_bound(1, 10, 0.95).unwrap();
        assert!((u - 0.3942).abs() < 1e-4, "{u}");
        assert_eq!(upper_bound(3, 3, 0.95), Some(1.0));
        assert_eq!(upper_bound(0, 0, 0.95), None);
        // More data, tighter bound, always above the seen share.
        assert!(upper_bound(5, 1000, 0.95).unwrap() < upper_bound(1, 200, 0.95).unwrap());
        assert!(upper_bound(5, 1000, 0.95).unwrap() > 0.005);
    }

    #[test]
    fn clopper_pearson_lower_bounds_mirror_the_upper() {
        // n of n: the bound solves p^n = alpha: 2 of 2 at 95 % is 0.2236.
        let l = lower_bound(2, 2, 0.95).unwrap();
        assert!((l - 0.05_f64.sqrt()).abs() < 1e-12, "{l}");
        assert_eq!(lower_bound(0, 5, 0.95), Some(0.0));
        assert_eq!(lower_bound(0, 0, 0.95), None);
        // 9 of 10: 1 - the upper bound of 1 of 10 (0.3942) = 0.6058.
        assert!((lower_bound(9, 10, 0.95).unwrap() - 0.6058).abs() < 1e-4);
    }

    #[test]
    fn forks_needed_for_a_bound() {
        // 0 of 29 bounds at 1 - 0.05^(1/29) = 0.0981 <= 10 %; 0 of 28 at
        // 0.1129.
        assert_eq!(forks_to_bound(0.10, 0.95), 29);
        assert!(upper_bound(0, 29, 0.95).unwrap() <= 0.10);
        assert!(upper_bound(0, 28, 0.95).unwrap() > 0.10);
        // 2.5 %: ln(0.05) / ln(0.975) = 118.3.
        assert_eq!(forks_to_bound(0.025, 0.95), 119);
        // 14 of 14 shows at least 0.05^(1/14) = 0.8074 >= 0.8; 13 of 13 only
        // 0.7944.
        assert_eq!(forks_for_power(0.8, 0.95), 14);
        assert_eq!(forks_for_power(1.0, 0.95), u32::MAX);
    }
}
