//! Steady state of one series: changepoints, then a classification.
//!
//! Method (Barrett, Bolz-Tereick, Killick, Mount & Tratt 2017, "Virtual
//! Machine Warmup Blows Hot and Cold", OOPSLA; their warmup_stats code):
//! 1. Changepoints by PELT (Killick, Fearnhead & Eckley 2012, JASA 107(500))
//!    on a normal cost with a change in mean and variance, penalty
//!    15 ln n per changepoint (their choice, far stricter than BIC's
//!    2 ln n: timing noise is not normal, and a weaker penalty cuts it into
//!    many short segments), segments at least 2 long (the R changepoint
//!    package's minimum for this cost). See `pelt.rs`.
//! 2. The segments classified as flat, warm-up, slowdown or no steady state,
//!    a steady state having to cover the last quarter of the series
//!    (warmup_stats' default). See `classify.rs`.
//!
//! What runner does not copy: warmup_stats removes outliers (a Tukey rule in
//! a sliding window) before step 1; here every value stays in, because a
//! burst of slow runs is exactly what a reader of a fork's measured phase
//! needs to hear about. Series longer than [`MAX_POINTS`] are first averaged
//! in consecutive blocks, so that PELT (quadratic when there is little to
//! prune) stays fast; changepoints are then reported at block starts.

mod classify;
mod pelt;

use super::{to_finite_vec, StatsError, Value};
use serde::{Deserialize, Serialize};

/// Penalty per changepoint, as a multiple of ln n (Barrett et al. 2017).
pub const PENALTY_PER_LN_N: f64 = 15.0;
/// Shortest segment PELT may cut.
pub const MIN_SEGMENT: usize = 2;
/// The share of the series, at its end, that a steady state must cover.
pub const STEADY_FRACTION: f64 = 0.25;
/// Segments whose means differ by at most this fraction of the fastest
/// segment's mean are equivalent even when their spreads do not overlap.
/// warmup_stats' default was 1 ms absolute on benchmarks of 0.1-1 s, so
/// 0.1-1 %; 1 % keeps a quiet series from being split on noise.
pub const DELTA_FRACTION: f64 = 0.01;
/// The smallest variance a segment is credited with: the variance of
/// rounding to whole units (1/12), since timings are integer nanoseconds.
pub const VARIANCE_FLOOR: f64 = 1.0 / 12.0;
/// Longer series are averaged in blocks down to at most this many points.
pub const MAX_POINTS: usize = 10_000;

/// The four classes of Barrett et al. 2017.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Class {
    /// No changepoint, or none that leads to a different level.
    #[serde(rename = "flat")]
    Flat,
    /// Earlier segments were slower than the final, steady one.
    #[serde(rename = "warm-up")]
    Warmup,
    /// An earlier segment was faster than the final one.
    #[serde(rename = "slowdown")]
    Slowdown,
    /// The series still changed within its last [`STEADY_FRACTION`].
    #[serde(rename = "no steady state")]
    NoSteadyState,
}

/// One segment between changepoints: values `start..end`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    pub start: usize,
    pub end: usize,
    pub mean: f64,
    /// Standard deviation (divided by the segment's length).
    pub sd: f64,
}

/// The segmentation and class of one series.
#[derive(Debug, Clone, PartialEq)]
pub struct SteadyState {
    pub class: Class,
    /// Index of the first value of each segment after the first.
    pub changepoints: Vec<usize>,
    pub segments: Vec<Segment>,
}

/// Tuning of [`steady_state_with`]; [`Options::default`] is the method above.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    pub penalty_per_ln_n: f64,
    pub min_segment: usize,
    pub steady_fraction: f64,
    pub delta_fraction: f64,
    pub variance_floor: f64,
    pub max_points: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            penalty_per_ln_n: PENALTY_PER_LN_N,
            min_segment: MIN_SEGMENT,
            steady_fraction: STEADY_FRACTION,
            delta_fraction: DELTA_FRACTION,
            variance_floor: VARIANCE_FLOOR,
            max_points: MAX_POINTS,
        }
    }
}

/// Changepoints and class of `series` (in time order), by the method above.
pub fn steady_state<T: Value>(series: &[T]) -> Result<SteadyState, StatsError> {
    steady_state_with(series, &Options::default())
}

/// [`steady_state`] with other settings.
pub fn steady_state_with<T: Value>(
    series: &[T],
    options: &Options,
) -> Result<SteadyState, StatsError> {
    let data = to_finite_vec(series)?;
    let n = data.len();
    let block = n.div_ceil(options.max_points.max(1));
    let points: Vec<f64> = data
        .chunks(block)
        .map(|c| c.iter().sum::<f64>() / c.len() as f64)
        .collect();
    let cost = pelt::NormalMeanVar::new(&points, options.variance_floor);
    let penalty = options.penalty_per_ln_n * (points.len() as f64).ln();
    let changepoints: Vec<usize> = pelt::pelt(&cost, points.len(), penalty, options.min_segment)
        .into_iter()
        .map(|c| c * block)
        .collect();
    let segments = segments(&data, &changepoints);
    let steady_len = (options.steady_fraction * n as f64) as usize;
    Ok(SteadyState {
        class: classify::classify(&segments, n, steady_len, options.delta_fraction),
        changepoints,
        segments,
    })
}

/// The segments of `data` between `changepoints`, with their mean and sd.
fn segments(data: &[f64], changepoints: &[usize]) -> Vec<Segment> {
    let mut bounds = vec![0];
    bounds.extend_from_slice(changepoints);
    bounds.push(data.len());
    bounds
        .windows(2)
        .map(|w| {
            let values = &data[w[0]..w[1]];
            let m = values.len() as f64;
            let mean = values.iter().sum::<f64>() / m;
            let var = values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / m;
            Segment {
                start: w[0],
                end: w[1],
                mean,
                sd: var.sqrt(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
