//! The gate's sentences (docs/guide/commands.md), shared by the report's Gate
//! section, the terminal summary (which leads with the verdict),
//! `gate.json`'s `summary` and the `$GITHUB_STEP_SUMMARY` lines.

use crate::analysis::gate::{GateAnalysis, GateCell, GateGroup, Reason, SelfCheck, Share, Verdict};
use crate::analysis::CellAnalysis;
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
    /// The self-check's three rates as a Markdown table (seen, bound,
    /// allowed); none without a self-check.
    pub rates: Option<String>,
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

/// `k of n forks`.
fn share(s: &SelfCheck) -> String {
    format!(
        "{} of {}",
        s.share.flagged,
        crate::report::effect::forks_count(s.share.forks)
    )
}

/// A slowdown with its interval, and in % of the group's baseline median
/// when the threshold is a percentage: `70 [64, 86] µs (2.2 % [2.0, 2.7])`.
fn slowdown(g: &GateAnalysis, group: &GateGroup, m: f64, ci: [f64; 2]) -> String {
    let d = format::estimate(m, ci[0], ci[1]);
    if g.max_slowdown.ends_with('%') && group.baseline_median_ns > 0.0 {
        let pct = |x: f64| x / group.baseline_median_ns;
        format!(
            "{d} ({})",
            crate::report::effect::percent_of(pct(m), [pct(ci[0]), pct(ci[1])])
        )
    } else {
        d
    }
}

/// The size of a resolved slowdown or speed-up: `40 [31, 52] µs (1.3 %
/// [1.0, 1.7]) slower`, always a positive duration.
fn sized(g: &GateAnalysis, group: &GateGroup, c: &GateCell) -> String {
    let [lo, hi] = c.ci_ns;
    if lo > 0.0 {
        format!("{} slower", slowdown(g, group, c.estimate_ns, c.ci_ns))
    } else {
        format!("{} faster", slowdown(g, group, -c.estimate_ns, [-hi, -lo]))
    }
}

/// The forks per cell that would narrow a straddling interval enough to
/// decide, from the cell's variance components at the design's pairs.
fn would_decide(
    c: &GateCell,
    threshold_ns: f64,
    cells: &[CellAnalysis],
    exp: &Experiment,
    confidence: f64,
) -> String {
    let gap = (c.estimate_ns - threshold_ns).abs();
    let variance = cells
        .iter()
        .find(|x| x.cell == c.cell)
        .and_then(|x| x.variance.as_ref());
    let Some(v) = variance else {
        return "with one fork per cell there is no fork-to-fork spread to size a design from; run more forks".into();
    };
    let vc = crate::stats::VarianceComponents {
        between: v.median_between_ns2,
        within: v.median_within_ns2,
    };
    let pairs = exp.design.pairs.get();
    let limit = crate::analysis::MAX_FORKS;
    let forks = (exp.design.forks.get().max(2)..=limit)
        .find(|&f| crate::stats::predicted_half_width(vc, confidence, f, pairs) < gap);
    match forks {
        Some(f) => format!(
            "about {f} forks of {pairs} pairs (`--set {}={f}`) are predicted to narrow it enough to decide",
            exp.design.forks_key()
        ),
        None => format!(
            "the estimate sits {} from the threshold, closer than {limit} forks of {pairs} pairs are predicted to resolve: the slowdown is, for this gate, at its threshold",
            format::duration(gap)
        ),
    }
}

fn verdict(g: &GateAnalysis, exp: &Experiment, cells: &[CellAnalysis], confidence: f64) -> String {
    let Some((group, cell)) = deciding(g) else {
        return "The gate had no cell to decide on.".into();
    };
    let d = &exp.design;
    let treatment = d
        .variants()
        .first()
        .copied()
        .unwrap_or(&d.treatment)
        .to_string();
    let many = g.groups.iter().map(|gr| gr.cells.len()).sum::<usize>() > 1;
    let at = if many {
        format!(" at {}", format::params(&exp.grid.labelled(&cell.params)))
    } else {
        String::new()
    };
    let who = match cell
        .params
        .get(crate::plan::TREATMENT_KEY)
        .and_then(|v| v.as_str())
    {
        Some(t) => t.to_string(),
        None => treatment,
    };
    let interval = format!("{} {} interval", format::percent(confidence), g.statistic);
    let t = threshold(g, group);
    let allowed = if g.max_slowdown.ends_with('%') {
        format!("the {} allowed", g.max_slowdown)
    } else {
        format!("the {} allowed", format::delay(group.threshold_ns))
    };
    let [lo, hi] = cell.ci_ns;
    let base = &d.baseline;
    match g.reason {
        Reason::IntervalBelowThreshold if lo > 0.0 => format!(
            "Passed: `{who}` is {} than `{base}` per run{at}, within {allowed}: the whole {interval} lies below the threshold of {t}{}.",
            sized(g, group, cell),
            if many { ", as every cell's does" } else { "" }
        ),
        Reason::IntervalBelowThreshold if hi < 0.0 => format!(
            "Passed: `{who}` is {} than `{base}` per run{at}; the whole {interval} lies below the threshold of {t}{}.",
            sized(g, group, cell),
            if many { ", as every cell's does" } else { "" }
        ),
        Reason::IntervalBelowThreshold => format!(
            "Passed: no slowdown resolved{at} (D = {}), and the whole {interval} lies below the threshold of {t}{}.",
            slowdown(g, group, cell.estimate_ns, cell.ci_ns),
            if many { ", as every cell's does" } else { "" }
        ),
        Reason::Regression => format!(
            "Regression: `{who}` is {} than `{base}` per run{at}, above {allowed}: the whole {interval} lies above the threshold of {t}.",
            sized(g, group, cell)
        ),
        Reason::IntervalReachesThreshold => format!(
            "Inconclusive: the slowdown{at}, {}, has a {interval} that straddles the threshold of {t}, so the data cannot say on which side of it the slowdown lies; {}.",
            slowdown(g, group, cell.estimate_ns, cell.ci_ns),
            would_decide(cell, group.threshold_ns, cells, exp, confidence)
        ),
        Reason::LowPower => {
            let p = g.power.as_ref();
            format!(
                "Inconclusive: every interval lies below the threshold of {t}, but with twice the threshold injected the rule caught {} of {}, a power of at least {} by its lower bound, short of the {} asked for (`gate.min_power`): a pass that could not have failed is not a pass{}.",
                p.map_or(0, |p| p.flagged),
                crate::report::effect::forks_count(p.map_or(0, |p| p.forks)),
                format::percent(p.map_or(0.0, |p| p.lower_bound)),
                format::percent(g.min_power),
                forks_needed(g, exp)
            )
        }
        Reason::ErrorRateUnbounded => {
            let worst = [g.false_alarms, g.false_blocks]
                .into_iter()
                .flatten()
                .max_by(|a, b| a.upper_bound.total_cmp(&b.upper_bound));
            let interval_said = match cell.decision {
                Verdict::Pass => "lies below the threshold",
                Verdict::Regression => "lies above the threshold",
                Verdict::Inconclusive => "straddles the threshold",
            };
            match worst {
                Some(w) if w.flagged == 0 => format!(
                    "Inconclusive: with {} per self-check cell, the self-check can only say that the rule blocks an unchanged or within-budget change in at most {} of forks, above the {} allowed (`gate.max_false_block`), so no verdict here has a stated error rate{}. (The {interval} alone {interval_said}: {}.)",
                    crate::report::effect::forks_count(w.forks),
                    format::percent(w.upper_bound),
                    format::percent(g.max_false_block),
                    forks_needed(g, exp),
                    slowdown(g, group, cell.estimate_ns, cell.ci_ns)
                ),
                Some(w) => format!(
                    "Inconclusive: the self-check blocked an unchanged or within-budget change in {} of {} (at most {} by the bound), above the {} allowed (`gate.max_false_block`): on this machine the rule's intervals are too narrow to block on. (The {interval} alone {interval_said}: {}.)",
                    w.flagged,
                    crate::report::effect::forks_count(w.forks),
                    format::percent(w.upper_bound),
                    format::percent(g.max_false_block),
                    slowdown(g, group, cell.estimate_ns, cell.ci_ns)
                ),
                None => "Inconclusive: the self-check's error rates are not bounded.".into(),
            }
        }
    }
}

/// `; 29 forks per cell would (`--set design.forks=29`), were every fork
/// to come out right`, or nothing.
fn forks_needed(g: &GateAnalysis, exp: &Experiment) -> String {
    let key = exp.design.forks_key();
    match g.forks_needed {
        Some(n) if n < u32::MAX => format!(
            "; at least {n} forks per cell (`--set {key}={n}`) would, were every self-check fork to come out right"
        ),
        _ => String::new(),
    }
}

fn self_check(g: &GateAnalysis, exp: &Experiment, confidence: f64) -> String {
    if !g.self_check {
        return "Self-check off (gate.self_check = false): the rule's error rates and power on this machine were not measured, so this verdict comes with no stated error rate.".into();
    }
    let base = &exp.design.baseline;
    let bound = |s: &crate::analysis::gate::Share| {
        format!(
            "{} of {} (at most {})",
            s.flagged,
            crate::report::effect::forks_count(s.forks),
            format::percent(s.upper_bound)
        )
    };
    let mut parts = Vec::new();
    match &g.false_alarms {
        Some(s) => parts.push(format!(
            "with nothing changed the rule blocked {}",
            bound(s)
        )),
        None => parts.push("there was no A/A cell".into()),
    }
    let within: Vec<&SelfCheck> = g
        .groups
        .iter()
        .filter_map(|gr| gr.false_blocks.as_ref())
        .collect();
    if let (Some(s), [one]) = (&g.false_blocks, within.as_slice()) {
        parts.push(format!(
            "with half the threshold ({}) injected it blocked {}",
            format::duration(one.delay_ns as f64),
            bound(s)
        ));
    } else if let Some(s) = &g.false_blocks {
        parts.push(format!(
            "with half the threshold injected it blocked {}",
            bound(s)
        ));
    }
    let allowed = format!(
        "against the {} allowed (`gate.max_false_block`; at {} confidence; a valid interval blocks such a change at most {} of the time)",
        format::percent(g.max_false_block),
        format::percent(confidence),
        format::percent(g.nominal_false_alarm)
    );
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
    let caught = |p: &SelfCheck| {
        format!(
            "{} (at least {})",
            share(p),
            format::percent(p.share.lower_bound)
        )
    };
    let power = match checks.as_slice() {
        [] => "there was no cell at twice the threshold".to_string(),
        [p] => format!(
            "with {twice} ({}) injected it caught {}, against the {} asked for (`gate.min_power`)",
            format::duration(p.delay_ns as f64),
            caught(p),
            format::percent(g.min_power)
        ),
        many => format!(
            "with {twice} injected it caught {}, against the {} asked for (`gate.min_power`)",
            format::list(
                &many
                    .iter()
                    .map(|p| format!("{} at {}", caught(p), format::duration(p.delay_ns as f64)))
                    .collect::<Vec<_>>(),
                "and"
            ),
            format::percent(g.min_power)
        ),
    };
    format!(
        "Self-check (`{base}` against itself, its rule applied to each fork): {}, {allowed}; {power}.",
        format::list(&parts, "and")
    )
}

/// The self-check's three rates as a Markdown table, or none without a
/// self-check.
pub(super) fn rates_table(g: &GateAnalysis) -> Option<String> {
    if !g.self_check {
        return None;
    }
    let row = |what: &str, s: Option<&Share>, bound: fn(&Share) -> String, need: String| match s {
        Some(s) => format!(
            "| {what} | {} of {} | {} | {need} |\n",
            s.flagged,
            s.forks,
            bound(s)
        ),
        None => format!("| {what} | not measured | | {need} |\n"),
    };
    let mut t = String::from(
        "| self-check, per fork | seen | by the bound | allowed |\n|---|---:|---:|---:|\n",
    );
    let at_most = |s: &Share| format!("at most {}", format::percent(s.upper_bound));
    let at_least = |s: &Share| format!("at least {}", format::percent(s.lower_bound));
    t.push_str(&row(
        "false alarm: no change, blocked",
        g.false_alarms.as_ref(),
        at_most,
        format!("at most {}", format::percent(g.max_false_block)),
    ));
    t.push_str(&row(
        "false block: half the threshold, blocked",
        g.false_blocks.as_ref(),
        at_most,
        format!("at most {}", format::percent(g.max_false_block)),
    ));
    t.push_str(&row(
        "power: twice the threshold, caught",
        g.power.as_ref(),
        at_least,
        format!("at least {}", format::percent(g.min_power)),
    ));
    Some(t)
}

pub(super) fn view<'a>(
    g: &'a GateAnalysis,
    exp: &Experiment,
    cells: &[CellAnalysis],
    confidence: f64,
) -> GateView<'a> {
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
                    format::params(&exp.grid.labelled(&c.params))
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
            verdict: verdict(g, exp, cells, confidence),
            self_check: self_check(g, exp, confidence),
            deciding_cell: deciding(g).map(|(_, c)| c.cell),
            rows,
            rates: rates_table(g),
        },
    }
}
