//! "Run it once, change it, run it again": what comparing two separate
//! processes' medians would have concluded, for every ordered pair of forks.
//!
//! Estimate for (f, g), f != g: median(treatment of g) - median(baseline of f).
//! For d > 0 the right answer is "slower", so `correct` counts estimates > 0.
//! For d = 0 no sign is right; `correct` is null and `slower` counts the
//! comparisons that would have reported a slowdown that is not there
//! (`comparisons - slower` would count the "faster" calls too, so it is not
//! a success count). `faster` counts estimates < 0: with `slower`, how often
//! separate runs agree with the paired direction of an A/B comparison.

use super::{CellInfo, CrossRuns, ForkAnalysis};

pub(crate) fn cross_runs(info: &CellInfo, forks: &[ForkAnalysis]) -> CrossRuns {
    let estimates: Vec<f64> = forks
        .iter()
        .enumerate()
        .flat_map(|(i, f)| {
            forks
                .iter()
                .enumerate()
                .filter(move |(j, _)| *j != i)
                .map(move |(_, g)| g.treatment_median_ns - f.baseline_median_ns)
        })
        .collect();
    let slower = estimates.iter().filter(|&&e| e > 0.0).count() as u32;
    let faster = estimates.iter().filter(|&&e| e < 0.0).count() as u32;
    let fold = |init: f64, pick: fn(f64, f64) -> f64| {
        (!estimates.is_empty()).then(|| estimates.iter().copied().fold(init, pick))
    };
    CrossRuns {
        comparisons: estimates.len() as u32,
        correct: (info.delay_ns > 0).then_some(slower),
        slower,
        faster,
        min_ns: fold(f64::INFINITY, f64::min),
        max_ns: fold(f64::NEG_INFINITY, f64::max),
        note: estimates
            .is_empty()
            .then(|| "one fork: comparing separate runs needs at least two forks".to_string()),
    }
}
