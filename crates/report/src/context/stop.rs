//! A sequential design in the report: the rule, per cell the forks run and
//! why it stopped (`cells[].stop`), and, for an A/A run, how often the
//! stopping interval was wrong next to a fixed-n interval peeked after
//! every fork on the same forks.

use crate::numbers::{self, Column, Entry};
use runner_analysis::stop::{CellStop, StopStatistic};
use runner_analysis::{Analysis, CellAnalysis};
use runner_folder::RunInfo;
use runner_plan::stop::StopMethod;
use runner_spec::{Experiment, StopRule};
use serde::Serialize;

/// The report's Stopping section.
#[derive(Debug, Serialize)]
pub struct StopView {
    /// The rule in words (`spec::describe_rule`), capitalised.
    pub rule: String,
    /// How the interval that decides is made, and why it holds where the
    /// run stopped.
    pub method: String,
    /// How many forks the cells ran, against a fixed design of max_forks.
    pub forks: String,
    pub rows: Vec<StopRow>,
    /// A/A cells at d = 0: how often the stopping interval excluded 0,
    /// and the peeked t interval; none unless the run is an A/A with them.
    pub at_zero: Option<String>,
    /// A/A cells with a delay: how often each interval held the wait
    /// actually injected; none unless there are some.
    pub at_delays: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct StopRow {
    pub label: String,
    pub forks_run: u32,
    /// `target`, `decided`, `max` or `time`.
    pub reason: &'static str,
    /// The judged statistic at the stop with its interval (the speed
    /// ratio, or D with one unit and digit rule for the column).
    pub interval: String,
    /// Where the t interval, looked at after every fork with the same rule,
    /// would have stopped: `3` or `12 (rule never held)`.
    pub naive_forks: String,
    pub naive_interval: String,
}

/// `k of n cells (p)`.
fn share(k: usize, n: usize) -> String {
    format!(
        "{k} of {n} cell{} ({})",
        if n == 1 { "" } else { "s" },
        numbers::percent(k as f64 / n.max(1) as f64)
    )
}

/// The central 95 % range of Binomial(n, p) as shares: what chance alone
/// gives a share whose true value is p.
fn chance_range(n: usize, p: f64) -> (f64, f64) {
    let n32 = n as u32;
    let cdf = |k: u32| runner_stats::gate::binomial_cdf(k, n32, p);
    let lo = (0..=n32).find(|&k| cdf(k) >= 0.025).unwrap_or(0);
    let hi = (0..=n32).find(|&k| cdf(k) >= 0.975).unwrap_or(n32);
    (f64::from(lo) / n as f64, f64::from(hi) / n as f64)
}

/// A cell and where its sequential design stopped it.
type Stopped<'a> = (&'a CellAnalysis, &'a CellStop);

/// The section; none for a fixed design.
pub(super) fn view(analysis: &Analysis, exp: &Experiment, info: &RunInfo) -> Option<StopView> {
    let rule = exp.design.stop?;
    let stopped: Vec<Stopped> = analysis
        .cells
        .iter()
        .filter_map(|c| Some((c, c.stop.as_ref()?)))
        .collect();
    let aa = exp.design.is_aa();
    let zero = aa_stops(&stopped, |c| aa && c.delay_ns == 0);
    let delayed = aa_stops(&stopped, |c| aa && c.delay_ns > 0);
    Some(StopView {
        rule: rule_text(&rule, exp, info),
        method: method(&rule, analysis.confidence, info),
        forks: forks_sentence(&stopped, &rule),
        rows: rows(&stopped, analysis, exp),
        at_zero: at_zero(&zero, &rule, analysis.confidence),
        at_delays: at_delays(&delayed),
    })
}

/// Each column has one unit and digit rule, so it is sized over every row.
fn rows(stopped: &[Stopped], analysis: &Analysis, exp: &Experiment) -> Vec<StopRow> {
    let column = |pick: fn(&CellStop) -> Entry| {
        Column::time(&stopped.iter().map(|(_, s)| pick(s)).collect::<Vec<_>>())
    };
    let main = column(|s| Entry::Estimate(s.estimate_ns, s.interval_ns[0], s.interval_ns[1]));
    let naive = column(|s| Entry::Interval(s.naive.interval_ns[0], s.naive.interval_ns[1]));
    stopped
        .iter()
        .map(|(c, s)| StopRow {
            label: super::cells::label(c, analysis, exp),
            forks_run: s.forks_run,
            reason: s.reason.as_str(),
            interval: judged(s, &main),
            naive_forks: if s.naive.met {
                s.naive.forks.to_string()
            } else {
                format!("{} (rule never held)", s.naive.forks)
            },
            naive_interval: naive.interval(s.naive.interval_ns[0], s.naive.interval_ns[1]),
        })
        .collect()
}

/// The row shows the statistic the rule stopped on, not always the time.
fn judged(s: &CellStop, main: &Column) -> String {
    match s.statistic {
        StopStatistic::Ratio => crate::effect::ratio_words(s.ratio, s.ratio_ci),
        StopStatistic::Difference => {
            main.estimate(s.estimate_ns, s.interval_ns[0], s.interval_ns[1])
        }
        StopStatistic::Instructions => match (s.instructions_ratio, s.instructions_ratio_ci) {
            (Some(r), Some([lo, hi])) => format!(
                "{} instructions",
                crate::effect::percent_of(r - 1.0, [lo - 1.0, hi - 1.0])
            ),
            _ => crate::effect::ratio_words(s.ratio, s.ratio_ci),
        },
    }
}

/// The forks saved are the design's point, so they are set against max_forks.
fn forks_sentence(stopped: &[Stopped], rule: &StopRule) -> String {
    let run: u32 = stopped.iter().map(|(_, s)| s.forks_run).sum();
    let most = rule.max_forks.get() * stopped.len() as u32;
    let (fewest, largest) = stopped
        .iter()
        .map(|(_, s)| s.forks_run)
        .fold((u32::MAX, 0), |(a, b), k| (a.min(k), b.max(k)));
    let of_fixed = numbers::percent(f64::from(run) / f64::from(most.max(1)));
    if stopped.len() == 1 {
        format!("It ran {run} of the {most} forks a fixed design would have run ({of_fixed}).")
    } else {
        format!(
            "The {} cells ran {run} forks in all, {of_fixed} of the {most} that {} forks per cell would have run; a cell ran {}.",
            stopped.len(),
            rule.max_forks,
            if fewest == largest {
                format!("{fewest} forks each")
            } else {
                format!(
                    "{fewest} to {largest} forks (mean {:.1})",
                    f64::from(run) / stopped.len().max(1) as f64
                )
            }
        )
    }
}

/// Only an A/A run knows the true difference, so only its stops are scored.
fn aa_stops<'a>(
    stopped: &[Stopped<'a>],
    keep: impl Fn(&CellAnalysis) -> bool,
) -> Vec<&'a CellStop> {
    stopped
        .iter()
        .filter(|(c, _)| keep(c))
        .map(|(_, s)| *s)
        .collect()
}

/// At d = 0 every decision is a false positive: their share tests the rule.
fn at_zero(zero: &[&CellStop], rule: &StopRule, confidence: f64) -> Option<String> {
    (!zero.is_empty()).then(|| {
        // A cell that stopped decided said there was a difference: at
        // d = 0, a false positive of the interval that decides; D's
        // interval, which the calibration reads, is counted beside it.
        let decided = zero
            .iter()
            .filter(|s| s.reason == runner_plan::stop::StopReason::Decided)
            .count();
        let wrong = zero.iter().filter(|s| !s.covers_injected).count();
        let naive = zero.iter().filter(|s| s.naive.met).count();
        let chance = chance_clause(zero.len(), confidence);
        let how = if rule.decide {
            format!(
                "a cell that stops decided is a false positive. {} did{chance}; D's interval at the stop excluded 0 in {}. The fixed-n t intervals of the same forks, looked at after every fork and stopped on with the same rule, decided in {}.",
                share(decided, zero.len()),
                share(wrong, zero.len()),
                share(naive, zero.len()),
            )
        } else {
            format!(
                "an interval at the stop that excludes 0 is a false positive: D's did in {}{chance}.",
                share(wrong, zero.len()),
            )
        };
        format!("At d = 0 nothing differs between the arms, so {how}")
    })
}

/// A share of false positives means little without the range chance allows.
fn chance_clause(cells: usize, confidence: f64) -> String {
    // Over a handful of cells chance allows anything.
    if cells >= 20 {
        let (lo, hi) = chance_range(cells, 1.0 - confidence);
        format!(
            "; at {} confidence, chance alone puts that share between {} and {} over {} cells, and an interval valid at every look is allowed at most that",
            numbers::percent(confidence),
            numbers::percent(lo),
            numbers::percent(hi),
            cells
        )
    } else {
        String::new()
    }
}

/// With a delay injected, coverage of the true wait is what can be checked.
fn at_delays(delayed: &[&CellStop]) -> Option<String> {
    (!delayed.is_empty()).then(|| {
        let held = delayed.iter().filter(|s| s.covers_injected).count();
        let naive = delayed.iter().filter(|s| s.naive.covers_injected).count();
        format!(
            "With a delay injected, the stopping interval held the wait actually injected (the median spin_ns of the forks run) in {}; the peeked t interval in {}.",
            share(held, delayed.len()),
            share(naive, delayed.len()),
        )
    })
}

/// The rule opens the section, so it reads as a sentence about this run.
fn rule_text(rule: &StopRule, exp: &Experiment, info: &RunInfo) -> String {
    let mut text = runner_spec::describe_rule(rule, exp.gate.is_some());
    // One comparison: it runs, not "each cell".
    if info.cells().len() == 1 {
        if let Some(rest) = text.strip_prefix("each cell runs") {
            text = format!("it runs{rest}");
        }
    }
    text[..1].make_ascii_uppercase();
    text
}

/// A run stopped by the older rule must say so: its stops answer to that.
fn method(rule: &StopRule, confidence: f64, info: &RunInfo) -> String {
    let now = spending_method(rule, confidence);
    match info.stop_method() {
        Some(StopMethod::Spending) => now,
        _ => format!(
            "This run stopped by an earlier rule, a confidence sequence over the forks' median D; its stops are checked against that rule. {now}"
        ),
    }
}

/// Why the interval a cell stopped on holds although the data chose when.
fn spending_method(rule: &StopRule, confidence: f64) -> String {
    let spending = runner_stats::spending::Spending::new(
        rule.min_forks.get() as usize,
        rule.max_forks.get() as usize,
        confidence,
    )
    .ok();
    let first = spending.as_ref().map_or(0, |s| s.first_look());
    format!(
        "The interval that decides is Student's t over the forks' estimates (their log speed ratios; their median D where the rule is in time), at each look from {first} forks on, each look at a share of the {} error rate fixed before the run ({} at the first look, the rest over the later ones, more to the earlier): every look's interval holds at once, so the one a cell stopped on holds wherever the data made it stop, and it is what the Finding prints. It is wider than a fixed design's interval over as many forks, which holds only at a number of forks chosen in advance.",
        numbers::percent(1.0 - confidence),
        numbers::percent(runner_stats::spending::FIRST_SHARE * (1.0 - confidence)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Binomial(200, 0.05): P(X <= 4) = 0.026 is the first past 2.5 % and
    /// P(X <= 16) = 0.978 the first past 97.5 %: 2 % to 8 %.
    #[test]
    fn chance_range_of_a_five_percent_share() {
        assert_eq!(chance_range(200, 0.05), (0.02, 0.08));
        assert_eq!(share(3, 200), "3 of 200 cells (1.5 %)");
    }
}
