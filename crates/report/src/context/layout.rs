//! The report's Layout section: what each memory layout of the
//! run did, whether randomizing layout widened the spread of the forks'
//! baseline medians, and what each recorded factor explained, in words.
//! Only runs whose forks recorded a layout have one, so other reports
//! render as they did.

use crate::numbers;
use runner_analysis::layout::{LayoutAnalysis, LayoutGroup};
use runner_analysis::Analysis;
use runner_os::memory_layout::Layout;
use serde::Serialize;

#[derive(Debug, Serialize)]
pub struct LayoutView {
    /// One sentence per layout the run used: what the forks got.
    pub lines: Vec<String>,
    /// Whether layout moved the result on this machine, in one paragraph.
    pub verdict: String,
    /// What the factors explained under `random`; none without random forks.
    pub factors_text: Option<String>,
    /// One row per cell with recorded layouts.
    pub rows: Vec<LayoutRow>,
    /// One row per factor, under `random`.
    pub factors: Vec<FactorRow>,
    /// What did not go as asked (ASLR refused or off system-wide).
    pub warnings: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct LayoutRow {
    pub cell: String,
    pub layout: String,
    pub forks: u32,
    pub baseline_medians: String,
    pub max_over_min: String,
    pub spread: String,
}

#[derive(Debug, Serialize)]
pub struct FactorRow {
    pub factor: String,
    pub meaning: &'static str,
    pub n: u32,
    pub r2: String,
    pub chance_r2: String,
    pub p_value: String,
    pub slope: String,
}

fn meaning(factor: &str) -> &'static str {
    match factor {
        "env_pad_bytes" => "environment padding (drawn)",
        "stack_offset_bytes" => "stack offset before the timed runs (drawn)",
        "heap_offset_bytes" => "heap held before setup (drawn)",
        "stack_page_offset" => "timed frame's offset in its page (seen)",
        _ => "first heap block's offset in its page (seen)",
    }
}

fn ratio(x: f64) -> String {
    format!("{x:.2}x")
}

fn spread(x: Option<f64>) -> String {
    x.map_or("n/a".into(), numbers::percent)
}

fn group_line(g: &LayoutGroup) -> String {
    let what = match g.layout {
        Layout::Fixed => "one layout for every fork (the same environment padding, stack and heap offsets), ASLR off",
        Layout::Random => "a layout drawn per fork from its seed (environment padding 0-4 KiB, stack and heap offsets 0-4 KiB), ASLR on",
        Layout::System => "no padding or offsets, ASLR as the system has it",
    };
    format!(
        "`{}`: {what}; {} forks in {} cell{}, {} with ASLR on; between-fork spread of baseline medians {} (SD of their logarithm), widest cell {}",
        g.layout,
        g.forks,
        g.cells,
        if g.cells == 1 { "" } else { "s" },
        g.aslr_on,
        spread(g.spread),
        g.max_over_min.map_or("n/a".into(), ratio)
    )
}

fn verdict(l: &LayoutAnalysis, confidence: &str) -> String {
    let group = |x: Layout| l.groups.iter().find(|g| g.layout == x);
    match (group(Layout::Fixed), group(Layout::Random), &l.ratio) {
        (Some(_), Some(_), Some(r)) => match (r.estimate, r.ci) {
            (Some(e), Some([lo, hi])) if lo > 1.0 => format!(
                "Under `random` the forks' baseline medians spread {} as widely as under `fixed` ({confidence} interval {} to {}): **layout moved the result on this machine**. A run with one fixed layout understates how far apart separate processes land.",
                ratio(e), ratio(lo), ratio(hi)
            ),
            (Some(e), Some([lo, hi])) if hi < 1.0 => format!(
                "Under `random` the forks' baseline medians spread less than under `fixed` ({}, {confidence} interval {} to {}): not the widening layout bias predicts; the fixed layout, or ASLR off, made these forks noisier.",
                ratio(e), ratio(lo), ratio(hi)
            ),
            (Some(e), Some([lo, hi])) => format!(
                "Under `random` the forks' baseline medians spread {} as widely as under `fixed`, and the {confidence} interval ({} to {}) includes 1: **no sign that layout moved the result on this machine** with these forks; a ratio inside the interval is not ruled out.",
                ratio(e), ratio(lo), ratio(hi)
            ),
            (Some(e), None) => format!(
                "Under `random` the forks' baseline medians spread {} as widely as under `fixed`; no interval: {}.",
                ratio(e),
                r.note.as_deref().unwrap_or("too few forks")
            ),
            (None, _) => format!(
                "The spreads cannot be compared: {}.",
                r.note.as_deref().unwrap_or("too few forks")
            ),
        },
        (None, Some(_), _) => "Only `random` ran, so there is no fixed layout to compare with; the factors below say what the layout explained.".into(),
        (Some(_), None, _) => "Only `fixed` ran: every fork had the same layout, so the spread above is what remains without layout differences. Sweep `layout = [\"fixed\", \"random\"]` to see what layout adds.".into(),
        _ => String::new(),
    }
}

fn factors_text(l: &LayoutAnalysis, confidence: f64, resamples: u32) -> Option<String> {
    let first = l.factors.first()?;
    let level = (1.0 - confidence) / l.factors.len() as f64;
    let mut strong: Vec<String> = l
        .factors
        .iter()
        .filter(|f| f.p_value.is_some_and(|p| p < level))
        .map(|f| {
            format!(
                "`{}` explains {} (p = {:.3})",
                f.factor,
                numbers::percent(f.r2.unwrap_or(0.0)),
                f.p_value.unwrap_or(1.0)
            )
        })
        .collect();
    let tail = format!(
        "R² is the share of the between-fork variance of ln(baseline median) that a straight line in the factor explains (each cell centred; {} forks; chance alone gives about {}); p is the share of {} permutations of the medians within each cell that explain as much, and a factor counts at p < {:.4} ({} shared over {} factors).",
        first.n,
        first.chance_r2.map_or("n/a".into(), numbers::percent),
        resamples,
        level,
        numbers::percent(1.0 - confidence),
        l.factors.len()
    );
    Some(if strong.is_empty() {
        format!("Under `random`, no recorded factor explains more of the between-fork variance than chance would. {tail}")
    } else {
        let said = numbers::list(&std::mem::take(&mut strong), "and");
        format!("Under `random`, {said} of the between-fork variance. {tail}")
    })
}

pub(super) fn view(
    analysis: &Analysis,
    exp: &runner_spec::Experiment,
    confidence_label: &str,
) -> Option<LayoutView> {
    let l = analysis.layout.as_ref()?;
    let medians = numbers::Column::time(
        &l.cells
            .iter()
            .map(|c| numbers::Entry::Span(c.baseline_min_ns, c.baseline_max_ns))
            .collect::<Vec<_>>(),
    );
    let rows = l
        .cells
        .iter()
        .filter_map(|c| {
            let cell = analysis.cells.iter().find(|a| a.cell == c.cell)?;
            Some(LayoutRow {
                cell: super::cells::label(cell, analysis, exp),
                layout: c.layout.to_string(),
                forks: c.forks,
                baseline_medians: medians.range(c.baseline_min_ns, c.baseline_max_ns),
                max_over_min: c.max_over_min.map_or("n/a".into(), ratio),
                spread: spread(c.spread),
            })
        })
        .collect();
    let factors = l
        .factors
        .iter()
        .map(|f| FactorRow {
            factor: f.factor.clone(),
            meaning: meaning(&f.factor),
            n: f.n,
            r2: f.r2.map_or("n/a".into(), numbers::percent),
            chance_r2: f.chance_r2.map_or("n/a".into(), numbers::percent),
            p_value: f.p_value.map_or("n/a".into(), |p| format!("{p:.3}")),
            slope: f
                .slope_pct_per_kib
                .map_or("n/a".into(), |s| format!("{s:+.2} %")),
        })
        .collect();
    let warnings = l
        .groups
        .iter()
        .flat_map(|g| {
            g.aslr_notes.iter().map(move |n| {
                format!(
                    "under `{}`, ASLR was not as asked in some forks: {n}",
                    g.layout
                )
            })
        })
        .collect();
    Some(LayoutView {
        lines: l.groups.iter().map(group_line).collect(),
        verdict: verdict(l, confidence_label),
        factors_text: factors_text(l, analysis.confidence, analysis.resamples),
        rows,
        factors,
        warnings,
    })
}
