//! A shard as its run.json records it (`exec --shard I/N`): the record
//! lives with run.json's schema; how jobs are dealt is `plan::deal`, how a
//! shard is chosen and merged is `shard` and `merge`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where the shard's index came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Source {
    #[serde(rename = "--shard")]
    Flag,
    #[serde(rename = "SLURM_ARRAY_TASK_ID")]
    Slurm,
    #[serde(rename = "JOB_COMPLETION_INDEX")]
    Kubernetes,
}

/// A shard, as its run.json records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardInfo {
    /// 1-based, as `--shard I/N` writes it.
    pub index: u32,
    pub count: u32,
    pub source: Source,
    /// The machine the shard started on (each fork records its own, in case
    /// a resume ran elsewhere); the machines level of a merged run groups
    /// forks by it.
    pub host: String,
    /// The host name came from `RUNNER_HOSTNAME`, an override meant for
    /// tests (several "machines" simulated on one), not from the system.
    pub host_override: bool,
    /// The scheduler's variables that identify the job, when set
    /// (`SLURM_JOB_ID`, `SLURM_ARRAY_JOB_ID`, `SLURMD_NODENAME`, ...,
    /// `JOB_COMPLETION_INDEX`, `HOSTNAME` for a pod's name).
    pub scheduler: BTreeMap<String, String>,
}
