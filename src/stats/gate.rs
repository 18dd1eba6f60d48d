//! The regression gate's rule and its self-check, as functions of numbers
//! (docs/guide/commands.md).
//!
//! The rule compares an estimate of the slowdown (median D, in ns) and its
//! interval with a threshold t > 0:
//!
//! - **pass**: the whole interval lies below t. Whatever the true slowdown
//!   is, at this confidence it is smaller than t.
//! - **regression**: the whole interval lies above 0 *and* the estimate
//!   exceeds t. There is a slowdown, and its best estimate is larger than
//!   what the gate allows. Asking for both keeps a real but small slowdown
//!   (interval above 0, estimate under t) from failing the build, and a
//!   noisy estimate over t whose interval reaches 0 from failing it either.
//! - **inconclusive**: anything else: the interval reaches t, and the data
//!   cannot say the slowdown is above it. This machine could not resolve t.
//!
//! Applied to each fork of an A/A cell (no difference at all), the share of
//! forks the rule calls a regression is its measured false-alarm rate; its
//! interval lies above 0 in a share (1 - confidence) / 2 of forks by chance,
//! and the estimate must also pass t, so that is the rate it may reach at
//! most ([`nominal_false_alarm`]). Applied to each fork of a cell with 2t
//! injected, the share it flags is its power: how often it catches a
//! slowdown of twice the threshold.
//!
//! [`upper_bound`] puts a one-sided Clopper-Pearson bound on such a share
//! (Clopper & Pearson 1934), so "0 of 200 forks" can be read against the
//! nominal rate.

/// What the rule says about one estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Pass,
    Regression,
    Inconclusive,
}

/// The rule of the module doc. `ci` is `[lo, hi]`; `threshold` > 0.
pub fn decide(estimate: f64, ci: [f64; 2], threshold: f64) -> Decision {
    let [lo, hi] = ci;
    if hi < threshold {
        Decision::Pass
    } else if lo > 0.0 && estimate > threshold {
        Decision::Regression
    } else {
        Decision::Inconclusive
    }
}

/// How many of `decisions` are regressions, and how many there are.
pub fn flagged<I: IntoIterator<Item = Decision>>(decisions: I) -> (u32, u32) {
    decisions.into_iter().fold((0, 0), |(f, n), d| {
        (f + u32::from(d == Decision::Regression), n + 1)
    })
}

/// The false-alarm rate the rule may reach at most when nothing changed:
/// the chance that a `confidence` interval lies wholly above 0.
pub fn nominal_false_alarm(confidence: f64) -> f64 {
    (1.0 - confidence) / 2.0
}

/// P(X <= k) for X ~ Binomial(n, p), summed in log space term by term, so
/// n in the tens of thousands neither overflows nor underflows early.
pub fn binomial_cdf(k: u32, n: u32, p: f64) -> f64 {
    if p <= 0.0 {
        return 1.0;
    }
    if p >= 1.0 {
        return if k >= n { 1.0 } else { 0.0 };
    }
    let (lp, lq) = (p.ln(), (1.0 - p).ln());
    let mut ln_choose = 0.0;
    let mut sum = 0.0;
    for i in 0..=k.min(n) {
        if i > 0 {
            ln_choose += f64::from(n - i + 1).ln() - f64::from(i).ln();
        }
        sum += (ln_choose + f64::from(i) * lp + f64::from(n - i) * lq).exp();
    }
    sum.min(1.0)
}

/// One-sided Clopper-Pearson upper bound at `confidence` on a share seen as
/// `k` of `n`: the largest p under which seeing k or fewer still has
/// probability at least 1 - confidence. `None` for n = 0.
pub fn upper_bound(k: u32, n: u32, confidence: f64) -> Option<f64> {
    if n == 0 {
        return None;
    }
    if k >= n {
        return Some(1.0);
    }
    let alpha = 1.0 - confidence;
    // binomial_cdf falls as p rises: bisect for cdf(p) = alpha.
    let (mut lo, mut hi) = (f64::from(k) / f64::from(n), 1.0);
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if binomial_cdf(k, n, mid) > alpha {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some((lo + hi) / 2.0)
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
        // Above 0 and estimate 150 > 100.
        assert_eq!(decide(150.0, [120.0, 180.0], 100.0), Decision::Regression);
        assert_eq!(decide(150.0, [1.0, 300.0], 100.0), Decision::Regression);
        // Real (above 0) but the estimate 80 is under t, interval reaches it.
        assert_eq!(decide(80.0, [30.0, 130.0], 100.0), Decision::Inconclusive);
        // Estimate over t but the interval reaches 0.
        assert_eq!(decide(150.0, [-5.0, 300.0], 100.0), Decision::Inconclusive);
        // Boundaries: hi == t is not "below"; lo == 0 is not "above".
        assert_eq!(decide(50.0, [0.0, 100.0], 100.0), Decision::Inconclusive);
        assert_eq!(decide(150.0, [0.0, 200.0], 100.0), Decision::Inconclusive);
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
    fn binomial_cdf_by_hand() {
        // n = 2, p = 0.5: P(0) = 0.25, P(<=1) = 0.75, P(<=2) = 1.
        assert!((binomial_cdf(0, 2, 0.5) - 0.25).abs() < 1e-15);
        assert!((binomial_cdf(1, 2, 0.5) - 0.75).abs() < 1e-15);
        assert!((binomial_cdf(2, 2, 0.5) - 1.0).abs() < 1e-15);
        // n = 3, p = 0.1: P(<=1) = 0.9^3 + 3 * 0.1 * 0.81 = 0.972.
        assert!((binomial_cdf(1, 3, 0.1) - 0.972).abs() < 1e-15);
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
}
