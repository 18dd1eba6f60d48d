//! `forest.svg`: every fork's median D with its bootstrap CI, one panel per
//! cell (so per delay), the true delay dashed and zero solid. Each panel has
//! its own x range (a 2 µs interval must stay visible beside a 500 µs
//! delay) but all share one unit; where zero lies off a panel's range, an
//! arrow at that edge points to it, so "above zero" stays readable.
//!
//! A fork's colour says what its interval means. Where both arms run the
//! same thing, the delay's direction is known: above 0 the fork saw it,
//! below 0 it reversed it. Where they differ (a study's A/B cells), D is
//! the treatment's own effect plus the delay, whose sign nobody knew
//! beforehand: below 0 is faster, above 0 slower, in `report::effect`'s
//! words and colours of their own.

use super::axis::{with_zero_near, Axis};
use super::fork_rows::{self, ForkRow, BOTTOM};
use super::layout::{panel_title, panel_titles};
use super::{fork_color, svg, Area, DrawResult, Header, Input, LegendEntry, Line, Marker, Panel};
use super::{BLUE, FASTER, GREEN, GREY, SLOWER, VERMILLION};
use crate::effect::{direction_word, forks};
use crate::numbers::percent;
use plotters::prelude::*;
use runner_analysis::effect::Direction;
use runner_analysis::CellAnalysis;
use runner_core::error::Result;

const PANEL_WIDTH: u32 = 440;
const ROW: u32 = 18;

pub(super) fn render(input: &Input<'_>) -> Result<String> {
    let panels = &input.panels;
    let (cols, rows) = super::grid(panels.len());
    let forks_max = panels.iter().map(|p| p.cell.forks.len()).max().unwrap_or(1) as u32;
    let width = PANEL_WIDTH * cols as u32;
    let ci = percent(input.analysis.confidence);
    let entries = legend_entries(panels);
    let header = Header {
        title: format!("Per-fork median difference D with its {ci} CI"),
        notes: vec![],
        legend: entries.iter().collect(),
    };
    let header_height = header.height(width);
    let (titles, strip) = panel_titles(
        &panels
            .iter()
            .map(|p| vec![format!("{}: {}", p.title, verdicts(p))])
            .collect::<Vec<_>>(),
        PANEL_WIDTH,
    );
    let panel_height = strip + 100 + ROW * (forks_max + 1);
    let height = header_height + panel_height * rows as u32;
    svg("forest.svg", (width, height), |root| {
        let (top, body) = root.split_vertically(header_height);
        header.draw(&top, width)?;
        let unit_of = panels
            .iter()
            .map(|p| {
                let x = x_axis(p.cell, None);
                x.lo.abs().max(x.hi.abs())
            })
            .fold(0.0, f64::max);
        let areas = body.split_evenly((rows, cols));
        for ((p, lines), area) in panels.iter().zip(&titles).zip(areas.iter()) {
            let (title_area, chart_area) = area.split_vertically(strip);
            panel_title(&title_area, lines, PANEL_WIDTH)?;
            panel(&chart_area, p, &ci, unit_of)?;
        }
        Ok(())
    })
}

/// What a panel's title says about its forks: `10/10 saw it` where the
/// arms run the same thing (the delay's direction is known), `faster in 3
/// of 3 forks` where they differ.
fn verdicts(p: &Panel<'_>) -> String {
    if p.compares {
        forks(&p.cell.effect())
    } else {
        format!("{}/{} saw it", p.cell.forks_seen, p.cell.forks_total)
    }
}

/// Seen and reversed for cells whose arms run the same thing, faster and
/// slower for cells that compare two: each only when a panel has it.
fn legend_entries(panels: &[Panel<'_>]) -> Vec<LegendEntry> {
    let same = panels.iter().any(|p| !p.compares) || panels.is_empty();
    let compares = panels.iter().any(|p| p.compares);
    let mut out = Vec::new();
    if same {
        out.push(LegendEntry::new(
            "CI above 0: saw the delay",
            BLUE,
            Line::Solid,
            Marker::Circle,
        ));
        out.push(LegendEntry::new(
            "CI covers 0",
            GREY,
            Line::Solid,
            Marker::Circle,
        ));
        out.push(LegendEntry::new(
            "CI below 0: reversed",
            VERMILLION,
            Line::Solid,
            Marker::Circle,
        ));
    }
    if compares {
        let word = |d| direction_word(d);
        out.push(LegendEntry::new(
            format!("CI below 0: {}", word(Direction::Faster)),
            FASTER,
            Line::Solid,
            Marker::Circle,
        ));
        if !same {
            out.push(LegendEntry::new(
                format!("CI covers 0: {}", word(Direction::NoDifference)),
                GREY,
                Line::Solid,
                Marker::Circle,
            ));
        }
        out.push(LegendEntry::new(
            format!("CI above 0: {}", word(Direction::Slower)),
            SLOWER,
            Line::Solid,
            Marker::Circle,
        ));
    }
    out.push(LegendEntry::new(
        "true delay d",
        GREEN,
        Line::Dashed,
        Marker::None,
    ));
    out.push(LegendEntry::new(
        "zero (an arrow where it is off the range)",
        BLACK,
        Line::Solid,
        Marker::None,
    ));
    out
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
    let (lo, hi) = finite.fold((d, d), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (lo, hi) = with_zero_near(lo, hi);
    Axis::new(lo, hi, 0.06, unit_of)
}

fn panel(area: &Area<'_>, p: &Panel<'_>, ci: &str, unit_of: f64) -> DrawResult {
    let c = p.cell;
    let x = x_axis(c, Some(unit_of));
    let rows: Vec<ForkRow> = c
        .forks
        .iter()
        .map(|f| ForkRow {
            fork: f.fork,
            estimate: f.median_ns,
            interval: f.ci_ns,
            color: fork_color(f.verdict, p.compares),
        })
        .collect();
    let top = fork_rows::top(rows.len());
    let d = c.delay_ns as f64;
    let desc = format!("median D and {ci} CI ({})", x.unit);
    fork_rows::draw(area, &x, &desc, &rows, |chart| {
        chart.draw_series(DashedLineSeries::new(
            vec![(d, BOTTOM), (d, top)],
            6,
            4,
            GREEN.stroke_width(2),
        ))?;
        Ok(())
    })
}
