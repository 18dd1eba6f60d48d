//! `run.json` read back is checked like a spec before anything trusts it
//! (a damaged or edited file must be an error naming the key, never a panic
//! or a report of numbers that are not the run's):
//!
//! - `spec.toml` hashes to `spec.sha256`, validates again as a spec, and
//!   gives exactly `spec.experiment`;
//! - imported arms (`runner analyze`) come with an `imported` record, and
//!   only they do;
//! - the recorded invocation is the command that makes such a folder
//!   (`exec`, `merge` or `analyze`);
//! - the master seed is the spec's when the spec has one;
//! - a gate's recorded sizing agrees with the spec (`gate::sizing::check`;
//!   the analysis checks it against the rows);
//! - cells, the set of jobs (cell, fork, seed) and every recorded bootstrap
//!   seed are what the spec, master seed and gate sizing derive (the *set* of jobs: their
//!   order is the schedule's business): the whole plan, or for a shard
//!   exactly its share (`shard::deal`), or for a partial merge the plan less
//!   the jobs `merged.missing` names;
//! - a sequential design's stopping points (`stops`) are within its rule
//!   and name each experiment cell once;
//! - every fork record names a job, once, none past its cell's stop; a
//!   finished run has one per job it ran (every job, less those past a
//!   cell's stop) and a digest of `pairs.csv`;
//! - the invocation agrees with the spec, the clock resolutions are within
//!   bounds, and both are what was recorded (`recorded`).
//!
//! The rows themselves are checked against the fork digests by
//! `run_folder::digest`.

use super::{sha256_hex, FolderError, RunInfo};
use runner_core::seed;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Reads `path` and checks it; every failure is bad input (exit 2) naming
/// the file and the key.
pub(crate) fn checked(path: &Path) -> runner_core::error::Result<RunInfo> {
    let info = RunInfo::read(path)?;
    check(&info).map_err(|e| FolderError::InFile {
        path: path.to_path_buf(),
        error: Box::new(e),
    })?;
    Ok(info)
}

/// Paths (`design.forks`, `cells[2].delay_ns`) where two JSON values differ.
pub fn differing_keys(a: &Value, b: &Value, prefix: &str, out: &mut Vec<String>) {
    let join = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let null = Value::Null;
                differing_keys(
                    x.get(k).unwrap_or(&null),
                    y.get(k).unwrap_or(&null),
                    &join(k),
                    out,
                );
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                differing_keys(p, q, &format!("{prefix}[{i}]"), out);
            }
        }
        _ if a != b => out.push(prefix.to_string()),
        _ => {}
    }
}

/// Spec keys in which two runs of one experiment may differ, for `runner
/// compare` and `runner history` alike: first what names or describes a
/// run ([`DESCRIPTIVE`]), then its size ([`SIZE`]: forks, pairs, warm-up,
/// what the trial runs chose, a sequential design's first look), which
/// changes how precise a run is and not what it measures.
pub const NOT_MEASURED: [&str; 10] = [
    "name",
    "title",
    "description",
    "seed",
    "report",
    "design.forks",
    "design.pairs",
    "design.warmup_pairs",
    "design.runs_per_fork",
    "design.stop.min_forks",
];
/// The keys of [`NOT_MEASURED`] that name or describe a run.
pub const DESCRIPTIVE: &[&str] = NOT_MEASURED.split_at(5).0;
/// The keys of [`NOT_MEASURED`] that size a run.
pub const SIZE: &[&str] = NOT_MEASURED.split_at(5).1;

/// The keys (`design.forks`, `grid.delay_us`) in which two runs' specs
/// differ, leaving out `allowed` keys and everything below them.
pub fn spec_differences(
    a: &runner_spec::Experiment,
    b: &runner_spec::Experiment,
    allowed: &[&str],
) -> Vec<String> {
    let mut keys = Vec::new();
    differing_keys(&value(a), &value(b), "", &mut keys);
    keys.retain(|k| {
        !allowed.iter().any(|a| {
            k == a
                || k.strip_prefix(a)
                    .is_some_and(|rest| rest.starts_with(['.', '[']))
        })
    });
    keys
}

fn first_difference(a: &Value, b: &Value, prefix: &str) -> Option<String> {
    let mut keys = Vec::new();
    differing_keys(a, b, prefix, &mut keys);
    match keys.len() {
        0 => None,
        1..=3 => Some(keys.join(", ")),
        n => Some(format!("{} and {} more", keys[..3].join(", "), n - 3)),
    }
}

fn value<T: serde::Serialize>(t: &T) -> Value {
    serde_json::to_value(t).expect("run info serializes")
}

/// Every check of the module doc; the error is one sentence without the
/// file name (the caller adds it).
pub fn check(info: &RunInfo) -> Result<(), FolderError> {
    let spec = &info.spec;
    if sha256_hex(&spec.toml) != spec.sha256 {
        return Err(FolderError::Edited(
            "spec.sha256 is not the SHA-256 of spec.toml: the recorded spec was edited".into(),
        ));
    }
    // The backend decides the SQL grammar. A run.json without a database
    // record is a new exec's, assembled before it connects (or a run that
    // needed none): either grammar may be the one it will use.
    let reparse = |postgres: bool| {
        let recorded = runner_spec::Recorded::of(&spec.experiment, postgres);
        runner_spec::parse_recorded(&spec.path, &spec.toml, &recorded).map_err(FolderError::Spec)
    };
    let reparsed = match &info.database {
        Some(d) => reparse(d["backend"] == "postgres")?,
        None => reparse(false).or_else(|e| reparse(true).map_err(|_| e))?,
    };
    let exp = &spec.experiment;
    if let Some(keys) = first_difference(&value(exp), &value(&reparsed), "spec.experiment") {
        return Err(FolderError::Edited(format!(
            "{keys} differs from what the recorded spec.toml gives: the file was edited"
        )));
    }
    let imported_arms = exp
        .strategies
        .values()
        .any(|k| *k == runner_spec::StrategyKind::Imported);
    match (imported_arms, info.imported.is_some()) {
        (true, false) => return Err(FolderError::Edited("the spec's arms are imported (kind = \"imported\"), but run.json has no `imported` record of where the pairs came from".into())),
        (false, true) => return Err(FolderError::Edited("`imported` is recorded, but the spec's arms are ones runner runs".into())),
        _ => {}
    }
    let made_by = match (&info.merged, &info.imported) {
        (Some(_), _) => "merge",
        (None, Some(_)) => "analyze",
        (None, None) => "exec",
    };
    if info.invocation.command() != made_by {
        return Err(FolderError::Edited(format!(
            "invocation is a `runner {}` command, but the folder is one that `runner {made_by}` makes",
            info.invocation.command()
        )));
    }
    let seeds = &info.seeds;
    match exp.seed {
        Some(s) if s != seeds.master || seeds.drawn => {
            return Err(FolderError::Edited(format!(
                "seeds.master is {} (drawn: {}), but the spec's seed is {s}",
                seeds.master, seeds.drawn
            )))
        }
        None if !seeds.drawn => {
            return Err(FolderError::Edited(
                "seeds.drawn is false, but the spec has no seed".into(),
            ))
        }
        _ => {}
    }
    let master = seeds.master;
    let sizing = info.gate_sizing.as_ref();
    runner_plan::self_check::check(exp, &runner_plan::cells(exp), sizing)?;
    if info.finished_at.is_some() && runner_plan::self_check::needs_sizing(exp, sizing) {
        return Err(FolderError::Edited("the run is marked finished, but its gate's 2x self-check cells were never sized (gate_sizing is missing)".into()));
    }
    let plan = runner_plan::plan(exp, master, sizing);
    if let Some(keys) = first_difference(&value(&info.cells), &value(&plan.cells), "cells") {
        return Err(FolderError::Edited(format!(
            "{keys} differs from the cells the spec gives ({} cells)",
            plan.cells.len()
        )));
    }
    let (expected, whose) = expected_jobs(info, &plan.jobs)?;
    check_jobs(info, &expected, &whose)?;
    check_stops(info)?;
    let bootstrap: BTreeSet<_> = expected
        .iter()
        .map(|j| super::DerivedSeed {
            cell: j.cell,
            fork: j.fork,
            seed: seed::fork_seed(master, j.cell, j.fork),
        })
        .collect();
    let recorded: BTreeSet<_> = seeds.bootstrap.iter().copied().collect();
    if recorded != bootstrap || seeds.bootstrap.len() != bootstrap.len() {
        return Err(FolderError::Edited(
            "seeds.bootstrap is not what the master seed derives".into(),
        ));
    }
    // Runs older than the usage streams recorded none (and used none).
    let recorded_usage = seeds.cells.iter().any(|c| c.usage.is_some());
    let cells: Vec<_> = plan
        .cells
        .iter()
        .map(|c| seed::CellSeeds {
            usage: seed::cell_seeds(master, c.cell)
                .usage
                .filter(|_| recorded_usage),
            ..seed::cell_seeds(master, c.cell)
        })
        .collect();
    // Merged runs over several machines record the machines level's stream.
    let cells: Vec<_> = cells
        .into_iter()
        .zip(&seeds.cells)
        .map(|(c, r)| seed::CellSeeds {
            machines: r.machines.map(|_| seed::machines_seed(master, c.cell)),
            ..c
        })
        .collect();
    if seeds.cells != cells {
        return Err(FolderError::Edited(
            "seeds.cells is not what the master seed derives".into(),
        ));
    }
    check_forks(info)?;
    super::recorded::check(info)
}

/// The jobs the folder must hold, and how errors name that set: the whole
/// plan; a shard's share of it; the plan less a partial merge's missing jobs.
fn expected_jobs(
    info: &RunInfo,
    jobs: &[runner_plan::Job],
) -> Result<(Vec<runner_plan::Job>, String), FolderError> {
    let forks = info.spec.experiment.design.forks.get();
    match (&info.shard, &info.merged) {
        (Some(_), Some(_)) => Err(FolderError::Edited(
            "run.json records both a shard and a merge; a folder is one or the other".into(),
        )),
        (Some(s), None) => {
            if s.index == 0 || s.index > s.count || s.count as usize > jobs.len() {
                return Err(FolderError::Edited(format!(
                    "shard is {}/{}, which is not a shard of this plan of {} jobs",
                    s.index,
                    s.count,
                    jobs.len()
                )));
            }
            let share = runner_plan::deal::share(jobs, forks, s.index, s.count);
            Ok((share, format!("shard {}/{}", s.index, s.count)))
        }
        (None, Some(m)) => {
            let all: BTreeSet<(u32, u32)> = jobs.iter().map(|j| (j.cell, j.fork)).collect();
            let count = m.shards.first().map(|s| s.shard.count);
            if let Some(s) = m.shards.iter().find(|s| Some(s.shard.count) != count) {
                return Err(FolderError::Edited(format!(
                    "merged.shards has shard {}/{} beside shards of {}",
                    s.shard.index,
                    s.shard.count,
                    count.unwrap_or_default()
                )));
            }
            let mut missing = BTreeSet::new();
            for j in &m.missing {
                let dealt =
                    count.map(|n| runner_plan::deal::shard_of(j.cell, j.fork, forks, n) + 1);
                if !all.contains(&(j.cell, j.fork)) || dealt.is_some_and(|d| d != j.shard) {
                    return Err(FolderError::Edited(format!(
                        "merged.missing names cell {} fork {} of shard {}, which is not a job of that shard of the spec",
                        j.cell, j.fork, j.shard
                    )));
                }
                missing.insert((j.cell, j.fork));
            }
            let present = jobs
                .iter()
                .filter(|j| !missing.contains(&(j.cell, j.fork)))
                .copied()
                .collect();
            Ok((present, "the merge (the spec less merged.missing)".into()))
        }
        (None, None) => Ok((jobs.to_vec(), "the spec".into())),
    }
}

/// The recorded jobs are the expected (cell, fork, seed) set, each once.
fn check_jobs(
    info: &RunInfo,
    derived: &[runner_plan::Job],
    whose: &str,
) -> Result<(), FolderError> {
    let want: BTreeMap<(u32, u32), u64> =
        derived.iter().map(|j| ((j.cell, j.fork), j.seed)).collect();
    let mut seen = BTreeSet::new();
    for (i, j) in info.jobs.iter().enumerate() {
        if !seen.insert((j.cell, j.fork)) {
            return Err(FolderError::Edited(format!(
                "jobs[{i}] repeats cell {} fork {}",
                j.cell, j.fork
            )));
        }
        match want.get(&(j.cell, j.fork)) {
            None => {
                return Err(FolderError::Edited(format!(
                    "jobs[{i}] is cell {} fork {}, which is not a job of {whose}",
                    j.cell, j.fork
                )))
            }
            Some(&s) if s != j.seed => {
                return Err(FolderError::Edited(format!(
                    "jobs[{i}].seed is {}, but the master seed gives cell {} fork {} the seed {s}",
                    j.seed, j.cell, j.fork
                )))
            }
            Some(_) => {}
        }
    }
    if let Some((c, f)) = want.keys().find(|k| !seen.contains(k)) {
        return Err(FolderError::Edited(format!(
            "jobs lacks cell {c} fork {f}, a job of {whose}"
        )));
    }
    Ok(())
}

/// A sequential design's stopping points (`runner_plan::stop::check`); a
/// sharded or merged folder has none, since a sequential design is never
/// sharded.
fn check_stops(info: &RunInfo) -> Result<(), FolderError> {
    let design = &info.spec.experiment.design;
    if design.stop.is_some() && (info.shard.is_some() || info.merged.is_some()) {
        return Err(FolderError::Edited("the spec has [design.stop], which a sharded run cannot follow (each cell's stop depends on all its forks), but run.json records a shard or a merge".into()));
    }
    let experiment: Vec<u32> = info
        .cells
        .iter()
        .filter(|c| c.role.is_experiment())
        .map(|c| c.cell)
        .collect();
    runner_plan::stop::check(
        design.stop.as_ref(),
        &info.stops,
        &experiment,
        info.finished_at.is_some(),
    )?;
    Ok(())
}

fn check_forks(info: &RunInfo) -> Result<(), FolderError> {
    let jobs: BTreeSet<(u32, u32)> = info.jobs.iter().map(|j| (j.cell, j.fork)).collect();
    let stopped: BTreeMap<u32, u32> = info.stops.iter().map(|s| (s.cell, s.forks_run)).collect();
    let mut seen = BTreeSet::new();
    for (i, f) in info.forks.iter().enumerate() {
        let key = (f.summary.cell, f.summary.fork);
        if !jobs.contains(&key) {
            return Err(FolderError::Edited(format!(
                "forks[{i}] is cell {} fork {}, which is not one of the run's jobs",
                key.0, key.1
            )));
        }
        if let Some(&k) = stopped.get(&key.0).filter(|&&k| key.1 >= k) {
            return Err(FolderError::Edited(format!(
                "forks[{i}] is cell {} fork {}, but stops records that cell stopping after {k} forks (forks 0 to {})",
                key.0,
                key.1,
                k - 1
            )));
        }
        if !seen.insert(key) {
            return Err(FolderError::Edited(format!(
                "forks[{i}] repeats cell {} fork {}",
                key.0, key.1
            )));
        }
        check_layout(info, i, &f.summary)?;
    }
    if info.finished_at.is_some() {
        let ran: BTreeSet<(u32, u32)> = runner_plan::stop::remaining(&info.jobs, &info.stops)
            .iter()
            .map(|j| (j.cell, j.fork))
            .collect();
        if let Some((c, f)) = ran.iter().find(|k| !seen.contains(k)) {
            return Err(FolderError::Edited(format!(
                "the run is marked finished but has no record of cell {c} fork {f}"
            )));
        }
        if info.pairs_sha256.is_none() {
            return Err(FolderError::Edited("pairs_sha256 is missing: nothing binds pairs.csv to this run (a folder written before runner recorded digests needs them added, see docs/troubleshooting.md)".into()));
        }
    }
    Ok(())
}

/// A fork's recorded layout is the one its seed gives: the Layout
/// section's factors are read from run.json, so an edited value would
/// change what they explain.
fn check_layout(info: &RunInfo, i: usize, f: &super::ForkSummary) -> Result<(), FolderError> {
    let exp = &info.spec.experiment;
    let (Some(cell), Some(job)) = (
        info.cells.iter().find(|c| c.cell == f.cell),
        info.jobs
            .iter()
            .find(|j| j.cell == f.cell && j.fork == f.fork),
    ) else {
        return Ok(());
    };
    let expected =
        runner_os::memory_layout::plan(runner_plan::layout(exp, cell), info.seeds.master, job.seed);
    let recorded = f.layout.as_ref().map(|l| l.plan);
    if recorded != expected {
        return Err(FolderError::Edited(format!(
            "forks[{i}].layout is not the layout the seed gives cell {} fork {} ({}): the record was edited",
            f.cell,
            f.fork,
            expected.map_or("none, under layout = \"system\"".into(), |p| format!(
                "{}, env_pad_bytes {}, stack_offset_bytes {}, heap_offset_bytes {}",
                p.layout, p.env_pad_bytes, p.stack_offset_bytes, p.heap_offset_bytes
            ))
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spec_differences_leave_out_the_allowed_keys_and_below() {
        let spec = |forks: u32, title: &str, delays: &str| {
            let toml = format!(
                "title = \"{title}\"\n[strategies.n]\nkind = \"noop\"\n[design]\nbaseline = \"n\"\ntreatment = \"n\"\nforks = {forks}\n[grid]\ndelay_us = {delays}\n"
            );
            runner_spec::parse_recorded("a.toml", &toml, &Default::default()).unwrap()
        };
        let (a, b) = (spec(2, "a", "[0]"), spec(3, "b", "[0, 5]"));
        assert_eq!(
            spec_differences(&a, &b, &[]),
            ["design.forks", "grid.delay_ns", "grid.delay_us", "title"]
        );
        assert_eq!(
            spec_differences(&a, &b, &["title", "design.forks", "grid"]),
            Vec::<String>::new()
        );
        // `design.fork` is not a parent of `design.forks`.
        assert_eq!(
            spec_differences(&a, &b, &["design.fork", "title", "grid"]),
            ["design.forks"]
        );
    }

    #[test]
    fn differing_keys_name_objects_and_array_elements() {
        let a = json!({"design": {"forks": 2, "pairs": 3}, "cells": [{"d": 1}, {"d": 2}]});
        let b = json!({"design": {"forks": 2, "pairs": 4}, "cells": [{"d": 1}, {"d": 5}]});
        let mut out = Vec::new();
        differing_keys(&a, &b, "", &mut out);
        assert_eq!(out, ["cells[1].d", "design.pairs"]);
    }
}
