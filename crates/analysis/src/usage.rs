//! CPU time and peak memory of the runs that record them (`command` arms,
//! from `wait4`'s rusage): per arm the median over the cell's measured runs,
//! and the paired median difference (treatment − baseline) with its
//! exact percentile bootstrap CI (`runner_stats::exact_median`) over the pairs
//! where both arms recorded it.
//! hyperfine reports user and system time per command; paired, they answer
//! "did the new build spend less CPU" the way D answers "was it faster".

use super::{AnalysisInput, ForkData};
use runner_core::record::{PairRecord, RunUsage};
use runner_stats::StatsError;
use serde::{Deserialize, Serialize};

/// `cells[].usage`: present only when the cell's runs recorded usage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Measured pairs with usage on both arms (the paired differences).
    pub n_paired: u32,
    /// User plus system CPU time: the figure to compare. Linux charges each
    /// scheduler tick wholly to user or to system time, so for short runs
    /// the split moves by whole ticks and each part's medians can
    /// contradict their own paired difference; their sum is what the
    /// process used.
    pub cpu_ns: UsageStat,
    pub user_ns: UsageStat,
    pub sys_ns: UsageStat,
    pub max_rss_kib: UsageStat,
}

/// One measure, in the unit its key names (`user_ns`: ns; `max_rss_kib`: KiB).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsageStat {
    /// Median over the arm's measured runs; null if the arm records none.
    pub baseline_median: Option<f64>,
    pub treatment_median: Option<f64>,
    /// Median of treatment − baseline per pair; null without paired values.
    pub difference: Option<f64>,
    pub ci: Option<[f64; 2]>,
}

/// Reads one measure of a run's usage.
type Measure = fn(&RunUsage) -> u64;

/// The four measures.
const MEASURES: [Measure; 4] = [
    |u| u.user_ns + u.sys_ns,
    |u| u.user_ns,
    |u| u.sys_ns,
    |u| u.max_rss_kib,
];

pub(crate) fn usage(
    input: &AnalysisInput,
    forks: &[ForkData<'_>],
) -> Result<Option<Usage>, StatsError> {
    let pairs: Vec<&PairRecord> = forks
        .iter()
        .flat_map(|f| f.measured.iter().copied())
        .collect();
    if pairs.iter().all(|p| p.usage.is_none()) {
        return Ok(None);
    }
    let mut stats = Vec::with_capacity(MEASURES.len());
    for get in MEASURES {
        let median = |arm: fn(&PairRecord) -> Option<RunUsage>| -> Result<Option<f64>, StatsError> {
            let v: Vec<u64> = pairs
                .iter()
                .filter_map(|p| arm(p))
                .map(|u| get(&u))
                .collect();
            if v.is_empty() {
                Ok(None)
            } else {
                runner_stats::median(&v).map(Some)
            }
        };
        let diffs: Vec<i64> = pairs
            .iter()
            .filter_map(|p| {
                Some(get(&p.usage().treatment?) as i64 - get(&p.usage().baseline?) as i64)
            })
            .collect();
        let (difference, ci) = if diffs.is_empty() {
            (None, None)
        } else {
            let e = runner_stats::exact_median(&diffs, input.confidence)?;
            (Some(e.median), Some([e.ci.lo, e.ci.hi]))
        };
        stats.push(UsageStat {
            baseline_median: median(|p| p.usage().baseline)?,
            treatment_median: median(|p| p.usage().treatment)?,
            difference,
            ci,
        });
    }
    let n_paired = pairs
        .iter()
        .filter(|p| p.usage().baseline.is_some() && p.usage().treatment.is_some())
        .count() as u32;
    let [cpu_ns, user_ns, sys_ns, max_rss_kib]: [UsageStat; 4] =
        stats.try_into().expect("four measures");
    Ok(Some(Usage {
        n_paired,
        cpu_ns,
        user_ns,
        sys_ns,
        max_rss_kib,
    }))
}
