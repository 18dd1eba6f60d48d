//! Per-cell presentation: row labels, and the numbers the variance section
//! derives from the analysis (a fork median's standard error, what the
//! design that ran would reach, the recommendation against it).

use crate::numbers;
use runner_analysis::{Analysis, CellAnalysis};
use runner_spec::Experiment;
use serde::Serialize;

use runner_analysis::{
    DEFAULT_TARGET_FRACTION as TARGET_FRACTION, FORK_OVERHEAD_PAIRS, MAX_FORKS, PAIRS_OPTIONS,
};

/// One cell of `analysis.json` with its `view`.
#[derive(Debug, Serialize)]
pub struct CellView<'a> {
    #[serde(flatten)]
    pub data: &'a CellAnalysis,
    pub view: CellText,
}

#[derive(Debug, Serialize)]
pub struct CellText {
    /// The row's name in tables: the delay (`25 µs`), or the swept params
    /// when the grid sweeps more than the delay (`plans = 10`,
    /// `25 µs, plans = 10`).
    pub label: String,
    /// The injected delay, exactly: `25 µs`, `0`.
    pub delay: String,
    /// Standard error of one fork's median of `design.pairs` pairs (ns),
    /// from the robust within-fork component; none with one fork.
    pub median_se_ns: Option<f64>,
    /// Half-width (ns) the design that ran (forks x pairs) is predicted to
    /// reach from the robust components; none with one fork.
    pub ran_half_width_ns: Option<f64>,
    /// The recommendation in words: `4 x 300 (± 4.88 µs), cheaper than
    /// this run`, with the search's limits named; none with one fork.
    pub recommended: Option<String>,
    /// The two arms' strategy names (the cell's variant for the treatment).
    pub baseline: String,
    pub treatment: String,
    /// Both arms run the same thing: an A/A cell, whose differences are
    /// the harness's (seen / reversed), not an effect.
    pub same_arms: bool,
    /// The effect in words (`report::effect`); none in an A/A experiment.
    pub effect: Option<crate::effect::EffectText>,
    /// The forks' own verdicts, short: `3/10 seen, 1 reversed` for an A/A
    /// cell (its delay's direction is known), `3/3 faster` for an A/B one.
    pub forks_column: String,
}

/// The arms' names in a cell, its placeholders filled
/// (`comparison::filled`).
pub(super) struct Names {
    pub baseline: String,
    pub treatment: String,
}

pub(super) fn view<'a>(
    c: &'a CellAnalysis,
    a: &Analysis,
    exp: &Experiment,
    names: Names,
    same_arms: bool,
) -> CellView<'a> {
    let Names {
        baseline,
        treatment,
    } = names;
    // Every cell of an A/B experiment has an effect, its A/A-like cells
    // too (a variant identical to the baseline answers "no difference
    // resolved", which is the point of including it).
    let effect = (!exp.design.is_aa())
        .then(|| crate::effect::text(&c.effect(), &treatment, &baseline, a.confidence));
    let forks_column = if same_arms {
        let reversed = if c.forks_reversed > 0 {
            format!(", {} reversed", c.forks_reversed)
        } else {
            String::new()
        };
        format!("{}/{} seen{reversed}", c.forks_seen, c.forks_total)
    } else {
        crate::effect::forks_agreeing(&c.effect())
    };
    CellView {
        data: c,
        view: CellText {
            label: label(c, a, exp),
            baseline,
            treatment,
            same_arms,
            effect,
            forks_column,
            delay: numbers::delay(c.delay_ns as f64),
            median_se_ns: c
                .variance
                .as_ref()
                .map(|v| (v.median_within_ns2 / f64::from(exp.design.pairs.get())).sqrt()),
            ran_half_width_ns: ran_half_width(c, a, exp),
            recommended: recommended(c, exp),
        },
    }
}

/// The delay, the other params, or both: whatever tells rows apart; with
/// one cell of an A/B comparison, the treatment's name.
pub(super) fn label(c: &CellAnalysis, a: &Analysis, exp: &Experiment) -> String {
    let many_groups = a.headline.groups.len() > 1;
    let mut delays: Vec<u64> = a.cells.iter().map(|c| c.delay_ns).collect();
    delays.sort_unstable();
    delays.dedup();
    let mut parts = Vec::new();
    // A plain A/B (one cell, no delay) is named by its treatment; a study
    // by its delays.
    let plain = !exp.design.is_aa() && delays == [0];
    if delays.len() > 1 || (!many_groups && !plain) {
        parts.push(numbers::delay(c.delay_ns as f64));
    }
    if many_groups {
        let others = runner_plan::group_params(&exp.grid.labelled(&c.params));
        parts.push(numbers::params(&others));
    }
    if parts.is_empty() {
        parts.push(exp.design.variants().join(", "));
    }
    parts.join(", ")
}

fn ran_half_width(c: &CellAnalysis, a: &Analysis, exp: &Experiment) -> Option<f64> {
    let v = c.variance.as_ref()?;
    let vc = runner_stats::VarianceComponents {
        between: v.median_between_ns2,
        within: v.median_within_ns2,
    };
    Some(runner_stats::predicted_half_width(
        vc,
        a.confidence,
        c.forks_total,
        exp.design.pairs.get(),
    ))
}

fn recommended(c: &CellAnalysis, exp: &Experiment) -> Option<String> {
    let v = c.variance.as_ref()?;
    let Some(r) = &v.recommended else {
        return Some(format!(
            "none within {MAX_FORKS} forks x {} pairs",
            PAIRS_OPTIONS[PAIRS_OPTIONS.len() - 1]
        ));
    };
    let ran_forks = c.forks_total;
    let ran_pairs = exp.design.pairs.get();
    let cost = |forks: u32, pairs: u32| u64::from(forks) * u64::from(pairs + FORK_OVERHEAD_PAIRS);
    let ran_cost = cost(ran_forks, ran_pairs);
    let mut text = format!(
        "{} x {} (± {})",
        r.forks,
        r.pairs,
        numbers::duration(r.half_width_ns)
    );
    if r.forks == 2 && r.pairs == PAIRS_OPTIONS[0] {
        text.push_str(", the smallest design searched");
    } else if (r.forks, r.pairs) == (ran_forks, ran_pairs) {
        text.push_str(", this run's design");
    } else if r.cost_pairs < ran_cost {
        text.push_str(", cheaper than this run");
    } else {
        text.push_str(", costlier than this run");
    }
    Some(text)
}

/// The widest spread of baseline fork medians within one cell, against the
/// injected delays.
pub(super) fn spread_sentence(a: &Analysis, exp: &Experiment) -> Option<String> {
    let widest = a
        .cells
        .iter()
        .filter(|c| c.forks.len() > 1)
        .max_by(|x, y| {
            let w = |c: &CellAnalysis| c.spread.baseline_max_ns - c.spread.baseline_min_ns;
            w(x).total_cmp(&w(y))
        })?;
    let width = widest.spread.baseline_max_ns - widest.spread.baseline_min_ns;
    let mut delays: Vec<u64> = a
        .cells
        .iter()
        .map(|c| c.delay_ns)
        .filter(|d| *d > 0)
        .collect();
    delays.sort_unstable();
    delays.dedup();
    let below: Vec<String> = delays
        .iter()
        .filter(|d| (**d as f64) < width)
        .map(|d| numbers::delay(*d as f64))
        .collect();
    let against = if delays.is_empty() {
        String::new()
    } else if below.len() == delays.len() {
        ", more than every injected delay".into()
    } else if below.is_empty() {
        format!(
            ", less than the smallest injected delay ({})",
            numbers::delay(delays[0] as f64)
        )
    } else {
        format!(
            ", more than the injected delays of {} (not {})",
            numbers::list(&below, "and"),
            numbers::list(
                &delays[below.len()..]
                    .iter()
                    .map(|d| numbers::delay(*d as f64))
                    .collect::<Vec<_>>(),
                "or"
            )
        )
    };
    let at = if a.cells.len() < 2 {
        String::new()
    } else if a.headline.groups.len() > 1 {
        format!(" (in the cell {})", label(widest, a, exp))
    } else {
        format!(" (at d = {})", label(widest, a, exp))
    };
    Some(format!(
        "Within one cell, the forks' baseline medians differed by up to {}{at}{against}.",
        numbers::duration(width)
    ))
}

/// What the recommendation column searched, and how it relates to the
/// design that ran.
pub(super) fn design_search_sentence(a: &Analysis, exp: &Experiment) -> Option<String> {
    a.cells.iter().find(|c| c.variance.is_some())?;
    let pairs: Vec<String> = PAIRS_OPTIONS.iter().map(u32::to_string).collect();
    Some(format!(
        "The search tries 2 to {MAX_FORKS} forks of {} measured pairs each, counts starting a fork as {FORK_OVERHEAD_PAIRS} pairs, and picks the cheapest design whose predicted half-width reaches the target ({} of the cell's pooled median baseline). Its smallest design is 2 x {}: where that appears, this run's {} x {} was more than the target needed, as the column \"this run reaches\" shows.",
        numbers::list(&pairs, "or"),
        numbers::percent(TARGET_FRACTION),
        PAIRS_OPTIONS[0],
        exp.design.forks,
        exp.design.pairs,
    ))
}
