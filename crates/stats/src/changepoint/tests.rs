//! Constructed series whose segmentation can be worked out by hand, and
//! PELT against the unpruned dynamic programme it must equal.

use super::pelt::{pelt, NormalMeanVar};
use super::*;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::f64::consts::PI;

fn series(parts: &[(f64, usize)]) -> Vec<f64> {
    parts
        .iter()
        .flat_map(|&(v, n)| std::iter::repeat_n(v, n))
        .collect()
}

/// `level` ± 1 alternating, `n` values: mean `level`, sd 1.
fn wobble(level: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| if i % 2 == 0 { level - 1.0 } else { level + 1.0 })
        .collect()
}

#[test]
fn segment_cost_is_the_normal_likelihood() {
    // [1, 3]: mean 2, ss 2, variance 1: 2 ln(2 pi) + 2 ln 1 + 2.
    let c = NormalMeanVar::new(&[1.0, 3.0, 10.0], VARIANCE_FLOOR);
    assert!((c.cost(0, 2) - (2.0 * (2.0 * PI).ln() + 2.0)).abs() < 1e-12);
    // A single value has no variance: the floor stands in, ss = 0.
    let floored = (2.0 * PI).ln() + (1.0f64 / 12.0).ln();
    assert!((c.cost(2, 3) - floored).abs() < 1e-12);
}

/// Two constant runs of 5s and 7s, n values in all. One segment: variance 1,
/// cost n ln(2 pi) + n; two floored segments: n ln(2 pi) + n ln(1/12). The
/// gain n (1 + ln 12) beats the penalty 15 ln n from n = 10 (34.85 > 34.54)
/// but not at n = 8 (27.88 < 31.19).
#[test]
fn penalty_decides_at_the_hand_computed_length() {
    let ten = steady_state(&series(&[(5.0, 5), (7.0, 5)])).unwrap();
    assert_eq!(ten.changepoints, [5]);
    let eight = steady_state(&series(&[(5.0, 4), (7.0, 4)])).unwrap();
    assert_eq!(eight.changepoints, Vec::<usize>::new());
    assert_eq!(eight.class, Class::Flat);
}

#[test]
fn a_flat_series_has_no_changepoint() {
    let s = steady_state(&wobble(100.0, 300)).unwrap();
    assert_eq!(s.changepoints, Vec::<usize>::new());
    assert_eq!(s.class, Class::Flat);
    assert_eq!(s.segments.len(), 1);
    assert_eq!((s.segments[0].mean, s.segments[0].sd), (100.0, 1.0));
    let constant = steady_state(&[42u64; 50]).unwrap();
    assert_eq!(constant.class, Class::Flat);
}

#[test]
fn slower_start_is_a_warm_up() {
    let mut x = wobble(200.0, 20);
    x.extend(wobble(100.0, 60));
    let s = steady_state(&x).unwrap();
    assert_eq!(s.changepoints, [20]);
    assert_eq!(s.class, Class::Warmup);
    assert_eq!((s.segments[0].mean, s.segments[1].mean), (200.0, 100.0));
}

/// n = 80, so the steady state must cover the last 20 values: a segment
/// that differs and ends at index 59 (<= 80 - 20) leaves a steady state;
/// one that ends at index 69 does not.
#[test]
fn faster_start_is_a_slowdown_unless_the_change_is_late() {
    let mut x = wobble(100.0, 60);
    x.extend(wobble(200.0, 20));
    let s = steady_state(&x).unwrap();
    assert_eq!(
        (s.changepoints.as_slice(), s.class),
        (&[60][..], Class::Slowdown)
    );
    let mut late = wobble(100.0, 70);
    late.extend(wobble(200.0, 10));
    let s = steady_state(&late).unwrap();
    assert_eq!(s.changepoints, [70]);
    assert_eq!(s.class, Class::NoSteadyState);
    let mut late_warm = wobble(200.0, 70);
    late_warm.extend(wobble(100.0, 10));
    assert_eq!(
        steady_state(&late_warm).unwrap().class,
        Class::NoSteadyState
    );
}

/// The walk from the end stops at the first segment that differs.
#[test]
fn the_segment_nearest_the_end_decides() {
    // fast, slow, fast (final): the slow middle makes it a warm-up, and
    // the walk goes on past it; the first segment is equivalent to the
    // last, so skipped: a warm-up.
    let x: Vec<f64> = [wobble(100.0, 20), wobble(200.0, 20), wobble(100.0, 60)].concat();
    let s = steady_state(&x).unwrap();
    assert_eq!(s.changepoints, [20, 40]);
    assert_eq!(s.class, Class::Warmup);
    // slow, fast, slow (final): the fast middle makes it a slowdown.
    let y: Vec<f64> = [wobble(200.0, 20), wobble(100.0, 40), wobble(200.0, 40)].concat();
    let s = steady_state(&y).unwrap();
    assert_eq!(s.changepoints, [20, 60]);
    assert_eq!(s.class, Class::Slowdown);
}

/// Segments whose levels differ by less than their spread or less than 1 %
/// of the fastest mean are the same steady state.
#[test]
fn equivalent_segments_stay_flat() {
    // A variance change at the same mean: a changepoint, no new level.
    let x: Vec<f64> = [
        wobble(100.0, 40),
        (0..40)
            .map(|i| if i % 2 == 0 { 90.0 } else { 110.0 })
            .collect(),
    ]
    .concat();
    let s = steady_state(&x).unwrap();
    assert_eq!(s.changepoints, [40]);
    assert_eq!(s.class, Class::Flat);
    // Constant runs at 1000 and 1005: the floor finds the change, delta
    // (1 % of 1000 = 10) calls the levels equivalent.
    let s = steady_state(&series(&[(1005.0, 20), (1000.0, 20)])).unwrap();
    assert_eq!(
        (s.changepoints.as_slice(), s.class),
        (&[20][..], Class::Flat)
    );
    // 1050 vs 1000 is more than delta: a warm-up.
    let s = steady_state(&series(&[(1050.0, 20), (1000.0, 20)])).unwrap();
    assert_eq!(s.class, Class::Warmup);
}

/// Long series are averaged in blocks; changepoints come back in the
/// original indices. 30 values, at most 10 points: blocks of 3, and the
/// 10-point case of the penalty test above.
#[test]
fn long_series_are_blocked() {
    let options = Options {
        max_points: 10,
        ..Options::default()
    };
    let s = steady_state_with(&series(&[(7.0, 15), (5.0, 15)]), &options).unwrap();
    assert_eq!(s.changepoints, [15]);
    assert_eq!(s.segments[1].start, 15);
    assert_eq!(s.class, Class::Warmup);
}

#[test]
fn bad_input_is_refused() {
    assert_eq!(steady_state::<f64>(&[]), Err(StatsError::Empty));
    assert_eq!(
        steady_state(&[1.0, f64::NAN, 2.0]),
        Err(StatsError::NotANumber)
    );
    let one = steady_state(&[3u64]).unwrap();
    assert_eq!((one.class, one.changepoints.len()), (Class::Flat, 0));
}

/// Optimal partitioning without pruning (Jackson et al. 2005): PELT must
/// find the same minimum.
fn optimal_partitioning(cost: &NormalMeanVar, n: usize, penalty: f64, m: usize) -> f64 {
    let mut f = vec![f64::INFINITY; n + 1];
    f[0] = -penalty;
    for t in m..=n {
        for tau in (0..=t - m).filter(|&tau| tau == 0 || tau >= m) {
            f[t] = f[t].min(f[tau] + cost.cost(tau, t) + penalty);
        }
    }
    f[n]
}

fn total_cost(cost: &NormalMeanVar, n: usize, penalty: f64, cps: &[usize]) -> f64 {
    let mut bounds = vec![0];
    bounds.extend_from_slice(cps);
    bounds.push(n);
    let segs: f64 = bounds.windows(2).map(|w| cost.cost(w[0], w[1])).sum();
    segs + penalty * cps.len() as f64
}

#[test]
fn pruning_keeps_the_optimum() {
    let mut rng = Pcg64::seed_from_u64(5);
    for case in 0..60 {
        let n = rng.gen_range(4..120);
        let levels = rng.gen_range(1..5);
        let x: Vec<f64> = (0..n)
            .map(|i| {
                let level = (i * levels / n) as f64 * 30.0;
                level + rng.gen_range(0..20) as f64
            })
            .collect();
        let min_len = 1 + case % 3;
        for penalty in [1.0, 15.0 * (n as f64).ln()] {
            let cost = NormalMeanVar::new(&x, VARIANCE_FLOOR);
            let cps = pelt(&cost, n, penalty, min_len);
            let mut bounds = vec![0];
            bounds.extend_from_slice(&cps);
            bounds.push(n);
            assert!(bounds.windows(2).all(|w| w[1] - w[0] >= min_len));
            let best = optimal_partitioning(&cost, n, penalty, min_len);
            let found = total_cost(&cost, n, penalty, &cps);
            assert!(
                (found - best).abs() < 1e-9 * best.abs().max(1.0),
                "case {case}: PELT {found}, optimum {best}"
            );
        }
    }
}
