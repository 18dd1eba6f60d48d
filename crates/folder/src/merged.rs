//! What a merged run's run.json says about where its forks ran: the shards
//! it was joined from (each with its whole environment), the machines, and
//! the jobs a partial merge lacks. Written by `runner merge`, checked by
//! `run_folder::check`, read by the report.

use super::shard::ShardInfo;
use super::BuildInfo;
use runner_os::environment::Environment;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergedInfo {
    /// Every shard merged, by index.
    pub shards: Vec<MergedShard>,
    /// The machines that ran forks, by host name.
    pub machines: Vec<Machine>,
    /// Jobs of the plan that no merged shard held (`--allow-missing`), by
    /// (cell, fork); empty for a complete merge.
    pub missing: Vec<MissingJob>,
}

/// One shard as it was merged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergedShard {
    /// The folder as `runner merge` was given it.
    pub folder: String,
    pub run_id: String,
    #[serde(flatten)]
    pub shard: ShardInfo,
    /// Its jobs (forks).
    pub jobs: u32,
    /// How the shard was run.
    #[serde(deserialize_with = "super::invocation::deserialize")]
    pub invocation: super::Invocation,
    pub build: BuildInfo,
    pub database: Option<serde_json::Value>,
    pub started_at: String,
    pub finished_at: Option<String>,
    /// The machine as the shard recorded it when it started.
    pub environment: Environment,
}

/// A machine that ran forks of the merged run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    pub host: String,
    /// The name came from `RUNNER_HOSTNAME` (a test override).
    pub host_override: bool,
    /// From the environment of the first shard that started on it; empty
    /// when only a resumed fork ran there.
    pub cpu_model: String,
    pub logical_cores: usize,
    pub memory_bytes: u64,
    /// Forks it ran, over all cells.
    pub forks: u32,
    /// The shards (indices) with forks on it.
    pub shards: Vec<u32>,
}

/// A job of the plan that the merge lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct MissingJob {
    pub cell: u32,
    pub fork: u32,
    /// The shard (1-based) that would have run it.
    pub shard: u32,
}

/// The first few jobs of a list, in words: `cell 0 fork 1, cell 2 fork 0
/// and 5 more`.
pub fn jobs_text(jobs: &[(u32, u32)]) -> String {
    const SHOWN: usize = 6;
    let words: Vec<String> = jobs
        .iter()
        .take(SHOWN)
        .map(|(c, f)| format!("cell {c} fork {f}"))
        .collect();
    match jobs.len() {
        n if n > SHOWN => format!("{} and {} more", words.join(", "), n - SHOWN),
        _ => words.join(", "),
    }
}
