//! The small commands (`check`, `env`) and the terminal summary of `exec`.

use crate::error::Result;
use crate::plan;
use crate::spec;
use std::path::Path;

fn human_duration(ns: u64) -> String {
    let s = ns as f64 / 1e9;
    if s < 1.0 {
        "under 1 s".to_string()
    } else if s < 60.0 {
        format!("{s:.0} s")
    } else if s < 3600.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// A rough duration of the analysis, in nanoseconds. Per cell the bootstrap
/// draws `resamples` indices per measured pair about five times over (fork
/// intervals, pooled, hierarchical, order, carry-over); one draw and its
/// share of the median cost about 3 ns on the development machine (README,
/// "Performance of the harness": 2.4e8 draws in 0.65 s). An order of
/// magnitude, so a user sees `resamples = 100000` coming.
pub fn estimate_analysis_ns(exp: &crate::spec::Experiment, cells: u64) -> u64 {
    const NS_PER_DRAW: u64 = 3;
    let measured = cells * u64::from(exp.design.forks.get()) * u64::from(exp.design.pairs.get());
    5 * u64::from(exp.analysis.resamples) * measured * NS_PER_DRAW
}

/// `runner check`: the plan, and nothing run.
pub fn check(spec_path: &Path, set: &[String]) -> Result<String> {
    let loaded = spec::load(spec_path, set)?;
    let exp = &loaded.experiment;
    let cells = plan::cells(exp);
    let forks = u64::from(exp.design.forks.get());
    let jobs = cells.len() as u64 * forks;
    let per_job = plan::Plan::pairs_per_job(exp);
    let needs_db = [&exp.design.baseline, &exp.design.treatment]
        .iter()
        .any(|n| exp.strategies[n.as_str()].needs_database());
    let on_postgres = needs_db
        && matches!(
            crate::db::resolve(&exp.database, "check"),
            Ok(Some(crate::db::DbTarget::Postgres { .. }))
        );
    let estimate: u64 = cells
        .iter()
        .map(|c| plan::estimate_job_ns(exp, c, on_postgres) * forks)
        .sum();
    let strategy = |name: &str| format!("{name} ({})", exp.strategies[name].label());
    let mut out = String::new();
    out.push_str(&format!(
        "experiment  {} ({})\n",
        exp.name,
        spec_path.display()
    ));
    out.push_str(&format!(
        "arms        baseline {} vs treatment {}{}\n",
        strategy(&exp.design.baseline),
        strategy(&exp.design.treatment),
        if exp.design.is_aa() {
            " (A/A, one shared instance)"
        } else {
            ""
        }
    ));
    out.push_str(&format!(
        "design      {} forks x ({} warm-up + {} pairs), {} order, pad_baseline {}, {} schedule\n",
        forks,
        exp.design.warmup_pairs,
        exp.design.pairs,
        exp.design.ordering,
        exp.design.pad_baseline,
        exp.design.schedule
    ));
    if needs_db {
        let backend = if on_postgres {
            "postgres (RUNNER_DATABASE_URL or database.url)"
        } else {
            "sqlite (embedded, in memory)"
        };
        out.push_str(&format!("database    {backend}\n"));
    }
    out.push_str(&format!(
        "seed        {}\n",
        exp.seed
            .map_or("drawn at exec time".to_string(), |s| s.to_string())
    ));
    out.push_str(&format!("cells       {}\n", cells.len()));
    for c in &cells {
        out.push_str(&format!(
            "  cell {:<3} {}\n",
            c.cell,
            serde_json::Value::Object(c.params.clone())
        ));
    }
    out.push_str(&format!(
        "jobs        {jobs} (cells x forks), each a fresh process\n"
    ));
    out.push_str(&format!(
        "pairs       {} in total ({} measured)\n",
        jobs * per_job,
        jobs * u64::from(exp.design.pairs.get())
    ));
    out.push_str(&format!(
        "estimate    about {} (rough, from per-run costs)\n",
        human_duration(estimate)
    ));
    out.push_str(&format!(
        "analysis    about {} ({} resamples x {} measured pairs, after the forks)\n",
        human_duration(estimate_analysis_ns(exp, cells.len() as u64)),
        exp.analysis.resamples,
        jobs * u64::from(exp.design.pairs.get())
    ));
    Ok(out)
}

/// `runner env`: what a run would record, as JSON.
pub fn env() -> String {
    let env = crate::environment::capture();
    let mut s = serde_json::to_string_pretty(&env).expect("environment serializes");
    s.push('\n');
    s
}
