use super::*;
use rand::{Rng, SeedableRng};

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// The error rates spent over a design's looks add up to alpha, the
/// first look gets 40 % of it, and the later looks less the later they
/// are; outside the looks nothing is spent.
#[test]
fn the_looks_spend_alpha_and_no_more() {
    for (min, max) in [(3, 10), (3, 20), (2, 6), (5, 5), (1, 4), (3, 1000)] {
        let s = Spending::new(min, max, 0.95).unwrap();
        let total: f64 = (0..=max + 1).map(|n| s.alpha_at(n)).sum();
        assert!(close(total, 0.05, 1e-12), "{min}..{max}: {total}");
        assert_eq!(s.alpha_at(s.first_look() - 1), 0.0);
        assert_eq!(s.alpha_at(max + 1), 0.0);
        if max > s.first_look() {
            assert!(close(s.alpha_at(s.first_look()), 0.02, 1e-15));
            let later: Vec<f64> = (s.first_look() + 1..=max).map(|n| s.alpha_at(n)).collect();
            assert!(later.windows(2).all(|w| w[0] > w[1]), "{later:?}");
        }
    }
    // One look spends everything there: the fixed design's interval.
    let one = Spending::new(5, 5, 0.95).unwrap();
    assert!(close(one.alpha_at(5), 0.05, 1e-15));
    assert!(close(one.multiplier(5), 2.7764, 1e-4));
    // A single value has no spread: the first look is at 2 forks at least.
    assert_eq!(Spending::new(1, 4, 0.95).unwrap().first_look(), 2);
    assert_eq!(Spending::new(5, 4, 0.95), Err(StatsError::TooFewGroups(5)));
    assert_eq!(
        Spending::new(3, 4, 1.0),
        Err(StatsError::BadConfidence(1.0))
    );
}

/// By hand, 3 to 10 forks at 95 %: the first look spends 0.02, and t with
/// 2 degrees of freedom at 98 % two-sided is 6.9646. Three forks whose log
/// ratios are ln 0.73, ln 0.60 and ln 0.64 (mean -0.4239, s 0.0999): the
/// interval is -0.4239 ± 6.9646 x 0.0577 = [-0.826, -0.022], so it decides
/// "faster" at the first look, where Lai's sequence (13.22 standard
/// errors) did not.
#[test]
fn three_forks_that_agree_decide_at_the_first_look() {
    let s = Spending::new(3, 10, 0.95).unwrap();
    assert!(close(s.multiplier(3), 6.9646, 1e-4), "{}", s.multiplier(3));
    let logs = [0.73f64.ln(), 0.60f64.ln(), 0.64f64.ln()];
    let i = s.interval(&logs).unwrap();
    let [lo, hi] = i.bounds.unwrap();
    assert!(close(i.mean, -0.4239, 1e-4), "{i:?}");
    assert!(
        close(lo, -0.8263, 1e-3) && close(hi, -0.0214, 1e-3),
        "{i:?}"
    );
    assert!(i.excludes(0.0) && !i.contains(0.0));
    // Before the first look nothing is bounded.
    let two = s.interval(&logs[..2]).unwrap();
    assert_eq!(two.bounds, None);
    assert!(two.contains(1e9) && !two.excludes(0.0));
    assert_eq!(two.half_width(), f64::INFINITY);
    // The fixed design's interval of the same three: t(2) at 95 % is 4.3027.
    let f = fixed(&logs, 0.95).unwrap();
    assert!(
        close(f.half_width(), 4.3027 * 0.0999 / 3f64.sqrt(), 1e-3),
        "{f:?}"
    );
    assert_eq!(fixed(&logs[..1], 0.95).unwrap().bounds, None);
    assert_eq!(fixed(&[], 0.95), Err(StatsError::Empty));
    assert_eq!(fixed(&[1.0, f64::NAN], 0.95), Err(StatsError::NotANumber));
}

/// Normal fork estimates with mean 0, looked at after every fork from 3
/// to 20 and stopped as soon as the interval excludes 0: the share of
/// 4000 sequences that ever do stays under alpha, where a fixed-n t
/// interval peeked at after every fork fires far more often. Fixed seed,
/// so the counts are exact; the bounds leave room for any seed.
#[test]
fn looking_after_every_fork_keeps_the_rate_under_alpha() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
    let mut normal = move || {
        let (u, v): (f64, f64) = (rng.gen(), rng.gen());
        (-2.0 * (1.0 - u).ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    };
    let s = Spending::new(3, 20, 0.95).unwrap();
    let (mut spent, mut peeked) = (0, 0);
    for _ in 0..4000 {
        let x: Vec<f64> = (0..20).map(|_| 7.0 * normal()).collect();
        spent += u32::from((3..=20).any(|n| s.interval(&x[..n]).unwrap().excludes(0.0)));
        peeked += u32::from((3..=20).any(|n| fixed(&x[..n], 0.95).unwrap().excludes(0.0)));
    }
    assert!(spent <= 200, "spending fired in {spent} of 4000");
    assert!(peeked >= 600, "peeked t fired in only {peeked} of 4000");
}
