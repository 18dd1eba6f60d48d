//! `detection.svg`: the share of forks whose CI saw the delay, against the
//! true delay, beside the share of two-separate-runs comparisons that
//! pointed the right way. One pair of lines per headline group.

use super::axis::{delay_us_label, Ticked};
use super::{
    font, legend, legend_rows, params_label, svg, LegendEntry, Marker, GRID, PALETTE, VERMILLION,
};
use crate::analysis::{Analysis, CellAnalysis};
use crate::error::Result;
use plotters::prelude::*;

const WIDTH: u32 = 760;
const CHART_HEIGHT: u32 = 420;
/// The legend starts under the plotting area.
const LEGEND_X: i32 = 76;

struct Series {
    entry: LegendEntry,
    points: Vec<(f64, f64)>,
}

pub(super) fn render(a: &Analysis) -> Result<String> {
    let mut delays: Vec<u64> = a.cells.iter().map(|c| c.delay_ns).collect();
    delays.sort_unstable();
    delays.dedup();
    let x_of = |d: u64| delays.binary_search(&d).unwrap_or(0) as f64;
    let series = series(a, &x_of);
    let entries: Vec<&LegendEntry> = series.iter().map(|s| &s.entry).collect();
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
        chart
            .configure_mesh()
            .bold_line_style(GRID)
            .x_label_formatter(&x_label)
            .y_label_formatter(&y_label)
            .x_desc("true delay d (µs), one step per grid value")
            .y_desc("share (0 to 1)")
            .label_style(font(15))
            .axis_desc_style(font(16))
            .draw()?;
        for s in &series {
            let style = ShapeStyle::from(&s.entry.color).stroke_width(2);
            if s.entry.dashed {
                chart.draw_series(DashedLineSeries::new(s.points.clone(), 6, 4, style))?;
                chart.draw_series(
                    s.points
                        .iter()
                        .map(|p| TriangleMarker::new(*p, 6, s.entry.color.filled())),
                )?;
            } else {
                chart.draw_series(LineSeries::new(s.points.clone(), style))?;
                chart.draw_series(
                    s.points
                        .iter()
                        .map(|p| Circle::new(*p, 4, s.entry.color.filled())),
                )?;
            }
        }
        legend(&bottom, &entries, LEGEND_X, 12, WIDTH as i32 - 12)
    })
}

/// Per group: the forks series, and the cross-runs series when any cell
/// with d > 0 made a comparison (one fork per cell makes none).
fn series(a: &Analysis, x_of: &dyn Fn(u64) -> f64) -> Vec<Series> {
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
            .collect();
        let suffix = if many {
            format!(" ({})", params_label(&g.params))
        } else {
            String::new()
        };
        let forks: Vec<(f64, f64)> = cells
            .iter()
            .filter(|c| c.forks_total > 0)
            .map(|c| {
                let share = f64::from(c.forks_seen) / f64::from(c.forks_total);
                (x_of(c.delay_ns), share)
            })
            .collect();
        let cross: Vec<(f64, f64)> = cells
            .iter()
            .filter(|c| c.delay_ns > 0 && c.cross_runs.comparisons > 0)
            .filter_map(|c| {
                let right = f64::from(c.cross_runs.correct?);
                Some((
                    x_of(c.delay_ns),
                    right / f64::from(c.cross_runs.comparisons),
                ))
            })
            .collect();
        out.push(Series {
            entry: LegendEntry {
                label: format!("forks whose CI was above 0{suffix}"),
                color,
                dashed: false,
                marker: Marker::Circle,
            },
            points: forks,
        });
        if !cross.is_empty() {
            out.push(Series {
                entry: LegendEntry {
                    label: format!("two separate runs pointing the right way{suffix}"),
                    color: cross_color,
                    dashed: true,
                    marker: Marker::Triangle,
                },
                points: cross,
            });
        }
    }
    out
}
