//! `clients.svg`, a comparison swept over concurrent clients (`[grid]
//! clients = [1, 4, 8]`): the speed ratio of each cell against its number
//! of clients, one point with its interval per level, on a log axis. The
//! Finding gives the same ratios as rows; this shows how the effect grows
//! or shrinks with contention. Cells that differ in anything else (a
//! variant, another swept key) are series of their own.

use super::axis::{Axis, Ticked};
use super::layout::{Header, LegendEntry, Line, Marker};
use super::{svg, Input, PALETTE};
use plotters::prelude::*;
use runner_core::error::Result;
use runner_spec::CLIENTS_KEY;

const WIDTH: u32 = 620;
/// Margins 10 (right 20), label areas 72 (y) and 48 (x) around a plotting
/// area 260 px high.
const CHART_HEIGHT: u32 = 10 + 260 + 10 + 48;

/// One series: the cells alike but for their clients, as (level index, ln
/// ratio, ln interval).
struct Series {
    name: String,
    points: Vec<(usize, f64, [f64; 2])>,
}

/// The series of `input`'s cells, each point at the index of its level in
/// `input.clients`.
fn series(input: &Input<'_>) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for p in &input.panels {
        let params = &p.cell.params;
        let Some(n) = params.get(CLIENTS_KEY).and_then(|v| v.as_u64()) else {
            continue;
        };
        let Some(level) = input.clients.iter().position(|&c| u64::from(c) == n) else {
            continue;
        };
        let mut others = params.clone();
        others.remove(CLIENTS_KEY);
        others.remove(runner_plan::DELAY_KEY);
        let name = if others.is_empty() {
            format!("{} against {}", p.treatment, input.baseline)
        } else {
            crate::numbers::params(&others)
        };
        let e = &p.cell.effect;
        let point = (
            level,
            e.ratio.ln(),
            [e.ratio_ci[0].ln(), e.ratio_ci[1].ln()],
        );
        match out.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(point),
            None => out.push(Series {
                name,
                points: vec![point],
            }),
        }
    }
    out
}

pub(super) fn render(input: &Input<'_>) -> Result<String> {
    let series = series(input);
    let confidence = crate::numbers::percent(input.analysis.confidence);
    let entries: Vec<LegendEntry> = series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            LegendEntry::new(
                s.name.clone(),
                PALETTE[i % PALETTE.len()],
                Line::Solid,
                Marker::Circle,
            )
        })
        .collect();
    let header = Header {
        title: "Speed ratio against concurrent clients, treatment over baseline (log axis)"
            .into(),
        notes: vec![format!(
            "One point per cell: the cell's speed ratio from the Finding, with its {confidence} interval; both arms of a cell ran as that many clients. Below 1 the treatment is faster."
        )],
        legend: entries.iter().collect(),
    };
    let header_height = header.height(WIDTH);
    let values = series
        .iter()
        .flat_map(|s| s.points.iter().flat_map(|p| [p.1, p.2[0], p.2[1]]))
        .chain([0.0])
        .filter(|v| v.is_finite());
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let y = Axis::ratio(lo, hi, 0.08);
    let levels = input.clients.len();
    let x_keys: Vec<f64> = (1..=levels).map(|k| k as f64).collect();
    svg(
        "clients.svg",
        (WIDTH, header_height + CHART_HEIGHT),
        |root| {
            let (top, body) = root.split_vertically(header_height);
            header.draw(&top, WIDTH)?;
            let mut chart = ChartBuilder::on(&body)
                .margin(10)
                .margin_right(20)
                .x_label_area_size(48)
                .y_label_area_size(72)
                .build_cartesian_2d(Ticked::new(0.5..levels as f64 + 0.5, x_keys), y.coord())?;
            let x_label = |v: &f64| {
                let i = (v.round() as usize).wrapping_sub(1);
                input.clients.get(i).map_or(String::new(), u32::to_string)
            };
            let y_label = |v: &f64| y.label(*v);
            super::mesh(
                &mut chart,
                &x_label,
                &y_label,
                "concurrent clients per arm",
                "speed ratio",
            )?;
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(0.5, 0.0), (levels as f64 + 0.5, 0.0)],
                BLACK.stroke_width(1),
            )))?;
            let spread = 0.08;
            let middle = (series.len() as f64 - 1.0) / 2.0;
            for (i, s) in series.iter().enumerate() {
                let color = PALETTE[i % PALETTE.len()];
                let dx = (i as f64 - middle) * spread;
                let at = |level: usize| level as f64 + 1.0 + dx;
                let mut line: Vec<(f64, f64)> = s.points.iter().map(|p| (at(p.0), p.1)).collect();
                line.sort_by(|a, b| a.0.total_cmp(&b.0));
                chart.draw_series(std::iter::once(PathElement::new(
                    line,
                    color.stroke_width(1),
                )))?;
                for &(level, estimate, interval) in &s.points {
                    let x = at(level);
                    chart.draw_series(std::iter::once(PathElement::new(
                        vec![(x, interval[0]), (x, interval[1])],
                        color.stroke_width(2),
                    )))?;
                    chart.draw_series(std::iter::once(Circle::new(
                        (x, estimate),
                        4,
                        color.filled(),
                    )))?;
                }
            }
            Ok(())
        },
    )
}
