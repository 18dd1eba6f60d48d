//! A run's folder: `run.json` (everything needed to re-analyse a run and
//! to reproduce it), `DIR.partial/` while it runs ([`partial`]) and the
//! digests that bind the rows to it ([`digest`]).
//!
//! This module owns run.json: its schema ([`RunInfo`]), the one writer
//! ([`write`], through `output::guard`), the one checked reader ([`read`])
//! and the one assembly ([`assemble`]) that exec, analyze and merge feed
//! with their forks. Read back, run.json is checked like a spec
//! ([`check`]): the recorded spec is validated again, cells, jobs and seeds
//! are derived from it and compared, and every fork's rows are bound to it
//! by a SHA-256 ([`digest`]). Nothing a reader computes comes from a copy it
//! has not checked.

mod changes;
pub mod merged;
pub mod output;
pub mod shard;

pub mod assemble;
pub mod digest;
mod error;
mod fork;
mod imported;
pub mod invocation;
pub mod partial;
mod partial_error;
pub mod recorded;
pub mod verify;

pub use error::{ArgvError, FolderError, ShardFlagError};
pub use fork::{
    file_stem, ArmClients, ArmPlans, CheckReport, ClientTimes, FailedRun, ForkCounted, ForkRecord,
    ForkSql, ForkSummary,
};
pub use imported::{Imported, ImportedFork};
pub use invocation::Invocation;

use runner_core::seed::CellSeeds;
use runner_os::environment::Environment;
use runner_plan::{Cell, Job};
use runner_spec::Experiment;
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunInfo {
    /// The file's format (`output::format`): every write sets the current
    /// one, and a reader sees only the current one (an older file is
    /// migrated before it is parsed).
    pub(crate) format_version: u32,
    pub(crate) run_id: String,
    /// How the run was started, to reproduce it: the command's arguments as
    /// parsed, with any password replaced by `***`.
    #[serde(deserialize_with = "invocation::deserialize")]
    pub(crate) invocation: Invocation,
    /// The binary that ran it: a debug build, or a test fault, says so.
    pub(crate) build: BuildInfo,
    pub(crate) spec: SpecInfo,
    pub(crate) seeds: Seeds,
    pub(crate) cells: Vec<Cell>,
    /// Jobs in the order they ran.
    pub(crate) jobs: Vec<Job>,
    /// One entry per finished fork, sorted by (cell, fork); filled when the
    /// run finishes (until then the forks live in `DIR.partial/forks/`).
    pub(crate) forks: Vec<ForkRecord>,
    /// SHA-256 of `pairs.csv`, set when the run finished.
    pub(crate) pairs_sha256: Option<String>,
    /// The database the strategies used, when any did.
    pub(crate) database: Option<serde_json::Value>,
    /// A gate with a percentage threshold: its 2x self-check cells as sized
    /// from the first phase of the run (absent until then, and for every
    /// other run). The cells and jobs above are derived with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) gate_sizing: Option<runner_plan::self_check::GateSizing>,
    /// A sequential design (`[design.stop]`): each experiment cell's
    /// stopping point, recorded when its last fork was committed (absent
    /// for fixed designs). `jobs` stays the whole plan; the cells' jobs past
    /// their stop never ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) stops: Vec<runner_plan::stop::Stopped>,
    /// A sequential design: the rule its cells stopped by (absent for
    /// fixed designs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) stop_method: Option<runner_plan::stop::StopMethod>,
    /// Pairs measured by another harness and imported by `runner analyze`:
    /// where they came from. Absent for runs runner measured. For an
    /// imported run, `environment` is where `analyze` ran, not where the
    /// pairs were measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) imported: Option<Imported>,
    /// Set in a shard's folder (`exec --shard I/N`): which share of the
    /// plan `jobs` is, and where it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) shard: Option<shard::ShardInfo>,
    /// Set in a folder `runner merge` wrote: the shards, the machines and
    /// the jobs a partial merge lacks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) merged: Option<merged::MergedInfo>,
    pub(crate) environment: Environment,
    pub(crate) started_at: String,
    pub(crate) finished_at: Option<String>,
    /// SHA-256 binding `invocation` and the recorded clock resolutions,
    /// which change the report but come from nothing else in the folder
    /// ([`recorded`]); set by every write, absent in older folders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) record_sha256: Option<String>,
}

/// Reading a run's record. Its fields are this crate's alone: a record is
/// built by [`assemble::Builder`], read back by [`read`] (checked), changed
/// only by the methods that say what changed (`record_*`, [`RunInfo::finish`]),
/// and written by [`write`] after the same check, so no other crate can
/// leave run.json in a state its reader would refuse.
impl RunInfo {
    pub fn format_version(&self) -> u32 {
        self.format_version
    }

    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    pub fn invocation(&self) -> &Invocation {
        &self.invocation
    }

    pub fn build(&self) -> &BuildInfo {
        &self.build
    }

    pub fn spec(&self) -> &SpecInfo {
        &self.spec
    }

    pub fn seeds(&self) -> &Seeds {
        &self.seeds
    }

    pub fn cells(&self) -> &[Cell] {
        &self.cells
    }

    pub fn jobs(&self) -> &[Job] {
        &self.jobs
    }

    pub fn forks(&self) -> &[ForkRecord] {
        &self.forks
    }

    pub fn pairs_sha256(&self) -> &Option<String> {
        &self.pairs_sha256
    }

    pub fn database(&self) -> &Option<serde_json::Value> {
        &self.database
    }

    pub fn gate_sizing(&self) -> &Option<runner_plan::self_check::GateSizing> {
        &self.gate_sizing
    }

    pub fn stops(&self) -> &[runner_plan::stop::Stopped] {
        &self.stops
    }

    pub fn stop_method(&self) -> Option<runner_plan::stop::StopMethod> {
        self.stop_method
    }

    pub fn imported(&self) -> &Option<Imported> {
        &self.imported
    }

    pub fn shard(&self) -> &Option<shard::ShardInfo> {
        &self.shard
    }

    pub fn merged(&self) -> &Option<merged::MergedInfo> {
        &self.merged
    }

    pub fn environment(&self) -> &Environment {
        &self.environment
    }

    pub fn started_at(&self) -> &str {
        &self.started_at
    }

    pub fn finished_at(&self) -> &Option<String> {
        &self.finished_at
    }

    pub fn record_sha256(&self) -> &Option<String> {
        &self.record_sha256
    }

    /// One shard of this merged run as the run it was: the merged record
    /// with that shard's invocation and share, and no merge (what the
    /// command that ran the shard is rendered from).
    pub fn as_shard(&self, shard: &merged::MergedShard) -> RunInfo {
        RunInfo {
            invocation: shard.invocation.clone(),
            shard: Some(shard.shard.clone()),
            merged: None,
            ..self.clone()
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpecInfo {
    pub path: String,
    /// SHA-256 of `toml`.
    pub sha256: String,
    /// The file after `--set` overrides (passwords redacted).
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
    pub cells: Vec<CellSeeds>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct DerivedSeed {
    pub cell: u32,
    pub fork: u32,
    pub seed: u64,
}

/// Which build of runner measured: timings from a debug build are not
/// comparable with a release build's, and a debug build reads the
/// `RUNNER_FAULT` test hook (the release build has none).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct BuildInfo {
    /// `release` or `debug`.
    pub profile: String,
    /// `RUNNER_FAULT` as the workers saw it, when a debug build ran with it set.
    pub fault: Option<String>,
    /// How the user started runner, for the report's Reproduce command:
    /// `cargo run --release --` from a checkout, else the program as typed
    /// (`runner`, `./target/release/runner`). Runs recorded before it
    /// were started with cargo: their migration (`output::format`) says so.
    pub launched_as: String,
}

impl BuildInfo {
    /// This binary, and the fault hook its workers will read.
    pub fn current() -> BuildInfo {
        let debug = cfg!(debug_assertions);
        BuildInfo {
            profile: if debug { "debug" } else { "release" }.into(),
            // Read only by a debug build (the settings keep none otherwise).
            fault: runner_core::settings::get().fault.clone(),
            launched_as: launched_as(debug),
        }
    }
}

/// `cargo run` sets the package's variables for the program it runs, and
/// `cargo test` also sets `CARGO_BIN_EXE_runner` for the tests it runs (so
/// a test's runner is a program started by path, as it is).
fn launched_as(debug: bool) -> String {
    if runner_core::settings::get().launched_by_cargo {
        return if debug {
            "cargo run --"
        } else {
            "cargo run --release --"
        }
        .into();
    }
    std::env::args_os()
        .next()
        .map(|a| runner_core::shell::join(&[a.to_string_lossy()]))
        .unwrap_or_else(|| "runner".into())
}

impl BuildInfo {
    /// A resumed run was made by both builds: debug if either was, and the
    /// fault hook if either attempt had one; it was launched as its first
    /// attempt was.
    pub fn add(&mut self, other: BuildInfo) {
        if other.profile != "release" {
            self.profile = other.profile;
        }
        if self.fault.is_none() {
            self.fault = other.fault;
        }
    }
}

/// run.json's name in a run's folder.
pub const FILE: &str = "run.json";

/// Writes `info` as `dir/run.json`: whole or not at all, and only over a
/// run.json runner wrote (`output::guard`).
pub fn write(dir: &Path, info: &RunInfo) -> runner_core::error::Result<()> {
    crate::output::guard::write(&dir.join(FILE), info.to_json().as_bytes())
}

/// Reads `dir/run.json` and checks it ([`verify::check`]); anything wrong
/// is bad input (exit 2) in one sentence naming the file and the key.
pub fn read(dir: &Path) -> runner_core::error::Result<RunInfo> {
    verify::checked(&dir.join(FILE))
}

impl RunInfo {
    /// Reads and parses `path`; errors name the file and, from serde, the
    /// key and its line. Use [`verify::checked`] for the semantic checks.
    pub fn read(path: &Path) -> Result<RunInfo, FolderError> {
        let bytes = std::fs::read(path).map_err(|source| FolderError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        RunInfo::parse(path, &bytes)
    }

    /// Parses run.json's `bytes` (the file at `path`, which errors name):
    /// a newer runner's file is refused as such, not misread; an older
    /// one is migrated first (`output::format`), so nothing past here
    /// reads an older shape.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<RunInfo, FolderError> {
        use crate::output::format::{parse, Kind, ReadError};
        let kind = Kind::Run {
            argv: invocation::argv_json,
        };
        parse(path, bytes, kind).map_err(|e| match e {
            ReadError::Format(e) => FolderError::Format(e),
            ReadError::Json(source) => FolderError::Parse {
                path: path.to_path_buf(),
                source,
            },
        })
    }

    /// The `exec` arguments that made this folder: the recorded ones, or
    /// for a folder another command made (which the reader allows only for
    /// a merge or an import), the spec alone.
    pub fn exec_args(&self) -> invocation::ExecArgs {
        match &self.invocation {
            Invocation::Exec(e) => e.clone(),
            _ => invocation::ExecArgs::of_spec(&self.spec.path),
        }
    }

    /// The file as written: with `record_sha256` of what it records now.
    pub fn to_json(&self) -> String {
        let bound = RunInfo {
            format_version: crate::output::format::RUN_VERSION,
            record_sha256: Some(recorded::digest(self)),
            ..self.clone()
        };
        let mut s = serde_json::to_string_pretty(&bound).expect("run info serializes");
        s.push('\n');
        s
    }
}

pub use crate::output::{hex, sha256_bytes, sha256_hex};

#[cfg(test)]
mod migrated_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resumed_run_is_debug_if_either_build_was_and_keeps_a_fault() {
        let build = |profile: &str, fault: Option<&str>| BuildInfo {
            profile: profile.into(),
            fault: fault.map(String::from),
            launched_as: "runner".into(),
        };
        let mut b = build("release", None);
        b.add(build("debug", Some("hang")));
        assert_eq!(b, build("debug", Some("hang")));
        b.add(build("release", None));
        assert_eq!(b, build("debug", Some("hang")));
    }
}
