//! Intervals that stay valid however often they are looked at: the rule of
//! a sequential design (`[design.stop]`) looks at a cell's interval after
//! every fork and stops once it is narrow enough or excludes 0, so the
//! interval it stops on must hold at a time the data chose.
//!
//! The observations are a cell's fork-level estimates (each fork's median
//! D): independent (one fresh process each) and, as medians of hundreds of
//! pairs, close to normal with a mean and a spread nobody knows in advance.
//! For that case Lai (1976) gives a confidence sequence whose coverage is
//! exact at every n at once (Wang & Ramdas 2023, "Anytime-valid t-tests
//! and confidence sequences for Gaussian means with unknown variance";
//! Howard, Ramdas, McAuliffe & Sekhon 2021 for confidence sequences in
//! general). For a candidate mean m, with S = sum(x - m) and
//! V = sum((x - m)^2) over the first n values,
//!
//! ```text
//! M_n(m) = sqrt(c / (n + c)) * (1 - S^2 / ((n + c) V))^(-n/2)
//! ```
//!
//! is the likelihood ratio of the scale-free part of the data (a mixture
//! over effects of N(0, sigma^2 / c) against m, with the right Haar
//! measure over sigma); under the true mean it is a nonnegative martingale
//! that starts at 1, so by Ville's inequality it ever reaches 1/alpha with
//! probability at most alpha. The sequence is {m : M_n(m) < 1/alpha}: with
//! mean xbar and Q = sum((x - xbar)^2), K = 1 - (alpha^2 c / (n + c))^(1/n),
//!
//! ```text
//! xbar ± sqrt(K (n + c) Q / (n (n - K (n + c))))    when n > K (n + c),
//! ```
//!
//! and the whole line otherwise (n = 1 and 2 always, n = 3 unless alpha is
//! large). c sets where the sequence is narrowest; [`MIXTURE_C`] = 0.1
//! kept 3 forks bounded.
//!
//! Sequential designs stopped on this sequence, over the forks' median D,
//! until they stopped on `spending` instead (which decides at 3 forks
//! that agree, where this needs 13 standard errors); it stays so that a
//! run made then is checked against the rule that made its stops.

use super::{check_confidence, StatsError};

/// The mixture's precision c (see the module doc).
pub const MIXTURE_C: f64 = 0.1;

/// A mean and a symmetric interval around it; `half_width` is infinite
/// while the data cannot bound it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeanInterval {
    pub n: usize,
    pub mean: f64,
    pub half_width: f64,
}

impl MeanInterval {
    /// `[lo, hi]`, or `None` while unbounded.
    pub fn bounds(&self) -> Option<[f64; 2]> {
        self.half_width
            .is_finite()
            .then_some([self.mean - self.half_width, self.mean + self.half_width])
    }

    /// Whether the interval lies wholly on one side of 0.
    pub fn excludes_zero(&self) -> bool {
        self.bounds().is_some_and(|[lo, hi]| lo > 0.0 || hi < 0.0)
    }

    /// Whether `x` lies inside it (an unbounded interval holds everything).
    pub fn contains(&self, x: f64) -> bool {
        self.bounds().is_none_or(|[lo, hi]| lo <= x && x <= hi)
    }
}

fn mean_and_q(values: &[f64]) -> Result<(f64, f64), StatsError> {
    if values.is_empty() {
        return Err(StatsError::Empty);
    }
    if values.iter().any(|v| v.is_nan()) {
        return Err(StatsError::NotANumber);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let q = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>();
    Ok((mean, q))
}

/// Lai's confidence sequence at `confidence`, after `values` (module doc).
pub fn confidence_sequence(values: &[f64], confidence: f64) -> Result<MeanInterval, StatsError> {
    check_confidence(confidence)?;
    let (mean, q) = mean_and_q(values)?;
    let n = values.len() as f64;
    let (alpha, c) = (1.0 - confidence, MIXTURE_C);
    let k = 1.0 - (alpha * alpha * c / (n + c)).powf(1.0 / n);
    let room = n - k * (n + c);
    let half_width = if room > 0.0 {
        (k * (n + c) * q / (n * room)).sqrt()
    } else {
        f64::INFINITY
    };
    Ok(MeanInterval {
        n: values.len(),
        mean,
        half_width,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// By hand for 1, 2, 3: xbar = 2, Q = 2, n = 3, c = 0.1, alpha = 0.05:
    /// K = 1 - (0.0025 * 0.1 / 3.1)^(1/3) = 0.956796, K (n + c) = 2.966068,
    /// n - K (n + c) = 0.033932, h = sqrt(2.966068 * 2 / (3 * 0.033932))
    /// = 7.6337: 2 ± 7.63, about 13 standard errors.
    #[test]
    fn the_sequence_by_hand() {
        let cs = confidence_sequence(&[1.0, 2.0, 3.0], 0.95).unwrap();
        assert_eq!(cs.mean, 2.0);
        assert!(close(cs.half_width, 7.633_668_868, 1e-8), "{cs:?}");
        // Four values 1..4: xbar 2.5, Q 5: h = 4.2204.
        let cs = confidence_sequence(&[1.0, 2.0, 3.0, 4.0], 0.95).unwrap();
        assert!(close(cs.half_width, 4.220_410_654, 1e-8), "{cs:?}");
        // One or two values bound nothing.
        for v in [&[5.0][..], &[1.0, 2.0]] {
            let cs = confidence_sequence(v, 0.95).unwrap();
            assert_eq!(cs.half_width, f64::INFINITY);
            assert_eq!(cs.bounds(), None);
            assert!(!cs.excludes_zero() && cs.contains(1e12));
        }
        assert_eq!(confidence_sequence(&[], 0.95), Err(StatsError::Empty));
        assert_eq!(
            confidence_sequence(&[1.0, f64::NAN], 0.95),
            Err(StatsError::NotANumber)
        );
        assert_eq!(
            confidence_sequence(&[1.0], 1.0),
            Err(StatsError::BadConfidence(1.0))
        );
    }

    #[test]
    fn the_sequence_is_scale_free() {
        let values = [10.0, 12.0, 9.0, 11.0, 13.0];
        let cs = confidence_sequence(&values, 0.95).unwrap();
        assert!(close(cs.half_width, 3.826_517_578, 1e-8), "{cs:?}");
        let scaled: Vec<f64> = values.iter().map(|v| 1000.0 * v - 5.0).collect();
        let big = confidence_sequence(&scaled, 0.95).unwrap();
        assert!(close(big.mean, 10_995.0, 1e-9));
        assert!(close(big.half_width, 1000.0 * cs.half_width, 1e-6));
        let [lo, hi] = cs.bounds().unwrap();
        assert!(cs.excludes_zero() && cs.contains(lo) && cs.contains(hi));
        assert!(!cs.contains(hi + 1e-9));
    }
}
