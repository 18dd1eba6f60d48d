//! Runs every job that has no finished fork yet, one worker at a time:
//! what comes before the first fork (the jobs left, the database guard,
//! the estimate) here, the forks themselves in `fork_loop`.

use super::db_guard::DatabaseGuard;
use super::fork_loop::{ForkLoop, RunState, Todo};
use super::measured::Measured;
use super::progress::Progress;
use super::stopper::{record_stops, Stopper};
use runner_core::error::{run_failed, Result};
use runner_folder::partial::Partial;
use runner_folder::RunInfo;
use runner_plan::Job;
use runner_spec::Experiment;

/// What one phase of a run works on (see [`run_jobs`]).
pub(super) struct Phase<'a> {
    /// The experiment as the run runs it: the counts of a fork's pairs the
    /// file left out are set here, before the first fork, and recorded.
    pub exp: &'a mut Experiment,
    pub info: &'a mut RunInfo,
    pub partial: &'a Partial,
    pub measured: &'a mut Measured,
    pub db: Option<&'a runner_db::DbTarget>,
    pub quiet: bool,
    /// Print the estimate for the jobs still to run (the first phase).
    pub announce: bool,
}

/// Runs the jobs of `info` that `measured` does not hold yet, adding each
/// finished fork to it (its files committed to `partial` first). In a
/// sequential design, each fork's cell is looked at once it is committed
/// (`stopper`): a cell that is done is recorded in run.json and its
/// remaining jobs are passed over (`queue`). The forks themselves run in
/// [`ForkLoop`]; this is what comes before the first: the jobs left, the
/// catalog's answers, the database guard, the trial runs (the counts of a
/// fork's pairs the file left out, and the estimate).
pub(super) fn run_jobs(phase: Phase<'_>) -> Result<()> {
    let Phase {
        exp,
        info,
        partial,
        measured,
        db,
        quiet,
        announce,
    } = phase;
    let mut stopper = Stopper::new(info);
    if let Some(st) = &stopper {
        // A run stopped between a fork's commit and its cell's stop.
        record_stops(st, info, partial, measured, None, &Progress::Quiet)?;
    }
    let todo: Vec<Job> = runner_plan::stop::remaining(info.jobs(), info.stops())
        .into_iter()
        .filter(|j| !measured.contains(j.cell, j.fork))
        .collect();
    let (todo_len, kept) = (todo.len(), measured.len());
    let single = info.cells().len() == 1;
    let progress = Progress::new(quiet, (kept + todo_len) as u64, kept as u64, single);
    let mut requests: Vec<_> = todo
        .iter()
        .map(|job| super::job_request(exp, info, job, db))
        .collect();
    // Where other runners hold the CPUs a placement pins: said once each.
    let mut said = std::collections::BTreeSet::new();
    for r in &requests {
        if let Some(note) = r.claim.as_ref().and_then(|c| c.note.as_deref()) {
            if said.insert((r.placement, note)) {
                progress.println(&format!("note: placement \"{}\": {note}", r.placement));
            }
        }
    }
    // The guard checks what the user's SQL or commands did; a run of
    // runner's built-in kinds runs only runner's own statements.
    let user_code = requests
        .iter()
        .any(|r| r.baseline.runs_user_code() || r.treatment.runs_user_code());
    // The catalog's answers before anything of the user's runs: what
    // cannot run as written stops here (exit 2), and the tables the SQL
    // names are the ones the guard holds against the run.
    let findings = if todo_len > 0 {
        super::preflight::run(exp, info.cells(), db)?
    } else {
        None
    };
    let mut guard = DatabaseGuard::open(
        db.filter(|_| user_code),
        findings.map(|f| f.named),
        exp.database.strict,
    )?;
    // The trial runs `check` makes, for the jobs still to run, before any
    // worker starts, inside the guard as forks are: they choose the counts
    // of a fork's pairs the file left out, and give the estimate.
    let choose = exp.design.runs_per_fork.is_some_and(|r| r.pending());
    if todo_len > 0 && (choose || (announce && !quiet)) {
        let trials = trials_in_guard(exp, info, db, &mut guard, &progress)?;
        if choose {
            let costs = super::estimate::costs(exp, info.cells(), db, &trials);
            let jobs = runner_plan::self_check::job_count(exp, info.cells());
            info.record_runs_chosen(costs, jobs);
            exp.design.adopt_runs(&info.spec().experiment.design);
            partial.write_run_info(info)?;
            // The first look may have been chosen with the pairs.
            stopper = Stopper::new(info);
            // The workers run the counts just chosen.
            requests = todo
                .iter()
                .map(|job| super::job_request(exp, info, job, db))
                .collect();
        }
        let e = super::estimate::from_trials(exp, info.cells(), db, &trials);
        if announce && !quiet {
            announce_estimate(exp, info, &e, &progress, todo_len);
        }
        if let Some(stop) = e.blocking() {
            progress.clear();
            return Err(stop);
        }
    }
    let run = RunState {
        exp,
        info,
        partial,
        measured,
    };
    let todo = Todo {
        jobs: &todo,
        requests: &requests,
    };
    ForkLoop::open(run, todo, db, progress, guard, stopper)?.run()
}

/// The trial runs of the arms, made inside the database guard; fails (the
/// progress line cleared) when they changed the database.
fn trials_in_guard(
    exp: &Experiment,
    info: &RunInfo,
    db: Option<&runner_db::DbTarget>,
    guard: &mut DatabaseGuard,
    progress: &Progress,
) -> Result<super::trials::Outcome> {
    let print_before = guard.take()?;
    let trials = super::trials::run(exp, info.cells(), db);
    let record = guard.compare(print_before, None)?;
    for other in record.iter().flat_map(|g| &g.other_sessions) {
        progress.println(&format!(
            "note: during exec's trial runs, another session's work: {other}"
        ));
    }
    if let Some(failure) = guard.failure("exec's trial runs, before any fork", record.as_ref()) {
        progress.clear();
        return Err(run_failed(failure));
    }
    Ok(trials)
}

/// Prints the design's own forecast for the `todo_len` jobs still to run:
/// its forks and pairs, and their time.
fn announce_estimate(
    exp: &Experiment,
    info: &RunInfo,
    e: &super::estimate::Estimate,
    progress: &Progress,
    todo_len: usize,
) {
    // The estimate covers every cell x fork; a shard or a resume runs
    // a share of them.
    let planned = runner_plan::self_check::job_count(exp, info.cells());
    let share = todo_len as f64 / planned.max(1) as f64;
    let scale = |ns: u64| (ns as f64 * share) as u64;
    let e = super::estimate::Estimate {
        total_ns: scale(e.total_ns),
        fewest_ns: scale(e.fewest_ns),
        ..e.clone()
    };
    let d = &exp.design;
    let experiment_cells = info
        .cells()
        .iter()
        .filter(|c| c.role.is_experiment())
        .count();
    let per_cell = if experiment_cells == 1 {
        ""
    } else {
        " per cell"
    };
    let forks = match d.stop {
        Some(rule) if todo_len as u64 == planned => {
            format!("{} to {} forks{per_cell}", rule.min_forks, rule.max_forks)
        }
        _ => format!("{todo_len} fork{}", if todo_len == 1 { "" } else { "s" }),
    };
    let chosen =
        runner_report::numbers::runs_chosen(d).map_or(String::new(), |c| format!(" ({c})"));
    let counted = match d.counting {
        None => String::new(),
        Some(c) if c.time => format!(" and {} counted under valgrind", c.pairs),
        Some(_) => ", every pair counted under valgrind".into(),
    };
    progress.println(&format!(
        "estimate: {forks} of {} warm-up and {} measured pairs{counted}{chosen}, {}",
        d.warmup_pairs,
        d.pairs,
        e.describe()
    ));
}
