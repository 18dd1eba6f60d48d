//! `cargo bench`: the harness measured against its own goals (docs/guide/performance.md,
//! whose table is this output). Prints one line per figure; no timed assertions.
//!
//! - floor: the median time of a timed `noop` run (the baseline's region:
//!   the call and the wait mechanism at d = 0, three clock reads after the
//!   start), against one clock read (goal: within 4x);
//! - delay accuracy at 0.1, 1, 10, 100 µs: median(spin_ns) - d (goal:
//!   within 1 % + 100 ns) and the residual bias of the wait mechanism,
//!   median(D) - median(spin_ns), from paired noop runs;
//! - analysis of a grid the size of experiments/aa.toml (goal: under 1 s).

// Helpers shared by this crate's modules are `pub` for them; nothing
// outside the test binary can reach them anyway.
#![allow(unreachable_pub)]

mod common;

use runner::exec::worker::timed_run;
use runner_analysis::analyse;
use runner_core::record::{Arm, PairRecord, Phase};
use runner_spec::{StrategyKind, WorkloadParams};
use std::time::Instant;

fn median(mut v: Vec<u64>) -> f64 {
    v.sort_unstable();
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2] as f64
    } else {
        (v[n / 2 - 1] + v[n / 2]) as f64 / 2.0
    }
}

fn floor() {
    let clock = runner_os::environment::measure_clock();
    let at = runner::strategy::Setting::new(WorkloadParams::default(), None);
    let mut noop = runner::strategy::build(&StrategyKind::Noop, &at).unwrap();
    let mut times = Vec::with_capacity(200_000);
    for _ in 0..200_000 {
        let (elapsed, _) = timed_run(noop.as_mut(), 1 << 40, 0, 0).unwrap();
        times.push(elapsed);
    }
    let floor = median(times);
    println!(
        "floor: timed noop median {floor:.1} ns; one clock read {:.1} ns (resolution {} ns); ratio {:.2} (goal <= 4)",
        clock.read_cost_ns,
        clock.resolution_ns,
        floor / clock.read_cost_ns
    );
}

/// Pairs of timed noop runs, one with the wait at d and one at 0, in
/// alternating order, as a fork times them: the overshoot of the wait
/// (median injected - d) and the mechanism's residual bias (median D -
/// median injected, which the unbiased timed region makes ~0).
fn delay_accuracy() {
    let read_ns = runner_os::environment::measure_clock().read_cost_ns;
    let at = runner::strategy::Setting::new(WorkloadParams::default(), None);
    let mut noop = runner::strategy::build(&StrategyKind::Noop, &at).unwrap();
    for d_ns in [100u64, 1_000, 10_000, 100_000] {
        let reps = if d_ns == 100_000 { 2_000 } else { 20_000 };
        let (mut diffs, mut injected) = (Vec::new(), Vec::new());
        for i in 0..reps {
            let mut run = |d| timed_run(noop.as_mut(), 1 << 40, d, d).unwrap();
            let ((tb, wb), (tt, wt)) = if i % 2 == 0 {
                let b = run(0);
                (b, run(d_ns))
            } else {
                let t = run(d_ns);
                (run(0), t)
            };
            diffs.push(tt as i64 - tb as i64);
            injected.push(wt as i64 - wb as i64);
        }
        let (d_med, inj) = (median_i(diffs), median_i(injected));
        let err = inj - d_ns as f64;
        let goal = d_ns as f64 * 0.01 + 100.0;
        println!(
            "delay {} µs: median spin_ns - d = {err:.1} ns (goal <= {goal:.0} ns) {}; residual bias = {:.1} ns (goal <= one clock read, {read_ns:.0} ns) {}",
            d_ns as f64 / 1000.0,
            if err.abs() <= goal { "ok" } else { "MISSED" },
            d_med - inj,
            if (d_med - inj).abs() <= read_ns { "ok" } else { "MISSED" },
        );
    }
}

fn median_i(mut v: Vec<i64>) -> f64 {
    v.sort_unstable();
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2] as f64
    } else {
        (v[n / 2 - 1] + v[n / 2]) as f64 / 2.0
    }
}

fn analysis_time() {
    let (forks, delays, pairs) = (10u32, [0u64, 5, 10, 25, 50, 100, 250, 500], 300u32);
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut records = Vec::new();
    for (cell, &d_us) in delays.iter().enumerate() {
        for fork in 0..forks {
            for pair in 0..pairs {
                let base = 800_000 + next() % 40_000;
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
                    baseline_ns: base,
                    treatment_ns: 800_000 + next() % 40_000 + d_us * 1000,
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
    let input = common::delay_grid_input(&delays, 0.0);

    let mut best = f64::MAX;
    for _ in 0..3 {
        let start = Instant::now();
        let a = analyse(&input, &records).unwrap();
        std::hint::black_box(a);
        best = best.min(start.elapsed().as_secs_f64());
    }
    println!(
        "analysis: 10 forks x 8 delays x 300 pairs, 2000 resamples: {best:.3} s (best of 3; goal < 1 s)"
    );
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` passes nothing
    // useful either: the figures are the same program.
    floor();
    delay_accuracy();
    analysis_time();
}
