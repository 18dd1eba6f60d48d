//! The plots beside `report.md` (docs/guide/output-folder.md and templates/README.md), drawn with
//! `plotters` into SVG from the analysis alone, so `runner report`
//! redraws them byte for byte.
//!
//! Text: plotters is built without a font feature, so its SVG backend writes
//! each label as an SVG `<text>` element in the generic `sans-serif` family
//! and the viewer (GitHub, a browser) renders it. Nothing reads a system
//! font or lays out glyphs at build time, which is also what keeps the bytes
//! identical across machines; label widths are plotters' own estimate, so
//! the layouts below leave generous room for labels.

mod axis;
mod detection;
mod forest;
mod medians;

use crate::analysis::{Analysis, CellAnalysis};
use crate::error::{run_failed, Result};

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// The files `write_all` writes, in the order the report shows them.
pub use crate::output::PLOT_FILES as FILES;

/// Draws every plot of `analysis` as `(file name, SVG text)`.
/// `aa`: both arms run the same strategy, so d = 0 measures false positives.
pub fn render_all(analysis: &Analysis, aa: bool) -> Result<Vec<(&'static str, String)>> {
    Ok(vec![
        (FILES[0], detection::render(analysis, aa)?),
        (FILES[1], forest::render(analysis)?),
        (FILES[2], medians::render(analysis)?),
    ])
}

/// Writes every plot into `dir`.
pub fn write_all(dir: &Path, analysis: &Analysis, aa: bool) -> Result<()> {
    for (name, svg) in render_all(analysis, aa)? {
        crate::output::guard::write(&dir.join(name), svg.as_bytes())?;
    }
    Ok(())
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type DrawResult = std::result::Result<(), DrawingAreaErrorKind<std::io::Error>>;

/// Runs `draw` on a white SVG canvas and returns the document.
fn svg(name: &str, size: (u32, u32), draw: impl FnOnce(&Area<'_>) -> DrawResult) -> Result<String> {
    let fail =
        |e: DrawingAreaErrorKind<std::io::Error>| run_failed(format!("cannot draw {name}: {e}"));
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE).map_err(fail)?;
        draw(&root).map_err(fail)?;
        root.present().map_err(fail)?;
    }
    Ok(out)
}

// Okabe & Ito's colour-blind-safe palette.
const BLUE: RGBColor = RGBColor(0, 114, 178);
const VERMILLION: RGBColor = RGBColor(213, 94, 0);
const GREEN: RGBColor = RGBColor(0, 158, 115);
const PURPLE: RGBColor = RGBColor(204, 121, 167);
const SKY: RGBColor = RGBColor(86, 180, 233);
const GREY: RGBColor = RGBColor(150, 150, 150);
const GRID: RGBColor = RGBColor(225, 225, 225);
const PALETTE: [RGBColor; 5] = [BLUE, VERMILLION, GREEN, PURPLE, SKY];

fn font(size: u32) -> TextStyle<'static> {
    ("sans-serif", size).into_font().color(&BLACK)
}

use super::format::params as params_label;

/// The cells that have forks, and the title of each one's panel: its delay,
/// plus its other params when the grid sweeps more than the delay.
fn panels(a: &Analysis) -> Vec<(&CellAnalysis, String)> {
    let many = a.headline.groups.len() > 1;
    a.cells
        .iter()
        .filter(|c| !c.forks.is_empty())
        .map(|c| {
            let mut title = format!("d = {}", super::format::delay(c.delay_ns as f64));
            if many {
                let others = crate::plan::group_params(&c.params);
                title.push_str(&format!(", {}", params_label(&others)));
            }
            (c, title)
        })
        .collect()
}

/// Columns and rows for `n` small panels.
fn grid(n: usize) -> (usize, usize) {
    let cols = match n {
        0 | 1 => 1,
        2..=8 => 2,
        9..=18 => 3,
        _ => 4,
    };
    (cols, n.max(1).div_ceil(cols))
}

/// The mark drawn on a legend entry's sample.
#[derive(Clone, Copy)]
enum Marker {
    Circle,
    /// An open circle: the d = 0 false-positive point of `detection.svg`.
    HollowCircle,
    Triangle,
    None,
}

/// The line of a legend entry's sample.
#[derive(Clone, Copy, PartialEq)]
enum Line {
    Solid,
    Dashed,
    Dotted,
    /// The marker alone, as the points it stands for are drawn.
    None,
}

/// One legend entry: a line sample, a marker, the label.
struct LegendEntry {
    label: String,
    color: RGBColor,
    line: Line,
    marker: Marker,
}

/// Where each legend entry goes: `(x, row)`, left to right from `x0`,
/// wrapping before `width` (pixels; widths are plotters' 0.7 em per byte).
fn legend_layout(entries: &[&LegendEntry], x0: i32, width: i32) -> Vec<(i32, i32)> {
    let (mut x, mut row) = (x0, 0);
    let mut out = Vec::new();
    for e in entries {
        let w = 44 + (e.label.len() as i32) * 7 + 28;
        if x > x0 && x + w > width {
            x = x0;
            row += 1;
        }
        out.push((x, row));
        x += w;
    }
    out
}

/// How many rows `legend` needs.
fn legend_rows(entries: &[&LegendEntry], x0: i32, width: i32) -> u32 {
    legend_layout(entries, x0, width)
        .last()
        .map_or(0, |(_, row)| *row as u32 + 1)
}

/// Draws the legend on `area`, first row centred on `y0`, rows 20 px apart.
fn legend(area: &Area<'_>, entries: &[&LegendEntry], x0: i32, y0: i32, width: i32) -> DrawResult {
    for (e, (x, row)) in entries.iter().zip(legend_layout(entries, x0, width)) {
        let y = y0 + 20 * row;
        let style = ShapeStyle::from(&e.color).stroke_width(2);
        let sample = vec![(x, y), (x + 36, y)];
        match e.line {
            Line::Solid => area.draw(&PathElement::new(sample, style))?,
            Line::Dashed => area.draw(&DashedPathElement::new(sample, 5, 3, style))?,
            Line::Dotted => area.draw(&DashedPathElement::new(sample, 2, 3, style))?,
            Line::None => {}
        }
        match e.marker {
            Marker::Circle => area.draw(&Circle::new((x + 18, y), 4, e.color.filled()))?,
            Marker::HollowCircle => {
                area.draw(&Circle::new((x + 18, y), 5, e.color.stroke_width(2)))?
            }
            Marker::Triangle => {
                area.draw(&TriangleMarker::new((x + 18, y), 5, e.color.filled()))?
            }
            Marker::None => {}
        }
        area.draw(&Text::new(
            e.label.clone(),
            (x + 44, y),
            font(15).pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
