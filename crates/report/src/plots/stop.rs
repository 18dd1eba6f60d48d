//! `stop.svg`, a sequential run's stopping path: one panel per cell that
//! a rule stopped, with the deciding interval after each look (the speed
//! ratio's on a log axis, or D's where the rule is in time units), the
//! estimate as a dot, no change and the gate's threshold as lines, and the
//! fork where the run stopped marked with its reason. What the Stopping
//! table gives as one row, this shows as the interval narrowing fork by
//! fork until the rule held.

use super::axis::{Axis, Ticked};
use super::layout::{panel_title, panel_titles};
use super::{font, svg, Area, DrawResult, Header, Input, LegendEntry, Line, Marker, Panel};
use super::{BLUE, GREY, VERMILLION};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use runner_analysis::stop::{CellStop, StopStatistic};
use runner_core::error::Result;

const PANEL_WIDTH: u32 = 520;
/// Margins 10 (right 20), label areas 72 (y) and 44 (x) around a plotting
/// area 220 px high.
const CHART_HEIGHT: u32 = 10 + 220 + 10 + 44;

/// The stopped cells' panels, in the report's cell order; none for a run
/// without a stopping rule (no file is drawn then).
pub(super) fn panels<'a>(input: &'a Input<'a>) -> Vec<(&'a Panel<'a>, &'a CellStop)> {
    input
        .panels
        .iter()
        .filter_map(|p| p.cell.stop.as_ref().map(|s| (p, s)))
        .filter(|(_, s)| !s.path.is_empty())
        .collect()
}

pub(super) fn render(input: &Input<'_>) -> Result<String> {
    let panels = panels(input);
    let (cols, rows) = super::grid(panels.len());
    let width = PANEL_WIDTH * cols as u32;
    let confidence = crate::numbers::percent(input.analysis.confidence);
    let entries = [
        LegendEntry::new(
            format!("{confidence} interval over the forks after each look, and its estimate"),
            BLUE,
            Line::Solid,
            Marker::Circle,
        ),
        LegendEntry::new(
            "the gate's threshold",
            VERMILLION,
            Line::Dotted,
            Marker::None,
        ),
    ];
    let has_threshold = panels
        .iter()
        .any(|(_, s)| s.threshold_ns.is_some() || s.threshold_ratio.is_some());
    let header = Header {
        title: "Stopping path: the deciding interval after each fork, until the rule held".into(),
        notes: vec!["The dashed line marks the fork after which the cell stopped.".into()],
        legend: entries
            .iter()
            .take(if has_threshold { 2 } else { 1 })
            .collect(),
    };
    let header_height = header.height(width);
    let parts: Vec<Vec<String>> = panels
        .iter()
        .map(|(p, s)| {
            vec![
                p.title.clone(),
                format!(
                    "stopped after {} fork{}: {}",
                    s.forks_run,
                    if s.forks_run == 1 { "" } else { "s" },
                    s.reason
                ),
            ]
        })
        .collect();
    let (titles, strip) = panel_titles(&parts, PANEL_WIDTH);
    let height = header_height + (strip + CHART_HEIGHT) * rows as u32;
    svg("stop.svg", (width, height), |root| {
        let (top, body) = root.split_vertically(header_height);
        header.draw(&top, width)?;
        let areas = body.split_evenly((rows, cols));
        for (((_, s), lines), area) in panels.iter().zip(&titles).zip(areas.iter()) {
            let (title_area, chart_area) = area.split_vertically(strip);
            panel_title(&title_area, lines, PANEL_WIDTH)?;
            panel(&chart_area, s)?;
        }
        Ok(())
    })
}

fn panel(area: &Area<'_>, s: &CellStop) -> DrawResult {
    // A ratio is drawn as its log on a ratio axis, so no change is 0
    // either way.
    let ratio = s.statistic != StopStatistic::Difference;
    let at = |v: f64| if ratio { v.ln() } else { v };
    let threshold = if ratio {
        s.threshold_ratio.map(f64::ln)
    } else {
        s.threshold_ns
    };
    let mut values = vec![0.0];
    values.extend(s.path.iter().flat_map(|l| l.interval.map(at)));
    values.extend(threshold);
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let y = if ratio {
        Axis::ratio(lo, hi, 0.06)
    } else {
        Axis::new(lo, hi, 0.06, None)
    };
    let last = f64::from(s.forks_run);
    let x_keys: Vec<f64> = x_ticks(s.forks_run);
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .margin_right(20)
        .x_label_area_size(44)
        .y_label_area_size(72)
        .build_cartesian_2d(Ticked::new(0.5..last + 0.5, x_keys), y.coord())?;
    let x_label = |v: &f64| format!("{v:.0}");
    let y_label = |v: &f64| y.label(*v);
    super::mesh(
        &mut chart,
        &x_label,
        &y_label,
        "forks run",
        if ratio {
            "speed ratio, treatment over baseline (log axis)".to_string()
        } else {
            format!("median D ({})", y.unit)
        },
    )?;
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(0.5, 0.0), (last + 0.5, 0.0)],
        BLACK.stroke_width(1),
    )))?;
    if let Some(t) = threshold {
        chart.draw_series(std::iter::once(DashedPathElement::new(
            vec![(0.5, t), (last + 0.5, t)],
            2,
            3,
            VERMILLION.stroke_width(2),
        )))?;
    }
    chart.draw_series(std::iter::once(DashedPathElement::new(
        vec![(last, y.lo), (last, y.hi)],
        5,
        4,
        GREY.stroke_width(1),
    )))?;
    chart.draw_series(std::iter::once(Text::new(
        format!("stop: {}", s.reason),
        (last, y.hi),
        font(13).pos(Pos::new(HPos::Right, VPos::Top)),
    )))?;
    for l in &s.path {
        let x = f64::from(l.forks);
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x, at(l.interval[0])), (x, at(l.interval[1]))],
            BLUE.stroke_width(2),
        )))?;
        chart.draw_series(std::iter::once(Circle::new(
            (x, at(l.estimate)),
            3,
            BLUE.filled(),
        )))?;
    }
    Ok(())
}

/// At most about ten fork numbers on the axis, at a round step.
pub(super) fn x_ticks(forks: u32) -> Vec<f64> {
    let step = [1u32, 2, 5, 10, 20, 50, 100, 200, 500, 1000]
        .into_iter()
        .find(|&s| forks / s <= 10)
        .unwrap_or(forks.max(1));
    (1..=forks)
        .filter(|k| k % step == 0 || *k == 1)
        .map(f64::from)
        .collect()
}
