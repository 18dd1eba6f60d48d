//! What `runner merge` refuses, before it writes anything: every refusal is
//! bad input (exit 2) with one sentence naming the folders and what
//! differs.
//!
//! - a folder that is not a finished shard (read and checked like any
//!   report folder by `report::read_folder`: digests, rows, run.json);
//! - shards of another master seed, another spec (by SHA-256, naming the
//!   keys that differ), another number of shards, another database backend,
//!   another runner build (version, commit or profile);
//! - a job held by two folders (the same shard given twice), naming them;
//! - a missing shard, naming its jobs and the `--shard` command that runs
//!   it, unless `--allow-missing`.

use super::error::{short, MergeError, MissingShard};
use super::Shard;
use runner_folder::invocation::Invocation;
use runner_folder::verify::differing_keys;
use runner_folder::RunInfo;
use runner_plan::Job;
use std::collections::BTreeMap;
use std::path::Path;

/// A folder given to merge: a finished shard.
pub(super) fn is_shard(dir: &Path, info: &RunInfo) -> Result<(), MergeError> {
    if info.merged().is_some() {
        return Err(MergeError::Merged {
            dir: dir.to_path_buf(),
        });
    }
    if info.shard().is_none() {
        return Err(MergeError::NotAShard {
            dir: dir.to_path_buf(),
        });
    }
    Ok(())
}

/// The shards agree with the first on seed, spec, shard count and backend.
pub(super) fn same_run(shards: &[Shard]) -> Result<(), MergeError> {
    let first = &shards[0];
    let (a, ai) = (&first.dir, &first.info);
    for s in &shards[1..] {
        let (b, bi) = (&s.dir, &s.info);
        if ai.seeds().master != bi.seeds().master {
            return Err(MergeError::OtherSeed {
                a: a.clone(),
                b: b.clone(),
                seed_a: ai.seeds().master,
                seed_b: bi.seeds().master,
            });
        }
        if ai.spec().sha256 != bi.spec().sha256 {
            let mut keys = Vec::new();
            differing_keys(
                &serde_json::to_value(&ai.spec().experiment).expect("experiment serializes"),
                &serde_json::to_value(&bi.spec().experiment).expect("experiment serializes"),
                "",
                &mut keys,
            );
            return Err(MergeError::OtherSpec {
                a: a.clone(),
                b: b.clone(),
                sha_a: ai.spec().sha256.clone(),
                sha_b: bi.spec().sha256.clone(),
                keys,
            });
        }
        let ((a_index, a_count), (b_index, b_count)) = (shard(ai), shard(bi));
        if a_count != b_count {
            return Err(MergeError::OtherCount {
                a: a.clone(),
                b: b.clone(),
                a_index,
                a_count,
                b_index,
                b_count,
            });
        }
        let (backend_a, backend_b) = (backend(ai), backend(bi));
        if backend_a != backend_b {
            return Err(MergeError::OtherBackend {
                a: a.clone(),
                b: b.clone(),
                backend_a,
                backend_b,
            });
        }
        let (build_a, build_b) = (build(ai), build(bi));
        if build_a != build_b {
            return Err(MergeError::OtherBuild {
                a: a.clone(),
                b: b.clone(),
                build_a,
                build_b,
            });
        }
    }
    Ok(())
}

/// Which runner measured a shard: version, commit (with `-dirty` when the
/// tree had changes) and profile. Shards on many hosts run binaries built
/// from one commit, so these agree across machines of one run.
fn build(info: &RunInfo) -> String {
    let e = &info.environment();
    format!(
        "runner {} ({} build, commit {})",
        e.runner_version,
        info.build().profile,
        short(&e.git_commit)
    )
}

fn shard(info: &RunInfo) -> (u32, u32) {
    info.shard().as_ref().map_or((0, 0), |s| (s.index, s.count))
}

fn backend(info: &RunInfo) -> String {
    info.database()
        .as_ref()
        .and_then(|d| d["backend"].as_str().map(String::from))
        .unwrap_or_else(|| "no database".into())
}

/// No job in two folders; names the jobs and both folders.
pub(super) fn no_job_twice(shards: &[Shard]) -> Result<(), MergeError> {
    let mut owner: BTreeMap<(u32, u32), usize> = BTreeMap::new();
    for (i, s) in shards.iter().enumerate() {
        let mut twice: BTreeMap<usize, Vec<(u32, u32)>> = BTreeMap::new();
        for j in s.info.jobs() {
            let key = (j.cell, j.fork);
            if let Some(&o) = owner.get(&key) {
                twice.entry(o).or_default().push(key);
            } else {
                owner.insert(key, i);
            }
        }
        if let Some((o, mut jobs)) = twice.into_iter().next() {
            jobs.sort_unstable();
            let (a, b) = (&shards[o], s);
            let same = shard(&a.info) == shard(&b.info);
            return Err(MergeError::JobTwice {
                jobs,
                a: a.dir.clone(),
                b: b.dir.clone(),
                same_shard: same.then(|| shard(&a.info)),
            });
        }
    }
    Ok(())
}

/// The shards (1-based) of `count` that no folder is, with their jobs.
pub(super) fn missing_shards(
    shards: &[Shard],
    plan_jobs: &[Job],
    forks: u32,
    count: u32,
) -> Vec<(u32, Vec<Job>)> {
    (1..=count)
        .filter(|i| !shards.iter().any(|s| shard(&s.info).0 == *i))
        .map(|i| (i, crate::shard::share(plan_jobs, forks, i, count)))
        .collect()
}

/// The refusal of a merge that lacks shards: each missing shard, its jobs
/// and the command that runs it.
pub(super) fn missing_error(shards: &[Shard], missing: &[(u32, Vec<Job>)]) -> MergeError {
    let first = &shards[0];
    let count = shard(&first.info).1;
    MergeError::MissingShards {
        missing: missing
            .iter()
            .map(|(i, jobs)| MissingShard {
                index: *i,
                count,
                jobs: jobs.iter().map(|j| (j.cell, j.fork)).collect(),
                command: shard_command(first, *i),
            })
            .collect(),
    }
}

/// `runner exec SPEC --out DIR --shard I/N [--set ...]`: the command that
/// runs shard `index` as `from` was run, into a folder beside it.
pub(super) fn shard_command(from: &Shard, index: u32) -> String {
    let info = &from.info;
    let (own, count) = shard(info);
    let name = from
        .dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let default = crate::shard::default_out(&info.spec().experiment.name, own, count);
    let sibling = if name == own.to_string() {
        index.to_string()
    } else if Some(name.as_str()) == default.file_name().and_then(|n| n.to_str()) {
        format!("{}-shard-{index}-of-{count}", info.spec().experiment.name)
    } else {
        format!("shard-{index}")
    };
    let mut args = info.exec_args();
    args.out = Some(from.dir.with_file_name(sibling));
    args.shard = Some((index, count));
    args.shards = None;
    args.resume = None;
    args.quiet = false;
    runner_core::shell::join(&Invocation::Exec(args).to_argv())
}
