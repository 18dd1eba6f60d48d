//! Two separate runs told apart by their forks, for `runner history`.
//!
//! A run's forks are independent processes, so they stand in for separate
//! runs (the reports' two-separate-runs comparison does the same inside
//! one run). Given the per-fork estimates of two runs, [`apart`] says
//! whether every fork of the later run lies on one side of every fork of
//! the earlier one: all n x m two-separate-runs comparisons between them
//! agree on the direction. If nothing changed and the n + m forks are
//! exchangeable, each of the C(n + m, n) ways to split their ranks
//! between the runs is equally likely, and exactly two of them leave the
//! runs apart, so [`apart_by_chance`] = 2 / C(n + m, n) is the rule's
//! false-alarm rate, exactly, whatever the distribution (it is the extreme
//! of the Mann-Whitney U statistic, U = 0 or n m; Mann & Whitney 1947).
//!
//! [`difference`] gives the size of a change with an interval from the
//! two runs' own intervals: the method of variance estimates recovery
//! (MOVER; Zou & Donner 2008), which combines each side's half-widths as
//! independent errors and keeps an asymmetric interval asymmetric.

use super::StatsError;

/// Where the later run's forks lie relative to the earlier run's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Every later fork above every earlier fork.
    Above,
    /// Every later fork below every earlier fork.
    Below,
}

fn checked(values: &[f64]) -> Result<(f64, f64), StatsError> {
    if values.is_empty() {
        return Err(StatsError::Empty);
    }
    if values.iter().any(|v| v.is_nan()) {
        return Err(StatsError::NotANumber);
    }
    Ok(values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        }))
}

/// Whether `after`'s values all lie strictly on one side of `before`'s;
/// a tie between the two runs is an overlap.
pub fn apart(before: &[f64], after: &[f64]) -> Result<Option<Side>, StatsError> {
    let (b_lo, b_hi) = checked(before)?;
    let (a_lo, a_hi) = checked(after)?;
    Ok(if a_lo > b_hi {
        Some(Side::Above)
    } else if a_hi < b_lo {
        Some(Side::Below)
    } else {
        None
    })
}

/// The chance that [`apart`] says yes for n and m exchangeable values:
/// 2 / C(n + m, n) (1 for an empty side, where nothing is compared).
pub fn apart_by_chance(n: usize, m: usize) -> f64 {
    if n == 0 || m == 0 {
        return 1.0;
    }
    let (small, large) = (n.min(m), n.max(m));
    // C(n + m, small) as a running product: exact for the small counts
    // forks come in, and it only underflows towards 0 for huge ones.
    let ways = (1..=small).fold(1.0f64, |c, i| c * (large + i) as f64 / i as f64);
    (2.0 / ways).min(1.0)
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

    #[test]
    fn apart_needs_every_value_on_one_side() {
        assert_eq!(apart(&[1.0, 2.0], &[3.0, 4.0]), Ok(Some(Side::Above)));
        assert_eq!(apart(&[3.0, 4.0], &[1.0, 2.0]), Ok(Some(Side::Below)));
        assert_eq!(apart(&[1.0, 3.0], &[2.0, 4.0]), Ok(None));
        // A tie is an overlap.
        assert_eq!(apart(&[1.0, 2.0], &[2.0, 4.0]), Ok(None));
        assert_eq!(apart(&[], &[1.0]), Err(StatsError::Empty));
        assert_eq!(apart(&[f64::NAN], &[1.0]), Err(StatsError::NotANumber));
    }

    #[test]
    fn the_chance_of_apart_is_two_of_all_rank_splits() {
        // By hand: C(4, 2) = 6, C(6, 3) = 20, C(8, 4) = 70, C(12, 6) = 924.
        assert_eq!(apart_by_chance(2, 2), 2.0 / 6.0);
        assert_eq!(apart_by_chance(3, 3), 0.1);
        assert!((apart_by_chance(4, 4) - 2.0 / 70.0).abs() < 1e-15);
        assert!((apart_by_chance(6, 6) - 2.0 / 924.0).abs() < 1e-15);
        // C(7, 3) = 35, either way round.
        assert!((apart_by_chance(3, 4) - 2.0 / 35.0).abs() < 1e-15);
        assert_eq!(apart_by_chance(3, 4), apart_by_chance(4, 3));
        // One value each: apart unless tied, always.
        assert_eq!(apart_by_chance(1, 1), 1.0);
        assert_eq!(apart_by_chance(0, 5), 1.0);
        // C(20, 10) = 184756.
        assert!((apart_by_chance(10, 10) - 2.0 / 184_756.0).abs() < 1e-18);
    }

    #[test]
    fn the_chance_matches_every_split_counted() {
        // All ways to give 3 of 7 distinct ranks to the earlier run.
        let (n, m) = (3usize, 4usize);
        let mut apart_count = 0;
        let mut total = 0;
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
            if apart(&before, &after).unwrap().is_some() {
                apart_count += 1;
            }
        }
        assert_eq!(total, 35);
        assert_eq!(apart_count, 2);
        assert_eq!(apart_by_chance(n, m), apart_count as f64 / total as f64);
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
