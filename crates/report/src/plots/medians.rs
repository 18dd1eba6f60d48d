//! `medians.svg`: each fork's baseline median against its treatment median,
//! one panel per cell, with the line y = x + d where an exact harness would
//! put every point. Both axes of a panel span the same width in the same
//! unit over a square plotting area, so the line runs at 45 degrees and the
//! spread along it is the fork effect. Each panel's title gives r, the
//! Pearson correlation of the two medians over its forks (defined under the
//! figure's title).

use super::axis::Axis;
use super::layout::{panel_title, panel_titles};
use super::{svg, Area, DrawResult, Header, Input, LegendEntry, Line, Marker};
use super::{BLUE, GREEN};
use crate::numbers::correlation;
use plotters::prelude::*;
use runner_analysis::CellAnalysis;
use runner_core::error::Result;

const PANEL_WIDTH: u32 = 400;
/// The chart under a panel's title: margins 10 (right 20) and label areas
/// 60 (y) and 44 (x) leave a plotting area of 310 x 310 pixels.
const CHART_HEIGHT: u32 = 10 + 310 + 10 + 44;

pub(super) fn render(input: &Input<'_>) -> Result<String> {
    let panels = &input.panels;
    let (cols, rows) = super::grid(panels.len());
    let width = PANEL_WIDTH * cols as u32;
    let entries = [
        LegendEntry::new("one fork", BLUE, Line::None, Marker::Circle),
        LegendEntry::new("y = x + d", GREEN, Line::Dashed, Marker::None),
    ];
    let header = Header {
        title: "Baseline vs treatment median of each fork".into(),
        notes: vec!["r: Pearson correlation of the forks' baseline and treatment medians".into()],
        legend: entries.iter().collect(),
    };
    let header_height = header.height(width);
    let (titles, strip) = panel_titles(
        &panels
            .iter()
            .map(|p| vec![caption(p.cell, &p.title)])
            .collect::<Vec<_>>(),
        PANEL_WIDTH,
    );
    let height = header_height + (strip + CHART_HEIGHT) * rows as u32;
    svg("medians.svg", (width, height), |root| {
        let (top, body) = root.split_vertically(header_height);
        header.draw(&top, width)?;
        let unit_of = panels
            .iter()
            .map(|p| {
                let (x, y) = axes(p.cell, None);
                [x.lo, x.hi, y.lo, y.hi]
                    .into_iter()
                    .fold(0.0, |m: f64, v| m.max(v.abs()))
            })
            .fold(0.0, f64::max);
        let areas = body.split_evenly((rows, cols));
        for ((p, lines), area) in panels.iter().zip(&titles).zip(areas.iter()) {
            let (title_area, chart_area) = area.split_vertically(strip);
            panel_title(&title_area, lines, PANEL_WIDTH)?;
            panel(&chart_area, p.cell, unit_of)?;
        }
        Ok(())
    })
}

/// The panel's title with r: `d = 25 µs, r = 0.987`, or `r > 0.999` when
/// it only rounds to 1.
fn caption(c: &CellAnalysis, title: &str) -> String {
    match c.correlation {
        Some(r) => match correlation(r) {
            s if s.starts_with(['<', '>']) => format!("{title}, r {s}"),
            s => format!("{title}, r = {s}"),
        },
        None => title.to_string(),
    }
}

/// Axes of equal span (ns), one around the baseline medians and one around
/// the treatment medians, so y = x + d runs at 45° and passes through the
/// points when treatment = baseline + d; where it does not (an A/B
/// comparison, or a harness bias larger than the fork spread) the line is
/// clipped away rather than stretching the axes off the data. Times are never
/// negative, so neither axis starts below 0. Both are labelled in the unit
/// of `unit_of` (ns) when given, so all panels share one.
fn axes(c: &CellAnalysis, unit_of: Option<f64>) -> (Axis, Axis) {
    let range = |vals: &mut dyn Iterator<Item = f64>| {
        vals.filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            })
    };
    let (bl, bh) = range(&mut c.forks.iter().map(|f| f.baseline_median_ns));
    let (tl, th) = range(&mut c.forks.iter().map(|f| f.treatment_median_ns));
    let span = (bh - bl).max(th - tl);
    let around = |lo: f64, hi: f64| {
        let start = ((lo + hi) / 2.0 - span / 2.0).max(0.0);
        Axis::new(start, start + span, 0.1, unit_of)
    };
    (around(bl, bh), around(tl, th))
}

fn panel(area: &Area<'_>, c: &CellAnalysis, unit_of: f64) -> DrawResult {
    let (x, y) = axes(c, Some(unit_of));
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .margin_right(20)
        .x_label_area_size(44)
        .y_label_area_size(60)
        .build_cartesian_2d(x.coord(), y.coord())?;
    let x_label = |v: &f64| x.label(*v);
    let y_label = |v: &f64| y.label(*v);
    super::mesh(
        &mut chart,
        &x_label,
        &y_label,
        format!("baseline median ({})", x.unit),
        format!("treatment median ({})", y.unit),
    )?;
    // y = x + d, clipped to the panel.
    let d = c.delay_ns as f64;
    let (from, to) = (x.lo.max(y.lo - d), x.hi.min(y.hi - d));
    if from < to {
        chart.draw_series(DashedLineSeries::new(
            vec![(from, from + d), (to, to + d)],
            6,
            4,
            GREEN.stroke_width(2),
        ))?;
    }
    chart.draw_series(
        c.forks
            .iter()
            .filter(|f| f.baseline_median_ns.is_finite() && f.treatment_median_ns.is_finite())
            .map(|f| {
                Circle::new(
                    (f.baseline_median_ns, f.treatment_median_ns),
                    4,
                    BLUE.filled(),
                )
            }),
    )?;
    Ok(())
}
