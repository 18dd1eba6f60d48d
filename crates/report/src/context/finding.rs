//! The finding of each headline group, in sentences that the report and the
//! terminal summary share: how small a delay every fork saw and where the
//! true threshold lies between grid steps, the false positives at d = 0
//! (seen and reversed), what two separate runs would have said, and whether
//! the forks ran at two speeds.

use crate::numbers;
use runner_analysis::{Analysis, CellAnalysis, GroupHeadline};
use runner_folder::RunInfo;
use runner_spec::Experiment;
use serde::Serialize;

/// One headline group of `analysis.json` with its `view`.
#[derive(Debug, Serialize)]
pub struct GroupView<'a> {
    #[serde(flatten)]
    pub data: &'a GroupHeadline,
    pub view: GroupText,
}

/// Plain-text sentences (no Markdown) and the numbers behind them; a
/// sentence is none when it does not apply (no delays, no d = 0 cell, one
/// fork per cell, one speed).
#[derive(Debug, Serialize)]
pub struct GroupText {
    /// The group's params (`plans = 40`), empty when only the delay is swept.
    pub label: String,
    /// Both arms of the group's cells run the same thing: its delays
    /// measure the harness (seen / reversed).
    pub same_arms: bool,
    /// Smallest delay every fork saw, and where the threshold lies.
    pub threshold: Option<String>,
    /// The threshold as bounds (ns): it lies above `threshold_above_ns`
    /// (none: the smallest delay tried was already seen by every fork) and
    /// at most `threshold_at_most_ns` (none: no delay was seen by all).
    pub threshold_above_ns: Option<u64>,
    pub threshold_at_most_ns: Option<u64>,
    /// Larger delays that not every fork saw.
    pub larger_missed: Option<String>,
    /// False positives at d = 0 (seen + reversed) against the nominal rate;
    /// A/A experiments only (an A/B difference at d = 0 is the answer).
    pub false_positives: Option<String>,
    /// The number of false positives the confidence level allows by chance
    /// at d = 0: (1 - confidence) x forks.
    pub expected_false_positives: Option<f64>,
    /// What comparing two separate runs' medians would have said.
    pub separate_runs: Option<String>,
    /// Whether the forks' baseline medians fell into two speeds.
    pub two_speeds: Option<String>,
}

/// What the report may say of a group whose two arms run different things
/// (an A/B group): a delay injected there is seen on top of the real
/// difference, so "every fork saw it" measures nothing about the harness.
const ARMS_DIFFER: &str = "The two arms differ in this group, so a delay injected here is seen on top of their real difference and says nothing about the harness's threshold; the Comparison table gives the difference at each delay.";

/// With more than one group: the A/B groups that had delays, in one
/// paragraph ("**a; b.** The two arms differ in these groups, ..."), which
/// the Finding prints in place of one repeated paragraph per group.
pub(super) fn arms_differ(groups: &[GroupView<'_>]) -> Option<String> {
    if groups.len() < 2 {
        return None;
    }
    let labels: Vec<&str> = groups
        .iter()
        .filter(|g| !g.view.same_arms && g.view.threshold.is_some())
        .map(|g| g.view.label.as_str())
        .collect();
    match labels.len() {
        0 => None,
        1 => Some(format!("**{}.** {ARMS_DIFFER}", labels[0])),
        _ => Some(format!(
            "**{}.** The two arms differ in these groups, so a delay injected there is seen on top of their real difference and says nothing about the harness's threshold; the Comparison table gives the difference at each delay.",
            labels.join("; ")
        )),
    }
}

/// `same_arms`: both arms of the group's cells run the same thing (an A/A
/// experiment, or an A/A group of a sweep that also has A/B groups), so its
/// delays measure the harness and a difference at d = 0 is a false positive.
pub(super) fn view<'a>(
    g: &'a GroupHeadline,
    a: &Analysis,
    exp: &Experiment,
    same_arms: bool,
) -> GroupView<'a> {
    let mut cells: Vec<&CellAnalysis> = g
        .cells
        .iter()
        .filter_map(|id| a.cells.iter().find(|c| c.cell == *id))
        .collect();
    cells.sort_by_key(|c| (c.delay_ns, c.cell));
    let positive: Vec<&CellAnalysis> = cells.iter().copied().filter(|c| c.delay_ns > 0).collect();
    let all_seen = positive.iter().position(|c| c.forks_seen == c.forks_total);
    let expected = g
        .zero_delay_forks_total
        .map(|n| (1.0 - a.confidence) * f64::from(n));
    if !same_arms {
        return GroupView {
            data: g,
            view: GroupText {
                label: numbers::params(&exp.grid.labelled(&g.params)),
                same_arms,
                threshold: (!positive.is_empty()).then(|| ARMS_DIFFER.to_string()),
                threshold_above_ns: None,
                threshold_at_most_ns: None,
                larger_missed: None,
                false_positives: None,
                expected_false_positives: None,
                separate_runs: None,
                two_speeds: two_speeds(&cells),
            },
        };
    }
    GroupView {
        data: g,
        view: GroupText {
            label: numbers::params(&exp.grid.labelled(&g.params)),
            same_arms,
            threshold: threshold(&positive, all_seen),
            threshold_above_ns: all_seen
                .and_then(|k| k.checked_sub(1))
                .map(|k| positive[k].delay_ns),
            threshold_at_most_ns: all_seen.map(|k| positive[k].delay_ns),
            larger_missed: all_seen.and_then(|k| larger_missed(&positive[k + 1..])),
            false_positives: false_positives(g, a.confidence, expected)
                .map(|found| found + &beside_chance(g, &cells, a.confidence)),
            expected_false_positives: expected,
            separate_runs: separate_runs(&positive, exp),
            two_speeds: two_speeds(&cells),
        },
    }
}

fn seen_by(c: &CellAnalysis) -> String {
    format!("{} of {}", c.forks_seen, c.forks_total)
}

/// `4.5 % of the 551 µs median baseline run`, or `2.50 times ...` when the
/// delay is longer than the run itself.
fn against_baseline(c: &CellAnalysis) -> String {
    let base = c.pooled.baseline_median_ns;
    if base <= 0.0 || !base.is_finite() {
        return String::new();
    }
    let share = c.delay_ns as f64 / base;
    let amount = if share < 1.0 {
        format!("{} of", numbers::percent(share))
    } else {
        format!("{share:.2} times")
    };
    format!(
        " ({amount} the {} median baseline run)",
        numbers::duration(base)
    )
}

fn threshold(positive: &[&CellAnalysis], all_seen: Option<usize>) -> Option<String> {
    let largest = positive.last()?;
    let Some(k) = all_seen else {
        return Some(format!(
            "No injected delay was seen by every fork; the largest tried, {}, was seen by {}.",
            numbers::delay(largest.delay_ns as f64),
            seen_by(largest)
        ));
    };
    let c = positive[k];
    let d = numbers::delay(c.delay_ns as f64);
    Some(match k.checked_sub(1).map(|i| positive[i]) {
        None => format!(
            "Every fork saw {d}{}, so this harness's threshold is ≤ {d}, the smallest delay tried.",
            against_baseline(c)
        ),
        Some(below) => {
            let b = numbers::delay(below.delay_ns as f64);
            format!(
                "The smallest injected delay that every fork saw was {d}{}; the step below, {b}, was seen by {}, so the threshold lies between {b} and {d}.",
                against_baseline(c),
                seen_by(below)
            )
        }
    })
}

fn larger_missed(larger: &[&CellAnalysis]) -> Option<String> {
    let missed: Vec<String> = larger
        .iter()
        .filter(|c| c.forks_seen < c.forks_total)
        .map(|c| format!("{} ({})", numbers::delay(c.delay_ns as f64), seen_by(c)))
        .collect();
    (!missed.is_empty()).then(|| {
        format!(
            "Not every fork saw the larger {}.",
            numbers::list(&missed, "and")
        )
    })
}

fn false_positives(g: &GroupHeadline, confidence: f64, expected: Option<f64>) -> Option<String> {
    let total = g.zero_delay_forks_total?;
    let seen = g.zero_delay_forks_seen.unwrap_or(0);
    let reversed = g.zero_delay_forks_reversed.unwrap_or(0);
    let fp = g.zero_delay_false_positives.unwrap_or(seen + reversed);
    let expected = expected.unwrap_or(0.0);
    let expected = if (expected - expected.round()).abs() < 1e-9 {
        format!("{expected:.0}")
    } else {
        format!("{expected:.1}")
    };
    let found = if fp == 0 {
        format!("none of the {total} forks reported a difference (which would be a false positive)")
    } else {
        format!("{fp} of {total} forks reported a difference ({seen} above zero, {reversed} below), each a false positive")
    };
    Some(format!(
        "With no delay injected, {found}; at {} confidence about {} would by chance ({expected} of {total} on average).",
        numbers::percent(confidence),
        one_in(1.0 - confidence),
    ))
}

/// A share as a count a person says: 0.05 is "1 in 20 forks", 0.01 "1 in
/// 100 forks"; a share that is no such round fraction keeps its percent.
fn one_in(share: f64) -> String {
    let n = 1.0 / share;
    if share > 0.0 && share < 1.0 && (n - n.round()).abs() < 1e-6 {
        format!("{} forks", numbers::one_in(share))
    } else {
        format!("{} of forks", numbers::percent(share))
    }
}

/// Where a false-positive count at d = 0 falls against chance.
#[derive(Debug, PartialEq)]
enum Chance {
    /// Rarer than chance gives in 97.5 % of runs: intervals wider than nominal.
    Below,
    Inside,
    /// More than chance gives in 97.5 % of runs: something moved D.
    Above,
}

/// Each tail of chance's range for a false-positive count.
const TAIL: f64 = 0.025;

/// `fp` of `total` forks against Binomial(total, 1 − confidence), each tail
/// at `TAIL`.
fn chance(fp: u32, total: u32, confidence: f64) -> Chance {
    let rate = 1.0 - confidence;
    if runner_stats::gate::binomial_cdf(fp, total, rate) < TAIL {
        Chance::Below
    } else if fp > 0 && 1.0 - runner_stats::gate::binomial_cdf(fp - 1, total, rate) < TAIL {
        Chance::Above
    } else {
        Chance::Inside
    }
}

/// What the data say about a false-positive count outside chance's range:
/// too few means the intervals are wider than nominal, which a tie at the
/// median (a clock that moves in steps) explains; too many means something
/// besides chance moved D. Empty when the count is inside the range.
fn beside_chance(g: &GroupHeadline, cells: &[&CellAnalysis], confidence: f64) -> String {
    let (Some(total), Some(fp)) = (g.zero_delay_forks_total, g.zero_delay_false_positives) else {
        return String::new();
    };
    match chance(fp, total, confidence) {
        Chance::Inside => String::new(),
        Chance::Below => {
            let zero: Vec<&&CellAnalysis> = cells.iter().filter(|c| c.delay_ns == 0).collect();
            let n: f64 = zero.iter().map(|c| f64::from(c.pooled.n)).sum();
            let tied: f64 = zero
                .iter()
                .map(|c| c.pooled.share_tied * f64::from(c.pooled.n))
                .sum::<f64>()
                / n;
            format!(
                " Chance alone gives so few in fewer than {} of runs of {total} forks, so here the intervals are wider than nominal: {} of the pairs at d = 0 had D = 0 exactly (the clock moves in whole steps), and a bootstrap interval of a median rarely leaves a tie that sits at the median.",
                numbers::percent(TAIL),
                numbers::percent(tied)
            )
        }
        Chance::Above => format!(
            " Chance alone gives so many in fewer than {} of runs of {total} forks, so something besides chance moved D at d = 0: a blocked order, arms that do not run on the same state, the machine or a warm-up that was too short (see Order, Machine checks and Steady state).",
            numbers::percent(TAIL)
        ),
    }
}

fn separate_runs(positive: &[&CellAnalysis], exp: &Experiment) -> Option<String> {
    if exp.design.forks.get() < 2 {
        return None;
    }
    let compared: Vec<&&CellAnalysis> = positive
        .iter()
        .filter(|c| c.cross_runs.comparisons > 0 && c.cross_runs.correct.is_some())
        .collect();
    let right = |c: &CellAnalysis| c.cross_runs.correct.unwrap_or(0);
    if let Some(c) = compared
        .iter()
        .find(|c| right(c) == c.cross_runs.comparisons)
    {
        return Some(format!(
            "Comparing two separate runs' medians instead of pairs first got all {} comparisons right at {}.",
            c.cross_runs.comparisons,
            numbers::delay(c.delay_ns as f64)
        ));
    }
    // Best share; the smaller delay on a tie.
    let best = compared.iter().max_by(|x, y| {
        let share = |c: &CellAnalysis| f64::from(right(c)) / f64::from(c.cross_runs.comparisons);
        share(x)
            .total_cmp(&share(y))
            .then(y.delay_ns.cmp(&x.delay_ns))
    })?;
    Some(format!(
        "Comparing two separate runs' medians instead of pairs did not get every comparison right at any delay tried (best: {} of {}, at {}).",
        right(best),
        best.cross_runs.comparisons,
        numbers::delay(best.delay_ns as f64)
    ))
}

fn two_speeds(cells: &[&CellAnalysis]) -> Option<String> {
    let medians: Vec<f64> = cells
        .iter()
        .flat_map(|c| c.forks.iter().map(|f| f.baseline_median_ns))
        .collect();
    let s = runner_stats::two_speeds(&medians)?;
    Some(format!(
        "The forks ran at two speeds: {} of {} forks had baseline medians of {} and the other {} of {}. Pairing inside a fork cancels such a per-process mode; comparing two separate runs does not.",
        s.slow_n,
        medians.len(),
        numbers::range(s.slow_min, s.slow_max),
        s.fast_n,
        numbers::range(s.fast_min, s.fast_max),
    ))
}

/// Which figures come from one run on one machine.
pub(super) fn one_run(info: &RunInfo) -> String {
    let exp = &info.spec().experiment;
    if let Some(i) = &info.imported() {
        return format!(
            "These figures come from one data set imported from {} ({} forks per cell), which another harness measured; runner cannot say on what machine or how. The analysis, with master seed {}, reproduces byte for byte from the same file.",
            i.file, exp.design.forks, info.seeds().master
        );
    }
    let machines = info.merged().as_ref().map_or(1, |m| m.machines.len());
    let on = if machines > 1 {
        format!("one run over {machines} machines")
    } else {
        "one run on one machine".to_string()
    };
    let moves = if info
        .cells()
        .iter()
        .any(|c| c.role.is_experiment() && c.delay_ns > 0)
    {
        "a count of forks or a threshold can move by a grid step or more"
    } else {
        "an estimate can move within its interval, and one near the edge of resolving a difference can fall either side of it"
    };
    let up_to = if exp.design.stop.is_some() {
        "up to "
    } else {
        ""
    };
    let plans = super::sql::plan_sentence(info).map_or(String::new(), |s| format!("{s} "));
    let per_cell = if info.cells().len() == 1 {
        ""
    } else {
        " per cell"
    };
    format!(
        "{plans}These figures come from {on} ({up_to}{} forks{per_cell}, master seed {}). A repeat with the same seed runs the same schedule, inputs and analysis, but measures new timings, so {moves}.",
        exp.design.forks, info.seeds().master
    )
}

#[cfg(test)]
mod tests {
    use super::{chance, Chance};

    /// The 2.5 % tails of Binomial(n, 0.05), checked against scipy's
    /// binom.cdf / binom.sf: 3 of 200 has P(X <= 3) = 0.009, 4 of 200 0.026;
    /// 17 of 200 has P(X >= 17) = 0.024, 16 of 200 0.044; 3 of 10 0.012.
    #[test]
    fn false_positives_against_chance() {
        assert_eq!(chance(0, 200, 0.95), Chance::Below);
        assert_eq!(chance(3, 200, 0.95), Chance::Below);
        assert_eq!(chance(4, 200, 0.95), Chance::Inside);
        assert_eq!(chance(10, 200, 0.95), Chance::Inside);
        assert_eq!(chance(16, 200, 0.95), Chance::Inside);
        assert_eq!(chance(17, 200, 0.95), Chance::Above);
        assert_eq!(chance(2, 10, 0.95), Chance::Inside);
        assert_eq!(chance(3, 10, 0.95), Chance::Above);
        // Too few forks for zero to be unusual: 0.95^50 = 0.077.
        assert_eq!(chance(0, 50, 0.95), Chance::Inside);
        assert_eq!(chance(0, 80, 0.95), Chance::Below);
    }
}
