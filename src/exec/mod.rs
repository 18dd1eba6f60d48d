//! The parent side of `runner exec`: folders, forks one at a time, resume.

pub mod database;
pub mod fault;
pub mod interrupt;
pub mod partial;
pub mod progress;
pub mod protocol;
pub mod spawn;
pub mod worker;

use crate::analysis::streams;
use crate::error::{bad_input, run_failed, Result, RunnerError};
use crate::plan::{self, Job};
use crate::run_info::{DerivedSeed, ForkRecord, RunInfo, Seeds, SpecInfo};
use crate::seed::{self, Domain};
use crate::spec::{self, Experiment, LoadedSpec};
use partial::Partial;
use progress::Progress;
use protocol::JobRequest;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub struct ExecArgs {
    pub spec: PathBuf,
    pub out: Option<PathBuf>,
    pub set: Vec<String>,
    pub resume: Option<PathBuf>,
    pub quiet: bool,
}

/// What a finished exec leaves behind.
pub struct ExecOutcome {
    pub dir: PathBuf,
    pub info: RunInfo,
    /// Headline and sensitivity table, for stdout.
    pub summary: String,
}

fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// A run id that is also a valid SQL identifier suffix: `20261202_171800_3fa9c1`.
fn new_run_id() -> String {
    let t = chrono::Utc::now().format("%Y%m%d_%H%M%S");
    format!("{t}_{:06x}", rand::random::<u32>() & 0xff_ffff)
}

fn new_run_info(loaded: &LoadedSpec, spec_path: &Path) -> RunInfo {
    let exp = &loaded.experiment;
    let (master, drawn) = match exp.seed {
        Some(s) => (s, false),
        None => (rand::random::<u64>() >> 11, true),
    };
    let plan = plan::plan(exp, master);
    let bootstrap = plan
        .jobs
        .iter()
        .map(|j| DerivedSeed {
            cell: j.cell,
            fork: j.fork,
            seed: streams::fork_seed(master, j.cell, j.fork),
        })
        .collect();
    let cell_seeds = plan
        .cells
        .iter()
        .map(|c| streams::cell_seeds(master, c.cell))
        .collect();
    RunInfo {
        run_id: new_run_id(),
        command_line: std::env::args().collect(),
        spec: SpecInfo {
            path: spec_path.display().to_string(),
            sha256: crate::run_info::sha256_hex(&loaded.resolved_toml),
            toml: loaded.resolved_toml.clone(),
            experiment: exp.clone(),
        },
        seeds: Seeds {
            master,
            drawn,
            schedule: seed::derive(master, Domain::Schedule, &[]),
            bootstrap,
            cells: cell_seeds,
        },
        cells: plan.cells,
        jobs: plan.jobs,
        forks: Vec::new(),
        database: None,
        environment: crate::environment::capture(),
        started_at: now_rfc3339(),
        finished_at: None,
    }
}

/// Keys whose values differ between two experiments, as dotted paths.
fn differing_keys(
    a: &serde_json::Value,
    b: &serde_json::Value,
    prefix: &str,
    out: &mut Vec<String>,
) {
    use serde_json::Value::Object;
    match (a, b) {
        (Object(x), Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                let null = serde_json::Value::Null;
                differing_keys(
                    x.get(k).unwrap_or(&null),
                    y.get(k).unwrap_or(&null),
                    &path,
                    out,
                );
            }
        }
        _ if a != b => out.push(prefix.to_string()),
        _ => {}
    }
}

/// A resumed run must run the spec it was started with.
fn check_same_spec(started: &Experiment, now: &Experiment) -> Result<()> {
    let mut now = now.clone();
    if now.seed.is_none() {
        now.seed = started.seed;
    }
    let a = serde_json::to_value(started).expect("experiment serializes");
    let b = serde_json::to_value(&now).expect("experiment serializes");
    let mut keys = Vec::new();
    differing_keys(&a, &b, "", &mut keys);
    if keys.is_empty() {
        Ok(())
    } else {
        Err(bad_input(format!(
            "the spec changed since this run was started ({} differ); resume with the original spec and --set flags, or start a new run",
            keys.join(", ")
        )))
    }
}

/// A resumed run must measure on the database it started on: the same
/// backend and, for PostgreSQL, the same host, port and database. (Mixing
/// would put forks of two systems into one cell.)
fn check_same_database(
    started: Option<&serde_json::Value>,
    now: Option<&serde_json::Value>,
) -> Result<()> {
    let describe = |v: Option<&serde_json::Value>| -> String {
        let Some(v) = v else {
            return "no database".into();
        };
        match v["postgres"].as_object() {
            Some(pg) => format!(
                "postgres at {}:{} database {}",
                pg.get("host").map_or(String::new(), |h| h
                    .as_str()
                    .unwrap_or_default()
                    .to_string()),
                pg.get("port").map_or(String::new(), |p| p.to_string()),
                pg.get("database").map_or(String::new(), |d| d.to_string()),
            ),
            None => v["backend"].as_str().unwrap_or("unknown").to_string(),
        }
    };
    let (a, b) = (describe(started), describe(now));
    if a == b {
        Ok(())
    } else {
        Err(bad_input(format!(
            "this run started on {a} but would resume on {b}; set RUNNER_DATABASE_URL (or unset it) as it was when the run started"
        )))
    }
}

/// The original command line with `--resume DIR.partial`, quoted for a
/// POSIX shell, so it can be pasted as is (from the same directory).
pub fn resume_command(info: &RunInfo, partial: &Path) -> String {
    let mut args: Vec<String> = info.command_line.iter().skip(1).cloned().collect();
    if let Some(i) = args.iter().position(|a| a == "--resume") {
        args.drain(i..(i + 2).min(args.len()));
    }
    args.retain(|a| !a.starts_with("--resume="));
    args.push("--resume".into());
    args.push(partial.display().to_string());
    let quoted: Vec<String> = args.iter().map(|a| shell_quote(a)).collect();
    format!("runner {}", quoted.join(" "))
}

fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+%".contains(c));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

fn job_request(
    exp: &Experiment,
    info: &RunInfo,
    job: &Job,
    db: Option<&crate::db::DbTarget>,
) -> JobRequest {
    let cell = &info.cells[job.cell as usize];
    let d = &exp.design;
    JobRequest {
        cell: job.cell,
        fork: job.fork,
        seed: job.seed,
        delay_ns: cell.delay_ns,
        workload: cell.workload,
        baseline: plan::bind(exp, cell, &d.baseline),
        treatment: plan::bind(exp, cell, &d.treatment),
        baseline_name: d.baseline.clone(),
        treatment_name: d.treatment.clone(),
        shared_instance: d.is_aa(),
        warmup_pairs: d.warmup_pairs,
        pairs: d.pairs.get(),
        ordering: d.ordering,
        pad_baseline: d.pad_baseline,
        database: db.cloned(),
    }
}

/// `runner exec`.
pub fn exec(args: &ExecArgs) -> Result<ExecOutcome> {
    let loaded = spec::load(&args.spec, &args.set)?;
    let exp = &loaded.experiment;
    // A template that does not even parse fails now, not after the run.
    if let Some(t) = &exp.report.template {
        crate::report::check_template(t)?;
    }
    interrupt::install();
    let resuming = args.resume.is_some();
    let (partial, final_dir, mut info) = match &args.resume {
        Some(p) => {
            let partial = Partial::open(p)?;
            let info = partial.read_run_info()?;
            check_same_spec(&info.spec.experiment, exp)?;
            let final_dir = match &args.out {
                Some(o) => o.clone(),
                None => partial::final_path(p).ok_or_else(|| {
                    bad_input(format!(
                        "{} does not end in .partial; pass --out DIR",
                        p.display()
                    ))
                })?,
            };
            (partial, final_dir, info)
        }
        None => {
            let final_dir = args
                .out
                .clone()
                .unwrap_or_else(|| Path::new("reports").join(&exp.name));
            let partial = Partial::create(&partial::partial_path(&final_dir))?;
            let info = new_run_info(&loaded, &args.spec);
            partial.write_run_info(&info)?;
            (partial, final_dir, info)
        }
    };
    if info.seeds.drawn && !args.quiet {
        eprintln!("seed: drawn {} (recorded in run.json)", info.seeds.master);
    }

    let db = match database::RunDatabase::prepare(exp, &info.run_id, resuming) {
        Ok(db) => db,
        // Nothing ran: a new run leaves nothing behind.
        Err(e) if !resuming => {
            partial.remove();
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    if resuming {
        let now = db.as_ref().map(|d| &d.info);
        if let Err(e) = check_same_database(info.database.as_ref(), now) {
            if let Some(db) = &db {
                db.cleanup();
            }
            return Err(e);
        }
    }
    info.database = db.as_ref().map(|d| d.info.clone());
    // Recorded now, so a resume can check it runs on the same database.
    partial.write_run_info(&info)?;
    let result = run_jobs(
        exp,
        &mut info,
        &partial,
        db.as_ref().map(|d| &d.target),
        args.quiet,
    );
    if let Some(db) = &db {
        db.cleanup();
    }
    if let Err(e) = result {
        let kept = partial.finished_forks().map(|f| f.len()).unwrap_or(0);
        let resume = resume_command(&info, &partial.dir);
        return Err(run_failed(format!(
            "{e}\n{kept} of {} forks finished and are kept in {}; to run the missing ones with their original seeds: {resume}",
            info.jobs.len(),
            partial.dir.display()
        )));
    }

    info.forks = partial.finished_forks()?;
    info.environment.load_after = Some(crate::environment::load_average());
    info.finished_at = Some(now_rfc3339());
    partial.write_run_info(&info)?;
    partial.assemble_pairs(&info.forks)?;
    // Render before dropping the per-fork files: a template that fails leaves
    // a folder that --resume can still finish.
    let rendered = match crate::report::render_folder(&partial.dir, None, None) {
        Ok(r) => r,
        Err(e) => {
            let resume = resume_command(&info, &partial.dir);
            let msg = format!(
                "{e}\nevery fork finished and is kept in {}; fix the problem, then render the report with: {resume}",
                partial.dir.display()
            );
            return Err(match e {
                RunnerError::BadInput(_) => bad_input(msg),
                RunnerError::RunFailed(_) => run_failed(msg),
            });
        }
    };
    let dir = partial.finish()?;
    partial::promote(&dir, &final_dir)?;
    let summary = format!(
        "{}report: {}\n",
        rendered.summary,
        final_dir.join("report.md").display()
    );
    Ok(ExecOutcome {
        dir: final_dir,
        info,
        summary,
    })
}

/// Runs every job that has no finished fork yet, one worker at a time.
fn run_jobs(
    exp: &Experiment,
    info: &mut RunInfo,
    partial: &Partial,
    db: Option<&crate::db::DbTarget>,
    quiet: bool,
) -> Result<()> {
    let done: HashSet<(u32, u32)> = partial
        .finished_forks()?
        .iter()
        .map(|f| (f.summary.cell, f.summary.fork))
        .collect();
    let todo: Vec<Job> = info
        .jobs
        .iter()
        .filter(|j| !done.contains(&(j.cell, j.fork)))
        .copied()
        .collect();
    let todo_len = todo.len();
    let mut progress = Progress::new(quiet, info.jobs.len() as u64, done.len() as u64);
    let timeout = Duration::from_secs(exp.design.fork_timeout_s);
    let pairs_per_job = plan::Plan::pairs_per_job(exp);
    for job in todo {
        if interrupt::interrupted() {
            progress.clear();
            return Err(run_failed("interrupted (Ctrl-C or a termination signal)"));
        }
        let label = format!("cell {} fork {}", job.cell, job.fork);
        let request = job_request(exp, info, &job, db);
        let mut writer = partial.fork_writer(job.cell, job.fork)?;
        progress.start_fork(&label, pairs_per_job);
        let outcome = spawn::run_worker(&request, timeout, |p| {
            progress.pair();
            writer.push(p)
        });
        let failure = match outcome {
            Ok(r) if r.summary.seeded_hash != r.summary.final_hash => format!(
                "{label}: the table's content changed during the fork (hash {:?} after seeding, {:?} after the last preview): a preview leaked a write",
                r.summary.seeded_hash, r.summary.final_hash
            ),
            Ok(r) => {
                let seconds = r.wall_ns as f64 / 1e9;
                let record = ForkRecord { summary: r.summary, checks: r.checks, wall_ns: r.wall_ns };
                partial.commit_fork(writer, &record)?;
                progress.finish_fork(&label, seconds);
                continue;
            }
            Err(f) if f.sigint || interrupt::interrupted() => format!(
                "interrupted (Ctrl-C or a termination signal) during {label}; the worker was stopped and its unfinished fork discarded"
            ),
            Err(f) => {
                let mut msg = format!("{label} (job seed {}) failed: {}", job.seed, f.reason);
                if !f.stderr_tail.is_empty() {
                    msg.push_str("\nworker stderr (last lines):\n  ");
                    msg.push_str(&f.stderr_tail.join("\n  "));
                }
                msg
            }
        };
        writer.discard();
        progress.clear();
        return Err(run_failed(failure));
    }
    progress.finish(todo_len);
    if interrupt::interrupted() {
        return Err(run_failed("interrupted (Ctrl-C or a termination signal)"));
    }
    Ok(())
}
