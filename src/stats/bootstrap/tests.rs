use super::*;
use crate::stats::quantile::median;
use crate::stats::resample::{
    hierarchical_indices, hierarchical_two_sample_indices, resample_indices,
};
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
