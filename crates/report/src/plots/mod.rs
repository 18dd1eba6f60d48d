//! The plots beside `report.md` (docs/guide/output-folder.md and
//! templates/README.md), drawn with `plotters` into SVG from the analysis,
//! the recorded pairs and the spec's names alone, so `runner report`
//! redraws them byte for byte.
//!
//! The plots follow the experiment ([`Kind`]): a study (an A/A design or a
//! delay grid) shows what the harness resolves, against delays whose
//! direction is known; a plain comparison of two versions shows the effect
//! and both arms' run times, in the words of `report::effect`.
//!
//! Text: plotters is built without a font feature, so its SVG backend writes
//! each label as an SVG `<text>` element in the generic `sans-serif` family
//! and the viewer (GitHub, a browser) renders it. Nothing reads a system
//! font or lays out glyphs at build time, which is also what keeps the bytes
//! identical across machines; [`text`] measures labels with a conservative
//! estimate, and the layouts make room (headers grow with their legend's
//! rows, titles wrap) so no label is drawn over another at any panel count.

mod axis;
mod clients;
mod detection;
mod distributions;
mod effect;
mod forest;
mod fork_rows;
mod instructions;
mod layout;
mod medians;
mod stop;
mod text;
pub mod trend;

use crate::context::Context;
use runner_analysis::{Analysis, CellAnalysis, Verdict};
use runner_core::error::{Coded, Failure, Result};
use runner_core::record::PairRecord;

use plotters::coord::Shift;
use plotters::prelude::*;

use layout::{Header, LegendEntry, Line, Marker};

/// Which plots a report has: the harness's calibration (detection, per-fork
/// intervals against the true delay, fork medians) for a study, the
/// effect and both arms' distributions for a plain comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An A/A design, or any cell with an injected delay: what is measured
    /// is the harness's resolution, against a delay of known direction.
    Study,
    /// Two (or more) versions of the user's code, no delay beyond 0: what
    /// is measured is the treatment's effect, of unknown direction.
    Comparison,
}

impl Kind {
    pub(crate) fn of(aa: bool, has_delays: bool) -> Kind {
        if aa || has_delays {
            Kind::Study
        } else {
            Kind::Comparison
        }
    }

    /// The files of this kind, in the order the report shows them; the
    /// output folder's list (`output::STUDY_PLOTS`, `output::COMPARISON_PLOTS`).
    pub(crate) fn files(self) -> &'static [&'static str] {
        match self {
            Kind::Study => &runner_folder::output::STUDY_PLOTS,
            Kind::Comparison => &runner_folder::output::COMPARISON_PLOTS,
        }
    }
}

/// One cell's panel.
pub(crate) struct Panel<'a> {
    pub cell: &'a CellAnalysis,
    /// `d = 25 µs`, `d = 0, plans = 10` in a study; the variant's name or
    /// the cell's params in a comparison; never JSON.
    pub title: String,
    /// The two arms run different things: the forks' intervals say faster
    /// or slower, not seen or reversed.
    pub compares: bool,
    /// The treatment strategy's name.
    pub treatment: String,
}

/// What a report's plots are drawn from: nothing but the analysis, the
/// run's recorded pairs and the spec's names, so `runner report` redraws
/// them byte for byte.
pub(crate) struct Input<'a> {
    pub analysis: &'a Analysis,
    pub kind: Kind,
    /// Both arms run the same strategy, so d = 0 measures false positives.
    pub aa: bool,
    pub baseline: String,
    /// The cells that have forks, in the analysis's order.
    pub panels: Vec<Panel<'a>>,
    /// Each headline group's name: its params without the delay, with the
    /// file's `[grid.labels]` (`plans = 10`, `fast.argv = gzip -6`).
    pub groups: Vec<String>,
    /// Every recorded pair (the distributions use the measured ones).
    pub pairs: &'a [PairRecord],
    /// The grid's swept clients (`clients = [1, 4, 8]`), else empty.
    pub clients: Vec<u32>,
}

impl<'a> Input<'a> {
    /// The plots' input from the report's context: its cells' labels and
    /// arms, and the spec's design.
    pub(crate) fn of(
        analysis: &'a Analysis,
        ctx: &Context<'a>,
        pairs: &'a [PairRecord],
    ) -> Input<'a> {
        let exp = &*ctx.spec.experiment;
        let kind = Kind::of(ctx.spec.is_aa, ctx.run.has_delays);
        let many = ctx.headline.groups.len() > 1;
        let panels = ctx
            .cells
            .iter()
            .filter(|c| !c.data.forks.is_empty())
            .map(|c| Panel {
                cell: c.data,
                title: match kind {
                    Kind::Study => {
                        let mut t = format!("d = {}", c.view.delay);
                        if many {
                            let others =
                                runner_plan::group_params(&exp.grid.labelled(&c.data.params));
                            t.push_str(&format!(", {}", super::numbers::params(&others)));
                        }
                        t
                    }
                    Kind::Comparison => c.view.label.clone(),
                },
                compares: !c.view.same_arms,
                treatment: c.view.treatment.clone(),
            })
            .collect();
        let groups = analysis
            .headline
            .groups
            .iter()
            .map(|g| super::numbers::params(&exp.grid.labelled(&g.params)))
            .collect();
        Input {
            analysis,
            kind,
            groups,
            aa: ctx.spec.is_aa,
            baseline: exp.design.baseline.clone(),
            panels,
            pairs,
            clients: exp.grid.clients.clone(),
        }
    }

    /// A comparison swept over two or more levels of concurrent clients
    /// gets `clients.svg` (the context's `run.clients_swept` says the same).
    pub(crate) fn draws_clients(&self) -> bool {
        self.kind == Kind::Comparison && self.clients.len() >= 2
    }
}

/// Draws every plot of the input's kind as `(file name, SVG text)`.
pub(crate) fn render_all(input: &Input<'_>) -> Result<Vec<(&'static str, String)>> {
    let files = input.kind.files();
    let drawn = match input.kind {
        Kind::Study => vec![
            detection::render(input)?,
            forest::render(input)?,
            medians::render(input)?,
        ],
        Kind::Comparison => vec![effect::render(input)?, distributions::render(input)?],
    };
    let mut out: Vec<(&'static str, String)> = files.iter().copied().zip(drawn).collect();
    if input.draws_clients() {
        out.push((runner_folder::output::CLIENTS_PLOT, clients::render(input)?));
    }
    // A sequential run's stopping path, beside either kind's plots.
    if !stop::panels(input).is_empty() {
        out.push((runner_folder::output::STOP_PLOT, stop::render(input)?));
    }
    if instructions::drawn(input) {
        out.push((
            runner_folder::output::INSTRUCTIONS_PLOT,
            instructions::render(input)?,
        ));
    }
    Ok(out)
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<axis::Ticked, axis::Ticked>>;

/// Every chart's grid, tick labels and axis descriptions, in one style.
fn mesh(
    chart: &mut Chart<'_, '_>,
    x_label: &dyn Fn(&f64) -> String,
    y_label: &dyn Fn(&f64) -> String,
    x_desc: impl Into<String>,
    y_desc: impl Into<String>,
) -> DrawResult {
    chart
        .configure_mesh()
        .bold_line_style(GRID)
        .x_label_formatter(x_label)
        .y_label_formatter(y_label)
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style(font(15))
        .axis_desc_style(font(16))
        .draw()
}
type DrawResult = std::result::Result<(), DrawingAreaErrorKind<std::io::Error>>;

/// plotters could not draw a plot (`name`) into its SVG document; its
/// own error stays the source.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw {name}: {cause}")]
pub struct DrawError {
    name: String,
    #[source]
    cause: DrawingAreaErrorKind<std::io::Error>,
}

impl Coded for DrawError {
    /// The report's own failure (exit 1), not its input's: the same
    /// folder renders once the fault is fixed.
    fn failure(&self) -> Failure {
        Failure::RunFailed
    }
}

/// Runs `draw` on a white SVG canvas and returns the document.
fn svg(name: &str, size: (u32, u32), draw: impl FnOnce(&Area<'_>) -> DrawResult) -> Result<String> {
    let fail = |cause| DrawError {
        name: name.to_string(),
        cause,
    };
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
/// A treatment's direction, apart from the study's seen (blue) and
/// reversed (vermillion), so a study with A/B cells tells them apart.
const FASTER: RGBColor = SKY;
const SLOWER: RGBColor = RGBColor(230, 159, 0);

fn font(size: u32) -> TextStyle<'static> {
    ("sans-serif", size).into_font().color(&BLACK)
}

/// The colour of a fork's interval: its verdict against the injected
/// delay in a cell whose arms run the same thing, its direction in one
/// that compares two.
fn fork_color(v: Verdict, compares: bool) -> RGBColor {
    match (v, compares) {
        (Verdict::Seen, false) => BLUE,
        (Verdict::Reversed, false) => VERMILLION,
        (Verdict::Seen, true) => SLOWER,
        (Verdict::Reversed, true) => FASTER,
        (Verdict::NotSeen, _) => GREY,
    }
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

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_comparison;
