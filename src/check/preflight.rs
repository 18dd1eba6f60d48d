//! The exec flags `runner check` accepts, so the exact command line a CI
//! job will run can be tried first (`runner check` instead of `runner
//! exec`): each is checked as exec checks it, and the plan lines say what
//! it changes. `--resume` is exec's alone (it continues a run).

use super::error::CheckError;
use runner_core::error::Result;
pub(crate) use runner_folder::invocation::CheckFlags;
use runner_spec::Experiment;
use std::path::Path;

/// The refusals exec would make before it runs anything, made now.
pub(crate) fn refuse(spec: &Path, exp: &Experiment, flags: &CheckFlags) -> Result<()> {
    crate::exec::refuse_ungated(spec, exp, flags.gate_required, flags.bisect)?;
    if let Some(s) = selection(flags)? {
        if exp.design.runs_per_fork.is_some() {
            return Err(CheckError::ShardChoosesRuns {
                spec: spec.to_path_buf(),
                index: s.index,
                count: s.count,
            }
            .into());
        }
        if exp.design.stop.is_some() {
            return Err(CheckError::ShardSequential {
                spec: spec.to_path_buf(),
                index: s.index,
                count: s.count,
            }
            .into());
        }
        let jobs = runner_plan::plan(exp, exp.seed.unwrap_or_default(), None).jobs;
        crate::shard::plan_share(exp, &jobs, s).map_err(CheckError::Shard)?;
    }
    Ok(())
}

fn selection(flags: &CheckFlags) -> Result<Option<crate::shard::Selection>> {
    let selection = crate::shard::select(flags.shard, flags.shards, &|k| {
        runner_core::settings::get().scheduler(k).map(str::to_owned)
    })
    .map_err(CheckError::Shard)?;
    Ok(selection)
}

/// What the flags change, as plan lines (`check`'s two-column layout).
pub(crate) fn lines(exp: &Experiment, flags: &CheckFlags) -> Result<String> {
    let mut out = String::new();
    if flags.gate_required {
        out.push_str("flags       --gate-required: the file has a [gate], as it must\n");
    }
    if flags.bisect {
        out.push_str("flags       --bisect: exit 0 pass (good), 1 regression (bad), 125 inconclusive after one retry with twice the forks, a failed run or arms whose outputs differ (skip), 128 bad input (stop)\n");
    }
    if flags.retry_inconclusive {
        out.push_str("flags       --retry-inconclusive: an inconclusive verdict runs once more with the design it names, and exits 4 if still inconclusive\n");
    }
    if let Some(s) = selection(flags)? {
        let jobs = runner_plan::plan(exp, exp.seed.unwrap_or_default(), None).jobs;
        let share = crate::shard::plan_share(exp, &jobs, s).map_err(CheckError::Shard)?;
        out.push_str(&format!(
            "shard       {}/{}: {} of the plan's {} jobs\n",
            s.index,
            s.count,
            share.len(),
            jobs.len()
        ));
    }
    Ok(out)
}
