use super::*;
use crate::quantile;
use rand::SeedableRng;
use rand_pcg::Pcg64;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// Two machines of two forks of two pairs. Fork means 2, 6 | 10, 14;
/// machine means 4 | 12; grand 8. SSA = 4 (16 + 16) = 128 (1 df),
/// SSB = 2 (4 + 4 + 4 + 4) = 32 (2 df: MSB 16), SSE = 4 x 2 = 8 (4 df:
/// MSE 2). Balanced: k1 = k2 = 2 pairs, k3 = 4 pairs per machine, so
/// forks = (16 - 2) / 2 = 7 and machines = (128 - 2 - 2 x 7) / 4 = 28.
#[test]
fn balanced_layout_by_hand() {
    let a: Vec<&[i64]> = vec![&[1, 3], &[5, 7]];
    let b: Vec<&[i64]> = vec![&[9, 11], &[13, 15]];
    let c = nested_components(&[a, b]).unwrap();
    assert!(
        close(c.machines, 28.0) && close(c.forks, 7.0) && close(c.within, 2.0),
        "{c:?}"
    );
}

/// Machine A: forks [0, 2], [4] (means 1, 4; machine mean 2, n = 3);
/// machine B: [10, 12, 14], [20, 22] (means 12, 21; 15.6, n = 5); N = 8,
/// grand mean 10.5. SSA = 3 x 8.5^2 + 5 x 5.1^2 = 346.8 (MSA 346.8);
/// SSB = 2 + 4 + 38.88 + 57.78... = 103.2 (2 df: MSB 51.6); SSE = 2 + 0 +
/// 8 + 2 = 12 (4 df: MSE 3). k1 = (8 - 5/3 - 13/5) / 2 = 28/15,
/// k2 = (5/3 + 13/5 - 18/8) = 121/60, k3 = 8 - 34/8 = 15/4. So
/// forks = (51.6 - 3) / (28/15) = 729/28 and
/// machines = (346.8 - 3 - 121/60 x 729/28) / (15/4) = 2175/28.
#[test]
fn unbalanced_layout_by_hand() {
    let a: Vec<&[i64]> = vec![&[0, 2], &[4]];
    let b: Vec<&[i64]> = vec![&[10, 12, 14], &[20, 22]];
    let c = nested_components(&[a, b]).unwrap();
    assert!(close(c.within, 3.0), "{c:?}");
    assert!(close(c.forks, 729.0 / 28.0), "{c:?}");
    assert!(close(c.machines, 2175.0 / 28.0), "{c:?}");
}

/// Machine means equal (both 5) while forks differ: no machines part.
#[test]
fn a_negative_machines_estimate_is_clamped() {
    let a: Vec<&[f64]> = vec![&[0.0, 0.0], &[10.0, 10.0]];
    let b: Vec<&[f64]> = vec![&[10.0, 10.0], &[0.0, 0.0]];
    let c = nested_components(&[a, b]).unwrap();
    assert_eq!(c.machines, 0.0);
    assert!(close(c.forks, 50.0), "{c:?}");
    assert_eq!(c.within, 0.0);
}

#[test]
fn too_little_data_is_refused() {
    let one: Vec<&[i64]> = vec![&[1, 2], &[3, 4]];
    assert_eq!(
        nested_components(std::slice::from_ref(&one)),
        Err(StatsError::TooFewGroups(2))
    );
    // Every machine one fork: machines and forks cannot be told apart.
    let a: Vec<&[i64]> = vec![&[1, 2]];
    let b: Vec<&[i64]> = vec![&[3, 4]];
    assert_eq!(nested_components(&[a, b]), Err(StatsError::TooFewGroups(2)));
    // One pair per fork: nothing is left for the within part.
    let a: Vec<&[i64]> = vec![&[1], &[2]];
    let b: Vec<&[i64]> = vec![&[3]];
    assert_eq!(nested_components(&[a, b]), Err(StatsError::TooFewGroups(2)));
}

/// Medians 10, 20 | 30, 40, each interval 2z wide (sampling variance 1)
/// from 100 pairs: within = 1 x 100. One-way on the medians: means 15 | 35,
/// MSB = 2 (100 + 100) = 400, MSW = 100 / 2 = 50, n0 = 2: machines =
/// (400 - 50) / 2 = 175; forks = 50 - 1 = 49.
#[test]
fn median_components_by_hand() {
    let z = normal_quantile(0.975);
    let f = |m: f64| ForkMedian {
        median: m,
        ci: [m - z, m + z],
        pairs: 100,
    };
    let c =
        nested_median_components(&[vec![f(10.0), f(20.0)], vec![f(30.0), f(40.0)]], 0.95).unwrap();
    assert!(close(c.within, 100.0), "{c:?}");
    assert!(close(c.forks, 49.0), "{c:?}");
    assert!(close(c.machines, 175.0), "{c:?}");
    assert!(nested_median_components(&[vec![f(1.0)], vec![f(2.0)]], 0.95).is_err());
    assert!(nested_median_components(&[vec![f(1.0), f(f64::NAN)], vec![f(2.0)]], 0.95).is_err());
}

/// machines 4 / 2 + forks 8 / (2 x 2) + within 100 / (2 x 2 x 25) = 5.
#[test]
fn half_width_and_the_lever_by_hand() {
    let c = NestedComponents {
        machines: 4.0,
        forks: 8.0,
        within: 100.0,
    };
    let z = normal_quantile(0.975);
    assert!(close(
        nested_half_width(c, 0.95, 2.0, 2.0, 25.0),
        z * 5f64.sqrt()
    ));
    assert!(nested_half_width(c, 0.95, 0.0, 2.0, 25.0).is_nan());
    // Machines' term 2 against 3 for the rest: forks do as well.
    assert_eq!(lever(c, 2.0, 2.0, 25.0), Lever::Forks);
    // Machines' term 5 against 3: only more machines narrow it much.
    let c = NestedComponents {
        machines: 10.0,
        ..c
    };
    assert_eq!(lever(c, 2.0, 2.0, 25.0), Lever::Machines);
}

/// The interval is the percentile interval of the medians that the
/// recorded draws pick (indices into each fork's sorted values).
#[test]
fn the_bootstrap_replays_from_its_indices() {
    let data: Vec<Vec<Vec<i64>>> = vec![
        vec![vec![5, 1, 3], vec![9, 7]],
        vec![vec![20, 22, 21, 25]],
        vec![vec![2, 4], vec![6], vec![8, 8, 1]],
    ];
    let machines: Vec<Vec<&[i64]>> = data
        .iter()
        .map(|m| m.iter().map(Vec::as_slice).collect())
        .collect();
    let e = nested_median(&machines, 300, 0.9, &mut Pcg64::seed_from_u64(5)).unwrap();
    let sizes: Vec<Vec<u32>> = data
        .iter()
        .map(|m| m.iter().map(|f| f.len() as u32).collect())
        .collect();
    let plan = nested_indices(&mut Pcg64::seed_from_u64(5), &sizes, 300);
    let mut medians: Vec<f64> = plan
        .iter()
        .map(|resample| {
            let mut values = Vec::new();
            for (m, forks) in resample {
                for (f, idx) in forks {
                    let mut sorted = data[*m as usize][*f as usize].clone();
                    sorted.sort_unstable();
                    values.extend(idx.iter().map(|&i| sorted[i as usize] as f64));
                }
            }
            crate::median(&values).unwrap()
        })
        .collect();
    medians.sort_unstable_by(f64::total_cmp);
    assert_eq!(e.ci.lo, quantile(&medians, (1.0 - 0.9) / 2.0).unwrap());
    assert_eq!(e.ci.hi, quantile(&medians, (1.0 + 0.9) / 2.0).unwrap());
    let all: Vec<i64> = data.iter().flatten().flatten().copied().collect();
    assert_eq!(e.median, crate::median(&all).unwrap());
}

/// Every value equal: every resample's median is that value.
#[test]
fn constant_data_gives_an_exact_interval() {
    let a: Vec<&[i64]> = vec![&[4, 4], &[4]];
    let b: Vec<&[i64]> = vec![&[4, 4, 4]];
    let e = nested_median(&[a, b], 200, 0.95, &mut Pcg64::seed_from_u64(1)).unwrap();
    assert_eq!((e.median, e.ci.lo, e.ci.hi), (4.0, 4.0, 4.0));
    let empty: Vec<&[i64]> = vec![];
    assert!(nested_median(&[empty], 10, 0.95, &mut Pcg64::seed_from_u64(1)).is_err());
}
