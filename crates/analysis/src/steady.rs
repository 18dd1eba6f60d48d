//! Steady state per fork: did each arm's measured phase run at one level?
//!
//! Each arm's run times over the fork's measured pairs, in pair order, go
//! through [`runner_stats::steady_state`] (PELT changepoints and the classes of
//! Barrett et al. 2017; see `runner_stats::changepoint`). A fork is *steady* when
//! both arms are flat. A warm-up class says the warm-up pairs were too few:
//! the measured phase still got faster; a slowdown or no steady state says
//! the process changed level while it was measured (on a shared machine, a
//! burst of slow runs does that). The pairs stay in every statistic either
//! way: this is a warning about the design, not a filter.

use super::{ArmSteadyState, CellSteadyState, ClassCounts, ForkData, ForkSteadyState};
use runner_stats::{Class, StatsError};

pub(crate) fn fork(f: &ForkData<'_>) -> Result<ForkSteadyState, StatsError> {
    let baseline = arm(&f.baselines())?;
    let treatment = arm(&f.treatments())?;
    Ok(ForkSteadyState {
        steady: baseline.class == Class::Flat && treatment.class == Class::Flat,
        baseline,
        treatment,
    })
}

fn arm(series: &[u64]) -> Result<ArmSteadyState, StatsError> {
    let s = runner_stats::steady_state(series)?;
    Ok(ArmSteadyState {
        class: s.class,
        changepoints: s.changepoints.iter().map(|&c| c as u32).collect(),
    })
}

/// The classes counted over a cell's forks, per arm.
pub(crate) fn cell(forks: &[&ForkSteadyState]) -> CellSteadyState {
    let count = |get: fn(&ForkSteadyState) -> Class| {
        let mut c = ClassCounts::default();
        for f in forks {
            match get(f) {
                Class::Flat => c.flat += 1,
                Class::Warmup => c.warm_up += 1,
                Class::Slowdown => c.slowdown += 1,
                Class::NoSteadyState => c.no_steady_state += 1,
            }
        }
        c
    };
    let forks_steady = forks.iter().filter(|f| f.steady).count() as u32;
    CellSteadyState {
        baseline: count(|f| f.baseline.class),
        treatment: count(|f| f.treatment.class),
        forks_steady,
        measured_phase_steady: forks_steady == forks.len() as u32,
    }
}
