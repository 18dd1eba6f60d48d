//! Whatever the baselines, when every treatment is exactly baseline + d the
//! analysis must return d everywhere, with degenerate intervals.

use proptest::prelude::*;
use runner_analysis::{analyse, AnalysisInput, CellInfo, Verdict};
use runner_core::record::{Arm, PairRecord, Phase};
use runner_spec::Ordering;

/// Per fork: (baseline_ns, treatment first?) of each measured pair.
type Forks = Vec<Vec<(u64, bool)>>;

fn pairs_of(forks: &Forks, d: u64) -> Vec<PairRecord> {
    let mut out = Vec::new();
    for (fork, rows) in forks.iter().enumerate() {
        let mut at = 0;
        for (pair, &(b, treatment_first)) in rows.iter().enumerate() {
            let t = b + d;
            let (first, b_at, t_at) = if treatment_first {
                (Arm::Treatment, at + t, at)
            } else {
                (Arm::Baseline, at, at + b)
            };
            at += b + t + d;
            out.push(PairRecord {
                cell: 0,
                fork: fork as u32,
                phase: Phase::Measure,
                pair: pair as u32,
                first,
                baseline_ns: b,
                treatment_ns: t,
                delay_ns: d,
                spin_ns: d,
                baseline_at_ns: b_at,
                treatment_at_ns: t_at,
                usage: Default::default(),
                counts: Default::default(),
            });
        }
    }
    out
}

fn input(d: u64, seed: u64, ordering: Ordering) -> AnalysisInput {
    AnalysisInput {
        master_seed: seed,
        resamples: 100,
        confidence: 0.95,
        ordering,
        pad_baseline: true,
        cells: vec![CellInfo {
            cell: 0,
            params: serde_json::Map::new(),
            delay_ns: d,
        }],
        target_half_width_ns: None,
        clock_resolution_ns: 0.0,
    }
}

fn forks() -> impl Strategy<Value = Forks> {
    prop::collection::vec(
        prop::collection::vec((1_000u64..10_000_000, any::<bool>()), 1..25),
        1..6,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn exact_shift_is_recovered_exactly(
        forks in forks(),
        d in prop::sample::select(vec![0u64, 1000, 50_000]),
        seed in any::<u64>(),
        blocked in any::<bool>(),
    ) {
        let ordering = if blocked { Ordering::Blocked } else { Ordering::PairedRandom };
        let a = analyse(&input(d, seed, ordering), &pairs_of(&forks, d)).unwrap();
        let c = &a.cells[0];
        let d = d as f64;
        for f in &c.forks {
            prop_assert_eq!(f.median_ns, d);
            prop_assert_eq!(f.ci_ns, [d, d]);
            let expected = if d > 0.0 { Verdict::Seen } else { Verdict::NotSeen };
            prop_assert_eq!(f.verdict, expected);
        }
        prop_assert_eq!(c.pooled.median_ns, d);
        prop_assert_eq!(c.pooled.ci_ns, [d, d]);
        prop_assert_eq!(c.over_forks.estimate_ns, d);
        prop_assert_eq!(c.over_forks.ci_ns, [d, d]);
        prop_assert_eq!(c.calibration.error_ns, 0.0);
        prop_assert!(c.calibration.ci_covers_delay);
        prop_assert_eq!(c.calibration.spin_error_ns, 0.0);
        let seen = if d > 0.0 { c.forks_total } else { 0 };
        prop_assert_eq!(c.forks_seen, seen);
        if let Some(v) = &c.variance {
            prop_assert_eq!((v.between_ns2, v.within_ns2), (0.0, 0.0));
        }
    }
}
