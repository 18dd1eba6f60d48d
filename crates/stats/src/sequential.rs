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
//! keeps 3 forks bounded and costs about 10 % of width at 10 forks against
//! the c best there (docs/guide/statistics.md has the table).
//!
//! [`t_interval`] is the fixed-n interval of the same data (Student's t),
//! right once, at a number of forks chosen before the run: looked at after
//! every fork and stopped on, it excludes a true 0 far more often than its
//! level says. It is computed beside the sequence to show how far.

use super::distributions::t_quantile;
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

/// The fewest values for which the sequence at `confidence` can be
/// bounded: 3 at 95 %, more at higher confidence. A stopping rule needs at
/// least this many forks before its interval says anything.
pub fn first_bounded(confidence: f64) -> usize {
    let (alpha, c) = (1.0 - confidence, MIXTURE_C);
    (1..)
        .find(|&n| {
            let n = f64::from(n);
            let k = 1.0 - (alpha * alpha * c / (n + c)).powf(1.0 / n);
            n - k * (n + c) > 0.0
        })
        .expect("bounded for some n when 0 < confidence < 1") as usize
}

/// The sequence's half-width after `n` values in units of s / sqrt(n)
/// (s the values' standard deviation), as t(n - 1) is the fixed-n
/// interval's: sqrt(K (n + c) (n - 1) / (n - K (n + c))), infinite while
/// unbounded. What `check` sizes a half-width target with.
pub fn multiplier(n: usize, confidence: f64) -> f64 {
    let (alpha, c, n) = (1.0 - confidence, MIXTURE_C, n as f64);
    let k = 1.0 - (alpha * alpha * c / (n + c)).powf(1.0 / n);
    let room = n - k * (n + c);
    if room > 0.0 {
        (k * (n + c) * (n - 1.0) / room).sqrt()
    } else {
        f64::INFINITY
    }
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

/// Student's t interval at `confidence` for a number of values fixed in
/// advance: mean ± t(n - 1) s / sqrt(n). Unbounded for one value.
pub fn t_interval(values: &[f64], confidence: f64) -> Result<MeanInterval, StatsError> {
    check_confidence(confidence)?;
    let (mean, q) = mean_and_q(values)?;
    let n = values.len();
    let half_width = if n < 2 {
        f64::INFINITY
    } else {
        let s = (q / (n - 1) as f64).sqrt();
        t_quantile(confidence, (n - 1) as u32) * s / (n as f64).sqrt()
    };
    Ok(MeanInterval {
        n,
        mean,
        half_width,
    })
}

#[cfg(test)]
mod tests {
    use super::super::distributions::t_central;
    use super::*;
    use rand::{Rng, SeedableRng};

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn t_quantiles_match_the_tables() {
        // Two-sided 95 %: 12.706 (1), 4.303 (2), 3.182 (3), 2.262 (9), 2.045 (29).
        for (df, t) in [
            (1, 12.7062),
            (2, 4.3027),
            (3, 3.1824),
            (9, 2.2622),
            (29, 2.0452),
        ] {
            assert!(close(t_quantile(0.95, df), t, 1e-4), "df {df}");
        }
        // 99 %, 4 df: 4.604.
        assert!(close(t_quantile(0.99, 4), 4.6041, 1e-4));
        // df = 1 is Cauchy: P(|T| <= 1) = 1/2; df = 2: t / sqrt(t² + 2).
        assert!(close(t_central(1.0, 1), 0.5, 1e-12));
        assert!(close(t_central(2.0, 2), 2.0 / 6f64.sqrt(), 1e-12));
    }

    /// By hand for 1, 2, 3: xbar = 2, Q = 2, n = 3, c = 0.1, alpha = 0.05:
    /// K = 1 - (0.0025 * 0.1 / 3.1)^(1/3) = 0.956796, K (n + c) = 2.966068,
    /// n - K (n + c) = 0.033932, h = sqrt(2.966068 * 2 / (3 * 0.033932))
    /// = 7.6337: 2 ± 7.63, about 13 standard errors, where the fixed-n
    /// t interval is 2 ± 2.48.
    #[test]
    fn the_sequence_by_hand() {
        let cs = confidence_sequence(&[1.0, 2.0, 3.0], 0.95).unwrap();
        assert_eq!(cs.mean, 2.0);
        assert!(close(cs.half_width, 7.633_668_868, 1e-8), "{cs:?}");
        let t = t_interval(&[1.0, 2.0, 3.0], 0.95).unwrap();
        assert!(close(t.half_width, 4.3027 / 3f64.sqrt(), 1e-4), "{t:?}");
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
        assert_eq!(first_bounded(0.95), 3);
        assert_eq!(first_bounded(0.5), 2);
        assert_eq!(first_bounded(0.999), 5);
        assert_eq!(first_bounded(0.99), 4);
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

    /// The multiplier against the interval it describes, and the table of
    /// docs/guide/statistics.md (c = 0.1, 95 %): 13.22 at 3 forks, 4.18 at
    /// 10, 3.81 at 20, against t's 4.30, 2.26 and 2.09.
    #[test]
    fn the_multiplier_is_the_half_width_per_standard_error() {
        let v = [10.0, 12.0, 9.0, 11.0, 13.0];
        let s = (v.iter().map(|x| (x - 11.0f64).powi(2)).sum::<f64>() / 4.0).sqrt();
        let cs = confidence_sequence(&v, 0.95).unwrap();
        assert!(close(
            cs.half_width,
            multiplier(5, 0.95) * s / 5f64.sqrt(),
            1e-12
        ));
        for (n, m) in [(3, 13.22), (10, 4.18), (20, 3.81)] {
            assert!(
                close(multiplier(n, 0.95), m, 0.005),
                "n {n}: {}",
                multiplier(n, 0.95)
            );
        }
        assert_eq!(multiplier(2, 0.95), f64::INFINITY);
    }

    #[test]
    fn the_sequence_narrows_with_more_forks_and_is_scale_free() {
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
        // Always wider than the fixed-n interval of the same data.
        let t = t_interval(&values, 0.95).unwrap();
        assert!(t.half_width < cs.half_width);
    }

    /// Normal observations with mean 0: the share of 2000 sequences of 20
    /// whose interval ever excludes 0 (looks 3..20) stays under alpha,
    /// while the t interval looked at after every observation drifts far
    /// above it. Fixed seed, so the counts are exact; the bounds leave room
    /// for any seed.
    #[test]
    fn looking_after_every_fork_keeps_the_sequence_valid_and_not_the_t_interval() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
        let mut normal = move || {
            let (u, v): (f64, f64) = (rng.gen(), rng.gen());
            (-2.0 * (1.0 - u).ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        };
        let (mut sequence, mut peeked) = (0, 0);
        for _ in 0..2000 {
            let x: Vec<f64> = (0..20).map(|_| 3.0 + 2.0 * normal()).collect();
            let centred: Vec<f64> = x.iter().map(|v| v - 3.0).collect();
            let ever = |f: fn(&[f64], f64) -> Result<MeanInterval, StatsError>| {
                (3..=20).any(|n| f(&centred[..n], 0.95).unwrap().excludes_zero())
            };
            sequence += u32::from(ever(confidence_sequence));
            peeked += u32::from(ever(t_interval));
        }
        assert!(sequence <= 100, "sequence fired in {sequence} of 2000");
        assert!(peeked >= 300, "peeked t fired in only {peeked} of 2000");
    }
}
