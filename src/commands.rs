//! The small commands (`check`, `env`) and the terminal summary of `exec`.

mod trial;

use crate::error::Result;
use crate::exec::trial::Stopped;
use crate::plan;
use crate::spec;
use std::path::Path;

/// A rough duration of the analysis, in nanoseconds. Per cell the bootstrap
/// draws `resamples` indices per measured pair about five times over (fork
/// intervals, pooled, hierarchical, order, carry-over); one draw and its
/// share of the median cost about 3 ns on the development machine (2.4e8 draws
/// in 0.65 s, `cargo bench --bench analysis`). An order of
/// magnitude, so a user sees `resamples = 100000` coming.
pub fn estimate_analysis_ns(exp: &crate::spec::Experiment, cells: u64) -> u64 {
    const NS_PER_DRAW: u64 = 3;
    let measured = cells * u64::from(exp.design.forks.get()) * u64::from(exp.design.pairs.get());
    5 * u64::from(exp.analysis.resamples) * measured * NS_PER_DRAW
}

/// `runner check`: the plan, with a few trial runs of the arms (contained
/// as exec's forks are) for the estimate and for what the run would meet.
pub fn check(spec_path: &Path, set: &[String]) -> Result<String> {
    crate::interrupt::install();
    let loaded = spec::load(spec_path, set)?;
    let exp = &loaded.experiment;
    let cells = plan::all_cells(exp, None);
    let forks = u64::from(exp.design.forks.get());
    // A percentage gate's 2x and 0.5x cells are sized by the run itself.
    let to_size = crate::plan::self_check::needs_sizing(exp, None);
    let groups = crate::plan::self_check::groups(&plan::cells(exp)).len() as u64;
    let per_group = 1 + u64::from(exp.gate.is_some_and(|g| g.within_check));
    let cells_total = cells.len() as u64 + if to_size { groups * per_group } else { 0 };
    let jobs = cells_total * forks;
    let per_job = plan::Plan::pairs_per_job(exp);
    let needs_db = exp
        .design
        .arms()
        .iter()
        .any(|n| exp.strategies[*n].needs_database());
    let target = if needs_db {
        crate::db::resolve(&exp.database, "check")
            .map_err(|e| crate::error::bad_input(e.to_string()))?
    } else {
        None
    };
    let on_postgres = matches!(target, Some(crate::db::DbTarget::Postgres { .. }));
    // The trials' commands and scratch folders live in a private folder
    // of this run, removed however `check` ends.
    let _temp = crate::exec::private_temp()?;
    let trials = trial::run(exp, &cells, target.as_ref())?;
    let (timed, stopped) = &trials.outcome;
    // A percentage gate's 2x cells count with the delay the run would give
    // them from the baseline the trials measured (or, untimed, what
    // `estimate_run_ns` guesses), capped at 1 s as the run caps it.
    let baseline_ns = |c: &plan::Cell| {
        timed
            .run_ns(&plan::bind(exp, c, &exp.design.baseline))
            .ok_or(())
    };
    let sized = crate::plan::self_check::estimate(exp, &plan::cells(exp), |c| {
        baseline_ns(c)
            .unwrap_or_else(|()| plan::estimate_run_ns(exp, c, &exp.design.baseline, on_postgres))
    });
    let estimate = crate::exec::estimate::from_trials(
        exp,
        &plan::all_cells(exp, sized.as_ref()),
        target.as_ref(),
        &trials.outcome,
    );
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
    ));
    out.push_str(&format!(
        "design      {} forks per cell x ({} warm-up + {} measured pairs), {} order, pad_baseline {}, {} schedule\n",
        forks,
        exp.design.warmup_pairs,
        exp.design.pairs,
        exp.design.ordering,
        exp.design.pad_baseline,
        exp.design.schedule
    ));
    let allowed = crate::placement::pin::allowed_cpus();
    let placements: Vec<crate::placement::Placement> = if exp.grid.placement.is_empty() {
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
    out.push_str(&format!(
        "placement   {}; runner may use CPUs {}\n",
        planned.join(", "),
        crate::placement::pin::cpu_list(&allowed)
    ));
    layout_lines(exp, &mut out);
    match &target {
        Some(crate::db::DbTarget::Postgres { url, .. }) => {
            let source = if crate::db::env_url().is_some() {
                "RUNNER_DATABASE_URL"
            } else {
                "database.url"
            };
            let at = crate::db::postgres::Endpoint::parse(url)
                .map_or("(unparsable URL)".to_string(), |e| e.to_string());
            out.push_str(&format!("database    postgres at {at} (from {source})\n"));
            // Read-only: the role's privileges, to warn before anything runs.
            match crate::db::postgres::role_warning(url) {
                Ok(Some(w)) => out.push_str(&format!("warning     {w}\n")),
                Ok(None) => {}
                Err(e) => out.push_str(&format!(
                    "warning     could not read the role's privileges: {e}\n"
                )),
            }
        }
        Some(crate::db::DbTarget::Sqlite) => out.push_str(
            "database    sqlite (embedded, in memory; set RUNNER_DATABASE_URL to use PostgreSQL)\n",
        ),
        Some(crate::db::DbTarget::SqliteFile { file }) => out.push_str(&format!(
            "database    sqlite (embedded, an in-memory copy of {file} per arm)\n"
        )),
        None if needs_db => out.push_str("database    none usable\n"),
        None => {}
    }
    out.push_str(&format!(
        "seed        {}\n",
        exp.seed
            .map_or("drawn at exec time".to_string(), |s| s.to_string())
    ));
    out.push_str(&format!("cells       {cells_total}\n"));
    for c in &cells {
        let role = match c.role {
            plan::Role::Experiment => String::new(),
            _ => {
                let (b, _) = c.arms(&exp.design);
                format!(" (gate self-check: `{b}` against itself)")
            }
        };
        // The delay only when the grid sweeps it, as the report names cells.
        let mut params = exp.grid.labelled(&c.params);
        if exp.grid.delay_ns.len() < 2 && c.role == plan::Role::Experiment && params.len() > 1 {
            params = plan::group_params(&params);
        }
        out.push_str(&format!(
            "  cell {:<3} {}{role}\n",
            c.cell,
            crate::report::format::params(&params)
        ));
    }
    if to_size {
        out.push_str(&format!(
            "  and {} gate self-check cell{} per group at twice{} the threshold, sized once the cells above have run (`{}` against itself)\n",
            if per_group == 2 { "two" } else { "one" },
            if per_group == 2 { "s" } else { "" },
            if per_group == 2 { " and at half" } else { "" },
            exp.design.baseline
        ));
        for g in sized.iter().flat_map(|s| &s.groups) {
            let capped = crate::plan::self_check::power_delay_capped(g.threshold_ns);
            let measured = g
                .cells
                .first()
                .and_then(|&c| cells.iter().find(|x| x.cell == c))
                .is_some_and(|c| baseline_ns(c).is_ok());
            out.push_str(&format!(
                "    estimated here from {} of {}: {} injected{}\n",
                if measured {
                    "the trial runs' median baseline run"
                } else {
                    "a guessed baseline run"
                },
                crate::report::format::duration(g.baseline_median_ns),
                crate::report::format::delay(g.delay_ns as f64),
                if capped {
                    " (capped at 1 s, runner's largest delay; twice the threshold would be more)"
                } else {
                    ""
                }
            ));
        }
    }
    if let Some(g) = &exp.gate {
        out.push_str(&format!(
            "gate        max_slowdown {}, {} interval decides, self-check {}, min_power {}, max_false_block {}; exit 0 pass, 3 regression, 4 inconclusive\n",
            g.max_slowdown,
            g.statistic,
            if g.self_check { "on" } else { "off" },
            g.min_power,
            g.max_false_block
        ));
        let confidence = exp.analysis.confidence;
        let needed = crate::stats::gate::forks_to_bound(g.max_false_block, confidence)
            .max(crate::stats::gate::forks_for_power(g.min_power, confidence));
        if g.self_check && forks < u64::from(needed) && needed < u32::MAX {
            out.push_str(&format!(
                "warning     with {forks} forks per cell the self-check cannot bound the gate's error rates at {} or show a power of {} (one-sided {} bounds), so the gate will be inconclusive; it needs at least {needed} forks per cell (--set {}={needed})\n",
                crate::report::format::percent(g.max_false_block),
                crate::report::format::percent(g.min_power),
                crate::report::format::percent(confidence),
                exp.design.forks_key(),
            ));
        }
    }
    out.push_str(&format!(
        "jobs        {jobs} ({cells_total} cells x {forks} forks), each a fresh process\n"
    ));
    out.push_str(&format!(
        "pairs       {} in total ({} measured)\n",
        jobs * per_job,
        jobs * u64::from(exp.design.pairs.get())
    ));
    if !estimate.timed.is_empty() {
        let arms: Vec<String> = estimate
            .timed
            .iter()
            .map(|(name, ns)| format!("`{name}` {}", crate::report::format::duration(*ns as f64)))
            .collect();
        out.push_str(&format!(
            "trial       {} run(s) of each arm here, untimed by the run (median): {}\n",
            estimate.runs,
            arms.join(", ")
        ));
    }
    if let Some(Stopped::Failed(why) | Stopped::TimedOut(why)) = stopped {
        // What exec's first fork would meet, said now; the estimate is a
        // guess from there on.
        out.push_str(&format!(
            "trial       failed, as exec's first fork would: {}\n",
            why.replace('\n', "\n            ")
        ));
    }
    if timed.left_processes > 0 {
        out.push_str(&format!(
            "warning     the trial runs' commands left {} process(es) running after their runs ended; runner killed them (exec counts them per fork, in forks[].left_processes)\n",
            timed.left_processes
        ));
    }
    out.push_str(&format!("estimate    {}\n", estimate.describe()));
    out.push_str(&crate::exec::stop_estimate::check_line(
        exp,
        &plan::all_cells(exp, sized.as_ref()),
        target.as_ref(),
        &estimate,
    ));
    out.push_str(&format!(
        "analysis    about {} ({} resamples x {} measured pairs, after the forks)\n",
        crate::exec::estimate::human(estimate_analysis_ns(exp, cells_total)),
        exp.analysis.resamples,
        jobs * u64::from(exp.design.pairs.get())
    ));
    out.push_str(&format!(
        "output      exec writes reports/{}/ and replaces the report there once the run completes (--out DIR to write elsewhere)\n",
        exp.name
    ));
    Ok(out)
}

/// What memory layout each fork will get (`design.layout`): the values
/// exec will use, since they are a function of the seed alone.
fn layout_lines(exp: &crate::spec::Experiment, out: &mut String) {
    use crate::layout::Layout;
    let cells = plan::cells(exp);
    let layouts: std::collections::BTreeSet<Layout> =
        cells.iter().map(|c| plan::layout(exp, c)).collect();
    let said: Vec<String> = layouts
        .iter()
        .map(|l| match l {
            Layout::System => "system (no padding or offsets, ASLR as the system has it)".into(),
            Layout::Fixed => "fixed (one layout for every fork, ASLR off)".into(),
            Layout::Random => "random (a seeded layout per fork, ASLR on)".into(),
        })
        .collect();
    // Runs with the default print what they printed before layout existed.
    if layouts.iter().all(Layout::is_system) {
        return;
    }
    out.push_str(&format!("layout      {}\n", said.join(", ")));
    let Some(master) = exp.seed else {
        out.push_str("  each fork's layout is drawn from the master seed, which exec draws; set `seed` to see them here\n");
        return;
    };
    let mut jobs = plan::plan(exp, master, None).jobs;
    jobs.sort_by_key(|j| (j.cell, j.fork));
    for j in jobs {
        let Some(c) = cells.get(j.cell as usize) else {
            continue;
        };
        if let Some(p) = crate::layout::plan(plan::layout(exp, c), master, j.seed) {
            out.push_str(&format!(
                "  cell {:<3} fork {:<4} {}: {} B of environment padding, stack offset {} B, heap offset {} B, ASLR {}\n",
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
}

/// `runner env`: what a run would record, and the machine checks as
/// OK / WARN / N/A lines; with `json`, the whole record as run.json has it.
pub fn env(json: bool) -> String {
    let env = crate::environment::capture();
    if json {
        let mut s = serde_json::to_string_pretty(&env).expect("environment serializes");
        s.push('\n');
        return s;
    }
    env_text(&env)
}

/// The human-readable form of [`env()`].
pub fn env_text(env: &crate::environment::Environment) -> String {
    let opt = |v: Option<String>| v.unwrap_or_else(|| "n/a".into());
    let mut out = String::new();
    let mut line = |k: &str, v: String| out.push_str(&format!("{k:<10}  {v}\n"));
    line(
        "system",
        format!("{}, kernel {}, host {}", env.os, env.kernel, env.hostname),
    );
    line(
        "cpu",
        format!(
            "{}, {} logical / {} physical cores, {} MHz",
            env.cpu_model,
            env.logical_cores,
            opt(env.physical_cores.map(|c| c.to_string())),
            opt(env.cpu_frequency_mhz.map(|f| f.to_string())),
        ),
    );
    line(
        "memory",
        format!("{:.1} GiB", env.memory_bytes as f64 / (1u64 << 30) as f64),
    );
    let [one, five, fifteen] = env.load_before;
    line(
        "load",
        format!("{one:.2} {five:.2} {fifteen:.2} (1, 5, 15 min)"),
    );
    line(
        "clock",
        format!(
            "one read {:.1} ns, smallest step {} ns",
            env.clock.read_cost_ns, env.clock.resolution_ns
        ),
    );
    line(
        "build",
        format!(
            "runner {} ({}), {}",
            env.runner_version, env.git_commit, env.rustc
        ),
    );
    out.push_str("\nmachine checks (`runner env --json` prints every field)\n");
    for c in &env.checks {
        out.push_str(&format!(
            "{:<5} {}: {}\n",
            c.status.tag(),
            c.check.label(),
            c.found
        ));
        if let Some(advice) = &c.advice {
            out.push_str(&format!("      {advice}\n"));
        }
    }
    out
}
