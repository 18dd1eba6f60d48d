//! `run.json`: everything needed to re-analyse a run and to reproduce it.

use crate::environment::Environment;
use crate::exec::protocol::{CheckReport, ForkSummary};
use crate::plan::{Cell, Job};
use crate::spec::Experiment;
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunInfo {
    pub run_id: String,
    /// How the run was started, to reproduce it (argv, as given).
    pub command_line: Vec<String>,
    pub spec: SpecInfo,
    pub seeds: Seeds,
    pub cells: Vec<Cell>,
    /// Jobs in the order they ran.
    pub jobs: Vec<Job>,
    /// One entry per finished fork, sorted by (cell, fork).
    pub forks: Vec<ForkRecord>,
    /// The database the strategies used, when any did.
    pub database: Option<serde_json::Value>,
    pub environment: Environment,
    pub started_at: String,
    pub finished_at: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpecInfo {
    pub path: String,
    /// SHA-256 of `toml`.
    pub sha256: String,
    /// The file after `--set` overrides.
    pub toml: String,
    pub experiment: Experiment,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Seeds {
    pub master: u64,
    /// The file gave no seed, so this run drew one.
    pub drawn: bool,
    /// Seed of the shuffled order of jobs (each job's own seed is in `jobs`).
    pub schedule: u64,
    /// Seeds for the bootstrap of each (cell, fork).
    pub bootstrap: Vec<DerivedSeed>,
    /// Per cell: the seeds of the pooled, hierarchical, order and
    /// carry-over bootstrap streams (see `analysis::streams`).
    pub cells: Vec<crate::analysis::streams::CellSeeds>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DerivedSeed {
    pub cell: u32,
    pub fork: u32,
    pub seed: u64,
}

/// A finished fork: the worker's summary plus what the parent saw.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ForkRecord {
    #[serde(flatten)]
    pub summary: ForkSummary,
    pub checks: CheckReport,
    /// Process start to exit, as the parent saw it.
    pub wall_ns: u64,
}

impl RunInfo {
    pub fn read(path: &Path) -> anyhow::Result<RunInfo> {
        use anyhow::Context;
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not a valid run.json", path.display()))
    }

    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("run info serializes");
        s.push('\n');
        s
    }
}

/// Hex SHA-256 of a text.
pub fn sha256_hex(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
