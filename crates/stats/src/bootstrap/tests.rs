use super::*;
use crate::quantile::median;
use crate::resample::IndexSampler;
use crate::resample::{hierarchical_indices, hierarchical_two_sample_indices, resample_indices};
use rand::SeedableRng;
use rand_pcg::Pcg64;

const DATA: [i64; 9] = [12, -4, 7, 7, 30, 1, 9, 15, 3];

fn rng(seed: u64) -> Pcg64 {
    Pcg64::seed_from_u64(seed)
}

fn sorted(x: &[i64]) -> Vec<i64> {
    let mut v = x.to_vec();
    v.sort_unstable();
    v
}

/// The interval recomputed the slow, obvious way from dumped indices.
fn interval_from(stats: Vec<f64>, c: f64) -> Interval {
    percentile_interval(stats, c).unwrap()
}

#[test]
fn same_seed_same_interval() {
    let a = bootstrap_median(&DATA, 500, 0.95, &mut rng(3)).unwrap();
    let b = bootstrap_median(&DATA, 500, 0.95, &mut rng(3)).unwrap();
    assert_eq!(a, b);
    let c = bootstrap_median(&DATA, 500, 0.95, &mut rng(4)).unwrap();
    assert_eq!(a.median, c.median);
}

#[test]
fn all_equal_input_gives_a_degenerate_interval() {
    let e = bootstrap_median(&[42_i64; 10], 200, 0.95, &mut rng(1)).unwrap();
    assert_eq!(e.median, 42.0);
    assert_eq!(e.ci, Interval { lo: 42.0, hi: 42.0 });
    let h = hierarchical_median(&[&[5_i64; 3][..], &[5; 4]], 200, 0.9, &mut rng(1)).unwrap();
    assert_eq!(h.ci, Interval { lo: 5.0, hi: 5.0 });
}

#[test]
fn interval_contains_the_median() {
    let e = bootstrap_median(&DATA, 2000, 0.95, &mut rng(11)).unwrap();
    assert_eq!(e.median, 7.0);
    assert!(e.ci.contains(7.0), "{e:?}");
    assert!(e.ci.lo < e.ci.hi);
}

#[test]
fn dumped_indices_reproduce_the_plain_bootstrap() {
    let (b, c) = (300, 0.9);
    let e = bootstrap_median(&DATA, b, c, &mut rng(5)).unwrap();
    let sorted = sorted(&DATA);
    let medians = resample_indices(&mut rng(5), DATA.len() as u32, b)
        .iter()
        .map(|idx| median(&idx.iter().map(|&i| sorted[i as usize]).collect::<Vec<_>>()).unwrap())
        .collect();
    assert_eq!(e.ci, interval_from(medians, c));
}

#[test]
fn dumped_indices_reproduce_the_hierarchical_two_group_bootstrap() {
    // Fork 0: a = [5, 9, 2], b = [1, 0]; fork 1: a = [8], b = [3, 3, 2].
    let groups: [(&[i64], &[i64]); 2] = [(&[5, 9, 2], &[1, 0]), (&[8], &[3, 3, 2])];
    let e = hierarchical_median_diff(&groups, 300, 0.95, &mut rng(6)).unwrap();
    assert_eq!(e.median, 6.5 - 2.0); // a: 2 5 8 9, b: 0 1 2 3 3
    let sorted_groups: Vec<(Vec<i64>, Vec<i64>)> =
        groups.iter().map(|(a, b)| (sorted(a), sorted(b))).collect();
    let diffs = hierarchical_two_sample_indices(&mut rng(6), &[(3, 2), (1, 3)], 300)
        .iter()
        .map(|slots| {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for (g, ia, ib) in slots {
                let (ga, gb) = &sorted_groups[*g as usize];
                a.extend(ia.iter().map(|&i| ga[i as usize]));
                b.extend(ib.iter().map(|&i| gb[i as usize]));
            }
            median(&a).unwrap() - median(&b).unwrap()
        })
        .collect();
    assert_eq!(e.ci, interval_from(diffs, 0.95));
}

/// With one fork, the two-level bootstrap of a contrast is the plain
/// two-sample bootstrap: each slot draws fork 0, then its a and b values.
#[test]
fn one_fork_contrast_resamples_only_pairs() {
    let plan = hierarchical_two_sample_indices(&mut rng(2), &[(4, 5)], 50);
    for slots in plan {
        assert_eq!(slots.len(), 1);
        let (g, a, b) = &slots[0];
        assert_eq!((*g, a.len(), b.len()), (0, 4, 5));
        assert!(a.iter().all(|&i| i < 4) && b.iter().all(|&i| i < 5));
    }
    let e = hierarchical_median_diff(&[(&[7_i64; 4][..], &[2_i64; 5][..])], 100, 0.9, &mut rng(2))
        .unwrap();
    assert_eq!((e.median, e.ci.lo, e.ci.hi), (5.0, 5.0, 5.0));
}

#[test]
fn dumped_indices_reproduce_the_hierarchical_bootstrap() {
    let groups: [&[i64]; 3] = [&[1, 5, 3], &[10, 12], &[4, 4, 6, 100]];
    let e = hierarchical_median(&groups, 300, 0.95, &mut rng(7)).unwrap();
    assert_eq!(e.median, 5.0); // pooled sorted: 1 3 4 4 [5] 6 10 12 100
    let sorted_groups: Vec<Vec<i64>> = groups.iter().map(|g| sorted(g)).collect();
    let groups = &sorted_groups;
    let medians = hierarchical_indices(&mut rng(7), &[3, 2, 4], 300)
        .iter()
        .map(|slots| {
            let pooled: Vec<i64> = slots
                .iter()
                .flat_map(|(g, idx)| idx.iter().map(move |&i| groups[*g as usize][i as usize]))
                .collect();
            median(&pooled).unwrap()
        })
        .collect();
    assert_eq!(e.ci, interval_from(medians, 0.95));
}

#[test]
fn refuses_bad_input_without_panicking() {
    let mut r = rng(0);
    assert_eq!(
        bootstrap_median::<i64, _>(&[], 10, 0.95, &mut r),
        Err(StatsError::Empty)
    );
    assert_eq!(
        bootstrap_median(&[1.0, f64::NAN], 10, 0.95, &mut r),
        Err(StatsError::NotANumber)
    );
    assert_eq!(
        bootstrap_median(&[1_i64], 0, 0.95, &mut r),
        Err(StatsError::NoResamples)
    );
    assert_eq!(
        bootstrap_median(&[1_i64], 10, 1.0, &mut r),
        Err(StatsError::BadConfidence(1.0))
    );
    assert_eq!(
        hierarchical_median::<i64, _>(&[], 10, 0.95, &mut r),
        Err(StatsError::Empty)
    );
    assert_eq!(
        hierarchical_median::<i64, _>(&[&[1], &[]], 10, 0.95, &mut r),
        Err(StatsError::Empty)
    );
    assert_eq!(
        hierarchical_median_diff::<i64, _>(&[(&[1], &[])], 10, 0.95, &mut r),
        Err(StatsError::Empty)
    );
    assert_eq!(
        hierarchical_median_diff::<i64, _>(&[], 10, 0.95, &mut r),
        Err(StatsError::Empty)
    );
}

/// The exact distribution {median: probability} of a two-level resample of
/// `groups`, by enumerating every choice of forks and of their values.
fn exact_hierarchical(groups: &[Vec<f64>]) -> std::collections::BTreeMap<u64, f64> {
    let k = groups.len();
    let mut out = std::collections::BTreeMap::new();
    let mut choice = vec![0usize; k];
    loop {
        // Every draw of the chosen forks' values: a counter per position.
        let slots: Vec<&Vec<f64>> = choice.iter().map(|&g| &groups[g]).collect();
        let total: usize = slots.iter().map(|g| g.len()).sum();
        let mut idx = vec![0usize; total];
        let outcomes: f64 = slots
            .iter()
            .map(|g| (g.len() as f64).powi(g.len() as i32))
            .product();
        let p = 1.0 / (k as f64).powi(k as i32) / outcomes;
        loop {
            let mut values = Vec::with_capacity(total);
            let mut at = 0;
            for g in &slots {
                for _ in 0..g.len() {
                    values.push(g[idx[at]]);
                    at += 1;
                }
            }
            *out.entry(median(&values).unwrap().to_bits()).or_insert(0.0) += p;
            // Next draw: the counter of position i runs below its fork's size.
            let sizes: Vec<usize> = slots
                .iter()
                .flat_map(|g| std::iter::repeat_n(g.len(), g.len()))
                .collect();
            let mut at = 0;
            while at < total {
                idx[at] += 1;
                if idx[at] < sizes[at] {
                    break;
                }
                idx[at] = 0;
                at += 1;
            }
            if at == total {
                break;
            }
        }
        let mut j = 0;
        while j < k {
            choice[j] += 1;
            if choice[j] < k {
                break;
            }
            choice[j] = 0;
            j += 1;
        }
        if j == k {
            return out;
        }
    }
}

/// Window sampling is exact: for every window of a tiny case (the empty
/// one, where every median is found outside, included), the frequencies of
/// the resampled medians match the enumerated distribution.
#[test]
fn every_window_gives_the_exact_distribution_of_the_median() {
    let groups = vec![vec![1.0, 5.0], vec![3.0, 4.0, 9.0], vec![2.0, 7.0]];
    let exact = exact_hierarchical(&groups);
    assert!((exact.values().sum::<f64>() - 1.0).abs() < 1e-12);
    let refs: Vec<&[f64]> = groups.iter().map(Vec::as_slice).collect();
    let (n, resamples) = (7u32, 40_000u32);
    for lo in 0..=n {
        for hi in lo..=n {
            let grouped = Grouped::with_window(&refs, |_| (lo, hi)).unwrap();
            let medians =
                hierarchical_medians(&grouped, resamples, &mut rng(u64::from(lo * 10 + hi)));
            let mut seen = std::collections::BTreeMap::new();
            for m in medians {
                *seen.entry(m.to_bits()).or_insert(0u32) += 1;
            }
            assert!(
                seen.keys().all(|m| exact.contains_key(m)),
                "[{lo}, {hi}): a median that cannot occur"
            );
            for (m, &p) in &exact {
                let share = f64::from(*seen.get(m).unwrap_or(&0)) / f64::from(resamples);
                // Standard error <= 0.0025: 0.015 is six of them.
                assert!(
                    (share - p).abs() < 0.015,
                    "[{lo}, {hi}): median {} drawn {share}, exactly {p}",
                    f64::from_bits(*m)
                );
            }
        }
    }
}

/// Two-sample Kolmogorov-Smirnov distance of two samples.
fn ks(mut a: Vec<f64>, mut b: Vec<f64>) -> f64 {
    a.sort_unstable_by(f64::total_cmp);
    b.sort_unstable_by(f64::total_cmp);
    let (mut i, mut j, mut d) = (0, 0, 0.0f64);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] <= x {
            i += 1;
        }
        while j < b.len() && b[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / a.len() as f64 - j as f64 / b.len() as f64).abs());
    }
    d
}

/// Forks of 40 values each, offset from each other so the fork level
/// matters, with ties.
fn forks_of_40(seed: u64, forks: usize) -> Vec<Vec<f64>> {
    let mut r = rng(seed);
    let mut s = IndexSampler::new(&mut r);
    (0..forks)
        .map(|f| {
            (0..40)
                .map(|_| f64::from(s.below(30)) + 3.0 * f as f64)
                .collect()
        })
        .collect()
}

/// A window of two ranks (the median leaves it in nearly every resample)
/// and the default window both give the distribution of the full
/// resample: KS distance of 20000 medians each below 0.03 (the 1e-6 critical
/// value is about 0.026 + the grid's ties; fixed seeds, so it cannot flake).
#[test]
fn tiny_and_default_windows_match_the_full_resample() {
    let groups = forks_of_40(1, 7);
    let refs: Vec<&[f64]> = groups.iter().map(Vec::as_slice).collect();
    let n = 280u32;
    let medians = |w: (u32, u32), seed| {
        let grouped = Grouped::with_window(&refs, |_| w).unwrap();
        hierarchical_medians(&grouped, 20_000, &mut rng(seed))
    };
    let full = medians((0, n), 1);
    for (w, seed) in [((139, 141), 2), ((0, 0), 3), ((126, 154), 4)] {
        let d = ks(full.clone(), medians(w, seed));
        assert!(d < 0.03, "window {w:?}: KS {d}");
    }
    // The contrast: a and b each through their own tiny window.
    let b_groups = forks_of_40(2, 7);
    let b_refs: Vec<&[f64]> = b_groups.iter().map(Vec::as_slice).collect();
    let diffs = |w: (u32, u32), seed| {
        let a = Grouped::with_window(&refs, |_| w).unwrap();
        let b = Grouped::with_window(&b_refs, |_| w).unwrap();
        hierarchical_diffs(&a, &b, 20_000, &mut rng(seed))
    };
    let d = ks(diffs((0, n), 5), diffs((139, 141), 6));
    assert!(d < 0.03, "contrast: KS {d}");
}

/// Above the smallest window the public functions go through the window
/// and stay reproducible: same seed, same interval.
#[test]
fn windowed_bootstrap_is_reproducible() {
    let groups = forks_of_40(3, 20);
    let refs: Vec<&[f64]> = groups.iter().map(Vec::as_slice).collect();
    let a = hierarchical_median(&refs, 600, 0.95, &mut rng(8)).unwrap();
    let b = hierarchical_median(&refs, 600, 0.95, &mut rng(8)).unwrap();
    assert_eq!(a, b);
    assert!(a.ci.contains(a.median), "{a:?}");
}

/// Ranks by integer keys agree with ranking by `f64::total_cmp`, ties by
/// position: negative values, both zeros and repeated values included.
#[test]
fn ranks_follow_total_order_then_position() {
    let mut r = rng(21);
    use rand::Rng;
    let mut values: Vec<f64> = (0..2000)
        .map(|_| f64::from(r.gen_range(-50i32..50)) * 0.25)
        .collect();
    values.extend([0.0, -0.0, 0.0, -0.0, f64::MAX, f64::MIN, 1e-310, -1e-310]);
    let ranked = Ranked::new(values.clone());
    let mut order: Vec<u32> = (0..values.len() as u32).collect();
    order.sort_by(|&a, &b| {
        values[a as usize]
            .total_cmp(&values[b as usize])
            .then(a.cmp(&b))
    });
    for (r, &i) in order.iter().enumerate() {
        assert_eq!(
            ranked.rank[i as usize], r as u32,
            "value {}",
            values[i as usize]
        );
        assert_eq!(ranked.sorted[r].to_bits(), values[i as usize].to_bits());
    }
}
