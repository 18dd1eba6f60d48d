//! Where the forks ran: a shard's folder says which share of the plan it
//! holds; a merged folder says which shards it joined (and which jobs a
//! partial merge lacks); a run over several hosts gets the "Machines"
//! section (one row per host, the machines level per cell). All three are
//! none for an ordinary run, whose report is unchanged.

use super::CellView;
use crate::numbers;
use runner_analysis::machines::Machines;
use runner_analysis::Analysis;
use runner_folder::merged::jobs_text;
use runner_folder::RunInfo;
use runner_stats::Lever;
use serde::Serialize;

/// `shard`: this folder is one shard of a run.
#[derive(Debug, Serialize)]
pub struct ShardView {
    pub index: u32,
    pub count: u32,
    pub host: String,
    /// The host name came from `RUNNER_HOSTNAME` (a test override).
    pub host_override: bool,
    /// Where the index came from: `--shard`, `SLURM_ARRAY_TASK_ID` or
    /// `JOB_COMPLETION_INDEX`.
    pub source: String,
    /// Jobs in this shard, and in the whole plan.
    pub jobs: usize,
    pub plan_jobs: usize,
    /// What the folder holds and how to get the whole run, in a sentence.
    pub text: String,
}

/// `merge`: this folder was joined from shards by `runner merge`.
#[derive(Debug, Serialize)]
pub struct MergeView {
    /// Shards merged, and how many the run was cut into.
    pub shards: usize,
    pub count: u32,
    /// The hosts that ran forks, by name.
    pub hosts: Vec<String>,
    /// Jobs of the plan that no merged shard held.
    pub missing_jobs: usize,
    /// The shards and hosts, in a sentence.
    pub text: String,
    /// The missing shards and jobs, in a sentence; none for a complete merge.
    pub missing: Option<String>,
}

/// `machines`: `analysis.json`'s `machines` (the hosts) with its `view`.
#[derive(Debug, Serialize)]
pub struct MachinesView<'a> {
    #[serde(flatten)]
    pub data: &'a Machines,
    pub view: MachinesText,
}

#[derive(Debug, Serialize)]
pub struct MachinesText {
    /// What the section shows, in a sentence.
    pub intro: String,
    /// The cells' labels, for the per-cell columns of the hosts table.
    pub columns: Vec<String>,
    /// One row per host, by name.
    pub rows: Vec<HostRow>,
    /// Whether more machines or more forks narrow the intervals most, over
    /// the cells that could tell; none when none could.
    pub lever: Option<String>,
    /// Why some cells' variance columns are `n/a`; none when none are.
    pub note: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct HostRow {
    pub host: String,
    pub host_override: bool,
    /// CPU model and logical cores, as the shard that started there recorded them.
    pub cpu: String,
    pub forks: u32,
    pub baseline_min_ns: f64,
    pub baseline_max_ns: f64,
    /// Per cell (in `columns` order): forks that saw the delay / forks run
    /// there, e.g. `2/3`; `-` when the host ran none of the cell's forks.
    pub seen: Vec<String>,
}

pub(super) fn shard(info: &RunInfo) -> Option<ShardView> {
    let s = info.shard().as_ref()?;
    let plan_jobs =
        runner_plan::self_check::job_count(&info.spec().experiment, info.cells()) as usize;
    let source = serde_json::to_value(s.source)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    let text = format!(
        "this folder is shard {} of {} ({} of the plan's {} jobs, from `{source}`), run on `{}`{}; its numbers cover those forks only. `runner merge OUT SHARD_DIR...` joins the {} shards into the whole run's report.",
        s.index,
        s.count,
        info.jobs().len(),
        plan_jobs,
        s.host,
        if s.host_override {
            " (a name set by RUNNER_HOSTNAME, a test override)"
        } else {
            ""
        },
        s.count
    );
    Some(ShardView {
        index: s.index,
        count: s.count,
        host: s.host.clone(),
        host_override: s.host_override,
        source,
        jobs: info.jobs().len(),
        plan_jobs,
        text,
    })
}

pub(super) fn merge(info: &RunInfo) -> Option<MergeView> {
    let m = info.merged().as_ref()?;
    let count = m.shards.first().map_or(0, |s| s.shard.count);
    let hosts: Vec<String> = m.machines.iter().map(|h| h.host.clone()).collect();
    let quoted: Vec<String> = hosts.iter().map(|h| format!("`{h}`")).collect();
    let text = format!(
        "joined by `runner merge` from {} of {count} shards ({} forks) that ran on {} {}: {}.",
        m.shards.len(),
        info.forks().len(),
        hosts.len(),
        if hosts.len() == 1 {
            "machine"
        } else {
            "machines"
        },
        numbers::list(&quoted, "and")
    );
    let missing = (!m.missing.is_empty()).then(|| {
        let mut shards: Vec<u32> = m.missing.iter().map(|j| j.shard).collect();
        shards.dedup();
        let names: Vec<String> = shards.iter().map(|s| format!("{s}/{count}")).collect();
        let keys: Vec<(u32, u32)> = m.missing.iter().map(|j| (j.cell, j.fork)).collect();
        format!(
            "this run was merged without shard{} {} (`--allow-missing`), so {} of its {} jobs are missing: {}. Every number below counts only the forks present.",
            if names.len() == 1 { "" } else { "s" },
            numbers::list(&names, "and"),
            m.missing.len(),
            info.jobs().len() + m.missing.len(),
            jobs_text(&keys)
        )
    });
    Some(MergeView {
        shards: m.shards.len(),
        count,
        hosts,
        missing_jobs: m.missing.len(),
        text,
        missing,
    })
}

pub(super) fn machines<'a>(
    info: &RunInfo,
    analysis: &'a Analysis,
    cells: &[CellView<'_>],
) -> Option<MachinesView<'a>> {
    let data = analysis.machines.as_ref()?;
    let recorded = info.merged().as_ref().map(|m| &m.machines);
    let rows = data
        .hosts
        .iter()
        .map(|h| {
            let machine = recorded.and_then(|ms| ms.iter().find(|m| m.host == h.host));
            let cpu = match machine {
                Some(m) if !m.cpu_model.is_empty() => {
                    format!("{}, {} logical cores", m.cpu_model, m.logical_cores)
                }
                _ => "not recorded".into(),
            };
            let seen = analysis
                .cells
                .iter()
                .map(|c| {
                    let on_host = c
                        .machines
                        .as_ref()
                        .and_then(|m| m.hosts.iter().find(|x| x.host == h.host));
                    match on_host {
                        Some(x) => format!("{}/{}", x.forks_seen, x.forks),
                        // A cell whose forks all ran on one host.
                        None if c.machines.is_none() && all_on(info, c.cell, &h.host) => {
                            format!("{}/{}", c.forks_seen, c.forks_total)
                        }
                        None => "-".into(),
                    }
                })
                .collect();
            HostRow {
                host: h.host.clone(),
                host_override: machine.is_some_and(|m| m.host_override),
                cpu,
                forks: h.forks,
                baseline_min_ns: h.baseline_min_ns,
                baseline_max_ns: h.baseline_max_ns,
                seen,
            }
        })
        .collect();
    Some(MachinesView {
        data,
        view: MachinesText {
            intro: format!(
                "The forks ran on {} machines. Each row is one host: its CPU, its forks over all cells, the range of their baseline medians, and per cell the forks there that saw the delay. The second table treats the machine as a level above the fork: a median with an interval that resamples machines, then forks on each, then pairs; the spread of D between machines, between forks on one machine and within a fork (for the median); and the half-width this design is predicted to reach, with twice the machines and with twice the forks on each.",
                data.hosts.len()
            ),
            columns: cells.iter().map(|c| c.view.label.clone()).collect(),
            rows,
            lever: lever(analysis, cells),
            note: analysis
                .cells
                .iter()
                .find_map(|c| c.machines.as_ref()?.note.clone())
                .map(|n| format!("n/a: {n}.")),
        },
    })
}

/// Every fork of `cell` ran on `host`.
fn all_on(info: &RunInfo, cell: u32, host: &str) -> bool {
    let mut forks = info.forks().iter().filter(|f| f.summary.cell == cell);
    forks.clone().next().is_some() && forks.all(|f| f.host.as_deref() == Some(host))
}

fn lever(analysis: &Analysis, cells: &[CellView<'_>]) -> Option<String> {
    let decided: Vec<(&str, Lever)> = analysis
        .cells
        .iter()
        .zip(cells)
        .filter_map(|(c, v)| {
            let m = c.machines.as_ref()?.variance.as_ref()?;
            Some((v.view.label.as_str(), m.narrows_most))
        })
        .collect();
    if decided.is_empty() {
        return None;
    }
    let by_machines: Vec<String> = decided
        .iter()
        .filter(|(_, l)| *l == Lever::Machines)
        .map(|(label, _)| label.to_string())
        .collect();
    let n = decided.len();
    let all = match n {
        1 => "the one cell that could tell".to_string(),
        2 => "both cells that could tell".to_string(),
        _ => format!("all {n} cells that could tell"),
    };
    Some(match by_machines.len() {
        0 => format!(
            "In {all} the spread between forks and pairs outweighs the spread between machines: more forks on these machines narrow the interval about as much as more machines would."
        ),
        k if k == n => format!(
            "In {all} the spread between machines is the larger part of the variance: more machines narrow the interval most, and more forks on these machines cannot bring it below the machines' term."
        ),
        _ => format!(
            "The spread between machines is the larger part of the variance at {} (more machines narrow those intervals most); in the other {} of {n} cells more forks do about as well.",
            numbers::list(&by_machines, "and"),
            n - by_machines.len()
        ),
    })
}
