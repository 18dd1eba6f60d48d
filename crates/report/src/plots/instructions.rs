//! `instructions.svg`, a run that counts (`design.measure`): one panel per
//! cell with counted pairs, one row per fork with its own instructions
//! ratio, median(treatment's counts) / median(baseline's) on its own
//! counted pairs, and that ratio's interval, on a log axis shared by every
//! panel, as `effect.svg` draws the speed ratio. The cell's ratio is a
//! band (its interval) around a line. A deterministic program's forks sit
//! on one line: the count does not move with the machine.

use super::axis::{with_zero_near, Axis};
use super::fork_rows::{self, ForkRow};
use super::layout::{panel_title, panel_titles};
use super::{svg, Area, DrawResult, Header, Input, LegendEntry, Line, Marker, Panel};
use super::{FASTER, GREY, SLOWER};
use crate::numbers::percent;
use plotters::prelude::*;
use runner_analysis::instructions::{CountDirection, CountEffect, Instructions};
use runner_core::error::Result;

const PANEL_WIDTH: u32 = 520;
const ROW: u32 = 18;

/// The panels with counts, in the report's order.
fn panels<'a>(input: &'a Input<'_>) -> Vec<(&'a Panel<'a>, &'a Instructions)> {
    input
        .panels
        .iter()
        .filter_map(|p| Some((p, p.cell.instructions.as_ref()?)))
        .collect()
}

/// Whether the run has counts to draw.
pub(super) fn drawn(input: &Input<'_>) -> bool {
    !panels(input).is_empty()
}

fn color(d: CountDirection) -> RGBColor {
    match d {
        CountDirection::Fewer => FASTER,
        CountDirection::More => SLOWER,
        CountDirection::NoDifference => GREY,
    }
}

fn word(d: CountDirection) -> &'static str {
    match d {
        CountDirection::Fewer => "fewer instructions",
        CountDirection::More => "more instructions",
        CountDirection::NoDifference => "no difference resolved",
    }
}

pub(super) fn render(input: &Input<'_>) -> Result<String> {
    let panels = panels(input);
    let confidence = input.analysis.confidence;
    let (cols, rows) = super::grid(panels.len());
    let forks_max = panels.iter().map(|(_, c)| c.forks.len()).max().unwrap_or(1) as u32;
    let width = PANEL_WIDTH * cols as u32;
    let entries = [
        CountDirection::Fewer,
        CountDirection::NoDifference,
        CountDirection::More,
    ]
    .map(|d| LegendEntry::new(word(d), color(d), Line::Solid, Marker::Circle));
    let band = LegendEntry::new("the cell's ratio", GREY, Line::Band, Marker::None);
    let header = Header {
        title: "Per-fork instructions ratio, treatment over baseline (log axis)".into(),
        notes: vec![format!(
            "Each fork's median count of the treatment's instructions over its own median baseline count, with its {} CI; the band: the cell's ratio.",
            percent(confidence)
        )],
        legend: entries.iter().chain([&band]).collect(),
    };
    let header_height = header.height(width);
    let parts: Vec<Vec<String>> = panels
        .iter()
        .map(|(p, c)| {
            let e = &c.effect;
            vec![
                p.title.clone(),
                format!(
                    "{} instructions, {} of {} forks {}",
                    crate::effect::percent_of(e.change, e.change_ci),
                    match e.direction {
                        CountDirection::Fewer => e.forks_fewer,
                        CountDirection::More => e.forks_more,
                        CountDirection::NoDifference => e.forks - e.forks_fewer - e.forks_more,
                    },
                    e.forks,
                    match e.direction {
                        CountDirection::NoDifference => "unresolved",
                        d => word(d),
                    }
                ),
            ]
        })
        .collect();
    let (titles, strip) = panel_titles(&parts, PANEL_WIDTH);
    let (lo, hi) = panels
        .iter()
        .flat_map(|(_, c)| {
            let forks = c.forks.iter().flat_map(|f| f.ratio_ci);
            forks.chain(c.effect.ratio_ci).chain([c.effect.ratio])
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
    svg(
        runner_folder::output::INSTRUCTIONS_PLOT,
        (width, height),
        |root| {
            let (top, body) = root.split_vertically(header_height);
            header.draw(&top, width)?;
            let areas = body.split_evenly((rows, cols));
            for (((_, c), lines), area) in panels.iter().zip(&titles).zip(areas.iter()) {
                let (title_area, chart_area) = area.split_vertically(strip);
                panel_title(&title_area, lines, PANEL_WIDTH)?;
                panel(&chart_area, c, &x)?;
            }
            Ok(())
        },
    )
}

fn panel(area: &Area<'_>, c: &Instructions, x: &Axis) -> DrawResult {
    let rows: Vec<ForkRow> = c
        .forks
        .iter()
        .map(|f| ForkRow {
            fork: f.fork,
            estimate: f.ratio.ln(),
            interval: [f.ratio_ci[0].ln(), f.ratio_ci[1].ln()],
            color: color(CountDirection::of_ratio(f.ratio_ci)),
        })
        .collect();
    let e: &CountEffect = &c.effect;
    let desc = "instructions ratio, treatment over baseline (log axis)";
    fork_rows::draw_ratio(
        area,
        x,
        desc,
        &rows,
        (e.ratio, e.ratio_ci),
        color(e.direction),
    )
}
