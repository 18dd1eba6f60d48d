//! Trend plots over a report's committed versions (`runner history`):
//! one panel per cell, the versions in commit order along x, each series
//! a point with its interval (or range) per version, and vertical lines
//! where the history marks a change (solid black, apart from every
//! series' colour) or a machine or spec change (dashed grey). The caller gives the numbers; this file only draws, so
//! the history's rule and the report's plots stay apart.

use super::axis::{Axis, Ticked};
use super::layout::{panel_title, panel_titles, Header, LegendEntry, Line, Marker};
use super::{svg, Area, DrawResult};
use super::{GREY, PALETTE};
use plotters::prelude::*;
use runner_core::error::Result;

/// What the y values are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Durations in ns, labelled in the unit that suits them.
    Time,
    /// Percent.
    Percent,
}

/// One version's value of a series: the point and its interval or range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// The version's number (1 = oldest shown).
    pub x: u32,
    pub y: f64,
    pub lo: f64,
    pub hi: f64,
}

/// A vertical line between version `x - 1` and `x`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Change(u32),
    Boundary(u32),
}

pub struct Panel {
    pub title: String,
    /// One list of points per series, in the order of `Trend::series`.
    pub series: Vec<Vec<Point>>,
    pub marks: Vec<Mark>,
}

pub struct Trend {
    pub file: &'static str,
    pub title: String,
    pub y_label: String,
    pub scale: Scale,
    /// Each series' legend label.
    pub series: Vec<String>,
    /// Versions along x: 1..=versions.
    pub versions: u32,
    pub panels: Vec<Panel>,
}

const PANEL_WIDTH: u32 = 760;
/// The chart under a panel's title strip.
const CHART_HEIGHT: u32 = 330;

/// Draws `t` as an SVG document.
pub fn render(t: &Trend) -> Result<String> {
    let rows = t.panels.len().max(1) as u32;
    let mut entries: Vec<LegendEntry> = t
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            LegendEntry::new(
                s.clone(),
                PALETTE[i % PALETTE.len()],
                Line::Solid,
                Marker::Circle,
            )
        })
        .collect();
    entries.push(LegendEntry::new(
        "change marked",
        BLACK,
        Line::Solid,
        Marker::None,
    ));
    entries.push(LegendEntry::new(
        "machine or spec changed",
        GREY,
        Line::Dashed,
        Marker::None,
    ));
    let header = Header {
        title: t.title.clone(),
        notes: Vec::new(),
        legend: entries.iter().collect(),
    };
    let header_height = header.height(PANEL_WIDTH);
    let (titles, strip) = panel_titles(
        &t.panels
            .iter()
            .map(|p| vec![p.title.clone()])
            .collect::<Vec<_>>(),
        PANEL_WIDTH,
    );
    let height = header_height + (strip + CHART_HEIGHT) * rows;
    svg(t.file, (PANEL_WIDTH, height), |root| {
        let (top, body) = root.split_vertically(header_height);
        header.draw(&top, PANEL_WIDTH)?;
        let areas = body.split_evenly((rows as usize, 1));
        for ((p, lines), area) in t.panels.iter().zip(&titles).zip(areas.iter()) {
            let (title_area, chart_area) = area.split_vertically(strip);
            panel_title(&title_area, lines, PANEL_WIDTH)?;
            panel(&chart_area, t, p)?;
        }
        Ok(())
    })
}

fn y_range(t: &Trend, p: &Panel) -> (f64, f64) {
    let (lo, hi) = p
        .series
        .iter()
        .flatten()
        .flat_map(|q| [q.lo, q.hi, q.y])
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    match t.scale {
        // Zero stays in view for an effect, so its sign reads at a glance.
        Scale::Percent => (lo.min(0.0), hi.max(0.0)),
        // Times are never negative.
        Scale::Time => (lo.max(0.0), hi),
    }
}

fn panel(area: &Area<'_>, t: &Trend, p: &Panel) -> DrawResult {
    let (lo, hi) = y_range(t, p);
    let y = match t.scale {
        Scale::Time => Axis::new(lo, hi, 0.08, None),
        // Percent: the axis's nice ticks on plain numbers (its "ns" unit,
        // a divisor of 1, is not printed: the label says %).
        Scale::Percent => Axis::new(lo, hi, 0.08, Some(0.0)),
    };
    let n = t.versions.max(1);
    let x_ticks: Vec<f64> = {
        let step = n.div_ceil(12).max(1);
        (1..=n)
            .filter(|v| (v - 1) % step == 0)
            .map(f64::from)
            .collect()
    };
    let x = Ticked::new(0.5..f64::from(n) + 0.5, x_ticks);
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .margin_right(24)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(x, y.coord())?;
    let y_label = |v: &f64| y.label(*v);
    let unit = match t.scale {
        Scale::Time => format!("{} ({})", t.y_label, y.unit),
        Scale::Percent => format!("{} (%)", t.y_label),
    };
    super::mesh(
        &mut chart,
        &|v: &f64| format!("{v:.0}"),
        &y_label,
        "version (oldest first)",
        unit,
    )?;
    if t.scale == Scale::Percent && y.lo < 0.0 && y.hi > 0.0 {
        chart.draw_series(LineSeries::new(
            vec![(0.5, 0.0), (f64::from(n) + 0.5, 0.0)],
            BLACK.stroke_width(1),
        ))?;
    }
    for m in &p.marks {
        let (at, style, dashed) = match *m {
            Mark::Change(v) => (v, BLACK.stroke_width(2), false),
            Mark::Boundary(v) => (v, GREY.stroke_width(2), true),
        };
        let xv = f64::from(at) - 0.5;
        let line = vec![(xv, y.lo), (xv, y.hi)];
        if dashed {
            chart.draw_series(DashedLineSeries::new(line, 5, 4, style))?;
        } else {
            chart.draw_series(LineSeries::new(line, style))?;
        }
    }
    // Several series side by side within a version, so their bars do not hide each other.
    let k = p.series.len().max(1) as f64;
    for (i, points) in p.series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let dx = if k > 1.0 {
            (i as f64 - (k - 1.0) / 2.0) * 0.12
        } else {
            0.0
        };
        let ok: Vec<&Point> = points.iter().filter(|q| q.y.is_finite()).collect();
        chart.draw_series(ok.iter().map(|q| {
            let xv = f64::from(q.x) + dx;
            PathElement::new(vec![(xv, q.lo), (xv, q.hi)], color.stroke_width(2))
        }))?;
        chart.draw_series(LineSeries::new(
            ok.iter().map(|q| (f64::from(q.x) + dx, q.y)),
            color.mix(0.5).stroke_width(1),
        ))?;
        chart.draw_series(
            ok.iter()
                .map(|q| Circle::new((f64::from(q.x) + dx, q.y), 4, color.filled())),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trend(scale: Scale) -> Trend {
        let point = |x: u32, y: f64| Point {
            x,
            y,
            lo: y - 1.0,
            hi: y + 1.0,
        };
        Trend {
            file: "t.svg",
            title: "A trend".into(),
            y_label: "value".into(),
            scale,
            series: vec!["one".into(), "two".into()],
            versions: 3,
            panels: vec![Panel {
                title: "cell A".into(),
                series: vec![
                    vec![point(1, 10.0), point(2, 11.0), point(3, 30.0)],
                    vec![point(1, 5.0), point(3, f64::NAN)],
                ],
                marks: vec![Mark::Change(3), Mark::Boundary(2)],
            }],
        }
    }

    #[test]
    fn every_point_and_mark_is_drawn_and_the_bytes_repeat() {
        for scale in [Scale::Time, Scale::Percent] {
            let svg = render(&trend(scale)).unwrap();
            assert!(svg.starts_with("<svg"), "{scale:?}");
            assert!(svg.contains("cell A") && svg.contains("change marked"));
            // Four finite points, plus the two series' legend markers; the
            // NaN point is left out.
            assert_eq!(svg.matches("<circle").count(), 4 + 2, "{scale:?}");
            assert_eq!(svg, render(&trend(scale)).unwrap());
        }
        let svg = render(&trend(Scale::Percent)).unwrap();
        assert!(svg.contains("value (%)"), "{svg}");
    }
}
