use super::*;
use crate::quantile::quantile;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// `n` pairs: a baseline around `base` (a shared slow moment moves both
/// arms of a pair by `shared`), the treatment `scale` times it plus `add`.
fn pairs(n: usize, base: f64, scale: f64, add: f64, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = Pcg64::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let shared = base * 0.2 * rng.gen::<f64>();
            let b = base * (1.0 + 0.1 * rng.gen::<f64>()) + shared;
            let t = scale * (base * (1.0 + 0.1 * rng.gen::<f64>()) + shared) + add;
            (b, t)
        })
        .unzip()
}

/// The brute force the closed form stands for: resample pairs (one index
/// for both arms) `b` times and take the percentile interval of
/// ln median(T*) - ln median(B*).
fn brute_force(base: &[f64], treat: &[f64], b: usize, seed: u64) -> ([f64; 2], f64) {
    let mut rng = Pcg64::seed_from_u64(seed);
    let n = base.len();
    let mut logs: Vec<f64> = (0..b)
        .map(|_| {
            let idx: Vec<usize> = (0..n).map(|_| rng.gen_range(0..n)).collect();
            let bs: Vec<f64> = idx.iter().map(|&i| base[i]).collect();
            let ts: Vec<f64> = idx.iter().map(|&i| treat[i]).collect();
            median(&ts).unwrap().ln() - median(&bs).unwrap().ln()
        })
        .collect();
    logs.sort_unstable_by(f64::total_cmp);
    let mean = logs.iter().sum::<f64>() / b as f64;
    let sd = (logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (b - 1) as f64).sqrt();
    let q = |p| quantile(&logs, p).unwrap().exp();
    ([q(0.025), q(0.975)], sd)
}

#[test]
fn the_ratio_is_the_ratio_of_the_medians_and_its_interval_holds_it() {
    let (b, t) = pairs(301, 1000.0, 0.79, 0.0, 1);
    let r = paired_ratio(&b, &t, 0.95).unwrap();
    let expect = median(&t).unwrap() / median(&b).unwrap();
    assert!((r.ratio - expect).abs() < 1e-12, "{} vs {expect}", r.ratio);
    assert!(r.ci[0] < r.ratio && r.ratio < r.ci[1], "{r:?}");
    assert!(r.ci[0] > 0.7 && r.ci[1] < 0.9, "{r:?}");
}

#[test]
fn the_closed_form_matches_resampling_the_pairs_together() {
    // Correlated arms (a shared slow moment per pair), an odd and an even
    // size, a multiplicative and an additive change.
    for (n, scale, add, seed) in [(301, 0.79, 0.0, 2), (200, 1.0, 150.0, 3), (60, 1.3, 0.0, 4)] {
        let (b, t) = pairs(n, 1000.0, scale, add, seed);
        let r = paired_ratio(&b, &t, 0.95).unwrap();
        let (ci, sd) = brute_force(&b, &t, 20_000, seed + 100);
        // Measured: within 3 % of the resampled spread, bounds within half
        // of it (the resampled percentiles sit a little off the centre).
        let rel = (r.log_se - sd).abs() / sd;
        assert!(rel < 0.1, "n {n}: se {} vs resampled {sd}", r.log_se);
        for k in 0..2 {
            let off = (r.ci[k].ln() - ci[k].ln()).abs();
            assert!(off < sd, "n {n}: bound {k}: {:?} vs {ci:?}", r.ci);
        }
    }
}

#[test]
fn pairing_narrows_the_interval_of_arms_that_move_together() {
    let (b, t) = pairs(301, 1000.0, 1.0, 0.0, 5);
    let paired = paired_ratio(&b, &t, 0.95).unwrap();
    // The same values with the treatment's order shuffled: no shared moments.
    let mut shuffled = t.clone();
    shuffled.rotate_left(17);
    let unpaired = paired_ratio(&b, &shuffled, 0.95).unwrap();
    assert!(
        paired.log_se < unpaired.log_se,
        "{paired:?} vs {unpaired:?}"
    );
}

#[test]
fn a_big_win_has_positive_bounds_around_it() {
    let (b, _) = pairs(10, 50_000_000.0, 1.0, 0.0, 6);
    let (_, t) = pairs(10, 1_000_000.0, 1.0, 0.0, 7);
    let r = paired_ratio(&b, &t, 0.95).unwrap();
    assert!(r.ci[0] > 0.0 && r.ci[0] <= r.ratio && r.ratio <= r.ci[1]);
    assert!(1.0 / r.ratio > 30.0, "{r:?}");
}

#[test]
fn forks_at_two_speeds_combine_to_their_common_ratio() {
    let mut forks = Vec::new();
    for (k, base) in [26e6, 26e6, 12e6, 12e6].into_iter().enumerate() {
        let (b, t) = pairs(20, base, 0.79, 0.0, 10 + k as u64);
        forks.push(paired_ratio(&b, &t, 0.95).unwrap());
    }
    let c = over_forks(&forks, 0.95).unwrap();
    let logs: Vec<f64> = forks.iter().map(|f| f.log).collect();
    let mean = logs.iter().sum::<f64>() / 4.0;
    assert!((c.ratio - mean.exp()).abs() < 1e-12);
    assert!((1.0 / c.ratio - 1.0 / 0.79).abs() < 0.03, "{c:?}");
    assert!(c.ci[0] > 0.75 && c.ci[1] < 0.83, "{c:?}");
    // Student's t with 3 degrees of freedom on the log ratios, by hand.
    let s = (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / 3.0).sqrt();
    let h = 3.182_446_305 * s / 2.0;
    assert!((c.ci[0] - (mean - h).exp()).abs() < 1e-9, "{c:?}");
    assert!((c.ci[1] - (mean + h).exp()).abs() < 1e-9, "{c:?}");
}

#[test]
fn one_fork_is_its_own_interval() {
    let (b, t) = pairs(31, 1000.0, 1.1, 0.0, 8);
    let f = paired_ratio(&b, &t, 0.95).unwrap();
    assert_eq!(over_forks(&[f], 0.95).unwrap(), f);
    assert_eq!(over_forks(&[], 0.95), Err(StatsError::Empty));
}

#[test]
fn bad_samples_are_refused() {
    assert_eq!(
        paired_ratio(&[1.0], &[1.0, 2.0], 0.95),
        Err(StatsError::Unpaired)
    );
    assert_eq!(paired_ratio(&[], &[], 0.95), Err(StatsError::Empty));
    assert_eq!(
        paired_ratio(&[0.0, 1.0], &[1.0, 2.0], 0.95),
        Err(StatsError::NotPositive)
    );
    assert_eq!(
        paired_ratio(&[f64::NAN], &[1.0], 0.95),
        Err(StatsError::NotANumber)
    );
    assert_eq!(
        paired_ratio(&[1.0], &[1.0], 1.0),
        Err(StatsError::BadConfidence(1.0))
    );
}

#[test]
fn a_log_interval_maps_to_positive_ratios() {
    let [lo, hi] = ratio_of_log_interval(0.0, std::f64::consts::LN_2).unwrap();
    assert!((lo - 0.5).abs() < 1e-12 && (hi - 2.0).abs() < 1e-12);
    assert_eq!(ratio_of_log_interval(0.0, f64::INFINITY), None);
}
