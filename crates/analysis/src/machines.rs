//! The machines level: when a merged run's forks ran on more than one host,
//! the machine is a level of the experiment above the fork, as the fork is
//! above the pair. Per cell it adds what each host saw (forks, detection
//! counts, baseline medians), a hierarchical interval that resamples
//! machines, then forks, then pairs, the variance split three ways, and
//! whether more machines or more forks would narrow the interval most
//! (`runner_stats::nested`). With one host nothing is added, so the analysis of a
//! run on one machine is unchanged byte for byte.
//!
//! Hosts come from the fork records (`run.json` `forks[].host`, written by
//! shards and kept by `runner merge`). A cell whose forks all ran on one
//! host gets no machines level of its own (its row in the report shows
//! that host's forks only).

use super::{streams, AnalysisError, AnalysisInput, CellAnalysis, Estimate, ForkData, Verdict};
use runner_core::record::PairRecord;
use runner_stats::{ForkMedian, Lever, StatsError};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// `analysis.json` `machines` (top level): every host, over all cells.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machines {
    /// By host name.
    pub hosts: Vec<HostSummary>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostSummary {
    pub host: String,
    /// Forks it ran, over all cells.
    pub forks: u32,
    /// Range of its forks' baseline medians, over all cells.
    pub baseline_min_ns: f64,
    pub baseline_max_ns: f64,
}

/// `cells[].machines`: present only in a run over several hosts, for cells
/// whose forks ran on more than one of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellMachines {
    /// The hosts with forks in this cell, by name.
    pub hosts: Vec<HostCell>,
    /// Median D with a three-level bootstrap interval: machines, then forks
    /// on each, then pairs in each.
    pub hierarchical: Estimate,
    /// Null when the data cannot split machines from forks (no host ran two
    /// forks of the cell, or a fork has one pair); `note` says why.
    pub variance: Option<MachineVariance>,
    pub note: Option<String>,
}

/// What one host saw of one cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostCell {
    pub host: String,
    pub forks: u32,
    pub forks_seen: u32,
    pub forks_reversed: u32,
    /// Median D over the host's measured pairs of the cell.
    pub median_ns: f64,
    pub baseline_min_ns: f64,
    pub baseline_max_ns: f64,
}

/// Variance of D split three ways, and what would narrow the interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineVariance {
    /// Nested ANOVA components of D (for the mean).
    pub between_machines_ns2: f64,
    pub between_forks_ns2: f64,
    pub within_forks_ns2: f64,
    /// The same split for the median, from the fork medians and their
    /// bootstrap intervals; the half-widths below come from these.
    pub median_between_machines_ns2: f64,
    pub median_between_forks_ns2: f64,
    pub median_within_ns2: f64,
    /// The design that ran: machines, mean forks per machine, pairs per fork.
    pub machines: u32,
    pub forks_per_machine: f64,
    pub pairs: u32,
    /// Predicted half-width of the design that ran.
    pub ran_half_width_ns: f64,
    /// Twice the machines, the same forks on each.
    pub twice_machines_half_width_ns: f64,
    /// The same machines, twice the forks on each.
    pub twice_forks_half_width_ns: f64,
    /// The machines' term alone: no number of forks on these machines
    /// narrows the interval below it.
    pub machines_floor_half_width_ns: f64,
    /// `machines` when the machines' term is the larger part of the
    /// variance, else `forks`.
    pub narrows_most: Lever,
}

/// Adds the machines level to `analysis` when `hosts` (fork -> host) names
/// more than one host; otherwise leaves it untouched.
pub fn add(
    analysis: &mut super::Analysis,
    input: &AnalysisInput,
    pairs: &[PairRecord],
    hosts: &BTreeMap<(u32, u32), String>,
) -> Result<(), AnalysisError> {
    let names: BTreeSet<&str> = hosts.values().map(String::as_str).collect();
    if names.len() < 2 {
        return Ok(());
    }
    let grouped = super::group(input, pairs)?;
    for cell in &mut analysis.cells {
        let forks = &grouped[&cell.cell];
        cell.machines =
            of_cell(input, cell, forks, hosts).map_err(|source| AnalysisError::Stats {
                cell: cell.cell,
                source,
            })?;
    }
    analysis.machines = Some(summary(analysis, hosts));
    Ok(())
}

fn host_of(hosts: &BTreeMap<(u32, u32), String>, cell: u32, fork: u32) -> &str {
    hosts.get(&(cell, fork)).map_or("", String::as_str)
}

fn summary(analysis: &super::Analysis, hosts: &BTreeMap<(u32, u32), String>) -> Machines {
    let mut by_host: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for c in &analysis.cells {
        for f in &c.forks {
            by_host
                .entry(host_of(hosts, c.cell, f.fork))
                .or_default()
                .push(f.baseline_median_ns);
        }
    }
    Machines {
        hosts: by_host
            .into_iter()
            .map(|(host, b)| HostSummary {
                host: host.to_string(),
                forks: b.len() as u32,
                baseline_min_ns: b.iter().copied().fold(f64::INFINITY, f64::min),
                baseline_max_ns: b.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            })
            .collect(),
    }
}

fn of_cell(
    input: &AnalysisInput,
    cell: &CellAnalysis,
    forks: &[ForkData<'_>],
    hosts: &BTreeMap<(u32, u32), String>,
) -> Result<Option<CellMachines>, StatsError> {
    // Host -> positions of its forks (forks and cell.forks share the order).
    let mut by_host: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, f) in forks.iter().enumerate() {
        by_host
            .entry(host_of(hosts, cell.cell, f.fork))
            .or_default()
            .push(i);
    }
    if by_host.len() < 2 {
        return Ok(None);
    }
    let diffs: Vec<Vec<f64>> = forks.iter().map(ForkData::diffs).collect();
    let mut host_cells = Vec::new();
    for (host, at) in &by_host {
        let results: Vec<_> = at.iter().map(|&i| &cell.forks[i]).collect();
        let count = |v: Verdict| results.iter().filter(|f| f.verdict == v).count() as u32;
        let pooled: Vec<f64> = at.iter().flat_map(|&i| diffs[i].iter().copied()).collect();
        let baselines = results.iter().map(|f| f.baseline_median_ns);
        host_cells.push(HostCell {
            host: host.to_string(),
            forks: at.len() as u32,
            forks_seen: count(Verdict::Seen),
            forks_reversed: count(Verdict::Reversed),
            median_ns: runner_stats::median(&pooled)?,
            baseline_min_ns: baselines.clone().fold(f64::INFINITY, f64::min),
            baseline_max_ns: baselines.fold(f64::NEG_INFINITY, f64::max),
        });
    }
    let nested: Vec<Vec<&[f64]>> = by_host
        .values()
        .map(|at| at.iter().map(|&i| diffs[i].as_slice()).collect())
        .collect();
    let mut rng = streams::machines(input.master_seed, cell.cell);
    let hierarchical =
        runner_stats::nested_median(&nested, input.resamples, input.confidence, &mut rng)?.into();
    let medians: Vec<Vec<ForkMedian>> = by_host
        .values()
        .map(|at| {
            at.iter()
                .map(|&i| ForkMedian {
                    median: cell.forks[i].median_ns,
                    ci: cell.forks[i].ci_ns,
                    pairs: cell.forks[i].n,
                })
                .collect()
        })
        .collect();
    let (variance, note) = match variance(input, &nested, &medians) {
        Ok(v) => (Some(v), None),
        Err(StatsError::TooFewGroups(_)) => (
            None,
            Some("no host ran two forks of this cell (or a fork has one pair), so machines and forks cannot be told apart".to_string()),
        ),
        Err(e) => return Err(e),
    };
    Ok(Some(CellMachines {
        hosts: host_cells,
        hierarchical,
        variance,
        note,
    }))
}

fn variance(
    input: &AnalysisInput,
    nested: &[Vec<&[f64]>],
    medians: &[Vec<ForkMedian>],
) -> Result<MachineVariance, StatsError> {
    let anova = runner_stats::nested_components(nested)?;
    let robust = runner_stats::nested_median_components(medians, input.confidence)?;
    let a = medians.len() as f64;
    let forks: usize = medians.iter().map(Vec::len).sum();
    let k = forks as f64 / a;
    let pairs = medians
        .iter()
        .flatten()
        .map(|f| f.pairs)
        .min()
        .unwrap_or_default();
    let m = f64::from(pairs);
    let c = input.confidence;
    Ok(MachineVariance {
        between_machines_ns2: anova.machines,
        between_forks_ns2: anova.forks,
        within_forks_ns2: anova.within,
        median_between_machines_ns2: robust.machines,
        median_between_forks_ns2: robust.forks,
        median_within_ns2: robust.within,
        machines: medians.len() as u32,
        forks_per_machine: k,
        pairs,
        ran_half_width_ns: runner_stats::nested_half_width(robust, c, a, k, m),
        twice_machines_half_width_ns: runner_stats::nested_half_width(robust, c, 2.0 * a, k, m),
        twice_forks_half_width_ns: runner_stats::nested_half_width(robust, c, a, 2.0 * k, m),
        machines_floor_half_width_ns: runner_stats::nested_half_width(
            runner_stats::NestedComponents {
                forks: 0.0,
                within: 0.0,
                ..robust
            },
            c,
            a,
            k,
            m,
        ),
        narrows_most: runner_stats::lever(robust, a, k, m),
    })
}
