//! The merged folder's run.json and pairs.csv, built from checked shards.
//!
//! run.json is that of one run of the spec (the first shard's spec, seeds
//! and environment; the whole plan's cells; the jobs in the schedule's
//! order), plus `merged`: every shard with its whole environment, the
//! machines, and the jobs a partial merge lacks. pairs.csv holds every
//! fork's rows exactly as its shard recorded them (so each fork's SHA-256
//! still binds them), forks in (cell, fork) order as exec writes them, and
//! gets a new digest of its own.

use super::{MergeArgs, Shard};
use crate::shard::{Machine, MergedInfo, MergedShard, MissingJob};
use runner_core::record::PairRecord;
use runner_folder::assemble::{Builder, Source};
use runner_folder::{ForkRecord, Invocation, RunInfo};
use std::collections::{BTreeMap, BTreeSet};

/// The merged run.json from shards sorted by index, the jobs no shard
/// held and the command: one run of the first shard's spec and seed, whose
/// forks are the shards'.
pub(super) fn run_info(
    args: &MergeArgs,
    shards: &[Shard],
    missing: &[MissingJob],
) -> Result<(RunInfo, Vec<u8>), runner_folder::FolderError> {
    let first = &shards[0].info;
    let mut forks: Vec<ForkRecord> = shards
        .iter()
        .flat_map(|s| {
            let host = s.info.shard().as_ref().map(|i| i.host.clone());
            s.info.forks().iter().map(move |f| ForkRecord {
                host: f.host.clone().or_else(|| host.clone()),
                ..f.clone()
            })
        })
        .collect();
    forks.sort_by_key(|f| (f.summary.cell, f.summary.fork));
    let pairs_csv = pairs_csv(shards, &forks);
    let mut build = first.build().clone();
    for s in &shards[1..] {
        build.add(s.info.build().clone());
    }
    let started_at = shards
        .iter()
        .map(|s| s.info.started_at().to_string())
        .min()
        .unwrap_or_default();
    let finished_at = shards
        .iter()
        .filter_map(|s| s.info.finished_at().clone())
        .max();
    let merged = MergedInfo {
        shards: shards.iter().map(merged_shard).collect(),
        machines: machines(shards, &forks),
        missing: missing.to_vec(),
    };
    let invocation = Invocation::Merge(args.clone());
    let info = Builder::new(
        &invocation,
        first.spec().clone(),
        first.seeds().master,
        first.seeds().drawn,
        first.environment().clone(),
    )
    .gate_sizing(first.gate_sizing().clone())
    .database(first.database().clone())
    .build(build)
    .times(started_at, finished_at)
    .assemble(Source::Merged {
        merged,
        forks,
        pairs_csv: pairs_csv.clone(),
    })?;
    Ok((info, pairs_csv))
}

fn merged_shard(s: &Shard) -> MergedShard {
    let i = &s.info;
    MergedShard {
        folder: s.dir.display().to_string(),
        run_id: i.run_id().to_string(),
        shard: i.shard().clone().expect("merge reads shards only"),
        jobs: i.jobs().len() as u32,
        invocation: i.invocation().clone(),
        build: i.build().clone(),
        database: i.database().clone(),
        started_at: i.started_at().to_string(),
        finished_at: i.finished_at().clone(),
        environment: i.environment().clone(),
    }
}

/// One entry per host that ran a fork, by name; its facts from the first
/// shard that started on it.
fn machines(shards: &[Shard], forks: &[ForkRecord]) -> Vec<Machine> {
    let mut by_host: BTreeMap<&str, Vec<&ForkRecord>> = BTreeMap::new();
    for f in forks {
        by_host
            .entry(f.host.as_deref().unwrap_or_default())
            .or_default()
            .push(f);
    }
    by_host
        .into_iter()
        .map(|(host, on)| {
            let started_here = shards
                .iter()
                .find(|s| s.info.shard().as_ref().is_some_and(|i| i.host == host));
            let keys: BTreeSet<(u32, u32)> = on
                .iter()
                .map(|f| (f.summary.cell, f.summary.fork))
                .collect();
            let shards_here: Vec<u32> = shards
                .iter()
                .filter(|s| {
                    s.info
                        .forks()
                        .iter()
                        .any(|f| keys.contains(&(f.summary.cell, f.summary.fork)))
                })
                .filter_map(|s| s.info.shard().as_ref().map(|i| i.index))
                .collect();
            let env = started_here.map(|s| s.info.environment());
            Machine {
                host: host.to_string(),
                host_override: started_here
                    .and_then(|s| s.info.shard().as_ref())
                    .is_some_and(|i| i.host_override),
                cpu_model: env.map(|e| e.cpu_model.clone()).unwrap_or_default(),
                logical_cores: env.map_or(0, |e| e.logical_cores),
                memory_bytes: env.map_or(0, |e| e.memory_bytes),
                forks: on.len() as u32,
                shards: shards_here,
            }
        })
        .collect()
}

/// pairs.csv of the merged run: the header, then every fork's rows as its
/// shard recorded them, forks in (cell, fork) order.
fn pairs_csv(shards: &[Shard], forks: &[ForkRecord]) -> Vec<u8> {
    let columns = runner_folder::digest::run_columns(forks);
    let mut rows: BTreeMap<(u32, u32), Vec<&PairRecord>> = BTreeMap::new();
    for r in shards.iter().flat_map(|s| &s.pairs) {
        rows.entry((r.cell, r.fork)).or_default().push(r);
    }
    let mut bytes = format!("{}\n", runner_core::record::csv_header(columns)).into_bytes();
    for f in forks {
        for r in rows
            .get(&(f.summary.cell, f.summary.fork))
            .into_iter()
            .flatten()
        {
            let own = if f.summary.counted.is_some() {
                f.summary.columns()
            } else {
                r.columns()
            };
            runner_core::record::write_line(&mut bytes, r, own);
        }
    }
    bytes
}
