//! A panel of one row per fork, fork 0 on top: each fork's estimate with
//! its interval as a bar, zero as a solid line (or, where zero lies off the
//! panel's range, an arrow to it in a free row under the last fork). The
//! per-fork intervals of `forest.svg` and `effect.svg` are both drawn so.

use super::axis::{Axis, Ticked};
use super::{font, DrawResult};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The bottom of a panel's y range: one free row under the last fork,
/// where the arrow to an off-range zero goes.
pub(super) const BOTTOM: f64 = -1.4;

/// One fork's row.
pub(super) struct ForkRow {
    pub fork: u32,
    pub estimate: f64,
    pub interval: [f64; 2],
    pub color: RGBColor,
}

pub(super) type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<Ticked, Ticked>>;

/// The top of the y range for `n` forks.
pub(super) fn top(n: usize) -> f64 {
    n as f64 - 0.4
}

/// A panel of ratios on a log axis (the rows' values are logs): the rows
/// over the cell's `ratio` as a line and its interval `ratio_ci` as a band,
/// in `color`. The speed ratio's panels (`effect.svg`) and the
/// instructions' (`instructions.svg`) are both drawn so.
pub(super) fn draw_ratio<'b>(
    area: &DrawingArea<SVGBackend<'b>, Shift>,
    x: &Axis,
    x_desc: &str,
    rows: &[ForkRow],
    (ratio, ratio_ci): (f64, [f64; 2]),
    color: RGBColor,
) -> DrawResult {
    let band = [ratio_ci[0].ln(), ratio_ci[1].ln()];
    let line = ratio.ln();
    let top = top(rows.len());
    draw(area, x, x_desc, rows, |chart| {
        if band.iter().all(|v| v.is_finite()) {
            chart.draw_series(std::iter::once(Rectangle::new(
                [(band[0], BOTTOM), (band[1], top)],
                color.mix(0.2).filled(),
            )))?;
        }
        if line.is_finite() {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(line, BOTTOM), (line, top)],
                color.stroke_width(2),
            )))?;
        }
        Ok(())
    })
}

/// Draws the panel on `area`: the mesh with `x_desc` under it, then what
/// `under` draws (bands, reference lines: below the bars), zero, and the
/// rows.
pub(super) fn draw<'b>(
    area: &DrawingArea<SVGBackend<'b>, Shift>,
    x: &Axis,
    x_desc: &str,
    rows: &[ForkRow],
    under: impl FnOnce(&mut Chart<'_, 'b>) -> DrawResult,
) -> DrawResult {
    let n = rows.len();
    let top = top(n);
    let y_keys: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .margin_right(20)
        .x_label_area_size(44)
        .y_label_area_size(44)
        .build_cartesian_2d(x.coord(), Ticked::new(BOTTOM..top, y_keys))?;
    let x_label = |v: &f64| x.label(*v);
    let y_label = |v: &f64| {
        let i = v.round();
        if i >= 0.0 && (i as usize) < n {
            format!("{}", rows[n - 1 - i as usize].fork)
        } else {
            String::new()
        }
    };
    super::mesh(&mut chart, &x_label, &y_label, x_desc, "fork")?;
    under(&mut chart)?;
    if x.lo <= 0.0 && 0.0 <= x.hi {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(0.0, BOTTOM), (0.0, top)],
            BLACK.stroke_width(1),
        )))?;
    } else {
        // Zero is off this panel's range: point to it from the near edge,
        // in the free row under the last fork.
        let (edge, text, pos) = if x.hi < 0.0 {
            (x.hi, "zero is off the range →", HPos::Right)
        } else {
            (x.lo, "← zero is off the range", HPos::Left)
        };
        chart.draw_series(std::iter::once(Text::new(
            text,
            (edge, -0.9),
            font(15).pos(Pos::new(pos, VPos::Center)),
        )))?;
    }
    for (i, r) in rows.iter().enumerate() {
        let [lo, hi] = r.interval;
        if !(lo.is_finite() && hi.is_finite() && r.estimate.is_finite()) {
            continue;
        }
        let y = (n - 1 - i) as f64;
        let bar = r.color.stroke_width(2);
        chart.draw_series([
            PathElement::new(vec![(lo, y), (hi, y)], bar),
            PathElement::new(vec![(lo, y - 0.25), (lo, y + 0.25)], bar),
            PathElement::new(vec![(hi, y - 0.25), (hi, y + 0.25)], bar),
        ])?;
        chart.draw_series(std::iter::once(Circle::new(
            (r.estimate, y),
            4,
            r.color.filled(),
        )))?;
    }
    Ok(())
}
