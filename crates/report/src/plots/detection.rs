//! `detection.svg`: the share of forks whose CI saw the delay, against the
//! true delay, beside the share of two-separate-runs comparisons that
//! pointed the right way. One set of marks per headline group.
//!
//! The x axis is categorical (one step per grid value), and in an A/A
//! experiment d = 0 is a different quantity from every other step: a
//! false-positive rate, not a detection rate. So d = 0 stands apart: a
//! hollow marker for the share of forks that reported a difference either
//! way (seen or reversed), a dotted reference at the rate the confidence
//! level allows, and no line joining it to the detection rates. The
//! two-separate-runs line has no point there, since with no delay no
//! direction is right; the legend says so, and gives n for each share.

use super::axis::{delay_us_label, Ticked};
use super::layout::{legend, legend_rows};
use super::{font, svg, LegendEntry, Line, Marker, GREY, PALETTE, VERMILLION};
use crate::numbers::percent;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use runner_analysis::{Analysis, CellAnalysis};
use runner_core::error::Result;

const WIDTH: u32 = 760;
const CHART_HEIGHT: u32 = 420;
/// The legend starts under the plotting area.
const LEGEND_X: i32 = 76;

/// What a series draws: a line through its points, or marks alone.
pub(super) struct Series {
    pub entry: LegendEntry,
    pub points: Vec<(f64, f64)>,
}

pub(super) fn render(input: &super::Input<'_>) -> Result<String> {
    let (a, aa) = (input.analysis, input.aa);
    let mut delays: Vec<u64> = a.cells.iter().map(|c| c.delay_ns).collect();
    delays.sort_unstable();
    delays.dedup();
    let x_of = |d: u64| delays.binary_search(&d).unwrap_or(0) as f64;
    let zero_apart = aa && delays.first() == Some(&0) && delays.len() > 1;
    let series = series(a, &x_of, aa, &input.groups);
    let reference = (aa && delays.first() == Some(&0)).then(|| LegendEntry {
        label: format!(
            "{}: false positives that {} confidence allows",
            percent(1.0 - a.confidence),
            percent(a.confidence)
        ),
        color: GREY,
        line: Line::Dotted,
        marker: Marker::None,
    });
    let mut entries: Vec<&LegendEntry> = series.iter().map(|s| &s.entry).collect();
    entries.extend(reference.as_ref());
    let rows = legend_rows(&entries, LEGEND_X, WIDTH as i32 - 12);
    let height = CHART_HEIGHT + 16 + 20 * rows;
    let n = delays.len().max(1) as f64;
    svg("detection.svg", (WIDTH, height), |root| {
        let (top, bottom) = root.split_vertically(CHART_HEIGHT);
        let x_keys: Vec<f64> = (0..delays.len()).map(|i| i as f64).collect();
        let y_keys: Vec<f64> = (0..=5).map(|i| f64::from(i) / 5.0).collect();
        let mut chart = ChartBuilder::on(&top)
            .caption("Detection: share that saw the true delay", font(22))
            .margin(12)
            .margin_right(24)
            .x_label_area_size(48)
            .y_label_area_size(64)
            .build_cartesian_2d(
                Ticked::new(-0.5..n - 0.5, x_keys),
                Ticked::new(-0.03..1.03, y_keys),
            )?;
        let x_label = |v: &f64| {
            let i = v.round();
            if i >= 0.0 && (i as usize) < delays.len() {
                delay_us_label(delays[i as usize])
            } else {
                String::new()
            }
        };
        let y_label = |v: &f64| format!("{v:.1}");
        super::mesh(
            &mut chart,
            &x_label,
            &y_label,
            "true delay d (µs), one step per grid value",
            "share (0 to 1)",
        )?;
        if zero_apart {
            // d = 0 is another quantity: set it apart from the delays.
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(0.5, -0.03), (0.5, 1.03)],
                GREY.stroke_width(1),
            )))?;
        }
        if let Some(r) = &reference {
            let y = 1.0 - a.confidence;
            chart.draw_series(std::iter::once(DashedPathElement::new(
                vec![(-0.45, y), (0.45, y)],
                2,
                3,
                r.color.stroke_width(2),
            )))?;
        }
        for s in &series {
            let style = ShapeStyle::from(&s.entry.color).stroke_width(2);
            match s.entry.line {
                Line::Dashed => {
                    chart.draw_series(DashedLineSeries::new(s.points.clone(), 6, 4, style))?;
                }
                Line::Solid => {
                    chart.draw_series(LineSeries::new(s.points.clone(), style))?;
                }
                Line::Dotted | Line::Band | Line::None => {}
            }
            let c = s.entry.color;
            match s.entry.marker {
                Marker::Circle => {
                    chart.draw_series(s.points.iter().map(|p| Circle::new(*p, 4, c.filled())))?;
                }
                Marker::HollowCircle => {
                    chart.draw_series(
                        s.points
                            .iter()
                            .map(|p| Circle::new(*p, 5, c.stroke_width(2))),
                    )?;
                }
                Marker::Triangle => {
                    chart.draw_series(
                        s.points
                            .iter()
                            .map(|p| TriangleMarker::new(*p, 6, c.filled())),
                    )?;
                }
                Marker::None => {}
            }
        }
        legend(&bottom, &entries, LEGEND_X, 12, WIDTH as i32 - 12)
    })
}

/// `n = 10`, or `n = 9 to 10` when the cells differ.
fn n_label(counts: impl Iterator<Item = u32>) -> String {
    let counts: Vec<u32> = counts.collect();
    match (counts.iter().min(), counts.iter().max()) {
        (Some(lo), Some(hi)) if lo == hi => format!("n = {lo}"),
        (Some(lo), Some(hi)) => format!("n = {lo} to {hi}"),
        _ => "n = 0".into(),
    }
}

/// Per group (`groups` names each): the forks series (in an A/A experiment d > 0 only, with
/// d = 0 as its own false-positive mark), and the cross-runs series when
/// any cell with d > 0 made a comparison (one fork per cell makes none).
pub(super) fn series(
    a: &Analysis,
    x_of: &dyn Fn(u64) -> f64,
    aa: bool,
    groups: &[String],
) -> Vec<Series> {
    let many = a.headline.groups.len() > 1;
    let mut out = Vec::new();
    for (i, g) in a.headline.groups.iter().enumerate() {
        // One group: a colour per series; several: a colour per group and
        // the line style tells the series apart.
        let color = PALETTE[i % PALETTE.len()];
        let cross_color = if many { color } else { VERMILLION };
        let cells: Vec<&CellAnalysis> = g
            .cells
            .iter()
            .filter_map(|id| a.cells.iter().find(|c| c.cell == *id))
            .filter(|c| c.forks_total > 0)
            .collect();
        let suffix = if many {
            format!(", {}", groups.get(i).map_or("", String::as_str))
        } else {
            String::new()
        };
        let (zero, detect): (Vec<&CellAnalysis>, Vec<&CellAnalysis>) =
            cells.iter().partition(|c| aa && c.delay_ns == 0);
        let share = |k: u32, n: u32| f64::from(k) / f64::from(n);
        out.push(Series {
            entry: LegendEntry {
                label: format!(
                    "forks whose CI was above 0 ({} per delay{suffix})",
                    n_label(detect.iter().map(|c| c.forks_total))
                ),
                color,
                line: Line::Solid,
                marker: Marker::Circle,
            },
            points: detect
                .iter()
                .map(|c| (x_of(c.delay_ns), share(c.forks_seen, c.forks_total)))
                .collect(),
        });
        if !zero.is_empty() {
            out.push(Series {
                entry: LegendEntry {
                    label: format!(
                        "d = 0: forks with a false difference, seen or reversed ({}{suffix})",
                        n_label(zero.iter().map(|c| c.forks_total))
                    ),
                    color,
                    line: Line::None,
                    marker: Marker::HollowCircle,
                },
                points: zero
                    .iter()
                    .map(|c| {
                        let false_ = c.forks_seen + c.forks_reversed;
                        (x_of(0), share(false_, c.forks_total))
                    })
                    .collect(),
            });
        }
        let compared: Vec<&&CellAnalysis> = cells
            .iter()
            .filter(|c| c.delay_ns > 0 && c.cross_runs.comparisons > 0)
            .filter(|c| c.cross_runs.correct.is_some())
            .collect();
        if !compared.is_empty() {
            out.push(Series {
                entry: LegendEntry {
                    label: format!(
                        "two separate runs pointing the right way ({}; none at d = 0: no way is right{suffix})",
                        n_label(compared.iter().map(|c| c.cross_runs.comparisons))
                    ),
                    color: cross_color,
                    line: Line::Dashed,
                    marker: Marker::Triangle,
                },
                points: compared
                    .iter()
                    .map(|c| {
                        let right = c.cross_runs.correct.unwrap_or(0);
                        (x_of(c.delay_ns), share(right, c.cross_runs.comparisons))
                    })
                    .collect(),
            });
        }
    }
    out
}
