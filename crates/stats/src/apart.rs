//! Two separate runs told apart by their forks, for `runner history`.
//!
//! A run's forks are independent processes, so they stand in for separate
//! runs (the reports' two-separate-runs comparison does the same inside
//! one run). [`compare`] takes the per-fork estimates of two runs and
//! counts, over all n x m two-separate-runs comparisons between them, how
//! many say "later is higher" (ties count half): the Mann-Whitney U
//! statistic (Mann & Whitney 1947). If nothing changed and the n + m forks
//! are exchangeable, every split of their ranks between the runs is
//! equally likely, so the chance of a U at least as far from n m / 2 is
//! exact, whatever the distribution: the coefficients of the Gaussian
//! binomial [n + m choose n]_q count the splits with each U (Andrews 1976,
//! ch. 3), and [`Comparison::p`] is the two-sided tail they give.
//!
//! [`difference`] gives the size of a change with an interval from the
//! two runs' own intervals: the method of variance estimates recovery
//! (MOVER; Zou & Donner 2008), which combines each side's half-widths as
//! independent errors and keeps an asymmetric interval asymmetric.

use super::StatsError;

/// Where the later run's forks lie relative to the earlier run's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Most later forks above the earlier ones.
    Above,
    /// Most later forks below.
    Below,
}

/// Two runs' forks compared.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    /// Forks before and after.
    pub n: usize,
    pub m: usize,
    /// Pairs (earlier fork, later fork) where the later is higher; a tie
    /// counts half.
    pub u: f64,
    /// Two-sided: the chance of a U at least this far from n m / 2 if
    /// nothing changed.
    pub p: f64,
}

impl Comparison {
    /// Which way the later run lies; none at exactly half.
    pub fn side(&self) -> Option<Side> {
        let half = (self.n * self.m) as f64 / 2.0;
        if self.u > half {
            Some(Side::Above)
        } else if self.u < half {
            Some(Side::Below)
        } else {
            None
        }
    }
}

fn finite(values: &[f64]) -> Result<(), StatsError> {
    if values.is_empty() {
        return Err(StatsError::Empty);
    }
    if values.iter().any(|v| v.is_nan()) {
        return Err(StatsError::NotANumber);
    }
    Ok(())
}

/// The U statistic of `after` against `before` and its exact two-sided
/// chance (see the module doc).
pub fn compare(before: &[f64], after: &[f64]) -> Result<Comparison, StatsError> {
    finite(before)?;
    finite(after)?;
    let mut u = 0.0f64;
    for &b in before {
        for &a in after {
            u += if a > b {
                1.0
            } else if a == b {
                0.5
            } else {
                0.0
            };
        }
    }
    let (n, m) = (before.len(), after.len());
    let far = u.min((n * m) as f64 - u);
    Ok(Comparison {
        n,
        m,
        u,
        p: (2.0 * lower_tail(n, m, far.floor() as usize)).min(1.0),
    })
}

/// The smallest two-sided chance n and m forks can give: every fork of
/// one run beyond every fork of the other, 2 / C(n + m, n).
pub fn smallest_p(n: usize, m: usize) -> f64 {
    (2.0 * lower_tail(n, m, 0)).min(1.0)
}

/// C(n + m, n) as f64 (infinite past about 1000 forks in all).
fn splits(n: usize, m: usize) -> f64 {
    let (small, large) = (n.min(m), n.max(m));
    (1..=small).fold(1.0f64, |c, i| c * (large + i) as f64 / i as f64)
}

/// P(U <= k) with nothing changed: the coefficients of q^0..q^k of
/// [n + m choose n]_q = prod_{i=1..n} (1 - q^(m+i)) / (1 - q^i), over all
/// C(n + m, n) splits. Past f64's range of counts, the normal
/// approximation of U (mean n m / 2, variance n m (n + m + 1) / 12).
fn lower_tail(n: usize, m: usize, k: usize) -> f64 {
    if n == 0 || m == 0 {
        return 1.0;
    }
    let total = splits(n, m);
    if !total.is_finite() {
        let (nf, mf) = (n as f64, m as f64);
        let z = (k as f64 + 0.5 - nf * mf / 2.0) / (nf * mf * (nf + mf + 1.0) / 12.0).sqrt();
        return normal_cdf(z);
    }
    let k = k.min(n * m);
    let mut c = vec![0.0f64; k + 1];
    c[0] = 1.0;
    for i in 1..=n {
        // Divide by (1 - q^i) first, so every coefficient stays a count.
        for u in i..=k {
            c[u] += c[u - i];
        }
        let s = m + i;
        for u in (s..=k).rev() {
            c[u] -= c[u - s];
        }
    }
    (c.iter().sum::<f64>() / total).min(1.0)
}

/// The standard normal distribution function, through erfc with a
/// fractional error below 1.2e-7 everywhere (Press et al., Numerical
/// Recipes, 2nd ed., sec. 6.2, `erfcc`).
pub(crate) fn normal_cdf(z: f64) -> f64 {
    let x = -z / std::f64::consts::SQRT_2;
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.5 * a);
    let poly = -a * a - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let erfc = t * poly.exp();
    0.5 * if x >= 0.0 { erfc } else { 2.0 - erfc }
}

/// An estimate with its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounded {
    pub estimate: f64,
    pub lo: f64,
    pub hi: f64,
}

/// `after - before` with its MOVER interval (see the module doc).
pub fn difference(before: Bounded, after: Bounded) -> Bounded {
    let d = after.estimate - before.estimate;
    let down = ((after.estimate - after.lo).powi(2) + (before.hi - before.estimate).powi(2)).sqrt();
    let up = ((after.hi - after.estimate).powi(2) + (before.estimate - before.lo).powi(2)).sqrt();
    Bounded {
        estimate: d,
        lo: d - down,
        hi: d + up,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way to give n of n + m distinct ranks to the earlier run,
    /// with its U: the distribution counted by brute force.
    fn brute_lower_tail(n: usize, m: usize, k: usize) -> f64 {
        let (mut hit, mut total) = (0u64, 0u64);
        for mask in 0u32..(1 << (n + m)) {
            if mask.count_ones() as usize != n {
                continue;
            }
            total += 1;
            let (mut before, mut after) = (Vec::new(), Vec::new());
            for r in 0..n + m {
                if mask & (1 << r) != 0 {
                    before.push(r as f64);
                } else {
                    after.push(r as f64);
                }
            }
            if compare(&before, &after).unwrap().u <= k as f64 {
                hit += 1;
            }
        }
        hit as f64 / total as f64
    }

    #[test]
    fn the_tail_matches_every_split_counted() {
        for (n, m) in [(1, 1), (2, 3), (3, 4), (4, 4), (5, 3), (6, 6)] {
            for k in 0..=n * m {
                let exact = lower_tail(n, m, k);
                let brute = brute_lower_tail(n, m, k);
                assert!(
                    (exact - brute).abs() < 1e-12,
                    "{n} {m} {k}: {exact} {brute}"
                );
            }
        }
    }

    #[test]
    fn tables_of_the_u_test_by_hand() {
        // C(8, 4) = 70 splits, one with U = 0: two-sided 2/70.
        assert!((smallest_p(4, 4) - 2.0 / 70.0).abs() < 1e-15);
        // C(16, 8) = 12870; U <= 7 has 1+1+2+3+5+7+11+15 = 45 splits.
        assert!((lower_tail(8, 8, 7) - 45.0 / 12870.0).abs() < 1e-15);
        // C(20, 10) = 184756.
        assert!((smallest_p(10, 10) - 2.0 / 184_756.0).abs() < 1e-18);
        assert_eq!(smallest_p(1, 1), 1.0);
        assert_eq!(smallest_p(3, 3), 0.1);
    }

    #[test]
    fn compare_counts_pairs_and_ties() {
        let c = compare(&[1.0, 2.0], &[3.0, 4.0]).unwrap();
        assert_eq!((c.u, c.side()), (4.0, Some(Side::Above)));
        assert!((c.p - 2.0 / 6.0).abs() < 1e-15);
        let c = compare(&[3.0, 4.0], &[1.0, 2.0]).unwrap();
        assert_eq!((c.u, c.side()), (0.0, Some(Side::Below)));
        // 2 vs 2 ties half; 3 beats 2; 2 loses to 4: U = 0.5 + 1 + 0 + 1.
        let c = compare(&[2.0, 4.0], &[2.0, 3.0, 5.0]).unwrap();
        assert_eq!(c.u, 0.5 + 0.0 + 1.0 + 0.0 + 1.0 + 1.0);
        assert_eq!(c.p, 1.0_f64.min(2.0 * lower_tail(2, 3, 2)));
        assert_eq!(compare(&[], &[1.0]), Err(StatsError::Empty));
        assert_eq!(compare(&[f64::NAN], &[1.0]), Err(StatsError::NotANumber));
    }

    #[test]
    fn the_normal_distribution_function_by_its_table() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 1e-7);
        assert!((normal_cdf(-3.0) - 0.001_349_898).abs() < 1e-9);
    }

    #[test]
    fn many_forks_use_the_normal_approximation_smoothly() {
        // 600 and 600 forks: C(1200, 600) is past f64's range.
        let exact_like = lower_tail(600, 600, 180_000);
        assert!((exact_like - 0.5).abs() < 0.01, "{exact_like}");
        assert!(lower_tail(600, 600, 0) < 1e-12);
    }

    #[test]
    fn mover_combines_each_side_as_independent_errors() {
        let before = Bounded {
            estimate: 10.0,
            lo: 7.0,
            hi: 14.0,
        };
        let after = Bounded {
            estimate: 30.0,
            lo: 26.0,
            hi: 33.0,
        };
        let d = difference(before, after);
        assert_eq!(d.estimate, 20.0);
        // Down: after's lower half-width 4 and before's upper 4: sqrt(32).
        assert!((d.lo - (20.0 - 32f64.sqrt())).abs() < 1e-12);
        // Up: after's upper 3 and before's lower 3: sqrt(18).
        assert!((d.hi - (20.0 + 18f64.sqrt())).abs() < 1e-12);
        // Against a point, the interval is the other's own.
        let point = Bounded {
            estimate: 5.0,
            lo: 5.0,
            hi: 5.0,
        };
        let d = difference(point, after);
        assert_eq!((d.lo, d.estimate, d.hi), (21.0, 25.0, 28.0));
    }
}
