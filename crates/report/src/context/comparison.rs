//! What an A/B comparison says, in the user's words: the Finding's effect
//! sentences, the summary table ranked by the speed ratio (several variants
//! or a sweep), how the effect relates to the harness's threshold when the
//! run also measured one, and warnings when the run order moved the arms by
//! an amount that matters against the effect.
//!
//! A cell is a comparison when its two arms run different things; its
//! effect at d = 0 is the user's answer. A cell with an injected delay adds
//! the delay on top of that difference and is reported in the tables, not
//! ranked.

use super::cells::CellView;
use crate::effect::{self, EffectText};
use crate::numbers;
use runner_analysis::effect::{Direction, Effect};
use runner_analysis::{CarryOver, CellAnalysis, GroupHeadline, Order};
use serde::Serialize;

/// The comparison cells of a run; none when every cell is an A/A.
#[derive(Debug, Serialize)]
pub struct ComparisonView {
    /// The cells at d = 0 whose arms differ, fastest treatment first (by
    /// the speed ratio; ties in cell order).
    pub rows: Vec<SummaryRow>,
    /// More than one row: the report opens with the ranked table.
    pub ranked: bool,
    /// The intervals' name(s): `hierarchical 95 % interval (forks, then pairs)`.
    pub interval: String,
    /// How the effect compares with the smallest delay every fork of an
    /// A/A group saw; none without such a group.
    pub threshold: Option<String>,
    /// Order and carry-over effects that are large against the effect.
    pub warnings: Vec<Warning>,
}

/// A warning of the Finding.
#[derive(Debug, Serialize)]
pub struct Warning {
    /// `speed`, `carry-over`, `order` or `failures`.
    pub kind: &'static str,
    pub text: String,
}

/// One ranked row: a variant (or a cell of a sweep) against the baseline.
#[derive(Debug, Serialize)]
pub struct SummaryRow {
    pub cell: u32,
    /// The variant's name or the cell's params: `quick`, `fast.argv = gzip -6`.
    pub label: String,
    /// The treatment strategy's name.
    pub treatment: String,
    #[serde(flatten)]
    pub text: EffectText,
    /// `3/3 faster`: forks whose own interval agrees with the direction.
    pub forks_agreeing: String,
    pub baseline_median_ns: f64,
    pub treatment_median_ns: f64,
    /// The injected delay when the row's cell has one (`50 µs`).
    pub delay: Option<String>,
}

/// The treatment strategy a cell runs against the baseline.
pub fn treatment_of(info: &runner_folder::RunInfo, cell: u32) -> String {
    let exp = &info.spec().experiment;
    let of = info.cells().iter().find(|c| c.cell == cell);
    let name = of
        .and_then(|c| c.treatment.clone())
        .unwrap_or_else(|| exp.design.treatment.clone());
    of.map_or(name.clone(), |c| filled(&name, &c.params))
}

/// The baseline's name in `cell`, its placeholders filled.
pub fn baseline_of(info: &runner_folder::RunInfo, cell: u32) -> String {
    let name = &info.spec().experiment.design.baseline;
    info.cells()
        .iter()
        .find(|c| c.cell == cell)
        .map_or(name.clone(), |c| filled(name, &c.params))
}

/// `name` with the placeholders of `params` (a cell's grid values) filled
/// in: `runner ab` names a strategy by its command line, so the cell of
/// `level = 6` of `gzip -{level} -c` reads `gzip -6 -c`. Other braces stay
/// as they are.
pub fn filled(name: &str, params: &serde_json::Map<String, serde_json::Value>) -> String {
    use runner_spec::placeholder::{substitute, Fill};
    substitute(name, false, |n| match params.get(n) {
        Some(v) => Fill::With(runner_plan::param_text(v)),
        None => Fill::Keep,
    })
    .text
}

/// `cells` with their views; `comparing` tells which compare different arms.
pub(super) fn view(
    cells: &[CellView<'_>],
    groups: &[&GroupHeadline],
    same_group: &[bool],
    confidence: f64,
) -> Option<ComparisonView> {
    let answers: Vec<&CellView<'_>> = cells
        .iter()
        .filter(|c| c.view.effect.is_some() && c.data.delay_ns == 0)
        .collect();
    let answers = if answers.is_empty() {
        // Only delayed A/B cells: the smallest delay stands for the answer.
        let min = cells
            .iter()
            .filter(|c| c.view.effect.is_some())
            .map(|c| c.data.delay_ns)
            .min()?;
        cells
            .iter()
            .filter(|c| c.view.effect.is_some() && c.data.delay_ns == min)
            .collect()
    } else {
        answers
    };
    let effects: Vec<Effect> = answers.iter().map(|c| c.data.effect()).collect();
    let digits = effect::Digits::of(&effects.iter().collect::<Vec<_>>());
    let mut rows: Vec<SummaryRow> = answers
        .iter()
        .map(|c| row(c, &digits, confidence))
        .collect();
    rows.sort_by(|a, b| {
        let ratio = |r: &SummaryRow| {
            let c = cells.iter().find(|c| c.data.cell == r.cell);
            c.map_or(f64::NAN, |c| c.data.effect.ratio)
        };
        ratio(a).total_cmp(&ratio(b)).then(a.cell.cmp(&b.cell))
    });
    let kinds: std::collections::BTreeSet<String> = answers
        .iter()
        .map(|c| effect::interval_name(c.data.effect().interval, confidence))
        .collect();
    let mut warnings: Vec<Warning> = speed_warning(&answers).into_iter().collect();
    warnings.extend(merged(
        answers
            .iter()
            .flat_map(|c| warnings_of(c, answers.len() > 1)),
    ));
    Some(ComparisonView {
        ranked: rows.len() > 1,
        rows,
        interval: kinds.into_iter().collect::<Vec<_>>().join("; "),
        threshold: threshold(&answers, groups, same_group),
        warnings,
    })
}

fn row(c: &CellView<'_>, digits: &effect::Digits, confidence: f64) -> SummaryRow {
    let e = c.data.effect();
    let text = effect::text_in(&e, &c.view.treatment, &c.view.baseline, confidence, digits);
    SummaryRow {
        forks_agreeing: effect::forks_agreeing(&e),
        cell: c.data.cell,
        label: c.view.label.clone(),
        treatment: c.view.treatment.clone(),
        text,
        delay: (c.data.delay_ns > 0).then(|| c.view.delay.clone()),
        baseline_median_ns: c.data.pooled.baseline_median_ns,
        treatment_median_ns: c.data.pooled.treatment_median_ns,
    }
}

/// "The 1.01 ms difference is 202 times the smallest delay every fork saw
/// (5 µs)", from the first A/A group that has a threshold.
fn threshold(
    answers: &[&CellView<'_>],
    groups: &[&GroupHeadline],
    same_group: &[bool],
) -> Option<String> {
    let smallest = groups
        .iter()
        .zip(same_group)
        .filter(|(_, same)| **same)
        .find_map(|(g, _)| g.smallest_delay_seen_by_all_ns)?;
    let d = smallest as f64;
    let parts: Vec<String> = answers
        .iter()
        .map(|c| {
            let e = c.data.effect();
            let size = numbers::duration(e.difference_ns.abs());
            let times = e.difference_ns.abs() / d;
            let who = if answers.len() > 1 {
                format!(" ({})", c.view.label)
            } else {
                String::new()
            };
            match e.direction {
                Direction::NoDifference => format!(
                    "no difference was resolved{who}, and this harness sees a delay of {} in every fork, so a difference larger than that would most likely have shown",
                    numbers::delay(d)
                ),
                _ => format!(
                    "the {size} difference{who} is {} the smallest delay every fork saw ({})",
                    times_text(times),
                    numbers::delay(d)
                ),
            }
        })
        .collect();
    let text = numbers::list(&parts, "and");
    let mut chars = text.chars();
    let first = chars.next()?.to_uppercase().collect::<String>();
    Some(format!("{first}{}.", chars.as_str()))
}

/// `202 times`, `2.5 times`, `0.40 times`.
fn times_text(x: f64) -> String {
    if x >= 10.0 {
        format!("{x:.0} times")
    } else if x >= 1.0 {
        format!("{x:.1} times")
    } else {
        format!("{x:.2} times")
    }
}

/// How large a contrast must be before the Finding warns: resolved (its
/// interval excludes 0), at least a tenth of the effect's size (with no
/// direction resolved, the half-width of the effect's interval: what the
/// run could have resolved), and at least 1 % of the baseline's median run
/// (the size of change a performance result is usually argued about), so
/// a few ns of order effect on a busy-wait do not raise a warning.
fn matters(contrast_ci: [f64; 2], contrast: f64, e: &Effect) -> bool {
    let excludes_zero = contrast_ci[0] > 0.0 || contrast_ci[1] < 0.0;
    let scale = match e.direction {
        Direction::NoDifference => (e.difference_ci_ns[1] - e.difference_ci_ns[0]) / 2.0,
        _ => e.difference_ns.abs() / 10.0,
    };
    let floor = runner_analysis::DEFAULT_TARGET_FRACTION * e.baseline_median_ns;
    excludes_zero && contrast.abs() >= scale.max(floor)
}

/// One paragraph per kind of warning, its cells' sentences in cell order:
/// a sweep whose six cells each had an order effect reads one warning,
/// not six, and the Finding stays a screen long.
fn merged(warnings: impl Iterator<Item = Warning>) -> Vec<Warning> {
    let mut out: Vec<Warning> = Vec::new();
    for w in warnings {
        match out.iter_mut().find(|o| o.kind == w.kind) {
            Some(o) => {
                o.text.push(' ');
                o.text.push_str(&w.text);
            }
            None => out.push(w),
        }
    }
    out
}

/// Order and carry-over warnings for one comparison cell.
fn warnings_of(c: &CellView<'_>, named: bool) -> Vec<Warning> {
    let data: &CellAnalysis = c.data;
    let e = data.effect();
    let who = if named {
        format!("{}: ", c.view.label)
    } else {
        String::new()
    };
    let (b, t) = (&c.view.baseline, &c.view.treatment);
    let mut out = Vec::new();
    // What ran before a run can differ only where the arms do: two arms
    // that run one program (an A/A, or a sweep's cell of the baseline's
    // own settings) see the same runs before them, so a contrast there is
    // the machine's (a CPU hog's slices falling unevenly), and ordering
    // would not cure it.
    let carry_over = (!c.view.same_arms)
        .then(|| carry_over_warning(&data.carry_over, &e, b, t))
        .flatten();
    if let Some(w) = carry_over {
        out.push(Warning {
            kind: "carry-over",
            text: format!("{who}{w}"),
        });
    }
    if let Some(w) = order_warning(&data.order, &e, t) {
        out.push(Warning {
            kind: "order",
            text: format!("{who}{w}"),
        });
    }
    out
}

/// One sentence for each arm whose runs after the other arm were inflated
/// (`analysis::carry_over::mark`), with the ratio from runs that followed
/// their own arm and the remedy; none when no arm was.
fn carry_over_warning(co: &CarryOver, e: &Effect, b: &str, t: &str) -> Option<String> {
    let arms = [(&co.baseline, b, t), (&co.treatment, t, b)];
    let said: Vec<String> = arms
        .iter()
        .filter(|(arm, _, _)| arm.inflates)
        .filter_map(|(arm, me, other)| {
            let (diff, ci) = (arm.difference_ns?, arm.ci_ns?);
            let (after_other, after_same) = (arm.after_other_median_ns?, arm.after_same_median_ns?);
            let (word, size) = if diff > 0.0 {
                ("slower", numbers::estimate(diff, ci[0], ci[1]))
            } else {
                ("faster", numbers::estimate(-diff, -ci[1], -ci[0]))
            };
            Some(format!(
                "a `{me}` run that followed a `{other}` run took {} against {} after a `{me}` run ({size} {word}, {} of its time)",
                numbers::duration(after_other),
                numbers::duration(after_same),
                numbers::percent(diff.abs() / after_same),
            ))
        })
        .collect();
    if said.is_empty() {
        return None;
    }
    let own = co.own_ratio.map_or(String::new(), |r| {
        format!(
            "; from runs that followed their own arm only, `{t}` is {}",
            effect::ratio_words(r.ratio, r.ratio_ci)
        )
    });
    Some(format!(
        "What ran before a run moved it: {}, against an effect of {}{own}. The medians and the ratio above mix both histories; `ordering = \"blocked\"` (each arm's runs after their own) or an untimed pause between runs keeps one arm from running in the other's wake.",
        numbers::list(&said, "and"),
        numbers::duration(e.difference_ns.abs()),
    ))
}

/// When the baseline's fork medians spread by more than [`SPEED_SPREAD`]
/// in a cell: the machine ran at different speeds during the run. Each
/// fork's ratio is on its own baseline, so the ratio holds; the durations
/// mix the speeds. One warning for the run, naming the widest spread.
fn speed_warning(answers: &[&CellView<'_>]) -> Option<Warning> {
    let spread = |c: &CellView<'_>| {
        let (lo, hi) = (c.data.spread.baseline_min_ns, c.data.spread.baseline_max_ns);
        (lo > 0.0).then(|| (hi / lo - 1.0, lo, hi))
    };
    let wide: Vec<(f64, f64, f64)> = answers
        .iter()
        .filter_map(|c| spread(c))
        .filter(|(s, _, _)| *s > SPEED_SPREAD)
        .collect();
    let &(s, lo, hi) = wide.iter().max_by(|a, b| a.0.total_cmp(&b.0))?;
    let cells = if answers.len() > 1 {
        format!(" in {} of {} cells", wide.len(), answers.len())
    } else {
        String::new()
    };
    Some(Warning {
        kind: "speed",
        text: format!(
            "the baseline's fork medians spread by more than {}{cells} (widest: {} to {}, {} apart): the machine changed speed during the run. Each fork's speed ratio is taken on its own baseline, so the ratio holds across speeds; durations (the medians, the per-run difference) mix them.",
            numbers::percent(SPEED_SPREAD),
            numbers::duration(lo),
            numbers::duration(hi),
            numbers::percent(s),
        ),
    })
}

/// Above this spread of the baseline's fork medians (max / min - 1), the
/// Finding says the machine changed speed: a fifth of a run is more than a
/// reader would put down to one fork starting luckier than another.
pub const SPEED_SPREAD: f64 = 0.20;

fn order_warning(order: &Order, e: &Effect, t: &str) -> Option<String> {
    let Order::PairedRandom {
        treatment_first_median_ns: Some(first),
        treatment_second_median_ns: Some(second),
        difference_ns: Some(diff),
        ci_ns: Some(ci),
        ..
    } = order
    else {
        return None;
    };
    if !matters(*ci, *diff, e) {
        return None;
    }
    Some(format!(
        "the difference was {} with `{t}` first and {} with `{t}` second in its pair (their difference {}), against an effect of {}; the pairs' random order balances the two, so the effect is their mix.",
        numbers::duration(*first),
        numbers::duration(*second),
        numbers::estimate(*diff, ci[0], ci[1]),
        numbers::duration(e.difference_ns.abs()),
    ))
}
