//! `distributions.svg`, a comparison's run times: one panel per cell, the
//! empirical distribution (ECDF) of every measured run of each arm, the
//! baseline and the treatment in two colours. Where the effect's figures
//! give one number and its interval, this shows what they summarise: a
//! shift of the whole curve, a change in its spread, a tail that only one
//! arm has, or two speeds (a step in the curve).
//!
//! The x axis of a panel runs from the 1st to the 99th percentile of the
//! panel's runs, in the unit that suits them: a few runs far out in the
//! tail would otherwise squeeze the body of both curves into a few pixels;
//! the runs left out are counted at the edge they lie beyond.
//! A curve holds at most [`STEPS`] steps (each at an order statistic),
//! which keeps the file small at any number of runs and is finer than a
//! pixel of the panel.

use super::axis::{Axis, Ticked};
use super::layout::{panel_title, panel_titles};
use super::{font, svg, Area, DrawResult, Header, Input, LegendEntry, Line, Marker, Panel};
use super::{BLUE, GREY, VERMILLION};
use crate::numbers::duration;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use runner_core::error::Result;
use runner_core::record::{PairRecord, Phase};
use std::collections::BTreeMap;

const PANEL_WIDTH: u32 = 520;
/// Margins 10 (right 20), label areas 64 (y) and 44 (x) around a plotting
/// area 240 px high.
const CHART_HEIGHT: u32 = 10 + 240 + 10 + 44;
/// The most steps one curve draws.
const STEPS: usize = 200;
/// The share of runs left off each end of a panel's x axis.
const TAIL: f64 = 0.01;

/// Each cell's measured runs, sorted: (baseline, treatment).
fn runs(pairs: &[PairRecord]) -> BTreeMap<u32, (Vec<u64>, Vec<u64>)> {
    let mut out: BTreeMap<u32, (Vec<u64>, Vec<u64>)> = BTreeMap::new();
    for p in pairs.iter().filter(|p| p.phase == Phase::Measure) {
        let (b, t) = out.entry(p.cell).or_default();
        b.push(p.baseline_ns);
        t.push(p.treatment_ns);
    }
    for (b, t) in out.values_mut() {
        b.sort_unstable();
        t.sort_unstable();
    }
    out
}

pub(super) fn render(input: &Input<'_>) -> Result<String> {
    let panels = &input.panels;
    let (cols, rows) = super::grid(panels.len());
    let width = PANEL_WIDTH * cols as u32;
    let runs = runs(input.pairs);
    let empty = (Vec::new(), Vec::new());
    let of = |p: &Panel<'_>| runs.get(&p.cell.cell).unwrap_or(&empty);
    let mut treatments: Vec<&str> = panels.iter().map(|p| p.treatment.as_str()).collect();
    treatments.sort_unstable();
    treatments.dedup();
    let treatment = match treatments.as_slice() {
        [one] => format!("treatment: {one}"),
        _ => "treatment: the variant in the panel's title".into(),
    };
    let entries = [
        LegendEntry::new(
            format!("baseline: {}", input.baseline),
            BLUE,
            Line::Solid,
            Marker::None,
        ),
        LegendEntry::new(treatment, VERMILLION, Line::Solid, Marker::None),
        LegendEntry::new(
            "share 0.5: where each curve crosses it is that arm's median",
            GREY,
            Line::Dotted,
            Marker::None,
        ),
    ];
    let header = Header {
        title: "Run times of both arms: the share of measured runs at or below each time".into(),
        notes: vec![
            "Each panel's x axis runs from the 1st to the 99th percentile of its runs; the runs beyond it are counted at each edge, in their arm's colour.".into(),
        ],
        legend: entries.iter().collect(),
    };
    let header_height = header.height(width);
    let parts: Vec<Vec<String>> = panels
        .iter()
        .map(|p| {
            let (b, t) = of(p);
            vec![
                p.title.clone(),
                format!(
                    "medians: {} {}, {} {}; {}",
                    input.baseline,
                    duration(median(b)),
                    p.treatment,
                    duration(median(t)),
                    match (b.len(), t.len()) {
                        (nb, nt) if nb == nt => format!("{nb} runs each"),
                        (nb, nt) => format!("{nb} and {nt} runs"),
                    }
                ),
            ]
        })
        .collect();
    let (titles, strip) = panel_titles(&parts, PANEL_WIDTH);
    let height = header_height + (strip + CHART_HEIGHT) * rows as u32;
    svg("distributions.svg", (width, height), |root| {
        let (top, body) = root.split_vertically(header_height);
        header.draw(&top, width)?;
        let areas = body.split_evenly((rows, cols));
        for ((p, lines), area) in panels.iter().zip(&titles).zip(areas.iter()) {
            let (title_area, chart_area) = area.split_vertically(strip);
            panel_title(&title_area, lines, PANEL_WIDTH)?;
            let (b, t) = of(p);
            panel(&chart_area, b, t)?;
        }
        Ok(())
    })
}

/// The median of sorted values; NaN for none.
fn median(sorted: &[u64]) -> f64 {
    runner_stats::quantile::median_sorted(sorted).unwrap_or(f64::NAN)
}

/// The run at share `q` of two sorted samples taken together (the nearest
/// index); NaN for none.
fn quantile(a: &[u64], b: &[u64], q: f64) -> f64 {
    let mut all: Vec<u64> = a.iter().chain(b).copied().collect();
    all.sort_unstable();
    runner_stats::quantile::nearest_index(&all, q).unwrap_or(f64::NAN)
}

/// The ECDF of `sorted` between `lo` and `hi` as a staircase: at most
/// [`STEPS`] steps, each rising at an order statistic to the share of runs
/// at or below it; flat from `lo` and to `hi`.
pub(super) fn ecdf(sorted: &[u64], lo: f64, hi: f64) -> Vec<(f64, f64)> {
    let n = sorted.len();
    if n == 0 {
        return Vec::new();
    }
    let share = |k: usize| k as f64 / n as f64;
    let mut level = share(sorted.partition_point(|&v| v as f64 <= lo));
    let mut out = vec![(lo, level)];
    let steps = n.min(STEPS);
    for s in 1..=steps {
        // The last run of step s: steps split the runs evenly.
        let i = (s * n).div_ceil(steps) - 1;
        let x = sorted[i] as f64;
        if x <= lo {
            continue;
        }
        if x >= hi {
            break;
        }
        let up = share(i + 1);
        match out.last_mut() {
            // Ties: the step at x rises further.
            Some(last) if last.0 == x => last.1 = up,
            _ => {
                out.push((x, level));
                out.push((x, up));
            }
        }
        level = up;
    }
    out.push((hi, level));
    out
}

fn panel(area: &Area<'_>, baseline: &[u64], treatment: &[u64]) -> DrawResult {
    let x = Axis::new(
        quantile(baseline, treatment, TAIL),
        quantile(baseline, treatment, 1.0 - TAIL),
        0.04,
        None,
    );
    let y_keys: Vec<f64> = (0..=5).map(|i| f64::from(i) / 5.0).collect();
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .margin_right(20)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(x.coord(), Ticked::new(-0.02..1.02, y_keys))?;
    let x_label = |v: &f64| x.label(*v);
    let y_label = |v: &f64| format!("{v:.1}");
    super::mesh(
        &mut chart,
        &x_label,
        &y_label,
        format!("run time ({})", x.unit),
        "share of runs at or below",
    )?;
    chart.draw_series(std::iter::once(DashedPathElement::new(
        vec![(x.lo, 0.5), (x.hi, 0.5)],
        2,
        3,
        GREY.stroke_width(1),
    )))?;
    for (runs, color) in [(baseline, BLUE), (treatment, VERMILLION)] {
        chart.draw_series(std::iter::once(PathElement::new(
            ecdf(runs, x.lo, x.hi),
            color.stroke_width(2),
        )))?;
    }
    // The runs the axis leaves out, counted at the edge they lie beyond,
    // in their arm's colour: a tail that one arm has is still seen.
    for (k, (runs, color)) in [(baseline, BLUE), (treatment, VERMILLION)]
        .into_iter()
        .enumerate()
    {
        let (below, above) = beyond(runs, x.lo, x.hi);
        let row = 0.08 * k as f64;
        for (count, edge, y, pos, arrow) in [
            (below, x.lo, 0.06 + row, HPos::Left, "← "),
            (above, x.hi, 0.94 - row, HPos::Right, ""),
        ] {
            if count == 0 {
                continue;
            }
            let text = if arrow.is_empty() {
                format!("{} beyond →", runs_word(count))
            } else {
                format!("{arrow}{} beyond", runs_word(count))
            };
            chart.draw_series(std::iter::once(Text::new(
                text,
                (edge, y),
                font(13).color(&color).pos(Pos::new(pos, VPos::Center)),
            )))?;
        }
    }
    Ok(())
}

/// How many of `sorted` lie below `lo` and above `hi`.
pub(super) fn beyond(sorted: &[u64], lo: f64, hi: f64) -> (usize, usize) {
    let below = sorted.partition_point(|&v| (v as f64) < lo);
    let above = sorted.len() - sorted.partition_point(|&v| (v as f64) <= hi);
    (below, above)
}

fn runs_word(n: usize) -> String {
    if n == 1 {
        "1 run".into()
    } else {
        format!("{n} runs")
    }
}
