//! `forest.svg`: every fork's median D with its bootstrap CI, one panel per
//! cell (so per delay), the true delay dashed and zero solid. Each panel has
//! its own x range (a 2 µs interval must stay visible beside a 500 µs
//! delay) but all share one unit; where zero lies off a panel's range, an
//! arrow at that edge points to it, so "above zero" stays readable.

use super::axis::{Axis, Ticked};
use super::{font, legend, panels, svg, Area, DrawResult, LegendEntry, Line, Marker};
use super::{BLUE, GREEN, GREY, GRID, VERMILLION};
use crate::analysis::{Analysis, CellAnalysis, Verdict};
use crate::error::Result;
use crate::report::format::percent;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

const PANEL_WIDTH: u32 = 440;
const HEADER: u32 = 70;
const ROW: u32 = 18;
/// The bottom of a panel's y range: one free row under the last fork,
/// where the arrow to an off-range zero goes.
const BOTTOM: f64 = -1.4;

pub(super) fn render(a: &Analysis) -> Result<String> {
    let panels = panels(a);
    let (cols, rows) = super::grid(panels.len());
    let forks = panels.iter().map(|(c, _)| c.forks.len()).max().unwrap_or(1) as u32;
    let panel_height = 110 + ROW * (forks + 1);
    let width = PANEL_WIDTH * cols as u32;
    let height = HEADER + panel_height * rows as u32;
    let ci = percent(a.confidence);
    svg("forest.svg", (width, height), |root| {
        let (header, body) = root.split_vertically(HEADER);
        header.draw(&Text::new(
            format!("Per-fork median difference D with its {ci} CI"),
            (width as i32 / 2, 18),
            font(22).pos(Pos::new(HPos::Center, VPos::Center)),
        ))?;
        let entries = [
            entry(
                "CI above 0: saw the delay",
                BLUE,
                Line::Solid,
                Marker::Circle,
            ),
            entry("CI covers 0", GREY, Line::Solid, Marker::Circle),
            entry(
                "CI below 0: reversed",
                VERMILLION,
                Line::Solid,
                Marker::Circle,
            ),
            entry("true delay d", GREEN, Line::Dashed, Marker::None),
            entry(
                "zero (an arrow where it is off the range)",
                BLACK,
                Line::Solid,
                Marker::None,
            ),
        ];
        let refs: Vec<&LegendEntry> = entries.iter().collect();
        legend(&header, &refs, 16, 50, width as i32 - 8)?;
        let unit_of = panels
            .iter()
            .map(|(c, _)| {
                let x = x_axis(c, None);
                x.lo.abs().max(x.hi.abs())
            })
            .fold(0.0, f64::max);
        let areas = body.split_evenly((rows, cols));
        for ((cell, title), area) in panels.iter().zip(areas.iter()) {
            panel(area, cell, title, &ci, unit_of)?;
        }
        Ok(())
    })
}

fn entry(label: &str, color: RGBColor, line: Line, marker: Marker) -> LegendEntry {
    LegendEntry {
        label: label.to_string(),
        color,
        line,
        marker,
    }
}

/// The x range: every CI and d; zero too when it is within one data span,
/// so small delays show whether their CIs clear 0. Labelled in the unit of
/// `unit_of` (ns) when given, so every panel shares one.
fn x_axis(c: &CellAnalysis, unit_of: Option<f64>) -> Axis {
    let d = c.delay_ns as f64;
    let finite = c
        .forks
        .iter()
        .flat_map(|f| f.ci_ns)
        .filter(|v| v.is_finite());
    let (mut lo, mut hi) = finite.fold((d, d), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let span = hi - lo;
    if lo > 0.0 && lo <= span {
        lo = 0.0;
    }
    if hi < 0.0 && -hi <= span {
        hi = 0.0;
    }
    Axis::new(lo, hi, 0.06, unit_of)
}

fn panel(area: &Area<'_>, c: &CellAnalysis, title: &str, ci: &str, unit_of: f64) -> DrawResult {
    let x = x_axis(c, Some(unit_of));
    let n = c.forks.len();
    let top = n as f64 - 0.4;
    // Fork 0 on top.
    let y_of = |i: usize| (n - 1 - i) as f64;
    let y_keys: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let seen = format!("{title}: {}/{} saw it", c.forks_seen, c.forks_total);
    let mut chart = ChartBuilder::on(area)
        .caption(seen, font(17))
        .margin(10)
        .margin_right(20)
        .x_label_area_size(44)
        .y_label_area_size(44)
        .build_cartesian_2d(x.coord(), Ticked::new(BOTTOM..top, y_keys))?;
    let x_label = |v: &f64| x.label(*v);
    let y_label = |v: &f64| {
        let i = v.round();
        if i >= 0.0 && (i as usize) < n {
            format!("{}", c.forks[n - 1 - i as usize].fork)
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .bold_line_style(GRID)
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .x_desc(format!("median D and {ci} CI ({})", x.unit))
        .y_desc("fork")
        .label_style(font(15))
        .axis_desc_style(font(16))
        .draw()?;
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
    let d = c.delay_ns as f64;
    chart.draw_series(DashedLineSeries::new(
        vec![(d, BOTTOM), (d, top)],
        6,
        4,
        GREEN.stroke_width(2),
    ))?;
    for (i, f) in c.forks.iter().enumerate() {
        let [lo, hi] = f.ci_ns;
        if !(lo.is_finite() && hi.is_finite() && f.median_ns.is_finite()) {
            continue;
        }
        let y = y_of(i);
        let color = match f.verdict {
            Verdict::Seen => BLUE,
            Verdict::NotSeen => GREY,
            Verdict::Reversed => VERMILLION,
        };
        let bar = color.stroke_width(2);
        chart.draw_series([
            PathElement::new(vec![(lo, y), (hi, y)], bar),
            PathElement::new(vec![(lo, y - 0.25), (lo, y + 0.25)], bar),
            PathElement::new(vec![(hi, y - 0.25), (hi, y + 0.25)], bar),
        ])?;
        chart.draw_series(std::iter::once(Circle::new(
            (f.median_ns, y),
            4,
            color.filled(),
        )))?;
    }
    Ok(())
}
