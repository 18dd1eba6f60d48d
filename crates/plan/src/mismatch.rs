//! Why a recorded part of the plan (a gate's sizing, a sequential
//! design's stopping points) is not one the spec allows. Each variant is
//! one kind of edit, carrying the numbers its sentence names, so a reader
//! of run.json can tell the cases apart without matching on text; the
//! `Display` is the sentence the user sees (without the file name, which
//! the folder reader adds).

use runner_spec::MaxSlowdown;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanMismatch {
    #[error("gate_sizing is recorded, but the spec has no self-checking gate with a percentage threshold")]
    SizingWithoutGate,
    #[error("gate_sizing has {recorded} groups, but the spec's cells form {expected}")]
    SizingGroupCount { recorded: usize, expected: usize },
    #[error(
        "gate_sizing.groups[{group}].cells is {recorded:?}, but the group's cells are {expected:?}"
    )]
    SizingCells {
        group: usize,
        recorded: Vec<u32>,
        expected: Vec<u32>,
    },
    #[error("gate_sizing.groups[{group}].threshold_ns is {recorded}, but {max} of its baseline median {median_ns} is {expected}")]
    SizingThreshold {
        group: usize,
        recorded: f64,
        max: MaxSlowdown,
        median_ns: f64,
        expected: f64,
    },
    #[error(
        "gate_sizing.groups[{group}].delay_ns is {recorded}, but twice its threshold is {expected}"
    )]
    SizingDelay {
        group: usize,
        recorded: u64,
        expected: u64,
    },
    #[error(
        "stops are recorded, but the spec has no [design.stop], so every cell runs all its forks"
    )]
    StopsWithoutRule,
    #[error("stops[{index}] is cell {cell}, which is not one of the experiment's cells (the gate's self-check cells always run all their forks)")]
    StopNotExperiment { index: usize, cell: u32 },
    #[error("stops[{index}] repeats cell {cell}")]
    StopRepeated { index: usize, cell: u32 },
    #[error("stops[{index}].forks_run is {forks_run}, outside design.stop's {min} to {max} forks")]
    StopOutOfRange {
        index: usize,
        forks_run: u32,
        min: u32,
        max: u32,
    },
    #[error("stops[{index}] says cell {cell} stopped after {forks_run} forks for reason `max`, but max_forks is {max}")]
    StopMaxEarly {
        index: usize,
        cell: u32,
        forks_run: u32,
        max: u32,
    },
    #[error("the run is marked finished, but stops records no stopping point for cell {cell}")]
    StopMissing { cell: u32 },
}
