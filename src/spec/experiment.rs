//! The validated experiment: what the rest of the program trusts.
//!
//! Everything here was checked once by `spec::load`; nothing downstream
//! re-parses strings or re-checks ranges. Durations are integer nanoseconds.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::path::PathBuf;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Experiment {
    /// Names the output folder (`reports/<name>/`); defaults to the file stem.
    pub name: String,
    pub title: String,
    pub description: String,
    /// Master seed; `None` when the file left it out (exec then draws one).
    pub seed: Option<u64>,
    pub workload: WorkloadParams,
    pub database: DatabaseConfig,
    /// Strategy name -> kind, sorted by name.
    pub strategies: BTreeMap<String, StrategyKind>,
    pub design: Design,
    pub grid: Grid,
    pub analysis: AnalysisConfig,
    pub report: ReportConfig,
}

/// Size of the preview model (design section 4).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct WorkloadParams {
    pub plans: u32,
    pub months: u32,
}

impl Default for WorkloadParams {
    fn default() -> Self {
        WorkloadParams {
            plans: 40,
            months: 60,
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// RUNNER_DATABASE_URL or `database.url` when set, else sqlite.
    #[default]
    Auto,
    Sqlite,
    Postgres,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct DatabaseConfig {
    pub backend: Backend,
    pub url: Option<String>,
}

/// What a `[strategies.NAME]` table runs.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum StrategyKind {
    InMemory,
    TxRollback,
    Spin { duration_ns: u64 },
    Noop,
}

impl StrategyKind {
    pub fn needs_database(&self) -> bool {
        matches!(self, StrategyKind::TxRollback)
    }

    /// Whether a run computes the preview (so its results can be compared).
    pub fn computes_preview(&self) -> bool {
        matches!(self, StrategyKind::InMemory | StrategyKind::TxRollback)
    }

    /// The spelling used in the experiment file.
    pub fn label(&self) -> &'static str {
        match self {
            StrategyKind::InMemory => "in-memory",
            StrategyKind::TxRollback => "tx-rollback",
            StrategyKind::Spin { .. } => "spin",
            StrategyKind::Noop => "noop",
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Ordering {
    /// One input per pair; a seeded coin decides which arm runs first.
    PairedRandom,
    /// All baseline runs, then all treatment runs, matched by index.
    Blocked,
}

impl std::fmt::Display for Ordering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Ordering::PairedRandom => "paired-random",
            Ordering::Blocked => "blocked",
        })
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Schedule {
    /// (cell, fork) jobs in a seeded random order, so drift is not confounded with the grid.
    Shuffled,
    Sequential,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Design {
    pub baseline: String,
    pub treatment: String,
    pub forks: NonZeroU32,
    /// May be zero: warm-up is advice, not a requirement.
    pub warmup_pairs: u32,
    pub pairs: NonZeroU32,
    pub ordering: Ordering,
    pub pad_baseline: bool,
    pub schedule: Schedule,
    /// A fork still running after this long is killed and reported.
    pub fork_timeout_s: u64,
}

impl std::fmt::Display for Schedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Schedule::Shuffled => "shuffled",
            Schedule::Sequential => "sequential",
        })
    }
}

impl Design {
    /// Same strategy name on both sides: an A/A experiment sharing one instance.
    pub fn is_aa(&self) -> bool {
        self.baseline == self.treatment
    }
}

/// The swept parameters; every combination is one cell.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Grid {
    /// Injected delays in nanoseconds, unique, in the file's order.
    pub delay_ns: Vec<u64>,
    /// `delay_us` as written in the file (for cell labels and reports).
    pub delay_us: Vec<f64>,
    /// Swept workload keys (`plans`, `months`) with their values, in key order.
    pub workload: BTreeMap<String, Vec<u32>>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct AnalysisConfig {
    pub resamples: u32,
    pub confidence: f64,
}

impl Default for AnalysisConfig {
    fn default() -> Self {
        AnalysisConfig {
            resamples: 2000,
            confidence: 0.95,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct ReportConfig {
    /// `None`: the built-in copy of `templates/report.md.j2`.
    pub template: Option<PathBuf>,
}
