//! `effect.svg`, a comparison's per-fork effect: one panel per compared
//! cell (each variant, each swept cell, ranked as the Finding ranks them),
//! one row per fork with its own speed ratio, median(treatment) /
//! median(baseline) on its own runs, and that ratio's interval, on a log
//! axis shared by every panel. Each fork is on its own baseline, so forks
//! that ran at different speeds line up whenever their treatments agree;
//! the log axis puts a 2x win and a 2x loss equally far from 1. The cell's
//! ratio is drawn as a band (its interval) around a line (its estimate).
//! Colours and words say faster, slower or no difference resolved, as
//! `report::effect` does; 1x is the line of no change.

use super::axis::{with_zero_near, Axis};
use super::fork_rows::{self, ForkRow};
use super::layout::{panel_title, panel_titles};
use super::{fork_color, svg, Area, DrawResult, Header, Input, LegendEntry, Line, Marker, Panel};
use super::{FASTER, GREY, SLOWER};
use crate::effect::{direction_word, interval_name, text};
use crate::numbers::percent;
use plotters::prelude::*;
use runner_analysis::effect::{Direction, Effect, IntervalKind};
use runner_analysis::Verdict;
use runner_core::error::Result;

const PANEL_WIDTH: u32 = 520;
const ROW: u32 = 18;

pub(super) fn render(input: &Input<'_>) -> Result<String> {
    // Ranked as the Finding's table: fastest treatment first.
    let mut panels: Vec<&Panel<'_>> = input.panels.iter().collect();
    panels.sort_by(|a, b| {
        (a.cell.effect.ratio)
            .total_cmp(&b.cell.effect.ratio)
            .then(a.cell.cell.cmp(&b.cell.cell))
    });
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
        intervals.push(interval_name(IntervalKind::Forks, confidence));
    }
    let entries = [
        LegendEntry::new(
            direction_word(Direction::Faster),
            FASTER,
            Line::Solid,
            Marker::Circle,
        ),
        LegendEntry::new(
            direction_word(Direction::NoDifference),
            GREY,
            Line::Solid,
            Marker::Circle,
        ),
        LegendEntry::new(
            direction_word(Direction::Slower),
            SLOWER,
            Line::Solid,
            Marker::Circle,
        ),
        LegendEntry::new("the cell's ratio", GREY, Line::Band, Marker::None),
    ];
    let ci = percent(confidence);
    let header = Header {
        title: "Per-fork speed ratio, treatment over baseline (log axis)".into(),
        notes: vec![format!(
            "Each fork's median run of the treatment over its own median baseline run, with its {ci} CI; the band: the cell's ratio, {}.",
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
    // One axis for every panel, so variants compare at a glance.
    let (lo, hi) = effects
        .iter()
        .zip(panels.iter())
        .flat_map(|(e, p)| {
            let forks = p.cell.forks.iter().flat_map(|f| f.ratio_ci);
            forks.chain(e.ratio_ci).chain([e.ratio])
        })
        .map(f64::ln)
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    let (lo, hi) = if lo <= hi {
        with_zero_near(lo, hi)
    } else {
        (0.0, 0.0)
    };
    let x = Axis::ratio(lo, hi, 0.06);
    let panel_height = strip + 100 + ROW * (forks_max + 1);
    let height = header_height + panel_height * rows as u32;
    svg("effect.svg", (width, height), |root| {
        let (top, body) = root.split_vertically(header_height);
        header.draw(&top, width)?;
        let areas = body.split_evenly((rows, cols));
        for (((p, e), lines), area) in panels.iter().zip(&effects).zip(&titles).zip(areas.iter()) {
            let (title_area, chart_area) = area.split_vertically(strip);
            panel_title(&title_area, lines, PANEL_WIDTH)?;
            panel(&chart_area, p, e, &x)?;
        }
        Ok(())
    })
}

/// The direction's colour.
fn color(d: Direction) -> RGBColor {
    match d {
        Direction::Faster => FASTER,
        Direction::Slower => SLOWER,
        Direction::NoDifference => GREY,
    }
}

fn panel(area: &Area<'_>, p: &Panel<'_>, e: &Effect, x: &Axis) -> DrawResult {
    let rows: Vec<ForkRow> = p
        .cell
        .forks
        .iter()
        .map(|f| {
            let said = Direction::of_ratio(f.ratio_ci);
            let verdict = match said {
                Direction::Faster => Verdict::Reversed,
                Direction::Slower => Verdict::Seen,
                Direction::NoDifference => Verdict::NotSeen,
            };
            ForkRow {
                fork: f.fork,
                estimate: f.ratio.ln(),
                interval: [f.ratio_ci[0].ln(), f.ratio_ci[1].ln()],
                color: fork_color(verdict, true),
            }
        })
        .collect();
    let desc = "speed ratio, treatment over baseline (log axis)";
    fork_rows::draw_ratio(
        area,
        x,
        desc,
        &rows,
        (e.ratio, e.ratio_ci),
        color(e.direction),
    )
}
