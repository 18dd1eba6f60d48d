//! What every plot lays out the same way: the legend, a header (title,
//! notes, legend) whose height follows its lines and legend rows, and the
//! title strip of a panel. Heights are computed from the text before
//! anything is drawn, so a one-panel figure whose legend wraps into four
//! rows gets a header four rows high instead of rows drawn over each other.

use super::text::{self, width};
use super::{font, Area, DrawResult};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The mark drawn on a legend entry's sample.
#[derive(Clone, Copy)]
pub(super) enum Marker {
    Circle,
    /// An open circle: the d = 0 false-positive point of `detection.svg`.
    HollowCircle,
    Triangle,
    None,
}

/// The line of a legend entry's sample.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Line {
    Solid,
    Dashed,
    Dotted,
    /// A shaded band with its centre line: an interval over a whole panel.
    Band,
    /// The marker alone, as the points it stands for are drawn.
    None,
}

/// One legend entry: a line sample, a marker, the label.
pub(super) struct LegendEntry {
    pub label: String,
    pub color: RGBColor,
    pub line: Line,
    pub marker: Marker,
}

impl LegendEntry {
    pub(super) fn new(
        label: impl Into<String>,
        color: RGBColor,
        line: Line,
        marker: Marker,
    ) -> Self {
        LegendEntry {
            label: label.into(),
            color,
            line,
            marker,
        }
    }
}

const LEGEND_FONT: u32 = 15;
/// Where an entry's label starts, from the start of its sample.
const LABEL_AT: i32 = 44;
/// Room between one entry's label and the next entry's sample.
const GAP: i32 = 28;
/// One legend row, one note line.
const ROW: i32 = 20;

/// An entry's place: its x, its first row, its label's lines.
struct Placed {
    x: i32,
    row: i32,
    lines: Vec<String>,
}

/// Entries left to right from `x0`, wrapping before `right`; a label
/// longer than a whole row is broken over rows of its own.
fn place(entries: &[&LegendEntry], x0: i32, right: i32) -> Vec<Placed> {
    let room = (right - x0 - LABEL_AT).max(60);
    let (mut x, mut row) = (x0, 0);
    let mut out = Vec::new();
    for e in entries {
        let lines = text::wrap(&e.label, LEGEND_FONT, room, 4);
        let label = lines
            .iter()
            .map(|l| width(l, LEGEND_FONT))
            .max()
            .unwrap_or(0);
        if x > x0 && (lines.len() > 1 || x + LABEL_AT + label > right) {
            x = x0;
            row += 1;
        }
        let rows = lines.len().max(1) as i32;
        out.push(Placed { x, row, lines });
        if rows > 1 {
            // Nothing beside a broken label: the next entry starts a row.
            row += rows - 1;
            x = right;
        } else {
            x += LABEL_AT + label + GAP;
        }
    }
    out
}

/// How many rows the legend takes between `x0` and `right`.
pub(super) fn legend_rows(entries: &[&LegendEntry], x0: i32, right: i32) -> u32 {
    place(entries, x0, right)
        .iter()
        .map(|p| (p.row + p.lines.len().max(1) as i32) as u32)
        .max()
        .unwrap_or(0)
}

/// Draws the legend on `area`, first row centred on `y0`, rows 20 px apart.
pub(super) fn legend(
    area: &Area<'_>,
    entries: &[&LegendEntry],
    x0: i32,
    y0: i32,
    right: i32,
) -> DrawResult {
    for (e, p) in entries.iter().zip(place(entries, x0, right)) {
        let (x, y) = (p.x, y0 + ROW * p.row);
        let style = ShapeStyle::from(&e.color).stroke_width(2);
        let sample = vec![(x, y), (x + 36, y)];
        match e.line {
            Line::Solid => area.draw(&PathElement::new(sample, style))?,
            Line::Dashed => area.draw(&DashedPathElement::new(sample, 5, 3, style))?,
            Line::Dotted => area.draw(&DashedPathElement::new(sample, 2, 3, style))?,
            Line::Band => {
                area.draw(&Rectangle::new(
                    [(x, y - 7), (x + 36, y + 7)],
                    e.color.mix(0.2).filled(),
                ))?;
                area.draw(&PathElement::new(
                    vec![(x + 18, y - 7), (x + 18, y + 7)],
                    style,
                ))?;
            }
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
        for (i, line) in p.lines.iter().enumerate() {
            area.draw(&Text::new(
                line.clone(),
                (x + LABEL_AT, y + ROW * i as i32),
                font(LEGEND_FONT).pos(Pos::new(HPos::Left, VPos::Center)),
            ))?;
        }
    }
    Ok(())
}

const TITLE_FONT: u32 = 22;
const TITLE_ROW: i32 = 26;
const NOTE_FONT: u32 = 15;
const TOP: i32 = 6;
const LEGEND_X: i32 = 16;

/// A figure's header: its title, notes under it, and the legend.
pub(super) struct Header<'e> {
    pub title: String,
    pub notes: Vec<String>,
    pub legend: Vec<&'e LegendEntry>,
}

impl Header<'_> {
    fn title_lines(&self, w: i32) -> Vec<String> {
        text::wrap(&self.title, TITLE_FONT, w - 24, 3)
    }

    fn note_lines(&self, w: i32) -> Vec<String> {
        self.notes
            .iter()
            .flat_map(|n| text::wrap(n, NOTE_FONT, w - 24, 4))
            .collect()
    }

    /// The header's height on a canvas `w` pixels wide.
    pub(super) fn height(&self, w: u32) -> u32 {
        let w = w as i32;
        let rows = legend_rows(&self.legend, LEGEND_X, w - 8) as i32;
        let legend = if rows > 0 { 8 + ROW * rows } else { 0 };
        let h = TOP
            + TITLE_ROW * self.title_lines(w).len() as i32
            + ROW * self.note_lines(w).len() as i32
            + legend
            + 6;
        h as u32
    }

    /// Draws the header at the top of `area`, `w` pixels wide.
    pub(super) fn draw(&self, area: &Area<'_>, w: u32) -> DrawResult {
        let w = w as i32;
        let mut y = TOP;
        for line in self.title_lines(w) {
            area.draw(&Text::new(
                line,
                (w / 2, y + TITLE_ROW / 2),
                font(TITLE_FONT).pos(Pos::new(HPos::Center, VPos::Center)),
            ))?;
            y += TITLE_ROW;
        }
        for line in self.note_lines(w) {
            area.draw(&Text::new(
                line,
                (w / 2, y + ROW / 2),
                font(NOTE_FONT).pos(Pos::new(HPos::Center, VPos::Center)),
            ))?;
            y += ROW;
        }
        legend(area, &self.legend, LEGEND_X, y + 8 + ROW / 2, w - 8)
    }
}

const PANEL_TITLE_FONT: u32 = 17;
const PANEL_TITLE_ROW: i32 = 18;

/// Each panel's title, its parts broken into lines of a panel `w` pixels
/// wide (at most two lines a part), and the strip's height: the same for
/// every panel, from the one with the most lines, so the panels line up.
pub(super) fn panel_titles(parts: &[Vec<String>], w: u32) -> (Vec<Vec<String>>, u32) {
    let lines: Vec<Vec<String>> = parts
        .iter()
        .map(|p| {
            p.iter()
                .flat_map(|t| text::wrap(t, PANEL_TITLE_FONT, w as i32 - 20, 2))
                .collect()
        })
        .collect();
    let most = lines.iter().map(Vec::len).max().unwrap_or(1).max(1) as i32;
    (lines, (10 + PANEL_TITLE_ROW * most) as u32)
}

/// Draws a panel's title lines centred at the top of `area`.
pub(super) fn panel_title(area: &Area<'_>, lines: &[String], w: u32) -> DrawResult {
    for (i, line) in lines.iter().enumerate() {
        area.draw(&Text::new(
            line.clone(),
            (
                w as i32 / 2,
                6 + PANEL_TITLE_ROW * i as i32 + PANEL_TITLE_ROW / 2,
            ),
            font(PANEL_TITLE_FONT).pos(Pos::new(HPos::Center, VPos::Center)),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters::style::BLACK;

    fn entry(label: &str) -> LegendEntry {
        LegendEntry::new(label, BLACK, Line::Solid, Marker::None)
    }

    #[test]
    fn a_legend_wraps_into_rows_and_breaks_a_label_wider_than_a_row() {
        let short = [entry("one"), entry("two"), entry("three")];
        let refs: Vec<&LegendEntry> = short.iter().collect();
        assert_eq!(legend_rows(&refs, 16, 800), 1);
        // Room for "one" and "two" only: "three" starts a second row.
        let w = 16 + 2 * (LABEL_AT + width("one", 15) + GAP) + LABEL_AT + 10;
        assert_eq!(legend_rows(&refs, 16, w), 2);
        let long = [entry(&"word ".repeat(40)), entry("after")];
        let refs: Vec<&LegendEntry> = long.iter().collect();
        let placed = place(&refs, 16, 400);
        assert!(placed[0].lines.len() > 1);
        for line in &placed[0].lines {
            assert!(16 + LABEL_AT + width(line, 15) <= 400, "{line}");
        }
        // The entry after a broken label starts its own row.
        assert_eq!(placed[1].row, placed[0].lines.len() as i32);
        assert_eq!(
            legend_rows(&refs, 16, 400),
            placed[0].lines.len() as u32 + 1
        );
    }

    #[test]
    fn a_header_grows_with_its_legend() {
        let entries: Vec<LegendEntry> = (0..5)
            .map(|i| entry(&format!("a legend entry number {i}")))
            .collect();
        let refs: Vec<&LegendEntry> = entries.iter().collect();
        let h = |w: u32| {
            Header {
                title: "A title".into(),
                notes: vec![],
                legend: refs.clone(),
            }
            .height(w)
        };
        // Five entries fit one row of 1600 px and need more on 440 px.
        assert_eq!(h(1600), (TOP + TITLE_ROW + 8 + ROW + 6) as u32);
        let rows = legend_rows(&refs, LEGEND_X, 440 - 8);
        assert!(rows >= 3, "{rows}");
        assert_eq!(h(440), h(1600) + ROW as u32 * (rows - 1));
    }
}
