//! Trial runs of a plan's arms, for `runner check` and for exec's estimate:
//! each distinct pair of arms (the strategies as a cell binds them) runs in
//! a worker of its own, started and watched exactly as a fork's is
//! (`spawn::Worker`): process groups under the subreapers and the sweep
//! after it, the fork timeout (a command's own `timeout_s` bounds each of
//! its processes inside), Ctrl-C and SIGTERM, and its database queries
//! cancelled when it is stopped. The worker sets up both arms, runs the
//! agreement check a fork runs, then times a few runs of each instance
//! (`worker::trial_job`).

use super::protocol::JobRequest;
use super::spawn::Worker;
use runner_db::DbTarget;
use runner_plan::Cell;
use runner_spec::{Experiment, StrategyKind};
use std::time::Duration;

/// What the trials measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Trials {
    /// Each distinct arm and its median trial run, ns.
    pub arms: Vec<(StrategyKind, u64)>,
    /// Each distinct arm and its median whole run as a fork makes it (the
    /// run and what surrounds it untimed), ns: what a fork's time is of.
    pub cycles: Vec<(StrategyKind, u64)>,
    /// Runs behind the medians (the fewest of any instance).
    pub runs: u32,
    /// Processes the trials' commands left running (each killed by runner).
    pub left_processes: u64,
    /// The cells whose arms were tried, in order; a cell whose arms run
    /// exactly what an earlier cell's do is not tried again.
    pub tried: Vec<u32>,
    /// The longest set-up of a trial worker (the arms built and checked):
    /// what each fork spends before its first pair.
    pub setup_ns: u64,
    /// Each distinct arm and one counted run of it, whole, ns (a run that
    /// counts instructions; empty otherwise).
    pub counted: Vec<(StrategyKind, u64)>,
}

impl Trials {
    /// The median trial run of `kind`, if it was timed.
    pub(crate) fn run_ns(&self, kind: &StrategyKind) -> Option<u64> {
        self.arms.iter().find(|(k, _)| k == kind).map(|(_, ns)| *ns)
    }

    /// One counted run of `kind`, whole, if one was made.
    pub(crate) fn counted_ns(&self, kind: &StrategyKind) -> Option<u64> {
        self.counted
            .iter()
            .find(|(k, _)| k == kind)
            .map(|(_, ns)| *ns)
    }

    /// The median whole run of `kind` (at least its timed run), if it was timed.
    pub(crate) fn cycle_ns(&self, kind: &StrategyKind) -> Option<u64> {
        let run = self.run_ns(kind)?;
        let cycle = self
            .cycles
            .iter()
            .find(|(k, _)| k == kind)
            .map(|(_, ns)| *ns);
        Some(cycle.unwrap_or(run).max(run))
    }
}

/// Why the trials stopped short.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Stopped {
    /// The arms' outputs differ: the experiment file must change.
    Disagreement(String),
    /// Ctrl-C or a termination signal.
    Interrupted,
    /// A trial was still running at `design.fork_timeout_s`: so would a fork be.
    TimedOut(String),
    /// A trial failed (a setup, a run, the worker); the message says which.
    Failed(String),
}

/// The trials, and why they stopped before every arm was timed (what was
/// timed until then is kept).
pub(crate) type Outcome = (Trials, Option<Stopped>);

/// A trial job for `cell`: its arms as bound, no pairs, the worker's own
/// set-up (no tables made ahead).
pub(super) fn request(exp: &Experiment, cell: &Cell, db: Option<&DbTarget>) -> JobRequest {
    let d = &exp.design;
    let (baseline, treatment) = cell.arms(d);
    JobRequest {
        cell: cell.cell,
        fork: 0,
        // The inputs the old in-process trials drew: one stream per cell.
        seed: u64::from(cell.cell),
        delay_ns: 0,
        workload: cell.workload,
        baseline: runner_plan::bind(exp, cell, baseline),
        treatment: runner_plan::bind(exp, cell, treatment),
        baseline_name: baseline.to_string(),
        treatment_name: treatment.to_string(),
        shared_instance: baseline == treatment,
        warmup_pairs: 0,
        pairs: 1,
        ordering: d.ordering,
        pad_baseline: d.pad_baseline,
        database: db.cloned(),
        placement: runner_os::placement::Placement::None,
        claim: None,
        premade_tables: false,
        layout: None,
        temp_dir: runner_os::temp::private_root(),
        trial: true,
        sql: exp.database.sql_options(),
        count: super::counting::job(exp),
    }
}

/// Runs the trials of every cell whose arms are not timed yet, one worker
/// at a time, each stopped at `design.fork_timeout_s`.
pub(crate) fn run(exp: &Experiment, cells: &[Cell], db: Option<&DbTarget>) -> Outcome {
    let timeout = Duration::from_secs(exp.design.fork_timeout_s);
    let mut trials = Trials {
        runs: crate::exec::worker::TRIAL_RUNS,
        ..Trials::default()
    };
    for cell in cells {
        let job = request(exp, cell, db);
        if trials.run_ns(&job.baseline).is_some() && trials.run_ns(&job.treatment).is_some() {
            continue;
        }
        trials.tried.push(cell.cell);
        let outcome = Worker::start(&job, timeout).and_then(|w| w.run(|_| Ok(()), || {}));
        let r = match outcome {
            Ok(r) => r,
            Err(f) => {
                trials.left_processes += f.left_processes;
                let stopped = if f.interrupted {
                    Stopped::Interrupted
                } else if f.disagreement {
                    Stopped::Disagreement(f.reason)
                } else if f.timed_out {
                    Stopped::TimedOut(format!(
                        "cell {}: a trial run of `{}` against `{}` {}",
                        cell.cell,
                        job.baseline_name,
                        job.treatment_name,
                        f.reason
                            .replacen("the worker was still running", "was still running", 1)
                    ))
                } else {
                    let mut why = format!(
                        "cell {}: a trial run of `{}` against `{}` failed: {}",
                        cell.cell, job.baseline_name, job.treatment_name, f.reason
                    );
                    if !f.stderr_tail.is_empty() {
                        why.push_str(&format!(
                            "\nworker stderr (last lines):\n  {}",
                            f.stderr_tail.join("\n  ")
                        ));
                    }
                    Stopped::Failed(why)
                };
                return (trials, Some(stopped));
            }
        };
        trials.left_processes += r.summary.left_processes;
        let Some(t) = r.trial else {
            let why = "the trial worker finished without its timings".to_string();
            return (trials, Some(Stopped::Failed(why)));
        };
        trials.runs = trials.runs.min(t.runs);
        trials.setup_ns = trials.setup_ns.max(t.setup_ns);
        for (kind, ns) in [
            (&job.baseline, t.baseline_counted_ns),
            (&job.treatment, t.treatment_counted_ns),
        ] {
            if let (Some(ns), None) = (ns, trials.counted_ns(kind)) {
                trials.counted.push((kind.clone(), ns));
            }
        }
        let mut add = |kind: &StrategyKind, ns: u64, cycle: u64| {
            if trials.run_ns(kind).is_none() {
                trials.arms.push((kind.clone(), ns));
                trials.cycles.push((kind.clone(), cycle));
            }
        };
        add(&job.baseline, t.baseline_ns, t.baseline_cycle_ns);
        add(
            &job.treatment,
            t.treatment_ns.unwrap_or(t.baseline_ns),
            t.treatment_cycle_ns.unwrap_or(t.baseline_cycle_ns),
        );
    }
    (trials, None)
}
