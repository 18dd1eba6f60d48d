//! `effect.svg`, a comparison's per-fork effect: one panel per compared
//! cell (each variant, each swept cell), one row per fork with its median
//! difference D and interval as a change in run time, in % of the cell's
//! median baseline run, the scale of the cell's effect
//! (`analysis::effect`). So the forks and the cell's effect, drawn as a
//! band (its interval) around a line (its estimate), read on one axis:
//! whether every fork agrees with the cell, and how far apart forks lie
//! against the effect. Colours and words say faster, slower or no
//! difference resolved, as `report::effect` does; zero is the line of no
//! change.

use super::axis::{with_zero_near, Axis};
use super::fork_rows::{self, ForkRow, BOTTOM};
use super::layout::{panel_title, panel_titles};
use super::{fork_color, svg, Area, DrawResult, Header, Input, LegendEntry, Line, Marker, Panel};
use super::{FASTER, GREY, SLOWER};
use crate::analysis::effect::{Direction, Effect, IntervalKind};
use crate::error::Result;
use crate::report::effect::{direction_word, interval_name, text};
use crate::report::format::percent;
use plotters::prelude::*;

const PANEL_WIDTH: u32 = 520;
const ROW: u32 = 18;

pub(super) fn render(input: &Input<'_>) -> Result<String> {
    let panels = &input.panels;
    let confidence = input.analysis.confidence;
    let (cols, rows) = super::grid(panels.len());
    let forks_max = panels.iter().map(|p| p.cell.forks.len()).max().unwrap_or(1) as u32;
    let width = PANEL_WIDTH * cols as u32;
    let effects: Vec<Effect> = panels.iter().map(|p| p.cell.effect()).collect();
    let mut intervals: Vec<String> = effects
        .iter()
        .map(|e| interval_name(e.interval, confidence))
        .collect();
    intervals.sort();
    intervals.dedup();
    if intervals.is_empty() {
        intervals.push(interval_name(IntervalKind::Hierarchical, confidence));
    }
    let entries = [
        LegendEntry::new(
            format!("CI below 0: {}", direction_word(Direction::Faster)),
            FASTER,
            Line::Solid,
            Marker::Circle,
        ),
        LegendEntry::new(
            format!("CI covers 0: {}", direction_word(Direction::NoDifference)),
            GREY,
            Line::Solid,
            Marker::Circle,
        ),
        LegendEntry::new(
            format!("CI above 0: {}", direction_word(Direction::Slower)),
            SLOWER,
            Line::Solid,
            Marker::Circle,
        ),
        LegendEntry::new(
            "the cell's effect (line) and its interval (band), in its direction's colour",
            GREY,
            Line::Band,
            Marker::None,
        ),
        LegendEntry::new(
            "zero: no change (an arrow where it is off the range)",
            BLACK,
            Line::Solid,
            Marker::None,
        ),
    ];
    let ci = percent(confidence);
    let header = Header {
        title: "Per-fork effect: change in run time, in % of the baseline's median".into(),
        notes: vec![format!(
            "Each fork's median difference D and its {ci} CI over the cell's median baseline run; the band: the cell's effect, {}.",
            intervals.join(" or ")
        )],
        legend: entries.iter().collect(),
    };
    let header_height = header.height(width);
    let parts: Vec<Vec<String>> = panels
        .iter()
        .zip(&effects)
        .map(|(p, e)| {
            let t = text(e, &p.treatment, &input.baseline, confidence);
            vec![
                p.title.clone(),
                t.ratio,
                format!("{} run time, {}", t.percent, t.forks),
            ]
        })
        .collect();
    let (titles, strip) = panel_titles(&parts, PANEL_WIDTH);
    let panel_height = strip + 100 + ROW * (forks_max + 1);
    let height = header_height + panel_height * rows as u32;
    svg("effect.svg", (width, height), |root| {
        let (top, body) = root.split_vertically(header_height);
        header.draw(&top, width)?;
        let areas = body.split_evenly((rows, cols));
        for (((p, e), lines), area) in panels.iter().zip(&effects).zip(&titles).zip(areas.iter()) {
            let (title_area, chart_area) = area.split_vertically(strip);
            panel_title(&title_area, lines, PANEL_WIDTH)?;
            panel(&chart_area, p, e, &ci)?;
        }
        Ok(())
    })
}

/// A value in ns as % of the cell's median baseline run.
fn share(ns: f64, base: f64) -> f64 {
    if base > 0.0 {
        100.0 * ns / base
    } else {
        f64::NAN
    }
}

/// The direction's colour.
fn color(d: Direction) -> RGBColor {
    match d {
        Direction::Faster => FASTER,
        Direction::Slower => SLOWER,
        Direction::NoDifference => GREY,
    }
}

fn panel(area: &Area<'_>, p: &Panel<'_>, e: &Effect, ci: &str) -> DrawResult {
    let base = e.baseline_median_ns;
    let rows: Vec<ForkRow> = p
        .cell
        .forks
        .iter()
        .map(|f| ForkRow {
            fork: f.fork,
            estimate: share(f.median_ns, base),
            interval: [share(f.ci_ns[0], base), share(f.ci_ns[1], base)],
            color: fork_color(f.verdict, true),
        })
        .collect();
    let band = [100.0 * e.relative_ci[0], 100.0 * e.relative_ci[1]];
    let line = 100.0 * e.relative;
    let (lo, hi) = rows
        .iter()
        .flat_map(|r| r.interval)
        .chain(band)
        .chain([line])
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    let (lo, hi) = if lo <= hi {
        with_zero_near(lo, hi)
    } else {
        (0.0, 0.0)
    };
    let x = Axis::percent(lo, hi, 0.06);
    let top = fork_rows::top(rows.len());
    let c = color(e.direction);
    let desc = format!("change in run time, median D and {ci} CI (%)");
    fork_rows::draw(area, &x, &desc, &rows, |chart| {
        if band.iter().all(|v| v.is_finite()) {
            chart.draw_series(std::iter::once(Rectangle::new(
                [(band[0], BOTTOM), (band[1], top)],
                c.mix(0.2).filled(),
            )))?;
        }
        if line.is_finite() {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(line, BOTTOM), (line, top)],
                c.stroke_width(2),
            )))?;
        }
        Ok(())
    })
}
