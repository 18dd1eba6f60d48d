//! The rules of docs/reference.md: raw TOML values -> [`Experiment`].
//!
//! Rules run in file order (top level, workload, database, design,
//! strategies, grid, analysis, report) so that an empty file reports the
//! first thing a user must write: `design.baseline`.

use super::context::{Context, Files};
use super::experiment::*;
use super::kinds::StrategyKind;
use super::limits;
use super::location::{KeyPath, Problem};
use super::raw::*;
use super::strategies::{check_database_usable, database, strategies};
use super::values::{boolean, choice, describe, integer, string};
use runner_db::statements::SqlDialect;
use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::path::PathBuf;
use toml::Value;

fn root(key: &str) -> KeyPath {
    KeyPath::root().child(key)
}

pub(crate) fn experiment(raw: RawSpec, ctx: &Context) -> Result<Experiment, Problem> {
    let name = match string(raw.name.as_ref(), &root("name"), "a string")? {
        Some(n) => check_name(&n, Some(&root("name")))?,
        None => check_name(ctx.stem, None)?,
    };
    let title =
        string(raw.title.as_ref(), &root("title"), "a string")?.unwrap_or_else(|| name.clone());
    let description = string(
        raw.description.as_ref(),
        &root("description"),
        "a string (Markdown)",
    )?
    .unwrap_or_default();
    let seed = match &raw.seed {
        None => None,
        Some(v) => Some(integer(
            v,
            &root("seed"),
            0,
            i64::MAX,
            "a non-negative integer (a u64 master seed)",
        )? as u64),
    };
    let workload = workload(raw.workload.unwrap_or_default())?;
    let database = database(raw.database.unwrap_or_default(), ctx.files)?;
    let design = design(raw.design.unwrap_or_default())?;
    let strategies = strategies(raw.strategies.unwrap_or_default(), ctx.files)?;
    let mut chosen = vec![(root("design").child("baseline"), &design.baseline)];
    if design.treatments.is_empty() {
        chosen.push((root("design").child("treatment"), &design.treatment));
    }
    for (i, t) in design.treatments.iter().enumerate() {
        chosen.push((root("design").child("treatments").at(i), t));
    }
    for (path, name) in chosen {
        if !strategies.contains_key(name) {
            let defined: Vec<&str> = strategies.keys().map(String::as_str).collect();
            return Err(Problem::value(
                &path,
                format!("{path} names strategy `{name}`, which is not defined;{} defined strategies are: {}", super::suggest::did_you_mean(name, defined.iter().copied()), defined.join(", ")),
            ));
        }
    }
    if !ctx.recorded() {
        check_database_usable(&database, &strategies, ctx)?;
    }
    let grid = super::grid::grid(raw.grid.unwrap_or_default(), &strategies, ctx.files)?;
    if !ctx.recorded() {
        check_placements(&design, &grid, &runner_os::placement::pin::allowed_cpus())?;
        check_swept_clients(&database, &grid)?;
    }
    let dialect = sql_dialect(&database, ctx);
    check_search_path(&strategies, dialect)?;
    super::uses::check(&strategies, &design, &grid, dialect)?;
    let gate = raw
        .gate
        .map(|g| super::gate::gate(g, ctx.recorded()))
        .transpose()?;
    super::measure::check(&design, &strategies, &grid, gate.as_ref())?;
    limits::check_totals(&design, &grid, gate.as_ref())?;
    let analysis = analysis(raw.analysis.unwrap_or_default())?;
    if let Some(stop) = design.stop.as_ref() {
        super::stop::bounded(stop)?;
    }
    Ok(Experiment {
        name,
        title,
        description,
        seed,
        workload,
        database,
        strategies,
        design,
        grid,
        analysis,
        report: report(raw.report.unwrap_or_default(), ctx)?,
        gate,
    })
}

/// Swept concurrent clients need PostgreSQL, as an arm's own `clients` do
/// (`check_database_usable`).
fn check_swept_clients(db: &DatabaseConfig, grid: &Grid) -> Result<(), Problem> {
    let Some(i) = grid.clients.iter().position(|&n| n > 1) else {
        return Ok(());
    };
    if db.backend != Backend::Sqlite {
        return Ok(());
    }
    let path = root("grid").child(super::experiment::CLIENTS_KEY).at(i);
    Err(Problem::value(
        &path,
        format!("{path} = {}: concurrent clients need PostgreSQL (SQLite's writers take turns within one process); use backend \"postgres\" or \"auto\" with a PostgreSQL URL", grid.clients[i]),
    ))
}

/// Every placement the run would use can be made on this machine: its CPUs
/// exist and runner may use them (`taskset`, cpusets), and separate-cores
/// has two. Checked before any fork runs; not for a recorded spec, which
/// was checked on the machine that ran it.
pub(crate) fn check_placements(
    design: &Design,
    grid: &Grid,
    allowed: &[u32],
) -> Result<(), Problem> {
    let mut at: Vec<(KeyPath, runner_os::placement::Placement)> = Vec::new();
    if grid.placement.is_empty() {
        at.push((root("design").child("placement"), design.placement));
    }
    for (i, p) in grid.placement.iter().enumerate() {
        at.push((root("grid").child("placement").at(i), *p));
    }
    for (path, p) in at {
        if let Err(why) = p.cpus(allowed) {
            return Err(Problem::value(
                &path,
                format!(
                    "{path} = \"{p}\" cannot be made on this machine: {why}; valid: {}",
                    runner_os::placement::VALID
                ),
            ));
        }
    }
    Ok(())
}

/// The grammar the `sql` strategies are read with: the backend this run
/// would use (resolved as `db::resolve` does).
fn sql_dialect(db: &DatabaseConfig, ctx: &Context) -> SqlDialect {
    if let Files::Recorded(r) = ctx.files {
        return if r.postgres {
            SqlDialect::Postgres
        } else {
            SqlDialect::Sqlite
        };
    }
    let url = ctx
        .env_url
        .or(db.url.as_deref())
        .filter(|u| !u.trim().is_empty());
    match (db.backend, url) {
        (Backend::Sqlite, _) | (Backend::Auto, None) => SqlDialect::Sqlite,
        _ => SqlDialect::Postgres,
    }
}

fn check_search_path(
    strategies: &BTreeMap<String, StrategyKind>,
    dialect: SqlDialect,
) -> Result<(), Problem> {
    if dialect == SqlDialect::Postgres {
        return Ok(());
    }
    for (name, kind) in strategies {
        if let StrategyKind::Sql(s) = kind {
            if !s.search_path.is_empty() {
                let path = root("strategies").child(name).child("search_path");
                return Err(Problem::value(&path, format!("{path} only applies to PostgreSQL, and this run would use SQLite (no database URL); set RUNNER_DATABASE_URL or database.url, or remove search_path")));
            }
        }
    }
    Ok(())
}

/// The name becomes a folder under `reports/`, so it must not be able to
/// point anywhere else.
fn check_name(name: &str, path: Option<&KeyPath>) -> Result<String, Problem> {
    let bad = name.is_empty()
        || name == "."
        || name == ".."
        || name
            .chars()
            .any(|c| c == '/' || c == '\\' || c.is_control());
    match (bad, path) {
        (false, _) => Ok(name.to_string()),
        (true, Some(p)) => Err(Problem::value(p, format!("name must be a folder name (no `/`, `\\`, `..` or control characters), got {name:?}"))),
        (true, None) => Err(Problem::nowhere(format!("the file name stem {name:?} cannot be an experiment name; set name = \"...\" (a folder name)"))),
    }
}

fn workload(raw: RawWorkload) -> Result<WorkloadParams, Problem> {
    let mut w = WorkloadParams::default();
    let base = root("workload");
    if let Some(v) = &raw.plans {
        w.plans = limits::count(v, &base.child("plans"), &limits::PLANS, ", default 40")?;
    }
    if let Some(v) = &raw.months {
        w.months = limits::count(v, &base.child("months"), &limits::MONTHS, ", default 60")?;
    }
    Ok(w)
}

/// Reads `design.baseline` or `design.treatment` as a strategy name.
type ArmName<'a> = dyn Fn(Option<&Value>, &str) -> Result<String, Problem> + 'a;

/// `treatment = "x"`, or several variants `treatments = ["x", "y"]` (one
/// of the two): the first treatment, and the variants when there are
/// several (a list of one is the same as `treatment`).
fn treatments(
    raw: &RawDesign,
    base: &KeyPath,
    arm: &ArmName<'_>,
) -> Result<(String, Vec<String>), Problem> {
    let path = base.child("treatments");
    let Some(v) = &raw.treatments else {
        return Ok((arm(raw.treatment.as_ref(), "treatment")?, Vec::new()));
    };
    if raw.treatment.is_some() {
        return Err(Problem::key(
            &path,
            "design.treatment and design.treatments are both set; give one treatment as `treatment = \"name\"` or several as `treatments = [\"a\", \"b\"]`".to_string(),
        ));
    }
    let names = super::values::array(
        v,
        &path,
        "names of [strategies.*] tables (e.g. [\"quick\", \"long\"])",
        |e, p| {
            string(Some(e), p, "the name of a [strategies.*] table").map(|s| s.unwrap_or_default())
        },
    )?;
    if let Some((i, j)) = super::values::first_duplicate(&names) {
        return Err(Problem::value(
            &path.at(j),
            format!(
                "{} = \"{}\" repeats {}; each variant is named once",
                path.at(j),
                names[j],
                path.at(i)
            ),
        ));
    }
    let first = names[0].clone();
    Ok((first, if names.len() > 1 { names } else { Vec::new() }))
}

fn design(raw: RawDesign) -> Result<Design, Problem> {
    let base = root("design");
    let arm = |v: Option<&Value>, key: &str| -> Result<String, Problem> {
        let path = base.child(key);
        string(v, &path, "the name of a [strategies.*] table")?.ok_or_else(|| {
            Problem::value(
                &path,
                format!("design.{key} is required; set it to the name of a [strategies.*] table"),
            )
        })
    };
    let count = |v: Option<&Value>,
                 key: &str,
                 limit: &limits::Limit,
                 default: u32|
     -> Result<NonZeroU32, Problem> {
        let n = match v {
            Some(v) => limits::count(v, &base.child(key), limit, &format!(", default {default}"))?,
            None => default,
        };
        Ok(NonZeroU32::new(n).expect("positive by construction"))
    };
    let orderings = [
        ("paired-random", Ordering::PairedRandom),
        ("blocked", Ordering::Blocked),
    ];
    let schedules = [
        ("shuffled", Schedule::Shuffled),
        ("sequential", Schedule::Sequential),
    ];
    let baseline = arm(raw.baseline.as_ref(), "baseline")?;
    let (treatment, treatments) = treatments(&raw, &base, &arm)?;
    let counting = super::measure::counting(&raw, &base)?;
    // Counted alone, a fork's measured pairs are its counted pairs: a few
    // suffice (`Counting::DEFAULT_PAIRS`), none is warm-up (a count does
    // not warm up), and no trial run chooses them from a time.
    let counted_only = counting.is_some_and(|c| !c.time);
    // A sequential design whose file leaves out both `min_forks` and
    // `pairs` has its first look chosen with the pairs (`RunsPerFork`).
    let first_look_chosen =
        raw.pairs.is_none() && raw.stop.as_ref().is_some_and(|s| s.min_forks.is_none());
    let stop = raw
        .stop
        .map(|s| super::stop::stop(s, raw.forks.as_ref()))
        .transpose()?;
    Ok(Design {
        baseline,
        treatment,
        treatments,
        forks: match &stop {
            Some(s) => s.max_forks,
            None => count(raw.forks.as_ref(), "forks", &limits::FORKS, 10)?,
        },
        warmup_pairs: match &raw.warmup_pairs {
            Some(v) => limits::warmup(v, &base.child("warmup_pairs"))?,
            None if counted_only => 0,
            None => super::RunsPerFork::FEWEST_WARMUP,
        },
        pairs: match &raw.pairs {
            Some(v) => NonZeroU32::new(limits::count(
                v,
                &base.child("pairs"),
                &limits::PAIRS,
                ", default: chosen from trial runs",
            )?)
            .expect("positive by construction"),
            None if counted_only => {
                NonZeroU32::new(Counting::DEFAULT_PAIRS).expect("a positive constant")
            }
            None => super::RunsPerFork::FEWEST_PAIRS,
        },
        runs_per_fork: (!counted_only && (raw.warmup_pairs.is_none() || raw.pairs.is_none()))
            .then_some(super::RunsPerFork {
                warmup_pairs: raw.warmup_pairs.is_none(),
                pairs: raw.pairs.is_none(),
                min_forks: first_look_chosen,
                chosen: None,
            }),
        ordering: choice(raw.ordering.as_ref(), &base.child("ordering"), &orderings)?
            .unwrap_or(Ordering::PairedRandom),
        pad_baseline: boolean(raw.pad_baseline.as_ref(), &base.child("pad_baseline"), true)?,
        schedule: choice(raw.schedule.as_ref(), &base.child("schedule"), &schedules)?
            .unwrap_or(Schedule::Shuffled),
        fork_timeout_s: match &raw.fork_timeout_s {
            Some(v) => integer(
                v,
                &base.child("fork_timeout_s"),
                1,
                limits::FORK_TIMEOUT_S,
                &format!(
                    "a positive integer number of seconds, at most {} (a week; default 1800)",
                    limits::FORK_TIMEOUT_S
                ),
            )? as u64,
            None => 1800,
        },
        placement: match &raw.placement {
            Some(v) => super::values::placement(v, &base.child("placement"))?,
            None => runner_os::placement::DEFAULT,
        },
        layout: match &raw.layout {
            Some(v) => super::values::layout(v, &base.child("layout"))?,
            None => runner_os::memory_layout::DEFAULT,
        },
        stop,
        counting,
    })
}

fn analysis(raw: RawAnalysis) -> Result<AnalysisConfig, Problem> {
    let mut a = AnalysisConfig::default();
    let base = root("analysis");
    if let Some(v) = &raw.resamples {
        a.resamples = integer(
            v,
            &base.child("resamples"),
            100,
            limits::RESAMPLES.max.into(),
            &format!(
                "an integer from 100 to {} ({}; default 2000)",
                limits::RESAMPLES.max,
                limits::RESAMPLES.why
            ),
        )? as u32;
    }
    if let Some(v) = &raw.confidence {
        let path = base.child("confidence");
        a.confidence = match v {
            Value::Float(f) if (limits::CONFIDENCE.0..=limits::CONFIDENCE.1).contains(f) => *f,
            other => {
                return Err(Problem::value(
                    &path,
                    format!(
                        "{path} must be a number from {} to {} (e.g. 0.95: below one half an interval says less than a coin flip, and above {} its ends rest on a handful of resamples), got {}",
                        limits::CONFIDENCE.0,
                        limits::CONFIDENCE.1,
                        limits::CONFIDENCE.1,
                        describe(other)
                    ),
                ))
            }
        };
    }
    Ok(a)
}

fn report(raw: RawReport, ctx: &Context) -> Result<ReportConfig, Problem> {
    let path = root("report").child("template");
    let Some(template) = string(raw.template.as_ref(), &path, "a path to a template file")? else {
        return Ok(ReportConfig::default());
    };
    let file = PathBuf::from(&template);
    if !ctx.recorded() && !file.is_file() {
        let what = if file.is_dir() {
            "is a directory"
        } else {
            "does not exist"
        };
        let cwd = std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        return Err(Problem::value(&path, format!("report.template {template:?} {what}; it must be a template file, relative to the current directory ({cwd}) or absolute")));
    }
    Ok(ReportConfig {
        template: Some(file),
    })
}
