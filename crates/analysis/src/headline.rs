//! The answer across the grid: how small a delay this harness can see.
//!
//! Cells that differ only in their delay form a group (params compared
//! without the keys starting with `delay`); each group gets its own answer,
//! in order of first appearance, and the first group's answer is also put at
//! the top level of `headline` for templates. "Smallest d seen by every
//! fork" is taken literally, as the design says: the smallest d > 0 whose
//! cell has forks_seen == forks_total, even if a larger d was missed.

use super::{CellAnalysis, GroupHeadline, Headline};
use serde_json::{Map, Value};

pub(crate) fn headline(cells: &[CellAnalysis]) -> Headline {
    let mut groups: Vec<(Map<String, Value>, Vec<&CellAnalysis>)> = Vec::new();
    for c in cells {
        let key = other_params(&c.params);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(c),
            None => groups.push((key, vec![c])),
        }
    }
    let groups: Vec<GroupHeadline> = groups
        .into_iter()
        .map(|(params, members)| group(params, members))
        .collect();
    let first = groups
        .first()
        .cloned()
        .unwrap_or_else(|| group(Map::new(), Vec::new()));
    Headline { first, groups }
}

fn other_params(params: &Map<String, Value>) -> Map<String, Value> {
    runner_plan::group_params(params)
}

fn group(params: Map<String, Value>, mut cells: Vec<&CellAnalysis>) -> GroupHeadline {
    cells.sort_by_key(|c| (c.delay_ns, c.cell));
    let positive = || cells.iter().filter(|c| c.delay_ns > 0);
    let seen_by_all = positive().find(|c| c.forks_seen == c.forks_total);
    let all_correct = positive().find(|c| {
        c.cross_runs.comparisons > 0 && c.cross_runs.correct == Some(c.cross_runs.comparisons)
    });
    let zero: Vec<_> = cells.iter().filter(|c| c.delay_ns == 0).collect();
    let zero_sum = |get: fn(&CellAnalysis) -> u32| {
        (!zero.is_empty()).then(|| zero.iter().map(|c| get(c)).sum())
    };
    GroupHeadline {
        params,
        cells: cells.iter().map(|c| c.cell).collect(),
        smallest_delay_seen_by_all_ns: seen_by_all.map(|c| c.delay_ns),
        as_pct_of_baseline: seen_by_all
            .filter(|c| c.pooled.baseline_median_ns > 0.0)
            .map(|c| 100.0 * c.delay_ns as f64 / c.pooled.baseline_median_ns),
        smallest_delay_all_cross_runs_correct_ns: all_correct.map(|c| c.delay_ns),
        zero_delay_forks_seen: zero_sum(|c| c.forks_seen),
        zero_delay_forks_reversed: zero_sum(|c| c.forks_reversed),
        zero_delay_false_positives: zero_sum(|c| c.forks_seen + c.forks_reversed),
        zero_delay_forks_total: zero_sum(|c| c.forks_total),
    }
}
