//! A sequential design in the report: the rule, and per cell the forks run
//! and why it stopped (`cells[].stop`).

use crate::analysis::stop::StopInput;
use crate::run_folder::RunInfo;

/// What the analysis needs to know about the run's stopping rule; none
/// for a fixed design.
pub fn stop_input(info: &RunInfo) -> Option<StopInput> {
    let exp = &info.spec.experiment;
    Some(StopInput {
        rule: exp.design.stop?,
        gate: exp.gate.map(|g| g.max_slowdown),
        stops: info.stops.clone(),
    })
}
