//! `runner check`: the plan, with a few trial runs of the arms (contained
//! as exec's forks are, and on PostgreSQL inside the same database guard)
//! for the estimate and for what the run would meet. A pre-flight: it
//! exits 2 for what cannot run as written, and 1 when a trial run fails
//! or changed the database, after printing the plan.
//!
//! [`summarize`] computes a [`CheckSummary`], a plain value; `check_text`
//! renders it as text, and `--json` prints it serialized as it is, so the
//! two forms cannot say different things. Its field names are part of the
//! documented interface (docs/guide/commands.md): CI scripts read them.

use super::trials;
use crate::exec::trials::Stopped;
use runner_core::error::Result;
use runner_spec::Experiment;
use serde::Serialize;
use std::path::Path;

/// Everything `check` says, computed before a word is printed.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CheckSummary {
    pub experiment: String,
    pub spec: String,
    /// `baseline a (sql) vs treatment b (sql)`.
    pub arms: String,
    pub design: String,
    pub placement: String,
    /// The memory layout each fork gets; empty under `layout = "system"`.
    pub layout: Vec<String>,
    /// Where the database arms run; none without one.
    pub database: Option<String>,
    pub warnings: Vec<String>,
    /// The master seed; none when exec draws it.
    pub seed: Option<u64>,
    pub cells_total: u64,
    /// One line per cell of the plan.
    pub cells: Vec<String>,
    /// A percentage gate's self-check cells, sized from the trials.
    pub sizing: Vec<String>,
    pub gate: Option<String>,
    /// How many forks each self-check cell runs, and what it tests.
    pub gate_self_check: Option<String>,
    pub forks: u64,
    pub jobs: u64,
    /// exec's flags as the run would take them, one labelled line each.
    pub flags: String,
    pub pairs: u64,
    pub measured_pairs: u64,
    pub trial: TrialSummary,
    /// What the database guard found around the trials (PostgreSQL).
    pub guard: Option<GuardSummary>,
    /// The forecast of the run's duration, with where it came from.
    pub estimate: String,
    /// The same forecast of the forks' wall time, in nanoseconds.
    pub estimate_ns: u64,
    /// A sequential design's rule and its forecasts.
    pub stop: Vec<String>,
    pub analysis: String,
    pub output: String,
    /// Why `check` exits non-zero after printing the plan.
    pub failure: Option<Failure>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct TrialSummary {
    /// The cells whose arms ran (the others run the same arms).
    pub tried: Vec<u32>,
    pub cells: usize,
    pub runs: u32,
    /// Each timed arm and its median trial run.
    pub timed: Vec<TimedArm>,
    /// A trial that failed or ran into the fork timeout, naming its cell.
    pub failed: Option<String>,
    pub left_processes: u64,
}

/// One arm timed by the trials: named fields rather than a pair, so the
/// JSON form reads `{"arm": .., "median_ns": ..}`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TimedArm {
    pub arm: String,
    /// Its median trial run, in nanoseconds.
    pub median_ns: u64,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct GuardSummary {
    pub held: bool,
    pub changes: Vec<String>,
    /// What the trials' rolled-back writes left, per table.
    pub residue: Vec<String>,
    pub other_sessions: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Failure {
    /// 1: a trial run failed or changed the database.
    pub exit_code: i32,
    pub message: String,
}

/// The summary of `check` for the experiment file at `spec_path`: the
/// plan, the catalog's answers, the trials and the forecasts.
pub(crate) fn summarize(
    spec_path: &Path,
    set: &[String],
    flags: &super::preflight::CheckFlags,
) -> Result<CheckSummary> {
    let loaded = runner_spec::load(spec_path, set)?;
    let exp = &loaded.experiment;
    // exec's flags are checked as exec would check them, before anything runs.
    super::preflight::refuse(spec_path, exp, flags)?;
    // A run that counts needs valgrind: said now, as exec would.
    crate::exec::counting::require(spec_path, exp)?;
    let flag_lines = super::preflight::lines(exp, flags)?;
    let cells = runner_plan::all_cells(exp, None);
    let (needs_db, target) = database_target(exp)?;
    let on_postgres = matches!(target, Some(runner_db::DbTarget::Postgres { .. }));
    // The trials' commands and scratch folders live in a private folder
    // of this run, removed however `check` ends.
    let _temp = crate::exec::private_temp()?;
    let mut warnings = Vec::new();
    let database = database_line(exp, target.as_ref(), needs_db, &mut warnings);
    let trials = run_trials(exp, &cells, target.as_ref())?;
    let run = forecast(exp, &cells, target.as_ref(), &trials.outcome, on_postgres);
    let exp = &run.exp;
    let (gate, gate_self_check) = gate_lines(exp, &run.all_cells);
    let trial = trial_summary(&trials.outcome, cells.len(), &run.estimate);
    let failure = exit_failure(trial.failed.as_deref(), &trials);
    Ok(CheckSummary {
        experiment: exp.name.clone(),
        spec: spec_path.display().to_string(),
        arms: arms_line(exp),
        design: design_line(exp, run.forks),
        placement: placement_line(exp, on_postgres),
        layout: layout_lines(exp),
        database,
        warnings,
        seed: exp.seed,
        cells_total: run.cells_total,
        cells: cells.iter().map(|c| cell_line(exp, c)).collect(),
        sizing: run.sizing,
        gate,
        gate_self_check,
        forks: run.forks,
        jobs: run.jobs,
        flags: flag_lines,
        pairs: run.jobs * run.per_job,
        measured_pairs: run.jobs * u64::from(exp.design.pairs.get()),
        trial,
        guard: trials.guard.as_ref().map(guard_summary),
        estimate: run.estimate.describe(),
        estimate_ns: run.estimate.total_ns,
        stop: run.stop,
        analysis: analysis_line(exp, run.cells_total, run.jobs),
        output: output_line(exp, flags.out.as_deref()),
        failure,
    })
}

/// Where the database arms would run, resolved as exec resolves it (the
/// environment before the file), so that `check` meets the same server;
/// none when no arm needs one. Whether any does is said with it, since
/// "none usable" and "none needed" print differently.
fn database_target(exp: &Experiment) -> Result<(bool, Option<runner_db::DbTarget>)> {
    let needs_db = exp
        .design
        .arms()
        .iter()
        .any(|n| exp.strategies[*n].needs_database());
    let target = if needs_db {
        runner_db::resolve_with(
            &exp.database,
            runner_core::settings::get().database_url.as_deref(),
            "check",
        )
        .map_err(super::error::CheckError::Resolve)?
    } else {
        None
    };
    Ok((needs_db, target))
}

/// The trial runs, after the catalog's pre-flight: what cannot run as
/// written is refused before anything runs (exit 2), while a catalog that
/// cannot be read is a failed trial, so that the plan is still printed.
fn run_trials(
    exp: &Experiment,
    cells: &[runner_plan::Cell],
    target: Option<&runner_db::DbTarget>,
) -> Result<trials::CheckTrials> {
    let findings = match crate::exec::preflight::run(exp, cells, target) {
        Ok(f) => Ok(f),
        Err(e) if e.failure() == runner_core::error::Failure::RunFailed => Err(e.to_string()),
        Err(e) => return Err(e),
    };
    Ok(match &findings {
        Ok(f) => trials::run(exp, cells, target, f.clone().map(|f| f.named))?,
        Err(m) => trials::CheckTrials {
            outcome: (Default::default(), Some(Stopped::Failed(m.clone()))),
            guard: None,
            guard_failure: None,
        },
    })
}

/// The run as exec would size it from the same trials: the experiment
/// with the pair counts the file left out, and the cells, jobs and time
/// that follow. `check` forecasts from this rather than from the file so
/// that its numbers are the run's.
struct Forecast {
    /// The experiment with exec's choice of the counts the file left out.
    exp: Experiment,
    /// Forks per experiment cell, as the file says them.
    forks: u64,
    /// Every cell the run will measure, a gate's self-check cells too.
    all_cells: Vec<runner_plan::Cell>,
    cells_total: u64,
    jobs: u64,
    per_job: u64,
    estimate: crate::exec::estimate::Estimate,
    /// A percentage gate's self-check cells' sizing lines.
    sizing: Vec<String>,
    /// A sequential design's rule and its forecasts.
    stop: Vec<String>,
}

/// What the run would be, sized from the trials as exec sizes it: the
/// pairs a fork runs when the file leaves them out, a percentage gate's
/// 0.5x cells, the jobs and the forecast of the time.
fn forecast(
    exp: &Experiment,
    cells: &[runner_plan::Cell],
    target: Option<&runner_db::DbTarget>,
    outcome: &crate::exec::trials::Outcome,
    on_postgres: bool,
) -> Forecast {
    let forks = u64::from(exp.design.forks.get());
    // A percentage gate's 0.5x cells are sized by the run itself.
    let to_size = runner_plan::self_check::needs_sizing(exp, None);
    // The counts of a fork's pairs the file left out, as exec would choose
    // them from the same trials.
    let mut sized = exp.clone();
    let costs = crate::exec::estimate::costs(exp, cells, target, outcome);
    let chosen = runner_plan::self_check::job_count(exp, &runner_plan::all_cells(exp, None));
    runner_plan::runs::apply(&mut sized.design, costs, chosen);
    let exp = &sized;
    let per_job = runner_plan::Plan::pairs_per_job(exp);
    let (gate_sizing, sizing) = self_check_sizing(exp, cells, &outcome.0, on_postgres, to_size);
    // Every cell the run will measure, and its jobs (a self-check cell
    // runs fewer forks than an experiment cell).
    let all_cells = runner_plan::all_cells(exp, gate_sizing.as_ref());
    let cells_total = all_cells.len() as u64;
    let jobs = runner_plan::self_check::job_count(exp, &all_cells);
    let estimate = crate::exec::estimate::from_trials(exp, &all_cells, target, outcome);
    let stop = crate::exec::stop_estimate::check_line(exp, &all_cells, target, &estimate)
        .lines()
        .map(str::to_owned)
        .collect();
    Forecast {
        exp: sized,
        forks,
        all_cells,
        cells_total,
        jobs,
        per_job,
        estimate,
        sizing,
        stop,
    }
}

/// A percentage gate's 0.5x cells count with the delay the run would give
/// them from the baseline the trials measured (or, untimed, what
/// `estimate_run_ns` guesses), capped at 1 s as the run caps it; their
/// lines say which of the two it was, since a guess can be far off.
fn self_check_sizing(
    exp: &Experiment,
    cells: &[runner_plan::Cell],
    timed: &crate::exec::trials::Trials,
    on_postgres: bool,
    to_size: bool,
) -> (Option<runner_plan::self_check::GateSizing>, Vec<String>) {
    let baseline_ns =
        |c: &runner_plan::Cell| timed.run_ns(&runner_plan::bind(exp, c, &exp.design.baseline));
    let sized = runner_plan::self_check::estimate(exp, &runner_plan::cells(exp), |c| {
        baseline_ns(c).unwrap_or_else(|| {
            runner_plan::estimate_run_ns(exp, c, &exp.design.baseline, on_postgres)
        })
    });
    let sizing = if to_size {
        sizing_lines(exp, cells, sized.as_ref(), &baseline_ns)
    } else {
        Vec::new()
    };
    (sized, sizing)
}

/// The design line states the file's forks but exec's pair counts, so a
/// reader sees what the run will do rather than what the file left out.
fn design_line(exp: &Experiment, forks: u64) -> String {
    format!(
        "{} forks per cell x ({} warm-up + {} measured pairs{}), {} order, pad_baseline {}, {} schedule",
        forks,
        exp.design.warmup_pairs,
        exp.design.pairs,
        runner_report::numbers::runs_chosen(&exp.design)
            .map_or(String::new(), |c| format!("; {c}")),
        exp.design.ordering,
        exp.design.pad_baseline,
        exp.design.schedule
    ) + &counting_clause(exp)
}

/// The trials as the summary keeps them: the medians come from the
/// estimate, so that the trial line quotes the numbers the forecast used,
/// and a failure is kept because it makes the estimate a guess.
fn trial_summary(
    (timed, stopped): &crate::exec::trials::Outcome,
    cells: usize,
    estimate: &crate::exec::estimate::Estimate,
) -> TrialSummary {
    let failed = match stopped {
        Some(Stopped::Failed(why) | Stopped::TimedOut(why)) => Some(why.clone()),
        _ => None,
    };
    TrialSummary {
        tried: timed.tried.clone(),
        cells,
        runs: estimate.runs,
        timed: estimate
            .timed
            .iter()
            .map(|(arm, ns)| TimedArm {
                arm: arm.clone(),
                median_ns: *ns,
            })
            .collect(),
        failed,
        left_processes: timed.left_processes,
    }
}

/// The guard's record in words: each table's residue becomes its phrase
/// here, in the summary, so that `--json` carries the words the text
/// prints rather than counts for a script to phrase again.
fn guard_summary(g: &runner_db::fingerprint::GuardRecord) -> GuardSummary {
    GuardSummary {
        held: g.held,
        changes: g.changes.clone(),
        residue: g
            .residue
            .iter()
            .flatten()
            .map(|r| {
                format!(
                    "{} dead row version{} in {}",
                    r.dead_rows,
                    if r.dead_rows == 1 { "" } else { "s" },
                    r.table
                )
            })
            .collect(),
        other_sessions: g.other_sessions.clone(),
    }
}

/// Why `check` exits 1 after printing the plan: a failed trial first,
/// since exec's first fork would fail the same way, else a database the
/// trials changed.
fn exit_failure(failed: Option<&str>, trials: &trials::CheckTrials) -> Option<Failure> {
    if let Some(why) = failed {
        Some(Failure {
            exit_code: 1,
            message: crate::exec::preflight::with_privileges(format!(
                "check's trial run failed, as exec's first fork would: {why}"
            )),
        })
    } else {
        trials.guard_failure.clone().map(|message| Failure {
            exit_code: 1,
            message,
        })
    }
}

/// The analysis's time is said apart from the forks' because it runs after
/// them, on every measured pair of every job.
fn analysis_line(exp: &Experiment, cells_total: u64, jobs: u64) -> String {
    format!(
        "{} ({} resamples x {} measured pairs, after the forks)",
        crate::exec::estimate::approx(crate::exec::estimate::analysis_ns(exp, cells_total)),
        exp.analysis.resamples,
        jobs * u64::from(exp.design.pairs.get())
    )
}

/// Where exec would write, said once: the folder `--out` names, or the
/// default one.
fn output_line(exp: &Experiment, out: Option<&Path>) -> String {
    let (dir, how) = match out {
        Some(o) => (o.to_path_buf(), "(--out)"),
        None => (
            Path::new("reports").join(&exp.name),
            "(--out DIR to write elsewhere)",
        ),
    };
    let old = runner_folder::output::target::old_path(&dir);
    format!(
        "exec writes {}/ {how} once the run completes; a report already there moves to {}/, which git ignores",
        dir.display(),
        old.display()
    )
}

/// What the design counts besides time (`design.measure`), as a clause
/// of the design line; empty for a run that times alone.
fn counting_clause(exp: &Experiment) -> String {
    let sim = |c: runner_spec::Counting| {
        if c.cache_sim {
            " with its cache simulated"
        } else {
            ""
        }
    };
    match exp.design.counting {
        None => String::new(),
        Some(c) if c.time => format!(
            "; then {} counted pair{} per fork, instructions under valgrind's cachegrind{}, never timed",
            c.pairs,
            if c.pairs == 1 { "" } else { "s" },
            sim(c)
        ),
        Some(c) => format!(
            "; every pair counted (instructions under valgrind's cachegrind{}), none timed without it",
            sim(c)
        ),
    }
}

fn arms_line(exp: &Experiment) -> String {
    let strategy = |name: &str| format!("{name} ({})", exp.strategies[name].label());
    format!(
        "baseline {} vs treatment {}{}",
        strategy(&exp.design.baseline),
        exp.design
            .variants()
            .iter()
            .map(|t| strategy(t))
            .collect::<Vec<_>>()
            .join(", "),
        if exp.design.is_aa() {
            " (A/A, one shared instance)"
        } else {
            ""
        }
    )
}

fn placement_line(exp: &Experiment, on_postgres: bool) -> String {
    let allowed = runner_os::placement::pin::allowed_cpus();
    let placements: Vec<runner_os::placement::Placement> = if exp.grid.placement.is_empty() {
        vec![exp.design.placement]
    } else {
        exp.grid.placement.clone()
    };
    let planned: Vec<String> = placements
        .iter()
        .map(|p| match p.cpus(&allowed) {
            // A database backend is placed only where a run has one.
            Ok(c) => match (c.worker, c.backend.filter(|_| on_postgres)) {
                (None, _) => format!("{p} (left to the scheduler)"),
                (Some(w), Some(b)) => {
                    format!("{p} (worker on CPU {w}, a local database backend on CPU {b})")
                }
                (Some(w), None) => format!("{p} (worker on CPU {w})"),
            },
            Err(why) => format!("{p} ({why})"),
        })
        .collect();
    format!(
        "{}; runner may use CPUs {}",
        planned.join(", "),
        runner_os::placement::pin::cpu_list(&allowed)
    )
}

/// Where the database arms run, and (read-only) a warning about the role.
fn database_line(
    exp: &Experiment,
    target: Option<&runner_db::DbTarget>,
    needs_db: bool,
    warnings: &mut Vec<String>,
) -> Option<String> {
    use runner_db::DbTarget;
    let copies = if exp.database.private_copies.is_empty() {
        String::new()
    } else {
        format!(
            "; private copies per fork of {}",
            exp.database.private_copies.join(", ")
        )
    };
    Some(match target {
        Some(t @ DbTarget::Postgres { url, .. }) => {
            let source = if runner_core::settings::get().database_url.is_some() {
                "RUNNER_DATABASE_URL"
            } else {
                "database.url"
            };
            let at = runner_db::server(url);
            match runner_db::open::role_warning(t) {
                Ok(Some(w)) => warnings.push(w),
                Ok(None) => {}
                Err(e) => warnings.push(format!("could not read the role's privileges: {e}")),
            }
            format!("postgres at {at} (from {source}){copies}")
        }
        Some(DbTarget::Sqlite) => {
            "sqlite (embedded, in memory; set RUNNER_DATABASE_URL to use PostgreSQL)".into()
        }
        Some(DbTarget::SqliteFile { file }) => {
            format!("sqlite (embedded, an in-memory copy of {file} per arm){copies}")
        }
        None if needs_db => "none usable".into(),
        None => return None,
    })
}

fn cell_line(exp: &Experiment, c: &runner_plan::Cell) -> String {
    let role = match c.role {
        runner_plan::Role::Experiment => String::new(),
        _ => {
            let (b, _) = c.arms(&exp.design);
            format!(" (gate self-check: `{b}` against itself)")
        }
    };
    // The delay only when the grid sweeps it, as the report names cells.
    let mut params = exp.grid.labelled(&c.params);
    if exp.grid.delay_ns.len() < 2 && c.role == runner_plan::Role::Experiment && params.len() > 1 {
        params = runner_plan::group_params(&params);
    }
    format!(
        "cell {:<3} {}{role}",
        c.cell,
        runner_report::numbers::params(&params)
    )
}

fn sizing_lines(
    exp: &Experiment,
    cells: &[runner_plan::Cell],
    sized: Option<&runner_plan::self_check::GateSizing>,
    baseline_ns: &dyn Fn(&runner_plan::Cell) -> Option<u64>,
) -> Vec<String> {
    let mut out = vec![format!(
        "and one gate self-check cell per group at half the threshold, sized once the cells above have run (`{}` against itself)",
        exp.design.baseline
    )];
    for g in sized.iter().flat_map(|s| &s.groups) {
        let measured = g
            .cells
            .first()
            .and_then(|&c| cells.iter().find(|x| x.cell == c))
            .is_some_and(|c| baseline_ns(c).is_some());
        out.push(format!(
            "  estimated here from {} of {}: {} injected",
            if measured {
                "the trial runs' median baseline run"
            } else {
                "a guessed baseline run"
            },
            runner_report::numbers::duration(g.baseline_median_ns),
            runner_report::numbers::delay(
                runner_plan::self_check::within_delay_ns(g.threshold_ns) as f64
            ),
        ));
    }
    out
}

/// The gate's line, and the self-check's size: a quarter of the
/// comparison's forks, testing whether forks' intervals are valid (the
/// power itself is computed from the deciding interval).
fn gate_lines(exp: &Experiment, all: &[runner_plan::Cell]) -> (Option<String>, Option<String>) {
    let Some(g) = &exp.gate else {
        return (None, None);
    };
    let judged = match g.max_slowdown {
        runner_spec::MaxSlowdown::Percent(_) if g.metric == runner_spec::Metric::Instructions => {
            "the instructions' ratio's interval over the forks decides (gate.metric)"
        }
        runner_spec::MaxSlowdown::Percent(_) => "the speed ratio's interval over the forks decides",
        runner_spec::MaxSlowdown::Ns(_) => "D's interval over the forks decides",
    };
    let mut line = format!(
        "max_slowdown {}, {judged}, self-check {}, min_power {}, max_false_block {}; exit 0 pass, 3 regression, 4 inconclusive",
        g.max_slowdown,
        if g.self_check { "on" } else { "off" },
        g.min_power,
        g.max_false_block
    );
    let forks = exp
        .design
        .stop
        .map_or(exp.design.forks.get(), |s| s.max_forks.get());
    let least = runner_analysis::gate::MIN_FORKS;
    if forks < least {
        line.push_str(&format!(
            "; a gate decides on {least} forks per cell at least, so with {forks} it will be inconclusive (--set design.forks={least})"
        ));
    }
    let self_check = g.self_check.then(|| {
        let forks = all
            .iter()
            .find(|c| !c.role.is_experiment())
            .map(|c| runner_plan::self_check::forks_of(exp, all, c))
            .unwrap_or(0);
        format!(
            "{} per self-check cell (a quarter of the comparison's): tests whether forks' intervals are valid; the power is computed from the deciding interval",
            runner_report::effect::forks_count(forks)
        )
    });
    (Some(line), self_check)
}

/// What memory layout each fork will get (`design.layout`): the values
/// exec will use, since they are a function of the seed alone. Empty for
/// runs with the default, which print what they printed before layout
/// existed.
pub(super) fn layout_lines(exp: &Experiment) -> Vec<String> {
    use runner_os::memory_layout::Layout;
    let cells = runner_plan::cells(exp);
    let layouts: std::collections::BTreeSet<Layout> =
        cells.iter().map(|c| runner_plan::layout(exp, c)).collect();
    if layouts.iter().all(Layout::is_system) {
        return Vec::new();
    }
    let said: Vec<String> = layouts
        .iter()
        .map(|l| match l {
            Layout::System => "system (no padding or offsets, ASLR as the system has it)".into(),
            Layout::Fixed => "fixed (one layout for every fork, ASLR off)".into(),
            Layout::Random => "random (a seeded layout per fork, ASLR on)".into(),
        })
        .collect();
    let mut out = vec![said.join(", ")];
    let Some(master) = exp.seed else {
        out.push("each fork's layout is drawn from the master seed, which exec draws; set `seed` to see them here".into());
        return out;
    };
    let mut jobs = runner_plan::plan(exp, master, None).jobs;
    jobs.sort_by_key(|j| (j.cell, j.fork));
    for j in jobs {
        let Some(c) = cells.get(j.cell as usize) else {
            continue;
        };
        if let Some(p) = runner_os::memory_layout::plan(runner_plan::layout(exp, c), master, j.seed)
        {
            out.push(format!(
                "cell {:<3} fork {:<4} {}: {} B of environment padding, stack offset {} B, heap offset {} B, ASLR {}",
                j.cell,
                j.fork,
                p.layout,
                p.env_pad_bytes,
                p.stack_offset_bytes,
                p.heap_offset_bytes,
                if p.aslr_asked() { "on" } else { "off" }
            ));
        }
    }
    out
}
