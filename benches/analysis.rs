//! `cargo bench --bench analysis`: where the analysis of a grid the size of
//! experiments/aa.toml (8 delays x 10 forks x 300 pairs = 24,000 pairs)
//! spends its time since the intervals of one-sample medians are exact and
//! the nested bootstraps run on every core. Prints one line per figure
//! (best of 3); no timed assertions.
//!
//! - exact interval of a median: one fork (300 pairs), one cell pooled
//!   (3000), and 24,000 and 100,000 values (odd and even n);
//! - the hierarchical bootstrap of one cell on a pool of 1 thread and on
//!   the analysis's pool (`RUNNER_THREADS` or every core), which must give
//!   the same interval;
//! - the hierarchical bootstrap of one cell of reports/validity's shape
//!   (200 forks x 300 pairs) on all cores;
//! - the whole `analyse` of the grid.
//!
//! `benches/numpy_compare.py` times the whole `runner report` against a
//! numpy implementation of the same resampled statistics.

// Helpers shared by this crate's modules are `pub` for them; nothing
// outside the test binary can reach them anyway.
#![allow(unreachable_pub)]

mod common;

use rand::SeedableRng;
use runner_analysis::{analyse, AnalysisInput};
use runner_core::record::{Arm, PairRecord, Phase};
use std::time::Instant;

const DELAYS_US: [u64; 8] = [0, 5, 10, 25, 50, 100, 250, 500];
const FORKS: u32 = 10;
const PAIRS: u32 = 300;

fn best_of_3<T>(mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::MAX;
    let mut out = None;
    for _ in 0..3 {
        let start = Instant::now();
        let r = std::hint::black_box(f());
        best = best.min(start.elapsed().as_secs_f64());
        out = Some(r);
    }
    (best, out.expect("ran three times"))
}

/// xorshift64: the grid is the same on every machine.
fn grid() -> Vec<PairRecord> {
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut records = Vec::new();
    for (cell, &d_us) in DELAYS_US.iter().enumerate() {
        for fork in 0..FORKS {
            let fork_offset = next() % 5_000;
            for pair in 0..PAIRS {
                let first = if next() % 2 == 0 {
                    Arm::Baseline
                } else {
                    Arm::Treatment
                };
                records.push(PairRecord {
                    cell: cell as u32,
                    fork,
                    phase: Phase::Measure,
                    pair,
                    first,
                    baseline_ns: 800_000 + fork_offset + next() % 40_000,
                    treatment_ns: 800_000 + fork_offset + next() % 40_000 + d_us * 1000,
                    delay_ns: d_us * 1000,
                    spin_ns: d_us * 1000 + 40,
                    baseline_at_ns: u64::from(pair) * 2_000_000,
                    treatment_at_ns: u64::from(pair) * 2_000_000 + 1_000_000,
                    usage: Default::default(),
                    counts: Default::default(),
                });
            }
        }
    }
    records
}

fn input() -> AnalysisInput {
    common::delay_grid_input(&DELAYS_US, 20.0)
}

fn main() {
    let records = grid();
    let diffs: Vec<i64> = records
        .iter()
        .map(|p| p.treatment_ns as i64 - p.baseline_ns as i64)
        .collect();
    for n in [300, 3000, 24_000] {
        let (t, e) = best_of_3(|| runner_stats::exact_median(&diffs[..n], 0.95).unwrap());
        println!(
            "exact interval of a median, n = {n}: {:.2} ms ({:?})",
            t * 1e3,
            e.ci
        );
    }
    let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
    for n in [100_000usize, 100_001] {
        let data: Vec<i64> = (0..n)
            .map(|_| rand::Rng::gen_range(&mut rng, 0..100_000))
            .collect();
        let (t, _) = best_of_3(|| runner_stats::exact_median(&data, 0.95).unwrap());
        println!("exact interval of a median, n = {n}: {:.2} ms", t * 1e3);
    }
    let cell: Vec<&[i64]> = diffs[..(FORKS * PAIRS) as usize]
        .chunks(PAIRS as usize)
        .collect();
    let hier = |threads: Option<usize>| {
        best_of_3(|| {
            let one = || {
                let mut rng = rand_pcg::Pcg64::seed_from_u64(9);
                runner_stats::hierarchical_median(&cell, 2000, 0.95, &mut rng).unwrap()
            };
            match threads {
                Some(t) => runner_stats::pool::on_threads(t, one),
                None => one(),
            }
        })
    };
    let (t1, e1) = hier(Some(1));
    let (tn, en) = hier(None);
    println!(
        "hierarchical bootstrap, 10 forks x 300 pairs, 2000 resamples: {:.1} ms on 1 thread, {:.1} ms on {} (same interval: {})",
        t1 * 1e3,
        tn * 1e3,
        runner_stats::pool::threads(),
        e1 == en
    );
    // One cell of reports/validity (200 forks x 300 pairs): the shape
    // where the nested bootstraps are most of `runner report`'s time.
    let wide: Vec<i64> = (0..200 * PAIRS as usize)
        .map(|i| diffs[i % diffs.len()] + (i / PAIRS as usize) as i64 % 7)
        .collect();
    let wide: Vec<&[i64]> = wide.chunks(PAIRS as usize).collect();
    let (t, _) = best_of_3(|| {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(9);
        runner_stats::hierarchical_median(&wide, 2000, 0.95, &mut rng).unwrap()
    });
    println!(
        "hierarchical bootstrap, 200 forks x 300 pairs, 2000 resamples: {:.1} ms on {} threads",
        t * 1e3,
        runner_stats::pool::threads()
    );
    let input = input();
    let (t, _) = best_of_3(|| analyse(&input, &records).unwrap());
    println!(
        "analysis: {} forks x {} delays x {PAIRS} pairs, 2000 resamples: {t:.3} s",
        FORKS,
        DELAYS_US.len()
    );
}
