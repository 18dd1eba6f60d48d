//! The gate's sentences (docs/guide/commands.md), shared by the report's Gate
//! section, the terminal summary (which leads with the verdict),
//! `gate.json`'s `summary` and the `$GITHUB_STEP_SUMMARY` lines.

use crate::numbers;
use runner_analysis::gate::{
    Advice, AdviceChange, GateAnalysis, GateCell, GateGroup, Judged, Reason, SelfCheck, Share,
    Verdict, MIN_FORKS,
};
use runner_spec::Experiment;
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
    /// `PASS`, `REGRESSION` or `INCONCLUSIVE`, with `, OVERRIDDEN` when
    /// the command line changed the design or the gate.
    pub label: String,
    /// The heading of the table's statistic column: `change in run time
    /// (speed ratio - 1) [95 % interval over the forks]`.
    pub column: String,
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
    /// The threshold: `+2 % run time (a speed ratio of 1.02)`, or `50 µs`.
    pub threshold: String,
    /// The deciding statistic: `+0.3 % [-0.4, +1.0] run time`, or
    /// `0.31 [-0.40, 1.08] µs`.
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

/// `+2 % run time (a speed ratio of 1.02)`, `+2 % instructions (a ratio
/// of 1.02)` or `50 µs`.
fn threshold(g: &GateAnalysis, group: &GateGroup) -> String {
    match g.judges {
        Judged::Ratio => format!(
            "+{} run time (a speed ratio of {})",
            g.max_slowdown.replace('%', " %"),
            group.threshold
        ),
        Judged::Instructions => format!(
            "+{} instructions (a ratio of {})",
            g.max_slowdown.replace('%', " %"),
            group.threshold
        ),
        Judged::Difference => numbers::delay(group.threshold_ns),
    }
}

/// What a ratio gate's percentage is of: `run time`, or `instructions`.
fn unit(g: &GateAnalysis) -> &'static str {
    match g.judges {
        Judged::Instructions => "instructions",
        _ => "run time",
    }
}

/// The cell that decided, with its group: with too few forks, the one
/// with fewest; else a regression, else an inconclusive cell, else the
/// one whose interval reaches highest.
fn deciding(g: &GateAnalysis) -> Option<(&GateGroup, &GateCell)> {
    let all = || {
        g.groups
            .iter()
            .flat_map(|gr| gr.cells.iter().map(move |c| (gr, c)))
    };
    if g.reason == Reason::TooFewForks {
        return all().min_by_key(|(_, c)| c.forks);
    }
    all()
        .find(|(_, c)| c.decision == Verdict::Regression)
        .or_else(|| all().find(|(_, c)| c.decision == Verdict::Inconclusive))
        .or_else(|| {
            all().max_by(|a, b| (a.1.ci[1] - a.0.threshold).total_cmp(&(b.1.ci[1] - b.0.threshold)))
        })
}

/// The judged statistic with its interval: the change in run time
/// (`+2.2 % [+2.0, +2.7] run time`, as the Finding prints it) or D
/// (`70 [64, 86] µs`).
fn judged(g: &GateAnalysis, m: f64, ci: [f64; 2]) -> String {
    match g.judges {
        Judged::Ratio | Judged::Instructions => format!(
            "{} {}",
            crate::effect::percent_of(m - 1.0, [ci[0] - 1.0, ci[1] - 1.0]),
            unit(g)
        ),
        Judged::Difference => numbers::estimate(m, ci[0], ci[1]),
    }
}

/// A resolved slowdown or speed-up of `who` against `base`, in words:
/// `` `pr` is slower than `base`: +1.3 % [+1.0, +1.7] run time`` (a
/// ratio), or `` `pr` is 40 [31, 52] µs slower than `base` per run`` (a
/// positive duration).
fn sized(g: &GateAnalysis, c: &GateCell, who: &str, base: &str, at: &str) -> String {
    let [lo, hi] = c.ci;
    match g.judges {
        Judged::Ratio => format!(
            "`{who}` is {} than `{base}`{at}: {}",
            if lo > 1.0 { "slower" } else { "faster" },
            judged(g, c.estimate, c.ci)
        ),
        Judged::Instructions => format!(
            "`{who}` runs {} instructions than `{base}`{at}: {}",
            if lo > 1.0 { "more" } else { "fewer" },
            judged(g, c.estimate, c.ci)
        ),
        Judged::Difference if lo > 0.0 => format!(
            "`{who}` is {} slower than `{base}` per run{at}",
            judged(g, c.estimate, c.ci)
        ),
        Judged::Difference => format!(
            "`{who}` is {} faster than `{base}` per run{at}",
            judged(g, -c.estimate, [-hi, -lo])
        ),
    }
}

/// The design the analysis predicts would decide (`analysis::gate`'s
/// advice): `about 30 forks of 36 pairs (`--set design.pairs=36`) are
/// predicted to narrow it to 58 µs, enough to decide`.
fn would_decide(g: &GateAnalysis, gap: f64, exp: &Experiment) -> String {
    match &g.advice {
        Some(a) => advice_text(a, exp),
        None if exp.design.forks.get() < 2 => "with one fork per cell there is no fork-to-fork spread to size a design from; run more forks".into(),
        None if g.judges.is_ratio() => format!(
            "the estimate sits {} from the threshold, closer than {} forks of up to 16 times the pairs are predicted to resolve: the slowdown is, for this gate, at its threshold",
            numbers::percent(gap),
            runner_analysis::MAX_FORKS
        ),
        None => format!(
            "the estimate sits {} from the threshold, closer than {} forks of up to 16 times the pairs are predicted to resolve: the slowdown is, for this gate, at its threshold",
            numbers::duration(gap),
            runner_analysis::MAX_FORKS
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
    match a.predicted_half_width_ns {
        Some(predicted) => format!(
            "{what}, about {} of {} pairs (`{}`), are predicted from the cell's variance components to narrow D's interval to ±{}, enough to decide (±{} is needed)",
            crate::effect::forks_count(a.forks),
            a.pairs,
            advice_flags(a, exp),
            numbers::duration(predicted),
            numbers::duration(a.needed_half_width_ns)
        ),
        None => format!(
            "run {} at least (`{}`)",
            crate::effect::forks_count(a.forks),
            advice_flags(a, exp),
        ),
    }
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
        format!(" at {}", numbers::params(&exp.grid.labelled(&cell.params)))
    } else {
        String::new()
    };
    let who = match cell
        .params
        .get(runner_plan::TREATMENT_KEY)
        .and_then(|v| v.as_str())
    {
        Some(t) => t.to_string(),
        None => treatment,
    };
    let interval = crate::effect::interval_name(g.interval, confidence);
    let t = threshold(g, group);
    let allowed = match g.judges {
        Judged::Ratio | Judged::Instructions => {
            format!("the {} allowed", g.max_slowdown.replace('%', " %"))
        }
        Judged::Difference => format!("the {} allowed", numbers::delay(group.threshold_ns)),
    };
    let no_change = match g.judges {
        Judged::Ratio | Judged::Instructions => 1.0,
        Judged::Difference => 0.0,
    };
    let [lo, hi] = cell.ci;
    let base = &d.baseline;
    let value = judged(g, cell.estimate, cell.ci);
    let every = if many { ", as every cell's does" } else { "" };
    match g.reason {
        Reason::IntervalBelowThreshold if lo > no_change || hi < no_change => format!(
            "Passed: {}, within {allowed}: the whole {interval} lies below the threshold of {t}{every}.",
            sized(g, cell, &who, base, &at),
        ),
        Reason::IntervalBelowThreshold => format!(
            "Passed: no slowdown resolved{at} ({value}), and the whole {interval} lies below the threshold of {t}{every}.",
        ),
        Reason::Regression => format!(
            "Regression: {}, above {allowed}: the whole {interval} lies above the threshold of {t}.",
            sized(g, cell, &who, base, &at)
        ),
        Reason::IntervalReachesThreshold => format!(
            "Inconclusive: the slowdown{at}, {value}, has a {interval} that straddles the threshold of {t}, so the data cannot say on which side of it the slowdown lies; {}.",
            would_decide(g, (cell.estimate - group.threshold).abs(), exp)
        ),
        Reason::TooFewForks => format!(
            "Inconclusive: {} per cell cannot bound an effect for a gate ({value}{at}): an interval over so few forks rests on their effects being normal, which nothing in them can check; {} at least: {}.",
            crate::effect::forks_count(cell.forks),
            crate::effect::forks_count(MIN_FORKS),
            g.advice.as_ref().map_or_else(
                || format!("`--set design.forks={MIN_FORKS}`"),
                |a| advice_text(a, exp)
            )
        ),
        Reason::Load => format!(
            "Inconclusive: the machine's load changed how long runs took while the gate measured: the baseline's forks' median runs spread by {} (more than the threshold), and the speed ratio ({value}) and the per-run difference ({}, against {} in time) disagree about the threshold of {t}; run it again on a quieter machine.",
            numbers::percent(group.baseline_spread),
            numbers::estimate(cell.difference_ns, cell.difference_ci_ns[0], cell.difference_ci_ns[1]),
            numbers::duration(group.threshold_ns),
        ),
        Reason::LowPower => {
            let p = g.power.as_ref();
            let advice = match &g.advice {
                Some(a) => format!("; {}", advice_text(a, exp)),
                None => String::new(),
            };
            format!(
                "Inconclusive: every interval lies below the threshold of {t}, but an interval as wide as the deciding one ({value}) would catch a slowdown of twice the threshold ({}) with a computed power of only {}, short of the {} asked for (`gate.min_power`): a pass that could not have failed is not a pass{advice}.",
                p.map_or_else(String::new, |p| slowdown_words(g, p.slowdown)),
                numbers::percent(p.map_or(0.0, |p| p.power)),
                numbers::percent(g.min_power),
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
                    "Inconclusive: the self-check blocked an unchanged or within-budget change in {} of {}, at least {} by the bound, above the {} allowed (`gate.max_false_block`): on this machine forks' intervals are not valid to block on. (The {interval} alone {interval_said}: {value}.)",
                    w.flagged,
                    crate::effect::forks_count(w.forks),
                    numbers::percent(w.lower_bound),
                    numbers::percent(g.max_false_block),
                ),
                None => "Inconclusive: the self-check failed.".into(),
            }
        }
    }
}

/// Twice the threshold, in its unit: `+4 % run time` or `100 µs`.
fn slowdown_words(g: &GateAnalysis, slowdown: f64) -> String {
    match g.judges {
        Judged::Ratio | Judged::Instructions => {
            format!("+{} {}", numbers::percent(slowdown - 1.0), unit(g))
        }
        Judged::Difference => numbers::duration(slowdown),
    }
}

/// The deciding interval's computed power, as a clause: said for a pass
/// (and for a pass short of it), where it is what the verdict rests on.
fn power_clause(g: &GateAnalysis) -> Option<String> {
    if !matches!(g.reason, Reason::IntervalBelowThreshold | Reason::LowPower) {
        return None;
    }
    g.power.as_ref().map(|p| {
        format!(
            "the deciding interval's power to block a slowdown of twice the threshold ({}) is {} (computed from its width), against the {} asked for (`gate.min_power`)",
            slowdown_words(g, p.slowdown),
            numbers::percent(p.power),
            numbers::percent(g.min_power)
        )
    })
}

fn self_check(g: &GateAnalysis, exp: &Experiment, confidence: f64) -> String {
    let power = power_clause(g).map_or(String::new(), |p| format!("; {p}"));
    if !g.self_check {
        return format!(
            "Self-check off (gate.self_check = false): whether forks' intervals are valid on this machine was not tested{power}."
        );
    }
    let base = &exp.design.baseline;
    let seen = |s: &Share| {
        if g.self_check_bounds {
            format!(
                "{} of {} (at most {})",
                s.flagged,
                crate::effect::forks_count(s.forks),
                numbers::percent(s.upper_bound)
            )
        } else {
            format!("{} of {}", s.flagged, crate::effect::forks_count(s.forks))
        }
    };
    let mut parts = Vec::new();
    match &g.false_alarms {
        Some(s) => parts.push(format!("with nothing changed the rule blocked {}", seen(s))),
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
            numbers::duration(one.delay_ns as f64),
            seen(s)
        ));
    } else if let Some(s) = &g.false_blocks {
        parts.push(format!(
            "with half the threshold injected it blocked {}",
            seen(s)
        ));
    }
    let allowed = if g.self_check_bounds {
        format!(
            " (at {} confidence; the gate is inconclusive only when either rate is shown above the {} allowed (`gate.max_false_block`); a valid interval blocks such a change at most {} of the time)",
            numbers::percent(confidence),
            numbers::percent(g.max_false_block),
            numbers::percent(g.nominal_false_alarm)
        )
    } else {
        let needed = runner_stats::gate::forks_to_bound(g.max_false_block, confidence);
        format!(
            "; too few forks to bound its rates ({} blocking none would bound them at {}), so it only guards against grossly invalid intervals, and the verdict rests on the deciding interval's own rate, {} for a valid interval",
            crate::effect::forks_count(needed),
            numbers::percent(g.max_false_block),
            numbers::percent(g.nominal_false_alarm)
        )
    };
    format!(
        "Self-check (`{base}` against itself, the rule applied to each fork's own interval, a test of whether forks' intervals are valid): {}{allowed}{power}.",
        numbers::list(&parts, "and"),
    )
}

/// The self-check's two rates and the deciding interval's power as a
/// Markdown table, or none without a self-check.
pub(super) fn rates_table(g: &GateAnalysis) -> Option<String> {
    if !g.self_check || !g.self_check_bounds {
        return None;
    }
    let row = |what: &str, s: Option<&Share>| match s {
        Some(s) => format!(
            "| {what} | {} of {} | at most {} | at least {} | shown above {} |\n",
            s.flagged,
            s.forks,
            numbers::percent(s.upper_bound),
            numbers::percent(s.lower_bound),
            numbers::percent(g.max_false_block)
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
    if let Some(p) = power_clause(g).and(g.power.as_ref()) {
        t.push_str(&format!(
            "| power: twice the threshold, deciding interval | computed: {} | | | below {} |\n",
            numbers::percent(p.power),
            numbers::percent(g.min_power)
        ));
    }
    Some(t)
}

/// Every part of the command line and environment that changed the
/// design or the gate from what the experiment file says: each `--set`
/// (as recorded, passwords redacted), a shard chosen by flag or by a
/// scheduler's variable, and a test fault. A verdict reached under any of
/// them is not the file's verdict, so it says so.
pub(super) fn overrides(info: &runner_folder::RunInfo) -> Vec<String> {
    let mut out = Vec::new();
    if let runner_folder::invocation::Invocation::Exec(e) = &info.invocation() {
        out.extend(e.set.iter().map(|s| format!("--set {s}")));
    }
    if let Some(s) = &info.shard() {
        let source = serde_json::to_value(s.source)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        out.push(format!("shard {}/{} (from {source})", s.index, s.count));
    }
    if let Some(f) = &info.build().fault {
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
            numbers::list(
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
                .get(runner_plan::TREATMENT_KEY)
                .and_then(|v| v.as_str())
                .is_some_and(|t| t == exp.design.baseline)
        });
    let many = g.groups.iter().map(|gr| gr.cells.len()).sum::<usize>() > 1;
    let estimates = numbers::Column::time(
        &g.groups
            .iter()
            .flat_map(|gr| &gr.cells)
            .map(|c| numbers::Entry::Estimate(c.estimate, c.ci[0], c.ci[1]))
            .collect::<Vec<_>>(),
    );
    let estimate = |c: &GateCell| match g.judges {
        Judged::Ratio | Judged::Instructions => judged(g, c.estimate, c.ci),
        Judged::Difference => estimates.estimate(c.estimate, c.ci[0], c.ci[1]),
    };
    let rows = g
        .groups
        .iter()
        .flat_map(|gr| {
            gr.cells.iter().map(move |c| GateRow {
                label: if many {
                    numbers::params(&exp.grid.labelled(&c.params))
                } else {
                    "all pairs".into()
                },
                threshold: threshold(g, gr),
                estimate: estimate(c),
                decision: c.decision,
            })
        })
        .collect();
    GateView {
        data: g,
        view: GateText {
            label: if overrides.is_empty() {
                label(g.verdict).into()
            } else {
                format!("{}, OVERRIDDEN", label(g.verdict))
            },
            column: format!(
                "{} [{}]",
                match g.judges {
                    Judged::Ratio => "change in run time (speed ratio - 1)",
                    Judged::Instructions => "change in instructions (their ratio - 1)",
                    Judged::Difference => "median D per run",
                },
                crate::effect::interval_name(g.interval, confidence)
            ),
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
