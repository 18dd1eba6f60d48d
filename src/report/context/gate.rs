//! The gate's sentences (docs/guide/commands.md), shared by the report's Gate
//! section, the terminal summary (which leads with the verdict),
//! `gate.json`'s `summary` and the `$GITHUB_STEP_SUMMARY` lines.

use crate::analysis::gate::{
    Advice, AdviceChange, GateAnalysis, GateCell, GateGroup, Reason, SelfCheck, Share, Verdict,
};
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
    /// The self-check's two rates and the deciding interval's power as a
    /// Markdown table; none without a self-check.
    pub rates: Option<String>,
    /// The overrides the run was made with (`overrides`).
    pub overrides: Vec<String>,
    /// The deciding treatment is the baseline itself.
    pub aa: bool,
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

/// The design the analysis predicts would decide (`analysis::gate`'s
/// advice): `about 30 forks of 36 pairs (`--set design.pairs=36`) are
/// predicted to narrow it to 58 µs, enough to decide`.
fn would_decide(g: &GateAnalysis, gap_ns: f64, exp: &Experiment) -> String {
    match &g.advice {
        Some(a) => advice_text(a, exp),
        None if exp.design.forks.get() < 2 => "with one fork per cell there is no fork-to-fork spread to size a design from; run more forks".into(),
        None => format!(
            "the estimate sits {} from the threshold, closer than {} forks of up to 16 times the pairs are predicted to resolve: the slowdown is, for this gate, at its threshold",
            format::duration(gap_ns),
            crate::analysis::MAX_FORKS
        ),
    }
}

/// The `KEY=VALUE` overrides of an advice: what `--set` takes.
pub fn advice_sets(a: &Advice, exp: &Experiment) -> Vec<String> {
    let mut forks = vec![format!("design.forks={}", a.forks)];
    // With [design.stop], design.forks is max_forks's default; both given
    // must agree.
    if exp.design.stop.is_some() {
        forks.push(format!("design.stop.max_forks={}", a.forks));
    }
    let pairs = format!("design.pairs={}", a.pairs);
    match a.change {
        AdviceChange::Forks => forks,
        AdviceChange::Pairs => vec![pairs],
        AdviceChange::Both => forks.into_iter().chain([pairs]).collect(),
    }
}

/// The `--set` flags of an advice: `--set design.pairs=36`.
pub fn advice_flags(a: &Advice, exp: &Experiment) -> String {
    advice_sets(a, exp)
        .iter()
        .map(|s| format!("--set {s}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn advice_text(a: &Advice, exp: &Experiment) -> String {
    let what = match a.change {
        AdviceChange::Forks => "more forks",
        AdviceChange::Pairs => "more pairs per fork",
        AdviceChange::Both => "more forks and more pairs per fork",
    };
    format!(
        "{what}, about {} of {} pairs (`{}`), are predicted from the cell's variance components to narrow it to ±{}, enough to decide (±{} is needed)",
        crate::report::effect::forks_count(a.forks),
        a.pairs,
        advice_flags(a, exp),
        format::duration(a.predicted_half_width_ns),
        format::duration(a.needed_half_width_ns)
    )
}

fn verdict(g: &GateAnalysis, exp: &Experiment, confidence: f64) -> String {
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
            would_decide(g, (cell.estimate_ns - group.threshold_ns).abs(), exp)
        ),
        Reason::LowPower => {
            let p = g.power.as_ref();
            let advice = match &g.advice {
                Some(a) => format!("; {}", advice_text(a, exp)),
                None => String::new(),
            };
            format!(
                "Inconclusive: every interval lies below the threshold of {t}, but an interval as wide as the deciding one ({}) would catch a slowdown of twice the threshold ({}) with a computed power of only {}, short of the {} asked for (`gate.min_power`): a pass that could not have failed is not a pass{advice}.",
                slowdown(g, group, cell.estimate_ns, cell.ci_ns),
                format::duration(p.map_or(0.0, |p| p.slowdown_ns)),
                format::percent(p.map_or(0.0, |p| p.power)),
                format::percent(g.min_power),
            )
        }
        Reason::SelfCheckFailed => {
            let worst = [g.false_alarms, g.false_blocks]
                .into_iter()
                .flatten()
                .max_by(|a, b| a.lower_bound.total_cmp(&b.lower_bound));
            let interval_said = match cell.decision {
                Verdict::Pass => "lies below the threshold",
                Verdict::Regression => "lies above the threshold",
                Verdict::Inconclusive => "straddles the threshold",
            };
            match worst {
                Some(w) => format!(
                    "Inconclusive: the self-check blocked an unchanged or within-budget change in {} of {}, at least {} by the bound, above the {} allowed (`gate.max_false_block`): on this machine forks' intervals are not valid to block on. (The {interval} alone {interval_said}: {}.)",
                    w.flagged,
                    crate::report::effect::forks_count(w.forks),
                    format::percent(w.lower_bound),
                    format::percent(g.max_false_block),
                    slowdown(g, group, cell.estimate_ns, cell.ci_ns)
                ),
                None => "Inconclusive: the self-check failed.".into(),
            }
        }
    }
}

/// The deciding interval's computed power, as a clause.
fn power_clause(g: &GateAnalysis) -> String {
    match &g.power {
        Some(p) => format!(
            "the deciding interval's power to block a slowdown of twice the threshold ({}) is {} (computed from its width, spread ±{}), against the {} asked for (`gate.min_power`)",
            format::duration(p.slowdown_ns),
            format::percent(p.power),
            format::duration(p.spread_ns),
            format::percent(g.min_power)
        ),
        None => "the gate had no deciding interval to compute a power for".into(),
    }
}

fn self_check(g: &GateAnalysis, exp: &Experiment, confidence: f64) -> String {
    if !g.self_check {
        return format!(
            "Self-check off (gate.self_check = false): whether forks' intervals are valid on this machine was not tested; {}.",
            power_clause(g)
        );
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
        "at {} confidence; the gate is inconclusive only when either rate is shown above the {} allowed (`gate.max_false_block`); a valid interval blocks such a change at most {} of the time",
        format::percent(confidence),
        format::percent(g.max_false_block),
        format::percent(g.nominal_false_alarm)
    );
    format!(
        "Self-check (`{base}` against itself, the rule applied to each fork's own interval, a test of whether forks' intervals are valid): {} ({allowed}); {}.",
        format::list(&parts, "and"),
        power_clause(g)
    )
}

/// The self-check's two rates and the deciding interval's power as a
/// Markdown table, or none without a self-check.
pub(super) fn rates_table(g: &GateAnalysis) -> Option<String> {
    if !g.self_check {
        return None;
    }
    let row = |what: &str, s: Option<&Share>| match s {
        Some(s) => format!(
            "| {what} | {} of {} | at most {} | at least {} | shown above {} |\n",
            s.flagged,
            s.forks,
            format::percent(s.upper_bound),
            format::percent(s.lower_bound),
            format::percent(g.max_false_block)
        ),
        None => format!("| {what} | not measured | | | |\n"),
    };
    let mut t = String::from(
        "| rate | seen | upper bound | lower bound | inconclusive when |\n|---|---:|---:|---:|---:|\n",
    );
    t.push_str(&row(
        "false alarm: no change, fork blocked",
        g.false_alarms.as_ref(),
    ));
    t.push_str(&row(
        "false block: half the threshold, fork blocked",
        g.false_blocks.as_ref(),
    ));
    match &g.power {
        Some(p) => t.push_str(&format!(
            "| power: twice the threshold, deciding interval | computed: {} | | | below {} |\n",
            format::percent(p.power),
            format::percent(g.min_power)
        )),
        None => {
            t.push_str("| power: twice the threshold, deciding interval | not computed | | | |\n")
        }
    }
    Some(t)
}

/// Every part of the command line and environment that changed the
/// design or the gate from what the experiment file says: each `--set`
/// (as recorded, passwords redacted), a shard chosen by flag or by a
/// scheduler's variable, and a test fault. A verdict reached under any of
/// them is not the file's verdict, so it says so.
pub(super) fn overrides(info: &crate::run_folder::RunInfo) -> Vec<String> {
    let mut out = Vec::new();
    if let crate::run_folder::invocation::Invocation::Exec(e) = &info.invocation {
        out.extend(e.set.iter().map(|s| format!("--set {s}")));
    }
    if let Some(s) = &info.shard {
        let source = serde_json::to_value(s.source)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        out.push(format!("shard {}/{} (from {source})", s.index, s.count));
    }
    if let Some(f) = &info.build.fault {
        // exec's fault injection for tests (`RUNNER_FAULT`).
        out.push(format!("RUNNER_FAULT={f}"));
    }
    out
}

/// What follows the verdict's sentence: that the gate compared its
/// baseline with itself, and the overrides it ran under.
fn verdict_notes(exp: &Experiment, who_is_base: bool, overrides: &[String]) -> String {
    let mut out = String::new();
    if who_is_base {
        out.push_str(&format!(
            " A/A: the treatment is the baseline itself (`{}`), so this gate compared the baseline with itself and could block no change.",
            exp.design.baseline
        ));
    }
    if !overrides.is_empty() {
        out.push_str(&format!(
            " Run with overrides of the experiment file: {}.",
            format::list(
                &overrides
                    .iter()
                    .map(|o| format!("`{o}`"))
                    .collect::<Vec<_>>(),
                "and"
            )
        ));
    }
    out
}

pub(super) fn view<'a>(
    g: &'a GateAnalysis,
    exp: &Experiment,
    confidence: f64,
    overrides: &[String],
) -> GateView<'a> {
    let who_is_base = exp.design.is_aa()
        || deciding(g).is_some_and(|(_, c)| {
            c.params
                .get(crate::plan::TREATMENT_KEY)
                .and_then(|v| v.as_str())
                .is_some_and(|t| t == exp.design.baseline)
        });
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
            verdict: format!(
                "{}{}",
                verdict(g, exp, confidence),
                verdict_notes(exp, who_is_base, overrides)
            ),
            overrides: overrides.to_vec(),
            aa: who_is_base,
            self_check: self_check(g, exp, confidence),
            deciding_cell: deciding(g).map(|(_, c)| c.cell),
            rows,
            rates: rates_table(g),
        },
    }
}
