//! Forks over many machines: `runner exec SPEC --shard I/N` runs one share
//! of the seeded plan into a shard folder, and `runner merge` (`crate::merge`)
//! joins the shards into one ordinary report folder.
//!
//! - [`select`]: which shard this process is (`--shard`, Slurm's array
//!   variables, Kubernetes' `JOB_COMPLETION_INDEX`).
//! - [`deal`]: which jobs each shard runs, and why.
//!
//! A shard folder is an ordinary output folder of its own jobs (pairs.csv,
//! run.json, a report of what it holds) whose run.json carries a
//! [`ShardInfo`]: the shard, the machine that ran it and the scheduler's
//! job identifiers. `run_folder::check` then requires its jobs to be exactly
//! that shard's share of the plan.

mod error;
pub(crate) mod select;

pub(crate) use error::ShardError;
pub(crate) use runner_folder::merged::{Machine, MergedInfo, MergedShard, MissingJob};
pub(crate) use runner_folder::shard::{ShardInfo, Source};
pub(crate) use runner_plan::deal::share;
pub(crate) use select::{select, Selection};

/// The scheduler variables a shard records when they are set.
const SCHEDULER_VARS: [&str; 13] = [
    "SLURM_CLUSTER_NAME",
    "SLURM_JOB_ID",
    "SLURM_ARRAY_JOB_ID",
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_MAX",
    "SLURM_ARRAY_TASK_COUNT",
    "SLURM_ARRAY_TASK_STEP",
    "SLURM_JOB_PARTITION",
    "SLURMD_NODENAME",
    "SLURM_CPUS_ON_NODE",
    "JOB_COMPLETION_INDEX",
    "HOSTNAME",
];

/// The host a fork runs on now: `RUNNER_HOSTNAME` when set (and whether it
/// was), else the system's host name.
pub(crate) fn current_host() -> (String, bool) {
    match &runner_core::settings::get().hostname {
        Some(h) => (h.clone(), true),
        None => (sysinfo::System::host_name().unwrap_or_default(), false),
    }
}

/// The record of a shard that starts now on this machine.
pub(crate) fn info(selection: Selection) -> ShardInfo {
    let (host, host_override) = current_host();
    let scheduler = SCHEDULER_VARS
        .iter()
        .filter_map(|&k| {
            runner_core::settings::get()
                .scheduler(k)
                .filter(|v| !v.is_empty())
                .map(|v| (k.to_string(), v.to_string()))
        })
        .collect();
    ShardInfo {
        index: selection.index,
        count: selection.count,
        source: selection.source,
        host,
        host_override,
        scheduler,
    }
}

/// The share of `jobs` (the whole plan, in schedule order) that shard `s`
/// runs. Refuses a spec without a seed (every shard would draw its own, and
/// shards of different seeds can never be merged) and more shards than jobs.
pub(crate) fn plan_share(
    exp: &runner_spec::Experiment,
    jobs: &[runner_plan::Job],
    s: Selection,
) -> Result<Vec<runner_plan::Job>, ShardError> {
    let (index, count) = (s.index, s.count);
    if exp.seed.is_none() {
        return Err(ShardError::NoSeed { index, count });
    }
    if runner_plan::self_check::needs_sizing(exp, None) {
        return Err(ShardError::PercentageGate { index, count });
    }
    if count as usize > jobs.len() {
        return Err(ShardError::MoreShardsThanJobs {
            index,
            count,
            jobs: jobs.len(),
        });
    }
    Ok(share(jobs, exp.design.forks.get(), s.index, s.count))
}

/// A resumed folder stays what it was: a shard resumes as the same shard
/// (a `--shard` or scheduler variable naming another is refused; none
/// resumes the recorded one), and a whole run is not resumed as a shard.
pub(crate) fn check_resume(
    recorded: Option<&ShardInfo>,
    now: Option<Selection>,
) -> Result<(), ShardError> {
    let Some(now) = now else { return Ok(()) };
    let source = serde_json::to_value(now.source)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    match recorded {
        Some(s) if (s.index, s.count) == (now.index, now.count) => Ok(()),
        Some(s) => Err(ShardError::ResumeOther {
            held_index: s.index,
            held_count: s.count,
            index: now.index,
            count: now.count,
            from: source,
        }),
        None => Err(ShardError::ResumeWhole {
            index: now.index,
            count: now.count,
            from: source,
        }),
    }
}

/// `reports/<name>-shard-<I>-of-<N>`: a shard's folder when `--out` is not
/// given, so shards never share one.
pub(crate) fn default_out(name: &str, index: u32, count: u32) -> std::path::PathBuf {
    std::path::Path::new("reports").join(format!("{name}-shard-{index}-of-{count}"))
}
