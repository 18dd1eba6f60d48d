use super::*;
use crate::bootstrap::bootstrap_median;
use crate::quantile::median;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// The distribution by enumerating all n^n resamples (index tuples), each
/// with probability n^-n: the definition, with nothing derived.
fn brute_force(data: &[f64]) -> Vec<Atom> {
    let n = data.len();
    let total = n.pow(n as u32);
    let mut medians: Vec<f64> = Vec::with_capacity(total);
    let mut idx = vec![0usize; n];
    let mut resample = vec![0.0; n];
    for _ in 0..total {
        for (r, &i) in resample.iter_mut().zip(&idx) {
            *r = data[i];
        }
        medians.push(median(&resample).unwrap());
        // Next index tuple, odometer style.
        for d in idx.iter_mut() {
            *d += 1;
            if *d < n {
                break;
            }
            *d = 0;
        }
    }
    medians.sort_by(f64::total_cmp);
    let mut atoms: Vec<(f64, usize)> = Vec::new();
    for m in medians {
        match atoms.last_mut() {
            Some(last) if last.0 == m => last.1 += 1,
            _ => atoms.push((m, 1)),
        }
    }
    atoms
        .into_iter()
        .map(|(value, count)| Atom {
            value,
            probability: count as f64 / total as f64,
        })
        .collect()
}

fn samples() -> Vec<Vec<f64>> {
    let mut out = Vec::new();
    for n in 1..=7 {
        let base = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0];
        out.push(base[..n].to_vec()); // ties (two 1s) from n = 4
        out.push((0..n).map(|i| (i * i) as f64 - 2.5).collect()); // distinct
        out.push(vec![7.0; n]); // all tied
        out.push((0..n).map(|i| (i % 2) as f64).collect()); // two values
        out.push(
            (0..n)
                .map(|i| if i < 2 { 10.0 } else { i as f64 })
                .collect(),
        );
    }
    out
}

#[test]
fn distribution_equals_enumerating_every_resample() {
    for data in samples() {
        let exact = median_distribution(&data).unwrap();
        let brute = brute_force(&data);
        assert_eq!(
            exact.iter().map(|a| a.value).collect::<Vec<_>>(),
            brute.iter().map(|a| a.value).collect::<Vec<_>>(),
            "values for {data:?}"
        );
        for (e, b) in exact.iter().zip(&brute) {
            assert!(
                (e.probability - b.probability).abs() < 1e-13,
                "{data:?} at {}: exact {}, enumerated {}",
                e.value,
                e.probability,
                b.probability
            );
        }
    }
}

#[test]
fn quantile_is_the_inverse_distribution_function() {
    let atoms = [
        Atom {
            value: 1.0,
            probability: 0.2,
        },
        Atom {
            value: 2.0,
            probability: 0.3,
        },
        Atom {
            value: 4.0,
            probability: 0.5,
        },
    ];
    assert_eq!(atom_quantile(&atoms, 0.025), 1.0);
    assert_eq!(atom_quantile(&atoms, 0.3), 2.0);
    assert_eq!(atom_quantile(&atoms, 0.975), 4.0);
    // On a boundary: the midpoint of the atoms either side.
    assert_eq!(atom_quantile(&atoms, 0.2), 1.5);
    assert_eq!(atom_quantile(&atoms, 0.5), 3.0);
    assert_eq!(atom_quantile(&atoms, 1.0), 4.0);
}

/// Where x falls among the distinct values, in order statistics: v_k has
/// k - 0.5, anything strictly between v_k and v_{k+1} lies in (k - 0.5, k + 0.5).
fn position(distinct: &[f64], x: f64) -> f64 {
    let below = distinct.iter().filter(|&&v| v < x).count() as f64;
    let at_or_below = distinct.iter().filter(|&&v| v <= x).count() as f64;
    (below + at_or_below) / 2.0
}

#[test]
fn interval_agrees_with_100000_monte_carlo_resamples() {
    let mut rng = Pcg64::seed_from_u64(20);
    let continuous: Vec<f64> = (0..301)
        .map(|_| rng.gen::<f64>().powi(3) * 1000.0)
        .collect();
    let ticks: Vec<i64> = (0..300).map(|_| rng.gen_range(0..40) * 25).collect();
    let ticks: Vec<f64> = ticks.iter().map(|&x| x as f64).collect();
    for data in [
        &continuous[..300],
        &continuous[..],
        &ticks[..],
        &ticks[..299],
    ] {
        let mut distinct = data.to_vec();
        distinct.sort_by(f64::total_cmp);
        distinct.dedup();
        for c in [0.95, 0.9] {
            let exact = exact_median(data, c).unwrap();
            let mc = bootstrap_median(data, 100_000, c, &mut Pcg64::seed_from_u64(7)).unwrap();
            assert_eq!(exact.median, mc.median);
            for (e, m) in [(exact.ci.lo, mc.ci.lo), (exact.ci.hi, mc.ci.hi)] {
                let gap = (position(&distinct, e) - position(&distinct, m)).abs();
                assert!(
                    gap <= 1.0,
                    "n = {}, c = {c}: exact {e}, Monte Carlo {m}",
                    data.len()
                );
            }
        }
    }
}

#[test]
fn large_samples_stay_finite_and_sum_to_one() {
    let mut rng = Pcg64::seed_from_u64(3);
    // Ties (5000 distinct values), then every value distinct (a dithered
    // pooled cell): most distinct values then lie outside the live window.
    for (n, distinct) in [
        (100_000usize, 5000),
        (100_001, 5000),
        (60_000, 0),
        (60_001, 0),
    ] {
        let data: Vec<i64> = (0..n)
            .map(|i| match distinct {
                0 => i as i64 * 7919 % 1_000_003,
                d => rng.gen_range(0..d),
            })
            .collect();
        let atoms = median_distribution(&data).unwrap();
        let total: f64 = atoms.iter().map(|a| a.probability).sum();
        assert!((total - 1.0).abs() < 1e-12, "n = {n}: total {total}");
        assert!(atoms
            .iter()
            .all(|a| a.probability.is_finite() && a.value.is_finite()));
        let e = exact_median(&data, 0.95).unwrap();
        assert!(e.ci.lo <= e.median && e.median <= e.ci.hi, "{e:?}");
        let width = if distinct > 0 { 200.0 } else { 30_000.0 };
        assert!(e.ci.hi - e.ci.lo < width, "{e:?}");
    }
}

#[test]
fn binomial_probabilities_sum_to_one() {
    for (n, c) in [
        (1u64, 1u64),
        (7, 3),
        (60, 1),
        (60, 59),
        (1000, 500),
        (100_000, 37_000),
    ] {
        let (p, q) = (c as f64 / n as f64, (n - c) as f64 / n as f64);
        let total: f64 = (0..=n).map(|x| dbinom(x, n, p, q)).sum();
        assert!((total - 1.0).abs() < 1e-12, "n = {n}, c = {c}: {total}");
        for k in [0, 1, n / 2, n] {
            let t = tail(n, k, c);
            let direct: f64 = (k..=n).map(|x| dbinom(x, n, p, q)).sum();
            assert!(
                (t.upper - direct).abs() < 1e-12,
                "n = {n}, c = {c}, k = {k}"
            );
            assert!((t.upper + t.lower - 1.0).abs() < 1e-15);
        }
    }
}

#[test]
fn refuses_bad_input() {
    assert_eq!(exact_median::<i64>(&[], 0.95), Err(StatsError::Empty));
    assert_eq!(
        exact_median(&[1.0, f64::NAN], 0.95),
        Err(StatsError::NotANumber)
    );
    assert_eq!(
        exact_median(&[1_i64], 1.0),
        Err(StatsError::BadConfidence(1.0))
    );
    let e = exact_median(&[42_i64; 10], 0.95).unwrap();
    assert_eq!((e.median, e.ci.lo, e.ci.hi), (42.0, 42.0, 42.0));
}

/// The even-n interval is found by searching the distribution function
/// (`Even`), not by listing the atoms; both must give the same ends. They
/// may differ only where a cumulative probability falls within rounding of
/// a boundary of the quantile rule, which these seeds do not hit.
#[test]
fn searching_the_distribution_function_gives_the_listed_atoms_quantiles() {
    let mut rng = Pcg64::seed_from_u64(11);
    let mut cases: Vec<Vec<f64>> = samples();
    for &n in &[2usize, 4, 6, 10, 30, 64, 300, 301, 1000, 3000] {
        for &spread in &[2u64, 5, 40, 1_000_000] {
            // Heavy ties (spread 2 or 5), some, and all distinct.
            cases.push((0..n).map(|_| rng.gen_range(0..spread) as f64).collect());
        }
        // Dithered ticks, as the analysis feeds it.
        cases.push(
            (0..n)
                .map(|_| 20.0 * rng.gen_range(-3..=3) as f64 + rng.gen_range(-10.0..10.0))
                .collect(),
        );
    }
    for data in &cases {
        let atoms = median_distribution(data).unwrap();
        for confidence in [0.95, 0.9, 0.5] {
            let e = exact_median(data, confidence).unwrap();
            let lo = atom_quantile(&atoms, (1.0 - confidence) / 2.0);
            let hi = atom_quantile(&atoms, (1.0 + confidence) / 2.0);
            assert_eq!(
                (e.ci.lo, e.ci.hi),
                (lo, hi),
                "n = {}, confidence {confidence}: {data:?}",
                data.len()
            );
        }
    }
}

/// Galloping from any hint finds what a binary search over the whole
/// range finds, for every place the predicate may turn true.
#[test]
fn first_true_is_a_binary_search_from_anywhere() {
    for len in 0..40usize {
        for from in 0..=len.min(5) {
            for turn in from..=len {
                for hint in from..len.max(from + 1) {
                    let found = first_true(from, len, hint, |j| {
                        assert!((from..len).contains(&j), "probe {j} outside {from}..{len}");
                        j >= turn
                    });
                    assert_eq!(found, turn, "len {len} from {from} turn {turn} hint {hint}");
                }
            }
        }
    }
}

/// Samples of one size without ties share their masses, which are made
/// from the counts alone: an interval is the same to the bit whether its
/// masses were made for it or for an earlier sample of that size, and a
/// sample with ties never takes them. Sizes no other test uses, so the
/// first call of each is the one that makes the masses.
#[test]
fn intervals_are_the_same_whoever_made_the_masses() {
    let mut rng = Pcg64::seed_from_u64(7);
    for n in [1237usize, 1238] {
        let sample = |rng: &mut Pcg64| -> Vec<f64> { (0..n).map(|_| rng.gen::<f64>()).collect() };
        let (a, b) = (sample(&mut rng), sample(&mut rng));
        let tied: Vec<f64> = a.iter().map(|x| (x * 50.0).floor()).collect();
        let bits = |e: MedianEstimate| [e.median, e.ci.lo, e.ci.hi].map(f64::to_bits);
        let tied_first = bits(exact_median(&tied, 0.95).unwrap());
        let a_first = bits(exact_median(&a, 0.95).unwrap());
        let b_shared = bits(exact_median(&b, 0.95).unwrap());
        let cum: Vec<u64> = (1..=n as u64).collect();
        assert!(std::sync::Arc::ptr_eq(
            &shared_masses(n as u64, &cum),
            &shared_masses(n as u64, &cum)
        ));
        assert_eq!(bits(exact_median(&a, 0.95).unwrap()), a_first, "n = {n}");
        assert_eq!(
            bits(exact_median(&tied, 0.95).unwrap()),
            tied_first,
            "n = {n}"
        );
        // b's interval from masses made for it, not shared.
        let mut sorted = b.clone();
        sorted.sort_unstable_by(f64::total_cmp);
        let (values, cum) = distinct(&sorted);
        let own = std::sync::Arc::new(Masses::new(n as u64, &cum));
        let l = Lower {
            n: n as u64,
            values,
            cum,
            masses: own,
        };
        // Both routes to an interval: the listed atoms and, for even n,
        // the search of the distribution function exact_median takes.
        let atoms = distribution_of(&l);
        let from_atoms = [atom_quantile(&atoms, 0.025), atom_quantile(&atoms, 0.975)];
        let (lo, hi) = if n % 2 == 0 {
            let even = Even { l };
            (even.quantile(0.025), even.quantile(0.975))
        } else {
            (from_atoms[0], from_atoms[1])
        };
        let median = if n % 2 == 0 {
            mid(sorted[n / 2 - 1], sorted[n / 2])
        } else {
            sorted[n / 2]
        };
        assert_eq!(b_shared, [median, lo, hi].map(f64::to_bits), "n = {n}");
    }
}

/// The two moments summed as the atoms are made are those of the listed
/// atoms: odd and even n, ties, distinct and dithered values, logs.
#[test]
fn moments_are_those_of_the_listed_atoms() {
    let mut rng = Pcg64::seed_from_u64(11);
    for (n, distinct) in [(7, 0), (8, 3), (300, 0), (301, 0), (300, 40), (1000, 5)] {
        let data: Vec<f64> = (0..n)
            .map(|_| match distinct {
                0 => (20_000.0 + rng.gen_range(0.0..5000.0_f64)).ln(),
                d => rng.gen_range(0..d) as f64 * 20.0 + 50_000.0,
            })
            .collect();
        let atoms = median_distribution(&data).unwrap();
        let mean: f64 = atoms.iter().map(|a| a.probability * a.value).sum();
        let var: f64 = atoms
            .iter()
            .map(|a| a.probability * (a.value - mean).powi(2))
            .sum();
        let (m, v) = median_moments(&data).unwrap();
        let scale = var.sqrt().max(1e-300);
        assert!(
            (m - mean).abs() < 1e-9 * scale + 1e-12 * mean.abs(),
            "n = {n}: {m} vs {mean}"
        );
        assert!((v - var).abs() <= 1e-9 * var, "n = {n}: {v} vs {var}");
    }
}
