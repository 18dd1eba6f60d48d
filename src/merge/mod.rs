//! `runner merge OUT SHARD_DIR...`: the shards of one spec and seed
//! (`exec --shard I/N`, see `crate::shard`) joined into one ordinary output
//! folder, as if one process had run every job.
//!
//! Every shard folder is read and checked like any report folder (its
//! run.json derived again from its spec, its rows against their digests),
//! then the shards against each other ([`checks`]); only then is anything
//! written: run.json and pairs.csv ([`assemble`]) into `OUT.partial/`, the
//! analysis and report rendered from them, and the folder put in place of
//! OUT as exec does (`output::promote`). Nothing is measured, so a merge
//! that fails leaves nothing behind and can simply be run again.

mod assemble;
mod error;
mod refusals;

use crate::shard::MissingJob;
use error::MergeError;
use runner_core::error::Result;
use runner_core::record::PairRecord;
use runner_folder::digest::check_pairs;
use runner_folder::output::{guard, target};
use runner_folder::partial::{partial_path, Partial};
use runner_folder::RunInfo;
use std::path::{Path, PathBuf};

pub(crate) use runner_folder::invocation::MergeArgs;

/// What a finished merge leaves behind.
pub(crate) struct MergeOutcome {
    /// What was merged, the finding and the sensitivity table, for stdout.
    pub summary: String,
}

/// One shard folder, read and checked.
pub(crate) struct Shard {
    pub dir: PathBuf,
    pub info: RunInfo,
    pub pairs: Vec<PairRecord>,
}

/// OUT may not be one of the shards, inside one, or hold one: promoting the
/// merge would move a shard aside.
fn check_out_apart(out: &Path, shards: &[PathBuf]) -> Result<(), MergeError> {
    let Ok(o) = target::absolute(out) else {
        return Ok(());
    };
    for s in shards {
        let Ok(a) = target::absolute(s) else { continue };
        if a.starts_with(&o) || o.starts_with(&a) {
            return Err(MergeError::OutNested {
                out: out.to_path_buf(),
                shard: s.clone(),
            });
        }
    }
    Ok(())
}

/// `runner merge`.
pub(crate) fn merge(args: &MergeArgs) -> Result<MergeOutcome> {
    target::check_out(&args.out, "OUT")?;
    check_out_apart(&args.out, &args.shards)?;
    let mut shards = Vec::with_capacity(args.shards.len());
    for dir in &args.shards {
        let (info, pairs) = runner_report::read_folder(dir)?;
        refusals::is_shard(dir, &info)?;
        shards.push(Shard {
            dir: dir.clone(),
            info,
            pairs,
        });
    }
    refusals::same_run(&shards)?;
    refusals::no_job_twice(&shards)?;
    shards.sort_by_key(|s| s.info.shard().as_ref().map(|i| i.index));
    let first = &shards[0].info;
    let exp = &first.spec().experiment;
    let count = first.shard().as_ref().map_or(1, |s| s.count);
    let plan_jobs = runner_plan::plan(exp, first.seeds().master, first.gate_sizing().as_ref()).jobs;
    let lacking = refusals::missing_shards(&shards, &plan_jobs, exp.design.forks.get(), count);
    if !lacking.is_empty() && !args.allow_missing {
        return Err(refusals::missing_error(&shards, &lacking).into());
    }
    let mut missing: Vec<MissingJob> = lacking
        .iter()
        .flat_map(|(i, jobs)| {
            jobs.iter().map(move |j| MissingJob {
                cell: j.cell,
                fork: j.fork,
                shard: *i,
            })
        })
        .collect();
    missing.sort();
    // The merged run.json must pass every check a reader makes.
    let (info, bytes) = assemble::run_info(args, &shards, &missing).map_err(MergeError::Invalid)?;
    let partial = Partial::create(&partial_path(&args.out), &info)?;
    match write(&partial, &info, bytes, &shards) {
        Ok(summary) => {
            partial.promote(&args.out)?;
            Ok(MergeOutcome {
                summary: format!(
                    "{summary}report: {}\n",
                    args.out.join("report.md").display()
                ),
            })
        }
        Err(e) => {
            partial.remove();
            Err(e)
        }
    }
}

/// pairs.csv, the analysis and report, then run.json, into the partial
/// folder; returns the terminal summary.
fn write(partial: &Partial, info: &RunInfo, bytes: Vec<u8>, shards: &[Shard]) -> Result<String> {
    guard::write(&partial.dir.join("pairs.csv"), &bytes)?;
    let for_thread = info.clone();
    let rendering = runner_os::interrupt::run(0, move || {
        let pairs = check_pairs(&bytes, &for_thread)?;
        let template = runner_report::template_for(&for_thread, None)?;
        runner_report::render_run(&for_thread, &pairs, template)
    })
    .map_err(MergeError::Interrupted)??;
    runner_report::write(&partial.dir, None, &rendering)?;
    partial.write_run_info(info)?;
    partial.drop_fork_files()?;
    let merged = info.merged().as_ref().expect("a merge records its shards");
    let hosts: Vec<&str> = merged.machines.iter().map(|m| m.host.as_str()).collect();
    let count = shards[0].info.shard().as_ref().map_or(1, |s| s.count);
    Ok(format!(
        "merged {} of {count} shards ({} forks{}) from {} {}: {}\n{}",
        shards.len(),
        info.forks().len(),
        if merged.missing.is_empty() {
            String::new()
        } else {
            format!(", {} jobs missing", merged.missing.len())
        },
        hosts.len(),
        if hosts.len() == 1 {
            "machine"
        } else {
            "machines"
        },
        hosts.join(", "),
        rendering.summary
    ))
}
