//! What a worker did about placement in one fork, as run.json records it
//! (`forks[].placement`): what was asked, what was pinned, what could not
//! be and why, and the CPUs actually used.

use super::{Cpus, Placement};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForkPlacement {
    /// The cell's placement.
    pub placement: Placement,
    /// Where it was to pin the worker and the backend on this machine.
    pub planned: Cpus,
    /// The worker pinned itself to `planned.worker`.
    pub worker_pinned: bool,
    /// Other runners held the CPUs this placement pins (each run's parent
    /// locks the CPUs it pins, `lock`): why the fork ran unpinned, or that
    /// a CPU it was pinned to as asked is held by another runner too.
    /// Absent when no other runner was in the way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contention: Option<String>,
    pub database: DatabaseSide,
    /// `sched_getcpu()` after each timed run (outside the timed region),
    /// counted per arm: CPU -> runs.
    pub cpus: ArmCpus,
    /// The backends' CPU (/proc/PID/stat) when the fork's timing started
    /// and when it ended: CPU -> samples; empty without a server backend.
    #[serde(with = "cpu_counts")]
    pub backend_cpus: BTreeMap<u32, u32>,
    /// CPU ticks the backends used from the parent's go to the end of the
    /// fork's timing (the sentinel's window): the parent's sentinel counts
    /// them as runner's own, since they are not its descendants. Runs
    /// recorded before the go counted from the backends' start. (A version
    /// 0 run.json from before either was sampled reads as none: runner's
    /// format migration adds them.)
    pub backend_ticks: u64,
}

/// Runs per CPU, per arm.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ArmCpus {
    #[serde(with = "cpu_counts")]
    pub baseline: BTreeMap<u32, u32>,
    #[serde(with = "cpu_counts")]
    pub treatment: BTreeMap<u32, u32>,
}

/// CPU -> count as a JSON list of `{"cpu": C, "n": N}`: run.json's fork
/// records are flattened, and serde cannot read integer map keys there.
mod cpu_counts {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::collections::BTreeMap;

    #[derive(Serialize, Deserialize)]
    struct Count {
        cpu: u32,
        n: u32,
    }

    pub(super) fn serialize<S: Serializer>(
        m: &BTreeMap<u32, u32>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(m.iter().map(|(&cpu, &n)| Count { cpu, n }))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<BTreeMap<u32, u32>, D::Error> {
        let list = Vec::<Count>::deserialize(d)?;
        Ok(list.into_iter().map(|c| (c.cpu, c.n)).collect())
    }
}

/// The database side of a fork's placement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum DatabaseSide {
    /// No strategy uses a database.
    None,
    /// SQLite runs inside the worker's thread: it is wherever the worker
    /// is, so same-core holds by construction and separate-cores cannot.
    Embedded,
    /// Server processes (PostgreSQL backends) serve the worker's arms.
    Server { backends: Vec<Backend> },
}

/// One server process serving an arm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Backend {
    pub pid: u32,
    /// Pinned to `planned.backend`.
    pub pinned: bool,
    /// Why it was not pinned although the placement asked for it (not on
    /// this host, or not permitted); none otherwise.
    pub reason: Option<String>,
}

impl DatabaseSide {
    pub fn backends(&self) -> &[Backend] {
        match self {
            DatabaseSide::Server { backends } => backends,
            _ => &[],
        }
    }
}
