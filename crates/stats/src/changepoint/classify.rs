//! Barrett et al.'s classification of a segmented series, as their
//! warmup_stats code does it (`Segments.get_classification` in
//! `bin/mark_changepoints_in_json`), with one change of units noted below.
//!
//! The last segment is the candidate steady state. Walking back from the
//! segment before it, a segment *equivalent* to the last one is skipped;
//! the first one that is not decides: if it ends inside the last
//! `steady_fraction` of the series, there is **no steady state** (the series
//! was still changing when it ended); if it ran faster than the last, the
//! series ended in a **slowdown**; if slower, it is a **warm-up** (and the
//! walk goes on, so an even earlier faster segment still makes it a
//! slowdown or no steady state). No changepoint, or only equivalent
//! segments: **flat**.
//!
//! Equivalence: the segment's mean ± its spread overlaps the last segment's
//! mean ± the larger of its spread and delta, where delta is a fraction of
//! the fastest segment's mean (warmup_stats' "delta as a percentage").
//! warmup_stats uses the variance as the spread, on times in seconds, where
//! a variance (s²) is far smaller than its standard deviation and the rule
//! in effect compared means within delta; on integer nanoseconds a variance
//! in ns² would swamp every mean, so runner uses the standard deviation,
//! the spread in the data's own unit.

use super::{Class, Segment};

/// The class of a series of `n` values cut into `segments` (in order,
/// covering it); `steady_len` is how many of the last values the steady
/// state must cover, `delta_fraction` the equivalence margin.
pub(crate) fn classify(
    segments: &[Segment],
    n: usize,
    steady_len: usize,
    delta_fraction: f64,
) -> Class {
    let Some(last) = segments.last() else {
        return Class::Flat;
    };
    let fastest = segments
        .iter()
        .map(|s| s.mean.abs())
        .fold(f64::INFINITY, f64::min);
    let delta = delta_fraction * fastest;
    let lower = (last.mean - last.sd).min(last.mean - delta);
    let upper = (last.mean + last.sd).max(last.mean + delta);
    let mut class = Class::Flat;
    for s in segments[..segments.len() - 1].iter().rev() {
        if s.mean + s.sd >= lower && s.mean - s.sd <= upper {
            continue;
        }
        // warmup_stats compares the segment's last index with
        // length - steady; `end` here is one past it.
        if s.end - 1 > n.saturating_sub(steady_len) {
            return Class::NoSteadyState;
        }
        if s.mean - s.sd < lower {
            return Class::Slowdown;
        }
        class = Class::Warmup;
    }
    class
}
