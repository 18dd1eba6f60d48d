//! The report's "Machine checks": the checks `runner env` prints, taken when
//! the run started, and each fork's sentinel (CPU steal and other
//! processes' share of the machine while it ran). Flagged forks are listed,
//! never dropped: their pairs are in every figure of the report.

use super::CellView;
use crate::numbers::percent;
use runner_folder::RunInfo;
use runner_os::environment::sentinel::{self, Flag};
use runner_os::environment::{ForkSentinel, Status};
use serde::Serialize;

#[derive(Debug, Serialize)]
pub struct MachineChecksView {
    /// The run's machine checks, in `runner env`'s order.
    pub checks: Vec<CheckRow>,
    /// Checks that said WARN.
    pub warnings: usize,
    /// The busiest other processes when the run started: `postgres (12 %)`.
    pub busiest: Vec<String>,
    /// Forks with a sentinel record (none in runs made before sentinels or
    /// without /proc).
    pub forks_watched: usize,
    /// Every watched fork's window was its timing (go to first record);
    /// false for runs recorded when it was the worker's whole life.
    pub window_timing: bool,
    /// Over all watched forks together (their ticks summed): the share of
    /// CPU time stolen, and the share other processes took, as percentages.
    pub steal_overall: Option<String>,
    pub outside_overall: Option<String>,
    /// The largest of each among forks long enough to judge (at least
    /// `sentinel::MIN_WINDOW_TICKS` ticks), and how many those are.
    pub steal_max: Option<String>,
    pub outside_max: Option<String>,
    pub forks_judged: usize,
    /// The thresholds a fork is flagged above.
    pub steal_flag: String,
    pub outside_flag: String,
    /// Forks over a threshold, in (cell, fork) order.
    pub flagged: Vec<FlaggedFork>,
}

#[derive(Debug, Serialize)]
pub struct CheckRow {
    pub label: &'static str,
    /// `OK`, `WARN` or `N/A`.
    pub status: &'static str,
    pub found: String,
    pub advice: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct FlaggedFork {
    /// The cell's label as in the report's tables.
    pub cell: String,
    pub fork: u32,
    pub steal: String,
    pub outside: String,
    /// `0.4 → 1.2`: 1-minute load average before and after the fork.
    pub load: Option<String>,
    /// `steal`, `outside load`, comma-separated.
    pub flags: String,
}

pub(super) fn view(info: &RunInfo, cells: &[CellView<'_>]) -> MachineChecksView {
    let env = &info.environment();
    let sentinels: Vec<_> = info
        .forks()
        .iter()
        .filter_map(|f| f.sentinel.as_ref().map(|s| (f, s)))
        .collect();
    let ticks: u64 = sentinels.iter().map(|(_, s)| s.window_ticks).sum();
    let overall = |share: fn(&ForkSentinel) -> f64| {
        (ticks > 0).then(|| {
            let stolen: f64 = sentinels
                .iter()
                .map(|(_, s)| share(s) * s.window_ticks as f64)
                .sum();
            percent(stolen / ticks as f64)
        })
    };
    let judged: Vec<&ForkSentinel> = sentinels
        .iter()
        .map(|(_, s)| *s)
        .filter(|s| s.window_ticks >= sentinel::MIN_WINDOW_TICKS)
        .collect();
    let max = |share: fn(&ForkSentinel) -> f64| {
        judged
            .iter()
            .map(|s| share(s))
            .reduce(f64::max)
            .map(percent)
    };
    let label = |cell: u32| {
        cells
            .iter()
            .find(|c| c.data.cell == cell)
            .map_or_else(|| format!("cell {cell}"), |c| c.view.label.clone())
    };
    MachineChecksView {
        checks: env
            .checks
            .iter()
            .map(|c| CheckRow {
                label: c.check.label(),
                status: c.status.tag(),
                found: c.found.clone(),
                advice: c.advice.clone(),
            })
            .collect(),
        warnings: env
            .checks
            .iter()
            .filter(|c| c.status == Status::Warn)
            .count(),
        busiest: env
            .busiest_processes
            .iter()
            .map(|p| format!("{} ({})", p.name, percent(p.cpu_share)))
            .collect(),
        forks_watched: sentinels.len(),
        window_timing: !sentinels.is_empty()
            && sentinels
                .iter()
                .all(|(_, s)| s.window == sentinel::Window::Timing),
        steal_overall: overall(|s| s.steal_share),
        outside_overall: overall(|s| s.outside_share),
        steal_max: max(|s| s.steal_share),
        outside_max: max(|s| s.outside_share),
        forks_judged: judged.len(),
        steal_flag: percent(sentinel::STEAL_SHARE_FLAG),
        outside_flag: percent(runner_os::environment::processes::OUTSIDE_SHARE_FLAG),
        flagged: sentinels
            .iter()
            .filter(|(_, s)| !s.flags.is_empty())
            .map(|(f, s)| FlaggedFork {
                cell: label(f.summary.cell),
                fork: f.summary.fork,
                steal: percent(s.steal_share),
                outside: percent(s.outside_share),
                load: s
                    .load_before
                    .zip(s.load_after)
                    .map(|(b, a)| format!("{:.2} → {:.2}", b[0], a[0])),
                flags: s
                    .flags
                    .iter()
                    .map(|f| match f {
                        Flag::Steal => "steal",
                        Flag::OutsideLoad => "outside load",
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            })
            .collect(),
    }
}
