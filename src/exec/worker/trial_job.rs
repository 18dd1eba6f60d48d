//! A trial job (`runner check`, and exec's estimate before its first fork):
//! after the same set-up and agreement check as a fork, and the parent's
//! go, a few untimed-by-the-run runs of each instance, whose median the
//! parent turns into its time estimate and a percentage gate's sizing.
//! It runs in a worker like any fork, so it is contained like one: its
//! commands' process groups and the sweeps, the parent's fork timeout and
//! signals, the cancellation of its database queries.

use super::draws::Draws;
use super::{send, timed_run, Arms, JobRequest};
use crate::exec::protocol::{ForkSummary, TrialReport, WorkerMessage};
use crate::record::Arm;
use crate::strategy::error::Result;
use std::io::Write;
use std::time::{Duration, Instant};

/// Counted runs per instance.
pub const RUNS: u32 = 3;
/// An instance's counted runs stop after this much time once one is in:
/// an arm that takes minutes must not make `check` take as long as a fork.
const BUDGET: Duration = Duration::from_secs(2);

/// Up to [`RUNS`] runs of `arm`'s instance after one that is not counted
/// (it pays for cold caches, as a fork's warm-up pairs do); the median run
/// and how many there were.
fn time(arms: &mut Arms, arm: Arm, draws: &mut Draws) -> Result<(u64, u32)> {
    let started = Instant::now();
    let mut once = || -> Result<u64> {
        let input = draws.input();
        let s = arms.get(arm);
        s.before(input)?;
        let (elapsed, _) = timed_run(s, input, 0, 0)?;
        s.after()?;
        Ok(elapsed)
    };
    let cold = once()?;
    let mut times = Vec::new();
    while times.len() < RUNS as usize && started.elapsed() < BUDGET {
        times.push(once()?);
    }
    if times.is_empty() {
        times.push(cold);
    }
    times.sort_unstable();
    Ok((times[times.len() / 2], times.len() as u32))
}

/// Times the arms, reports them, tears down and says `Done`.
pub(super) fn run(
    job: &JobRequest,
    mut arms: Arms,
    draws: &mut Draws,
    out: &mut impl Write,
    setup_ns: u64,
) -> Result<()> {
    let (baseline_ns, b_runs) = time(&mut arms, Arm::Baseline, draws)?;
    let treatment = if arms.treatment.is_some() {
        Some(time(&mut arms, Arm::Treatment, draws)?)
    } else {
        None
    };
    let report = TrialReport {
        baseline_ns,
        treatment_ns: treatment.map(|(ns, _)| ns),
        runs: treatment.map_or(b_runs, |(_, n)| n.min(b_runs)),
        setup_ns,
    };
    arms.teardown()?;
    send(out, &WorkerMessage::Trial(report))?;
    let summary = ForkSummary {
        left_processes: crate::strategy::command::left_behind(),
        ..ForkSummary::unmeasured(job.cell, job.fork)
    };
    send(out, &WorkerMessage::Done(summary))?;
    Ok(())
}
