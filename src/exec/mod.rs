//! The parent side of `runner exec`: the run's folder, forks one at a time,
//! resume, and the end of a run (analysis, report, promotion).
//!
//! Everything that can be refused is refused before the first fork: the
//! spec, the template, the output folder (`output::target`), the folder to
//! resume (locked, its run.json and every kept fork checked), the database.
//! From then on, every failure (a fork, a signal, a full disk, the analysis)
//! keeps what finished and prints the command that resumes.

pub(crate) mod counting;
pub(crate) mod database;
mod db_guard;
mod error;
pub(crate) mod estimate;
pub(crate) mod fault;
mod fork_loop;
mod jobs;
mod measured;
pub(crate) mod preflight;
pub(crate) mod progress;
pub(crate) mod protocol;
mod queue;
pub(crate) mod resume;
pub mod retry;
mod run;
pub(crate) mod spawn;
pub(crate) mod stop_estimate;
mod stopper;
mod tables;
pub(crate) mod trials;
mod upcoming;
pub mod worker;

use crate::shard;
use error::ExecError;
use protocol::JobRequest;
use runner_core::error::Result;
use runner_folder::assemble::{Builder, Source};
use runner_folder::output::target;
use runner_folder::partial::{final_path, partial_path, Partial};
use runner_folder::{BuildInfo, Invocation, RunInfo, SpecInfo};
use runner_plan::Job;
use runner_spec::{Experiment, LoadedSpec};
use std::path::{Path, PathBuf};

pub use runner_folder::invocation::ExecArgs;

/// The private temporary folder of this process's run (exec's forks or
/// check's trials), made the root of every temporary file runner makes
/// from now on; removed when dropped, however the command ends.
pub(crate) fn private_temp() -> Result<runner_os::temp::RunTemp> {
    let temp = runner_os::temp::RunTemp::create().map_err(|source| ExecError::NoTemp {
        dir: std::env::temp_dir(),
        source,
    })?;
    temp.use_for_process();
    Ok(temp)
}

/// What a finished exec leaves behind.
pub struct ExecOutcome {
    pub dir: PathBuf,
    pub info: RunInfo,
    /// Headline and sensitivity table, for stdout (led by a gate's verdict).
    pub summary: String,
    /// 0, or a gate's 3 (regression) or 4 (inconclusive).
    pub exit_code: i32,
    /// An inconclusive gate's named design, as `--set` values.
    pub advice: Vec<String>,
}

/// The spec as run.json records it: passwords redacted, validated again
/// from that text (so a reader that re-validates it gets the same).
fn recorded_spec(loaded: &LoadedSpec, spec_path: &Path) -> Result<SpecInfo> {
    let path = spec_path.display().to_string();
    let toml = runner_core::redact::secrets(&loaded.resolved_toml);
    // The SQL texts and grammar the live validation used.
    let postgres = matches!(
        runner_db::resolve_with(
            &loaded.experiment.database,
            runner_core::settings::get().database_url.as_deref(),
            "recorded",
        ),
        Ok(Some(runner_db::DbTarget::Postgres { .. }))
    );
    let recorded = runner_spec::Recorded::of(&loaded.experiment, postgres);
    let experiment = runner_spec::parse_recorded(&path, &toml, &recorded)?;
    Ok(SpecInfo::new(path, toml, experiment))
}

/// A new run's run.json: this command, the spec as recorded, the master
/// seed (the spec's, or drawn now) and, for a shard, its share.
/// The user's code the run measures: the repository that holds the
/// experiment file, with what runner writes there left out of its state
/// (the report folders under `reports/`, and this run's own).
fn measured_code(spec: &Path, final_dir: &Path) -> runner_os::environment::Code {
    let dir = match spec.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let leave_out = [
        PathBuf::from("reports"),
        final_dir.to_path_buf(),
        partial_path(final_dir),
        target::old_path(final_dir),
    ];
    runner_os::environment::Code::capture(dir, &leave_out)
}

fn new_run_info(
    args: &ExecArgs,
    loaded: &LoadedSpec,
    selection: Option<shard::Selection>,
    final_dir: &Path,
    counters: Option<runner_os::environment::counters::Counters>,
) -> Result<RunInfo> {
    let exp = &loaded.experiment;
    let (master, drawn) = match exp.seed {
        Some(s) => (s, false),
        None => (rand::random::<u64>() >> 11, true),
    };
    if let Some(s) = selection {
        // What a shard refuses (no seed, more shards than jobs), said now.
        shard::plan_share(exp, &runner_plan::plan(exp, master, None).jobs, s)
            .map_err(ExecError::Shard)?;
    }
    let invocation = Invocation::Exec(args.clone());
    let mut environment = runner_os::environment::capture(&crate::binary::BINARY);
    environment.code = measured_code(&args.spec, final_dir);
    environment.counters = counters;
    let info = Builder::new(
        &invocation,
        recorded_spec(loaded, &args.spec)?,
        master,
        drawn,
        environment,
    )
    .assemble(Source::Measured {
        shard: selection.map(shard::info),
    })
    .map_err(ExecError::Record)?;
    Ok(info)
}

fn job_request(
    exp: &Experiment,
    info: &RunInfo,
    job: &Job,
    db: Option<&runner_db::DbTarget>,
) -> JobRequest {
    let cell = &info.cells()[job.cell as usize];
    let d = &exp.design;
    // The cell's role says which strategies its arms run (the gate's
    // self-check cells run the baseline on both sides).
    let (baseline, treatment) = cell.arms(d);
    let (bound_b, bound_t) = (
        runner_plan::bind(exp, cell, baseline),
        runner_plan::bind(exp, cell, treatment),
    );
    JobRequest {
        cell: job.cell,
        fork: job.fork,
        seed: job.seed,
        delay_ns: cell.delay_ns,
        workload: cell.workload,
        premade_tables: tables::premade_for(db, &bound_b, &bound_t),
        baseline: bound_b,
        treatment: bound_t,
        baseline_name: baseline.to_string(),
        treatment_name: treatment.to_string(),
        shared_instance: baseline == treatment,
        warmup_pairs: d.warmup_pairs,
        pairs: d.pairs.get(),
        ordering: d.ordering,
        pad_baseline: d.pad_baseline,
        database: db.cloned(),
        placement: runner_plan::placement(exp, cell),
        claim: claim(runner_plan::placement(exp, cell)),
        layout: runner_os::memory_layout::plan(
            runner_plan::layout(exp, cell),
            info.seeds().master,
            job.seed,
        ),
        temp_dir: runner_os::temp::private_root(),
        trial: false,
        sql: exp.database.sql_options(),
        count: counting::job(exp),
    }
}

/// The CPUs `placement` pins, locked for this run's lifetime so that no
/// other runner pins there (`placement::lock`); none when it cannot be made
/// here, which the worker then says as before.
fn claim(placement: runner_os::placement::Placement) -> Option<runner_os::placement::Claim> {
    let dir =
        runner_os::placement::lock::lock_dir(runner_core::settings::get().runtime_dir.as_deref());
    runner_os::placement::lock::claim(&dir, placement, &runner_os::placement::pin::allowed_cpus())
        .ok()
}

/// `--resume P --out O`: the finished folder is renamed from P to O, so
/// they must be on one file system, and neither inside the other.
fn check_resume_paths(partial: &Path, final_dir: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let (Ok(p), Ok(o)) = (target::absolute(partial), target::absolute(final_dir)) else {
        return Ok(());
    };
    if p.starts_with(&o) || o.starts_with(&p) {
        return Err(ExecError::ResumeNested {
            out: final_dir.to_path_buf(),
            resume: partial.to_path_buf(),
        }
        .into());
    }
    let dev = |path: &Path| std::fs::metadata(path).map(|m| m.dev()).ok();
    let out_parent = o.parent().map(Path::to_path_buf).unwrap_or_default();
    if let (Some(a), Some(b)) = (dev(&p), dev(&out_parent)) {
        if a != b {
            return Err(ExecError::ResumeOtherFileSystem {
                out: final_dir.to_path_buf(),
                resume: partial.to_path_buf(),
                beside: final_path(partial).unwrap_or_else(|| PathBuf::from("DIR")),
            }
            .into());
        }
    }
    Ok(())
}

/// The exit codes of `runner exec --bisect`, in `git bisect run`'s terms:
/// the commit is good (the gate passed), bad (a regression), to be
/// skipped (the gate could not decide, or the run failed: a commit that
/// does not build or crashes tells nothing about the regression), or the
/// bisection must stop (bad input: every commit would fail alike). Any
/// code from 128 up stops `git bisect run`; 125 skips.
pub mod bisect {
    use runner_analysis::gate::Verdict;
    use runner_core::error::{Failure, RunnerError};

    pub const GOOD: i32 = 0;
    pub const BAD: i32 = 1;
    pub const SKIP: i32 = 125;
    pub const ABORT: i32 = 128;

    /// The gate's verdict behind the exit code exec returned
    /// (`Verdict::exit_code`); none for a code no verdict has.
    fn verdict(exit_code: i32) -> Option<Verdict> {
        [Verdict::Pass, Verdict::Regression, Verdict::Inconclusive]
            .into_iter()
            .find(|v| v.exit_code() == exit_code)
    }

    /// The code of a finished run, from its gate's verdict.
    pub fn of_outcome(exit_code: i32) -> i32 {
        match verdict(exit_code) {
            Some(Verdict::Pass) => GOOD,
            Some(Verdict::Regression) => BAD,
            Some(Verdict::Inconclusive) | None => SKIP,
        }
    }

    /// What a finished run's verdict is called in the line git is told.
    pub fn outcome_word(exit_code: i32) -> &'static str {
        match verdict(exit_code) {
            Some(Verdict::Pass) => "pass",
            Some(Verdict::Regression) => "regression",
            Some(Verdict::Inconclusive) | None => "inconclusive",
        }
    }

    /// The code of a run that did not finish.
    pub fn of_error(e: &RunnerError) -> i32 {
        match e.failure() {
            Failure::BadInput => ABORT,
            // Whether the arms agree depends on the commit: skip it.
            Failure::RunFailed | Failure::ArmsDisagree => SKIP,
        }
    }

    /// What a run that did not finish is called in the line git is told.
    pub fn error_word(e: &RunnerError) -> &'static str {
        match e.failure() {
            Failure::BadInput => "bad input",
            Failure::RunFailed => "the run failed",
            Failure::ArmsDisagree => "the arms' outputs differ",
        }
    }

    /// Whether a command line asks for `exec --bisect`, read from the raw
    /// words (for a command line clap refused, which must stop a bisection
    /// rather than exit 2, which `git bisect run` would take for "bad").
    pub fn requested<S: AsRef<str>>(argv: &[S]) -> bool {
        argv.get(1).is_some_and(|w| w.as_ref() == "exec")
            && argv
                .iter()
                .skip(2)
                .take_while(|w| w.as_ref() != "--")
                .any(|w| w.as_ref() == "--bisect")
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use runner_core::error::{bad_input, run_failed};

        #[test]
        fn verdicts_and_failures_map_to_git_bisect_run() {
            assert_eq!(of_outcome(Verdict::Pass.exit_code()), GOOD);
            assert_eq!(of_outcome(Verdict::Regression.exit_code()), BAD);
            assert_eq!(of_outcome(Verdict::Inconclusive.exit_code()), SKIP);
            assert_eq!(of_error(&run_failed("a fork crashed")), SKIP);
            assert_eq!(of_error(&bad_input("no such file")), ABORT);
            let differ = runner_core::error::arms_disagree("the arms' outputs differ");
            assert_eq!((of_error(&differ), differ.exit_code()), (SKIP, 2));
            // git bisect run: 125 skips, 128 and above abort.
            assert_eq!((SKIP, ABORT), (125, 128));
        }

        #[test]
        fn the_flag_is_found_in_an_exec_command_line_only() {
            assert!(requested(&[
                "runner", "exec", "a.toml", "--bisect", "--bogus"
            ]));
            assert!(!requested(&["runner", "exec", "a.toml"]));
            assert!(!requested(&["runner", "report", "--bisect"]));
            assert!(!requested(&["runner", "exec", "--", "--bisect"]));
        }
    }
}

/// Refuses a file without `[gate]` when `--bisect` or `--gate-required`
/// asks for one (exec, and `check` before it).
pub fn refuse_ungated(
    spec: &Path,
    exp: &runner_spec::Experiment,
    gate_required: bool,
    bisect: bool,
) -> Result<()> {
    if bisect && exp.gate.is_none() {
        return Err(ExecError::BisectUngated {
            spec: spec.to_path_buf(),
        }
        .into());
    }
    if gate_required && exp.gate.is_none() {
        return Err(ExecError::GateRequired {
            spec: spec.to_path_buf(),
        }
        .into());
    }
    Ok(())
}

/// `runner exec`. A gated run that fails says so in the CI step summary
/// too, so a reviewer sees why no verdict came.
pub fn exec(args: &ExecArgs) -> Result<ExecOutcome> {
    let loaded = runner_spec::load(&args.spec, &args.set)?;
    let result = exec_loaded(args, &loaded);
    if let (Err(e), Some(_)) = (&result, loaded.experiment.gate) {
        runner_report::gate_files::append_failure(
            &loaded.experiment,
            &runner_core::redact::secrets(&e.to_string()),
        );
    }
    result
}

fn exec_loaded(args: &ExecArgs, loaded: &LoadedSpec) -> Result<ExecOutcome> {
    let exp = &loaded.experiment;
    refuse_ungated(&args.spec, exp, args.gate_required, args.bisect)?;
    let counters = counting::require(&args.spec, exp)?;
    // A template that does not even parse fails now, not after the run.
    if let Some(t) = &exp.report.template {
        runner_report::check_template(t)?;
    }
    // Every temporary file of the run (a command's scratch folder) lives
    // in one private folder, removed however exec ends (`temp`).
    let _temp = private_temp()?;
    let resuming = args.resume.is_some();
    let selection = shard::select(args.shard, args.shards, &|k| {
        runner_core::settings::get().scheduler(k).map(str::to_owned)
    })
    .map_err(ExecError::Shard)?;
    if let (Some(s), Some(_)) = (selection, exp.design.runs_per_fork) {
        return Err(ExecError::ShardChoosesRuns {
            spec: args.spec.clone(),
            index: s.index,
            count: s.count,
        }
        .into());
    }
    if let (Some(s), Some(_)) = (selection, exp.design.stop) {
        return Err(ExecError::ShardSequential {
            spec: args.spec.clone(),
            index: s.index,
            count: s.count,
        }
        .into());
    }
    let (partial, final_dir, info, measured) = match &args.resume {
        Some(p) => {
            let final_dir = match &args.out {
                Some(o) => o.clone(),
                None => final_path(p).ok_or_else(|| ExecError::NotPartial { dir: p.clone() })?,
            };
            let (partial, mut info) = Partial::open(p)?;
            shard::check_resume(info.shard().as_ref(), selection).map_err(ExecError::Shard)?;
            info.record_resumed_by(BuildInfo::current());
            target::check_out(&final_dir, "--out")?;
            check_resume_paths(p, &final_dir)?;
            // The counts of a fork's pairs the run chose are its own.
            let mut now = recorded_spec(loaded, &args.spec)?.experiment;
            now.design.adopt_runs(&info.spec().experiment.design);
            resume::check_same_spec(&info.spec().experiment, &now)?;
            // Every kept fork is checked now, before anything runs, and
            // held in memory from here on.
            let measured = measured::Measured::load(&partial, &info)?;
            (partial, final_dir, info, measured)
        }
        None => {
            let (final_dir, what) = match (&args.out, selection) {
                (Some(o), _) => (o.clone(), "--out"),
                (None, Some(s)) => (
                    shard::default_out(&exp.name, s.index, s.count),
                    "the shard's output folder",
                ),
                (None, None) => (Path::new("reports").join(&exp.name), "the output folder"),
            };
            target::check_out(&final_dir, what)?;
            let info = new_run_info(args, loaded, selection, &final_dir, counters)?;
            let partial = Partial::create(&partial_path(&final_dir), &info)?;
            (partial, final_dir, info, measured::Measured::default())
        }
    };
    if info.seeds().drawn && !args.quiet {
        runner_core::console::err(&format!(
            "seed: drawn {} (recorded in run.json)",
            info.seeds().master
        ));
    }
    let mut exp = exp.clone();
    exp.design.adopt_runs(&info.spec().experiment.design);
    let run = run::Run {
        args,
        exp,
        final_dir,
        resuming,
    };
    run.go(partial, info, measured)
}
