//! A continuous axis in nanoseconds, labelled in the unit that suits its
//! magnitude (the `duration` filter's rule) with "nice" ticks.

use crate::numbers::unit_for;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use std::ops::Range;

pub(super) struct Axis {
    pub lo: f64,
    pub hi: f64,
    pub unit: &'static str,
    div: f64,
    pub ticks: Vec<f64>,
    decimals: usize,
    /// Values are natural logs of ratios, labelled as the ratio (`1.25`).
    log: bool,
}

impl Axis {
    /// An axis over the data range `[lo, hi]` (ns), widened by `pad` of its
    /// span on each side; a range of zero width becomes one of a few ns
    /// (or 1 % of the value) around it.
    /// Labelled in the unit that suits `magnitude_ns` when given rather than
    /// the axis's own range, so several panels share one unit.
    pub(super) fn new(lo: f64, hi: f64, pad: f64, magnitude_ns: Option<f64>) -> Axis {
        let (lo, hi) = widen(lo, hi, pad);
        let (unit, div) = unit_for(magnitude_ns.unwrap_or(lo.abs().max(hi.abs())));
        Axis::ticked(lo, hi, unit, div)
    }

    /// An axis of speed ratios on a log scale: values are ln(ratio) over
    /// `[lo, hi]`, widened by `pad` of the span; ticks at round ratios
    /// (1, 2, 5 x 10^k across a wide range, an even step across a narrow
    /// one), labelled as ratios. So a 2x win and a 2x loss lie equally far
    /// from 1, and a 66x win fits beside a 1.1x one.
    pub(super) fn ratio(lo: f64, hi: f64, pad: f64) -> Axis {
        let (mut lo, mut hi) = if lo.is_finite() && hi.is_finite() && hi - lo > 1e-9 {
            (lo.min(hi), lo.max(hi))
        } else {
            let mid = if lo.is_finite() { lo } else { 0.0 };
            (mid - 0.01, mid + 0.01)
        };
        let span = hi - lo;
        (lo, hi) = (lo - span * pad, hi + span * pad);
        let (a, b) = (lo.exp(), hi.exp());
        let (ratios, decimals): (Vec<f64>, usize) = if b / a > 4.0 {
            let (first, last) = (a.log10().floor() as i32, b.log10().ceil() as i32);
            let ticks: Vec<f64> = (first..=last)
                .flat_map(|k| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(k)))
                .filter(|r| (a..=b).contains(r))
                .collect();
            let smallest = ticks.first().copied().unwrap_or(1.0);
            (ticks, decimals_for(smallest))
        } else {
            let step = nice_step((b - a) / 5.0);
            let (first, last) = ((a / step).ceil() as i64, (b / step).floor() as i64);
            let ticks = (first..=last).map(|k| k as f64 * step).filter(|r| *r > 0.0);
            (ticks.collect(), decimals_for(step))
        };
        Axis {
            lo,
            hi,
            unit: "x",
            div: 1.0,
            ticks: ratios.iter().map(|r| r.ln()).collect(),
            decimals,
            log: true,
        }
    }

    fn ticked(lo: f64, hi: f64, unit: &'static str, div: f64) -> Axis {
        let step_unit = nice_step((hi - lo) / div / 5.0);
        let decimals = decimals_for(step_unit);
        let step = step_unit * div;
        let first = (lo / step).ceil() as i64;
        let last = (hi / step).floor() as i64;
        let ticks = (first..=last).map(|k| k as f64 * step).collect();
        Axis {
            lo,
            hi,
            unit,
            div,
            ticks,
            decimals,
            log: false,
        }
    }

    /// The plotters coordinate for this axis.
    pub(super) fn coord(&self) -> Ticked {
        Ticked::new(self.lo..self.hi, self.ticks.clone())
    }

    /// A tick label: the value in the axis unit, without the unit.
    pub(super) fn label(&self, ns: f64) -> String {
        if self.log {
            return format!("{:.*}", self.decimals, ns.exp());
        }
        let s = format!("{:.*}", self.decimals, ns / self.div);
        match s.strip_prefix('-') {
            Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
            _ => s,
        }
    }
}

/// `[lo, hi]` ordered, of non-zero width, widened by `pad` of its span.
fn widen(lo: f64, hi: f64, pad: f64) -> (f64, f64) {
    let (mut lo, mut hi) = if lo.is_finite() && hi.is_finite() {
        (lo.min(hi), lo.max(hi))
    } else {
        (0.0, 1.0)
    };
    if hi - lo < 1e-9 {
        let half = (lo.abs() * 0.01).max(2.0);
        lo -= half;
        hi += half;
    }
    let span = hi - lo;
    (lo - span * pad, hi + span * pad)
}

/// The data range `[lo, hi]` stretched to take in zero when zero lies
/// within one span of it, so a panel shows whether intervals clear 0
/// without squeezing a far-off range against it.
pub(super) fn with_zero_near(mut lo: f64, mut hi: f64) -> (f64, f64) {
    let span = hi - lo;
    if lo > 0.0 && lo <= span {
        lo = 0.0;
    }
    if hi < 0.0 && -hi <= span {
        hi = 0.0;
    }
    (lo, hi)
}

/// A linear f64 range whose tick marks are exactly `ticks`. (plotters'
/// own `with_key_points` loses the f64 label formatter.)
pub(super) struct Ticked {
    range: Range<f64>,
    ticks: Vec<f64>,
}

impl Ticked {
    pub(super) fn new(range: Range<f64>, ticks: Vec<f64>) -> Ticked {
        Ticked { range, ticks }
    }
}

impl Ranged for Ticked {
    type ValueType = f64;
    type FormatOption = DefaultFormatting;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let Range { start, end } = self.range;
        let share = (value - start) / (end - start);
        limit.0 + ((f64::from(limit.1 - limit.0)) * share).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.clone()
    }
}

/// The smallest of 1, 2, 5 x 10^k at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if raw.is_nan() || raw <= 0.0 || raw.is_infinite() {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag)
}

/// Decimals that show every multiple of `step` exactly.
fn decimals_for(step: f64) -> usize {
    (0..6)
        .find(|&d| {
            let scaled = step * 10f64.powi(d as i32);
            (scaled - scaled.round()).abs() < 1e-6
        })
        .unwrap_or(6)
}

/// A delay as a tick label in µs: `100` ns -> `0.1`, `25_000` -> `25`.
pub(super) fn delay_us_label(ns: u64) -> String {
    format!("{}", ns as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_in_the_chosen_unit() {
        let a = Axis::new(0.0, 25_000.0, 0.0, None);
        assert_eq!(a.unit, "µs");
        let labels: Vec<_> = a.ticks.iter().map(|t| a.label(*t)).collect();
        assert_eq!(labels, ["0", "5", "10", "15", "20", "25"]);
        let b = Axis::new(70.0, 80.0, 0.0, None);
        assert_eq!(b.unit, "ns");
        assert_eq!(b.label(b.ticks[0]), "70");
        assert_eq!(b.ticks.len(), 6);
        let c = Axis::new(0.0, 0.0, 0.0, None);
        assert!(c.lo < 0.0 && c.hi > 0.0 && !c.ticks.is_empty());
        assert_eq!(c.label(-0.01), "0");
        assert_eq!(delay_us_label(100), "0.1");
        assert_eq!(delay_us_label(250_000), "250");
        // A shared unit: a 2..8 ns range labelled in µs.
        let d = Axis::new(2.0, 8.0, 0.0, Some(5_000.0));
        assert_eq!(d.unit, "µs");
        assert_eq!(d.label(d.ticks[0]), "0.002");
        assert_eq!(with_zero_near(5.0, 12.0), (0.0, 12.0));
        assert_eq!(with_zero_near(20.0, 30.0), (20.0, 30.0));
        assert_eq!(with_zero_near(-12.0, -5.0), (-12.0, 0.0));
    }

    #[test]
    fn a_ratio_axis_is_logarithmic_with_round_ratios() {
        let wide = Axis::ratio((1.0f64 / 66.0).ln(), 1.1f64.ln(), 0.0);
        let labels: Vec<_> = wide.ticks.iter().map(|t| wide.label(*t)).collect();
        assert_eq!(labels, ["0.02", "0.05", "0.10", "0.20", "0.50", "1.00"]);
        let narrow = Axis::ratio(0.95f64.ln(), 1.05f64.ln(), 0.0);
        let labels: Vec<_> = narrow.ticks.iter().map(|t| narrow.label(*t)).collect();
        assert_eq!(labels, ["0.96", "0.98", "1.00", "1.02", "1.04"]);
        assert!(narrow.ticks.contains(&0.0), "1x is a tick");
    }
}
