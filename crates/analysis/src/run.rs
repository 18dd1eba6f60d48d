//! The analysis of a recorded run: what it needs, read from run.json, and
//! every statistic of the run's checked rows. exec (after each fork of a
//! sequential design), `runner report`, compare and history all analyse a
//! run through here, so each reads run.json the same way.

use crate::gate::{GateCellInfo, GateInput};
use crate::stop::StopInput;
use crate::{Analysis, AnalysisError, AnalysisInput, CellInfo};
use runner_core::record::PairRecord;
use runner_folder::RunInfo;

/// Every statistic of a run's checked data; with the machines level when
/// its forks record more than one host (a merged run, see [`crate::machines`]).
pub fn analyse(info: &RunInfo, pairs: &[PairRecord]) -> Result<Analysis, AnalysisError> {
    let input = input(info);
    let mut analysis =
        crate::analyse_with(&input, gate(info).as_ref(), stop(info).as_ref(), pairs)?;
    let hosts: std::collections::BTreeMap<(u32, u32), String> = info
        .forks()
        .iter()
        .filter_map(|f| Some(((f.summary.cell, f.summary.fork), f.host.clone()?)))
        .collect();
    crate::machines::add(&mut analysis, &input, pairs, &hosts)?;
    let layouts: std::collections::BTreeMap<(u32, u32), runner_os::memory_layout::ForkLayout> =
        info.forks()
            .iter()
            .filter_map(|f| {
                Some((
                    (f.summary.cell, f.summary.fork),
                    (**f.summary.layout.as_ref()?).clone(),
                ))
            })
            .collect();
    crate::layout::add(&mut analysis, info.seeds().master, &layouts);
    Ok(analysis)
}

/// What the analysis needs from `run.json`: the cells that have jobs (all
/// of them, except in a shard or a partial merge whose share of the plan
/// leaves some cell without forks).
pub fn input(info: &RunInfo) -> AnalysisInput {
    let exp = &info.spec().experiment;
    let with_jobs: std::collections::BTreeSet<u32> = info.jobs().iter().map(|j| j.cell).collect();
    AnalysisInput {
        master_seed: info.seeds().master,
        resamples: exp.analysis.resamples,
        confidence: exp.analysis.confidence,
        ordering: exp.design.ordering,
        pad_baseline: exp.design.pad_baseline,
        cells: info
            .cells()
            .iter()
            .filter(|c| c.role.is_experiment() && with_jobs.contains(&c.cell))
            .map(|c| CellInfo {
                cell: c.cell,
                params: c.params.clone(),
                delay_ns: c.delay_ns,
            })
            .collect(),
        target_half_width_ns: None,
        clock_resolution_ns: clock_resolution_ns(info),
    }
}

/// The step of the clock that timed the forks: the coarsest over the
/// machines of a merged run; for an imported run, what `analyze
/// --clock-resolution-ns` declared (0 by default), since its `environment`
/// is where `analyze` ran, not the clock that measured.
pub fn clock_resolution_ns(info: &RunInfo) -> f64 {
    if info.imported().is_some() {
        return match &info.invocation() {
            runner_folder::Invocation::Analyze(z) => z.clock_resolution_ns as f64,
            _ => 0.0,
        };
    }
    let shards = info.merged().iter().flat_map(|m| m.shards.iter());
    shards
        .map(|s| s.environment.clock.resolution_ns)
        .chain([info.environment().clock.resolution_ns])
        .max()
        .unwrap_or(0) as f64
}

/// What the analysis needs to know about the run's gate: its settings, the
/// recorded sizing and the self-check cells; none without a gate.
pub fn gate(info: &RunInfo) -> Option<GateInput> {
    Some(GateInput {
        gate: info.spec().experiment.gate?,
        sizing: info.gate_sizing().clone(),
        cells: info
            .cells()
            .iter()
            .filter(|c| !c.role.is_experiment())
            .map(|c| GateCellInfo {
                cell: c.cell,
                role: c.role,
                params: c.params.clone(),
                delay_ns: c.delay_ns,
            })
            .collect(),
    })
}

/// What the analysis needs to know about the run's stopping rule; none
/// for a fixed design.
pub fn stop(info: &RunInfo) -> Option<StopInput> {
    let exp = &info.spec().experiment;
    Some(StopInput {
        rule: exp.design.stop?,
        gate: exp.gate.map(|g| g.max_slowdown),
        stops: info.stops().to_vec(),
        // run.json's migration gives every sequential run its method.
        method: info.stop_method()?,
        counts: exp
            .gate
            .is_some_and(|g| g.metric == runner_spec::Metric::Instructions)
            || !exp.design.times(),
    })
}
