//! The gate's sentences (docs/guide/commands.md), shared by the report's Gate
//! section, the terminal summary (which leads with the verdict),
//! `gate.json`'s `summary` and the `$GITHUB_STEP_SUMMARY` lines.

use crate::analysis::gate::{GateAnalysis, GateCell, GateGroup, Reason, SelfCheck, Verdict};
use crate::report::format;
use crate::spec::Experiment;
use serde::Serialize;

/// `analysis.json`'s `gate` with its `view`.
#[derive(Debug, Serialize)]
pub struct GateView<'a> {
    #[serde(flatten)]
    pub data: &'a GateAnalysis,
    pub view: GateText,
}

#[derive(Debug, Serialize)]
pub struct GateText {
    /// `PASS`, `REGRESSION` or `INCONCLUSIVE`.
    pub label: String,
    /// One sentence: the verdict and why, naming the deciding cell's
    /// estimate, interval and threshold.
    pub verdict: String,
    /// One sentence: the self-check's false alarms and power, or that it
    /// was turned off.
    pub self_check: String,
    /// The cell whose interval decided (a regression, else an inconclusive
    /// cell, else the one whose interval reaches highest).
    pub deciding_cell: Option<u32>,
    /// One row per experiment cell, for the report's table.
    pub rows: Vec<GateRow>,
}

#[derive(Debug, Serialize)]
pub struct GateRow {
    /// The cell's label: its params, or `all` for a single cell.
    pub label: String,
    /// The threshold: `2% of 41.2 µs = 824 ns`, or `50 µs`.
    pub threshold: String,
    /// The deciding statistic: `0.31 [-0.40, 1.08] µs`.
    pub estimate: String,
    /// `pass`, `regression` or `inconclusive`.
    pub decision: Verdict,
}

fn label(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "PASS",
        Verdict::Regression => "REGRESSION",
        Verdict::Inconclusive => "INCONCLUSIVE",
    }
}

/// `2% of the 41.2 µs baseline median (824 ns)` or `50 µs`.
fn threshold(g: &GateAnalysis, group: &GateGroup) -> String {
    if g.max_slowdown.ends_with('%') {
        format!(
            "{} of the {} baseline median ({})",
            g.max_slowdown,
            format::duration(group.baseline_median_ns),
            format::duration(group.threshold_ns)
        )
    } else {
        format::delay(group.threshold_ns)
    }
}

/// The cell that decided, with its group.
fn deciding(g: &GateAnalysis) -> Option<(&GateGroup, &GateCell)> {
    let all = || {
        g.groups
            .iter()
            .flat_map(|gr| gr.cells.iter().map(move |c| (gr, c)))
    };
    all()
        .find(|(_, c)| c.decision == Verdict::Regression)
        .or_else(|| all().find(|(_, c)| c.decision == Verdict::Inconclusive))
        .or_else(|| {
            all().max_by(|a, b| {
                (a.1.ci_ns[1] - a.0.threshold_ns).total_cmp(&(b.1.ci_ns[1] - b.0.threshold_ns))
            })
        })
}

fn share(s: &SelfCheck) -> String {
    format!(
        "{} of {} forks ({})",
        s.share.flagged,
        s.share.forks,
        format::percent(s.share.share)
    )
}

fn verdict(g: &GateAnalysis, exp: &Experiment, confidence: f64) -> String {
    let Some((group, cell)) = deciding(g) else {
        return "The gate had no cell to decide on.".into();
    };
    let d = &exp.design;
    let what = format!(
        "`{}` − `{}` = {}",
        d.treatment,
        d.baseline,
        format::estimate(cell.estimate_ns, cell.ci_ns[0], cell.ci_ns[1])
    );
    let many = g.groups.iter().map(|gr| gr.cells.len()).sum::<usize>() > 1;
    let at = if many {
        format!(" at {}", format::params(&cell.params))
    } else {
        String::new()
    };
    let interval = format!("{} {} interval", format::percent(confidence), g.statistic);
    let t = threshold(g, group);
    match g.reason {
        Reason::IntervalBelowThreshold => format!(
            "{what}{at}: its {interval} lies wholly below the threshold of {t}{}.",
            if many { ", as every cell's does" } else { "" }
        ),
        Reason::Regression => format!(
            "{what}{at}: its {interval} lies wholly above zero and the estimate exceeds the threshold of {t}."
        ),
        Reason::IntervalReachesThreshold => format!(
            "{what}{at}: its {interval} reaches the threshold of {t} without showing a slowdown over it, so this machine could not resolve a slowdown of that size here."
        ),
        Reason::LowPower => {
            let p = g.groups.iter().filter_map(|gr| gr.power.as_ref()).min_by(|a, b| {
                a.share.share.total_cmp(&b.share.share)
            });
            format!(
                "{what}{at} lies below the threshold of {t}, but with twice the threshold injected the rule flagged only {} (fewer than the {} asked for by gate.min_power): a pass that could not have failed is not a pass.",
                p.map_or("no fork".into(), share),
                format::percent(g.min_power)
            )
        }
    }
}

fn self_check(g: &GateAnalysis, exp: &Experiment, confidence: f64) -> String {
    if !g.self_check {
        return "Self-check off (gate.self_check = false): the rule's false-alarm rate and power on this machine were not measured.".into();
    }
    let base = &exp.design.baseline;
    let alarms = match &g.false_alarms {
        Some(s) => format!(
            "with nothing changed (`{base}` against itself) the rule flagged {} of {} forks as a regression ({}; at most {} at {} confidence; the rule allows {})",
            s.flagged,
            s.forks,
            format::percent(s.share),
            format::percent(s.upper_bound),
            format::percent(confidence),
            format::percent(g.nominal_false_alarm)
        ),
        None => "there was no A/A cell".into(),
    };
    let checks: Vec<&SelfCheck> = g.groups.iter().filter_map(|gr| gr.power.as_ref()).collect();
    // A percentage of a slow baseline can ask for more than runner's
    // largest delay; the 2x cell then injected 1 s, and the text says so.
    let capped = g.groups.iter().any(|gr| {
        gr.power.is_some() && crate::plan::self_check::power_delay_capped(gr.threshold_ns)
    });
    let twice = if capped {
        "twice the threshold (at most 1 s, runner's largest delay)"
    } else {
        "twice the threshold"
    };
    let power = match checks.as_slice() {
        [] => "there was no cell at twice the threshold".to_string(),
        [p] => format!(
            "with {twice} ({}) injected it flagged {}, its power (at least {} asked for)",
            format::delay(p.delay_ns as f64),
            share(p),
            format::percent(g.min_power)
        ),
        many => format!(
            "with {twice} injected it flagged {}, its power (at least {} asked for)",
            format::list(
                &many
                    .iter()
                    .map(|p| format!("{} at {}", share(p), format::delay(p.delay_ns as f64)))
                    .collect::<Vec<_>>(),
                "and"
            ),
            format::percent(g.min_power)
        ),
    };
    format!("Self-check: {alarms}; {power}.")
}

pub(super) fn view<'a>(g: &'a GateAnalysis, exp: &Experiment, confidence: f64) -> GateView<'a> {
    let many = g.groups.iter().map(|gr| gr.cells.len()).sum::<usize>() > 1;
    let estimates = format::Column::time(
        &g.groups
            .iter()
            .flat_map(|gr| &gr.cells)
            .map(|c| format::Entry::Estimate(c.estimate_ns, c.ci_ns[0], c.ci_ns[1]))
            .collect::<Vec<_>>(),
    );
    let rows = g
        .groups
        .iter()
        .flat_map(|gr| {
            gr.cells.iter().map(move |c| GateRow {
                label: if many {
                    format::params(&c.params)
                } else {
                    "all pairs".into()
                },
                threshold: threshold(g, gr),
                estimate: estimates.estimate(c.estimate_ns, c.ci_ns[0], c.ci_ns[1]),
                decision: c.decision,
            })
        })
        .collect();
    GateView {
        data: g,
        view: GateText {
            label: label(g.verdict).into(),
            verdict: verdict(g, exp, confidence),
            self_check: self_check(g, exp, confidence),
            deciding_cell: deciding(g).map(|(_, c)| c.cell),
            rows,
        },
    }
}
