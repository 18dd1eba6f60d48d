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

use super::Shard;
use runner_core::error::{bad_input, Result};
use runner_folder::invocation::Invocation;
use runner_folder::merged::jobs_text;
use runner_folder::verify::differing_keys;
use runner_folder::RunInfo;
use runner_plan::Job;
use std::collections::BTreeMap;
use std::path::Path;

fn shown(dir: &Path) -> String {
    dir.display().to_string()
}

/// A folder given to merge: a finished shard.
pub(super) fn is_shard(dir: &Path, info: &RunInfo) -> Result<()> {
    if info.merged().is_some() {
        return Err(bad_input(format!(
            "{} is a merged folder, not a shard; merge the shard folders it came from",
            shown(dir)
        )));
    }
    if info.shard().is_none() {
        return Err(bad_input(format!(
            "{} is not a shard: its run.json records no --shard (it holds the whole plan); merge joins the folders of `runner exec SPEC --shard I/N`",
            shown(dir)
        )));
    }
    Ok(())
}

/// The shards agree with the first on seed, spec, shard count and backend.
pub(super) fn same_run(shards: &[Shard]) -> Result<()> {
    let first = &shards[0];
    let (a, ai) = (shown(&first.dir), &first.info);
    for s in &shards[1..] {
        let (b, bi) = (shown(&s.dir), &s.info);
        if ai.seeds().master != bi.seeds().master {
            return Err(bad_input(format!(
                "{b} has master seed {} but {a} has {}: shards of one run share one seed; run every shard with the same spec and --set flags",
                bi.seeds().master, ai.seeds().master
            )));
        }
        if ai.spec().sha256 != bi.spec().sha256 {
            let mut keys = Vec::new();
            differing_keys(
                &serde_json::to_value(&ai.spec().experiment).expect("experiment serializes"),
                &serde_json::to_value(&bi.spec().experiment).expect("experiment serializes"),
                "",
                &mut keys,
            );
            let what = match keys.len() {
                0 => "the files differ only in comments or layout".to_string(),
                1..=4 => format!("{} differ", keys.join(", ")),
                n => format!("{} and {} more keys differ", keys[..4].join(", "), n - 4),
            };
            return Err(bad_input(format!(
                "{b} ran another spec than {a} (SHA-256 {} vs {}: {what}); shards of one run come from one spec and the same --set flags",
                short(&bi.spec().sha256),
                short(&ai.spec().sha256)
            )));
        }
        let (sa, sb) = (shard(ai), shard(bi));
        if sa.1 != sb.1 {
            return Err(bad_input(format!(
                "{b} is shard {}/{} but {a} is shard {}/{}: the run was cut into {} shards once and into {} another time, so their jobs do not fit together",
                sb.0, sb.1, sa.0, sa.1, sa.1, sb.1
            )));
        }
        let (da, db) = (backend(ai), backend(bi));
        if da != db {
            return Err(bad_input(format!(
                "{b} measured on {db} but {a} on {da}: one cell would mix forks of two systems; run every shard on the same backend"
            )));
        }
        let (wa, wb) = (build(ai), build(bi));
        if wa != wb {
            return Err(bad_input(format!(
                "{b} was measured by {wb} but {a} by {wa}: the timed code and the analysis may differ between builds, so one cell would mix two harnesses; run every shard with the same runner binary"
            )));
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

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
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
pub(super) fn no_job_twice(shards: &[Shard]) -> Result<()> {
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
            return Err(bad_input(format!(
                "{} {} held by both {} and {}{}: merge each job once (drop one of the two folders)",
                jobs_text(&jobs),
                if jobs.len() == 1 { "is" } else { "are" },
                shown(&a.dir),
                shown(&b.dir),
                if same {
                    format!(
                        ", which are both shard {}/{}",
                        shard(&a.info).0,
                        shard(&a.info).1
                    )
                } else {
                    String::new()
                }
            )));
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
pub(super) fn missing_error(
    shards: &[Shard],
    missing: &[(u32, Vec<Job>)],
) -> runner_core::error::RunnerError {
    let first = &shards[0];
    let count = shard(&first.info).1;
    let parts: Vec<String> = missing
        .iter()
        .map(|(i, jobs)| {
            let keys: Vec<(u32, u32)> = jobs.iter().map(|j| (j.cell, j.fork)).collect();
            format!(
                "shard {i}/{count} is missing (its {} jobs: {}); run it with `{}`",
                keys.len(),
                jobs_text(&keys),
                shard_command(first, *i)
            )
        })
        .collect();
    bad_input(format!(
        "{}; then merge again with every shard folder, or pass --allow-missing to merge without {}",
        parts.join("; "),
        if missing.len() == 1 { "it" } else { "them" }
    ))
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
