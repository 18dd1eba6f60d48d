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
use crate::strategy::error::Result;
use runner_core::record::Arm;
use std::io::Write;
use std::time::{Duration, Instant};

/// Counted runs per instance.
pub const RUNS: u32 = 3;
/// An instance's counted runs stop once this much time has gone since its
/// first run: what a fork would take is known to a few per cent from one
/// or two runs of a command that takes a good part of it, and `check` (and
/// exec, before its first fork) must not spend a fork's worth of time on
/// its trials.
const BUDGET: Duration = Duration::from_millis(500);

/// One instance's trial: its median run (the timed region) and median
/// whole run (with what a fork does around it, untimed), and how many
/// runs they are of.
struct Timed {
    run_ns: u64,
    cycle_ns: u64,
    runs: u32,
}

/// Up to [`RUNS`] runs of `arm`'s instance after one that is not counted
/// (it pays for cold caches, as a fork's warm-up pairs do).
fn time(arms: &mut Arms, arm: Arm, draws: &mut Draws) -> Result<Timed> {
    let started = Instant::now();
    let mut once = || -> Result<(u64, u64)> {
        let whole = Instant::now();
        let input = draws.input();
        let s = arms.get(arm);
        s.before(input)?;
        let (elapsed, _) = timed_run(s, input, 0, 0)?;
        s.after()?;
        Ok((elapsed, whole.elapsed().as_nanos() as u64))
    };
    let cold = once()?;
    let mut times = Vec::new();
    while times.len() < RUNS as usize && started.elapsed() < BUDGET {
        times.push(once()?);
    }
    if times.is_empty() {
        times.push(cold);
    }
    let median = |mut v: Vec<u64>| {
        v.sort_unstable();
        v[v.len() / 2]
    };
    Ok(Timed {
        run_ns: median(times.iter().map(|t| t.0).collect()),
        cycle_ns: median(times.iter().map(|t| t.1).collect()),
        runs: times.len() as u32,
    })
}

/// Times the arms, reports them, tears down and says `Done`.
pub(super) fn run(
    job: &JobRequest,
    mut arms: Arms,
    draws: &mut Draws,
    out: &mut impl Write,
    setup_ns: u64,
) -> Result<()> {
    let baseline = time(&mut arms, Arm::Baseline, draws)?;
    let treatment = if arms.treatment.is_some() {
        Some(time(&mut arms, Arm::Treatment, draws)?)
    } else {
        None
    };
    // One counted run of each instance, whole: what a fork's counted
    // runs cost (valgrind runs a program 20 to 50 times slower, so the
    // timed runs above say little of it).
    let shared = arms.treatment.is_none();
    let mut counted = |arm: Arm| -> Result<Option<u64>> {
        let Some(c) = &job.count else {
            return Ok(None);
        };
        let started = Instant::now();
        arms.get(arm).count(draws.input(), &c.with)?;
        Ok(Some(started.elapsed().as_nanos() as u64))
    };
    let baseline_counted_ns = counted(Arm::Baseline)?;
    let treatment_counted_ns = if shared {
        baseline_counted_ns
    } else {
        counted(Arm::Treatment)?
    };
    let report = TrialReport {
        baseline_ns: baseline.run_ns,
        treatment_ns: treatment.as_ref().map(|t| t.run_ns),
        runs: treatment
            .as_ref()
            .map_or(baseline.runs, |t| t.runs.min(baseline.runs)),
        setup_ns,
        baseline_cycle_ns: baseline.cycle_ns,
        treatment_cycle_ns: treatment.as_ref().map(|t| t.cycle_ns),
        baseline_counted_ns,
        treatment_counted_ns,
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
