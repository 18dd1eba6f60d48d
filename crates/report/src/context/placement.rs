//! The report's account of CPU placement (docs/guide/how-a-run-works.md): what each
//! placement of the run pinned, what it could not and why, the CPUs the
//! runs actually ended on, and, when placement is swept, a table that
//! sets the placements side by side (wall time, per-fork interval width,
//! baseline fork medians, forks that saw the smallest delay).

use crate::numbers;
use runner_analysis::{Analysis, CellAnalysis};
use runner_folder::RunInfo;
use runner_os::placement::{pin::cpu_list, DatabaseSide, ForkPlacement, Placement};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Serialize)]
pub struct PlacementView {
    /// One sentence per placement the run used, for the setup.
    pub lines: Vec<String>,
    /// What did not go as asked: backends that could not be pinned, runs
    /// on a CPU other than the planned one, separate-cores on an embedded
    /// database.
    pub warnings: Vec<String>,
    /// Placement was swept in `[grid]`: one row per placement.
    pub rows: Vec<PlacementRow>,
}

#[derive(Debug, Serialize)]
pub struct PlacementRow {
    pub placement: String,
    /// Sum of the forks' wall times: `13.2 s`.
    pub wall: String,
    /// Median per-fork interval width over the placement's cells with
    /// d > 0, lowest and highest cell: `4.40-7.20 µs`.
    pub ci_width: String,
    /// Baseline fork medians over all its cells: `266-384 µs`.
    pub baseline_medians: String,
    /// Forks that saw the smallest d > 0: `10/10`, or n/a without one.
    pub smallest_seen: String,
}

fn placement_of(info: &RunInfo, cell: u32) -> Placement {
    info.cells()
        .iter()
        .find(|c| c.cell == cell)
        .map(|c| runner_plan::placement(&info.spec().experiment, c))
        .unwrap_or(info.spec().experiment.design.placement)
}

/// `CPU 1` or `CPUs 0 (62 %) and 1 (38 %)`.
fn cpus_used(counts: &BTreeMap<u32, u32>) -> String {
    let total: u32 = counts.values().sum();
    match counts.len() {
        0 => "no CPU recorded".into(),
        1 => format!("CPU {}", counts.keys().next().unwrap_or(&0)),
        _ => {
            let parts: Vec<String> = counts
                .iter()
                .map(|(c, n)| {
                    format!(
                        "{c} ({})",
                        numbers::percent(f64::from(*n) / f64::from(total))
                    )
                })
                .collect();
            format!("CPUs {}", numbers::list(&parts, "and"))
        }
    }
}

fn line(p: Placement, forks: &[&ForkPlacement]) -> (String, Vec<String>) {
    let n = forks.len();
    let mut warnings = Vec::new();
    let mut runs = BTreeMap::new();
    let mut backend_seen = BTreeMap::new();
    for f in forks {
        for (c, k) in f.cpus.baseline.iter().chain(&f.cpus.treatment) {
            *runs.entry(*c).or_insert(0) += k;
        }
        for (c, k) in &f.backend_cpus {
            *backend_seen.entry(*c).or_insert(0) += k;
        }
    }
    let crowded: Vec<&str> = forks
        .iter()
        .filter_map(|f| f.contention.as_deref())
        .collect();
    if let Some(first) = crowded.first() {
        warnings.push(format!("{p}: in {} of {n} forks, {first}", crowded.len()));
    }
    let planned: BTreeSet<u32> = forks.iter().filter_map(|f| f.planned.worker).collect();
    let pinned = forks.iter().filter(|f| f.worker_pinned).count();
    let worker = if planned.is_empty() {
        format!(
            "the worker left to the scheduler, its runs ended on {}",
            cpus_used(&runs)
        )
    } else {
        let off: u32 = runs
            .iter()
            .filter(|(c, _)| !planned.contains(c))
            .map(|(_, k)| k)
            .sum();
        if off > 0 {
            warnings.push(format!(
                "{p}: {off} runs ended on a CPU other than the worker's planned {}",
                cpu_list(&planned.iter().copied().collect::<Vec<_>>())
            ));
        }
        format!(
            "the worker pinned to CPU {} in {pinned} of {n} forks, its runs ended on {}",
            cpu_list(&planned.iter().copied().collect::<Vec<_>>()),
            cpus_used(&runs)
        )
    };
    let backends: Vec<_> = forks.iter().flat_map(|f| f.database.backends()).collect();
    let embedded = forks
        .iter()
        .any(|f| matches!(f.database, DatabaseSide::Embedded));
    let database = if !backends.is_empty() {
        let ok = backends.iter().filter(|b| b.pinned).count();
        let missed: Vec<&str> = backends
            .iter()
            .filter_map(|b| b.reason.as_deref())
            .collect();
        if let Some(first) = missed.first() {
            warnings.push(format!(
                "{p}: {} of {} database backends could not be pinned, e.g. {first}",
                missed.len(),
                backends.len()
            ));
        }
        let target: BTreeSet<u32> = forks.iter().filter_map(|f| f.planned.backend).collect();
        if target.is_empty() {
            format!(
                "; the database backend left to the scheduler, seen on {}",
                cpus_used(&backend_seen)
            )
        } else {
            format!(
                "; its database backend pinned to CPU {} in {ok} of {} forks, seen on {}",
                cpu_list(&target.iter().copied().collect::<Vec<_>>()),
                backends.len(),
                cpus_used(&backend_seen)
            )
        }
    } else if embedded {
        if p == Placement::SeparateCores
            || matches!(
                p,
                Placement::Cpus {
                    backend: Some(_),
                    ..
                }
            )
        {
            warnings.push(format!(
                "{p}: the database is embedded (SQLite runs in the worker's own thread), so it cannot run on a CPU of its own; these forks ran as same-core"
            ));
        }
        "; the embedded database runs in the worker's thread".into()
    } else {
        String::new()
    };
    (format!("{p}: {worker}{database}."), warnings)
}

pub(super) fn view(info: &RunInfo, analysis: &Analysis) -> Option<PlacementView> {
    let mut by: BTreeMap<Placement, Vec<&ForkPlacement>> = BTreeMap::new();
    for f in info.forks() {
        if let Some(p) = &f.summary.placement {
            by.entry(p.placement).or_default().push(p);
        }
    }
    if by.is_empty() {
        return None;
    }
    let mut lines = Vec::new();
    let mut warnings = Vec::new();
    for (p, forks) in &by {
        let (l, w) = line(*p, forks);
        lines.push(l);
        warnings.extend(w);
    }
    let swept = &info.spec().experiment.grid.placement;
    let spans: Vec<(Span, Span)> = swept
        .iter()
        .map(|p| {
            let cells: Vec<&CellAnalysis> = analysis
                .cells
                .iter()
                .filter(|c| placement_of(info, c.cell) == *p)
                .collect();
            spans(&cells)
        })
        .collect();
    // Each column of the table in one style.
    let column = |pick: fn(&(Span, Span)) -> Span| {
        let entries: Vec<numbers::Entry> = spans
            .iter()
            .filter_map(|s| pick(s).map(|(lo, hi)| numbers::Entry::Span(lo, hi)))
            .collect();
        numbers::Column::time(&entries)
    };
    let (widths, medians) = (column(|s| s.0), column(|s| s.1));
    let rows = swept
        .iter()
        .zip(&spans)
        .map(|(p, (w, m))| {
            let cells: Vec<&CellAnalysis> = analysis
                .cells
                .iter()
                .filter(|c| placement_of(info, c.cell) == *p)
                .collect();
            let print =
                |c: &numbers::Column, s: &Span| s.map_or("n/a".into(), |(lo, hi)| c.range(lo, hi));
            row(info, *p, &cells, print(&widths, w), print(&medians, m))
        })
        .collect();
    Some(PlacementView {
        lines,
        warnings,
        rows,
    })
}

/// Lowest and highest of some values; none without any.
type Span = Option<(f64, f64)>;

/// The spans of a placement's per-fork interval widths (median per cell,
/// over its cells with d > 0) and of its baseline fork medians.
fn spans(cells: &[&CellAnalysis]) -> (Span, Span) {
    let widths: Vec<f64> = cells
        .iter()
        .filter(|c| c.delay_ns > 0)
        .filter_map(|c| {
            let w: Vec<f64> = c.forks.iter().map(|f| f.ci_ns[1] - f.ci_ns[0]).collect();
            runner_stats::median(&w).ok()
        })
        .collect();
    let span = |v: &[f64]| -> Span {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (!v.is_empty()).then_some((lo, hi))
    };
    let medians: Vec<f64> = cells
        .iter()
        .flat_map(|c| c.forks.iter().map(|f| f.baseline_median_ns))
        .collect();
    (span(&widths), span(&medians))
}

fn row(
    info: &RunInfo,
    p: Placement,
    cells: &[&CellAnalysis],
    ci_width: String,
    baseline_medians: String,
) -> PlacementRow {
    let ids: BTreeSet<u32> = cells.iter().map(|c| c.cell).collect();
    let wall_ns: u64 = info
        .forks()
        .iter()
        .filter(|f| ids.contains(&f.summary.cell))
        .map(|f| f.wall_ns)
        .sum();
    let smallest = cells
        .iter()
        .filter(|c| c.delay_ns > 0)
        .min_by_key(|c| c.delay_ns);
    PlacementRow {
        placement: p.to_string(),
        wall: format!("{:.1} s", wall_ns as f64 / 1e9),
        ci_width,
        baseline_medians,
        smallest_seen: smallest.map_or("n/a".into(), |c| {
            format!(
                "{}/{} at {}",
                c.forks_seen,
                c.forks_total,
                numbers::delay(c.delay_ns as f64)
            )
        }),
    }
}
