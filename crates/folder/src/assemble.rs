//! The one assembly of run.json. exec, analyze and merge are three sources
//! of forks (measured here, one fork at a time; imported from another
//! harness's CSV; joined from shard folders) for one kind of record: each
//! gives what only it knows (the command, the recorded spec and seed, its
//! forks and what they came from), and everything derived (the cells, the
//! jobs of the plan or of its share, every seed, the digest of pairs.csv)
//! is derived here, the same way the checked reader derives it again. What
//! is assembled is checked like a folder that is read ([`super::check`])
//! before anyone writes it.

use super::{merged::MergedInfo, shard::ShardInfo};
use super::{
    verify, BuildInfo, DerivedSeed, ForkRecord, Imported, Invocation, RunInfo, Seeds, SpecInfo,
};
use runner_core::seed::{self, Domain};
use runner_os::environment::Environment;
use runner_plan::{self_check::GateSizing, Job};
use std::collections::BTreeSet;

/// Where a run's forks come from.
pub enum Source {
    /// `exec`: measured by this run, one at a time (none yet: they are
    /// recorded as they finish); a shard (`--shard I/N`) holds its share.
    Measured { shard: Option<ShardInfo> },
    /// `analyze`: pairs another harness measured, whole, with the SHA-256
    /// of the pairs.csv written from them (its bytes are streamed to the
    /// folder, never held whole: an import can be millions of rows).
    Imported {
        imported: Imported,
        forks: Vec<ForkRecord>,
        pairs_sha256: String,
    },
    /// `merge`: the forks of shard folders, with the bytes of the joined
    /// pairs.csv; `merged.missing` are the jobs no shard held.
    Merged {
        merged: MergedInfo,
        forks: Vec<ForkRecord>,
        pairs_csv: Vec<u8>,
    },
}

/// A run.json being assembled: what the command knows. Unless set, the
/// build, machine and start time are this process's, now.
pub struct Builder {
    invocation: Invocation,
    spec: SpecInfo,
    master: u64,
    drawn: bool,
    run_id: Option<String>,
    gate_sizing: Option<GateSizing>,
    database: Option<serde_json::Value>,
    build: Option<BuildInfo>,
    environment: Environment,
    started_at: Option<String>,
    finished_at: Option<String>,
}

/// Now, as run.json writes times.
pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// A run id that is also a valid SQL identifier suffix: `20261202_171800_3fa9c1`.
pub(crate) fn new_run_id() -> String {
    let t = chrono::Utc::now().format("%Y%m%d_%H%M%S");
    format!("{t}_{:06x}", rand::random::<u32>() & 0xff_ffff)
}

impl SpecInfo {
    /// The spec as recorded: its path, resolved text (passwords already
    /// redacted) and what that text validates to.
    pub fn new(path: String, toml: String, experiment: runner_spec::Experiment) -> SpecInfo {
        SpecInfo {
            path,
            sha256: super::sha256_hex(&toml),
            toml,
            experiment,
        }
    }
}

impl Builder {
    /// `invocation` is recorded with its passwords hidden; `environment`
    /// is the machine that measured (this one now, or a merge's shards').
    pub fn new(
        invocation: &Invocation,
        spec: SpecInfo,
        master: u64,
        drawn: bool,
        environment: Environment,
    ) -> Builder {
        Builder {
            invocation: invocation.recorded(),
            spec,
            master,
            drawn,
            run_id: None,
            gate_sizing: None,
            database: None,
            build: None,
            environment,
            started_at: None,
            finished_at: None,
        }
    }

    pub fn gate_sizing(mut self, sizing: Option<GateSizing>) -> Builder {
        self.gate_sizing = sizing;
        self
    }

    pub fn database(mut self, database: Option<serde_json::Value>) -> Builder {
        self.database = database;
        self
    }

    /// The build that measured, when it was not this one (a merge: the
    /// shards' builds).
    pub fn build(mut self, build: BuildInfo) -> Builder {
        self.build = Some(build);
        self
    }

    /// When the run started and finished, when that was not now (a merge:
    /// the shards' times; an import: both now).
    pub fn times(mut self, started_at: String, finished_at: Option<String>) -> Builder {
        self.started_at = Some(started_at);
        self.finished_at = finished_at;
        self
    }

    /// The run.json: everything derived, then checked as a reader would
    /// check it (an error is one sentence naming the key).
    pub fn assemble(self, source: Source) -> Result<RunInfo, super::FolderError> {
        let (shard, imported, merged, forks, pairs) = match source {
            Source::Measured { shard } => (shard, None, None, Vec::new(), None),
            Source::Imported {
                imported,
                forks,
                pairs_sha256,
            } => (None, Some(imported), None, forks, Some(pairs_sha256)),
            Source::Merged {
                merged,
                forks,
                pairs_csv,
            } => (
                None,
                None,
                Some(merged),
                forks,
                Some(super::sha256_bytes(&pairs_csv)),
            ),
        };
        let finished_at = match (&pairs, self.finished_at) {
            (Some(_), None) => Some(now_rfc3339()),
            (_, at) => at,
        };
        let stop_method = self
            .spec
            .experiment
            .design
            .stop
            .map(|_| runner_plan::stop::StopMethod::Spending);
        let mut info = RunInfo {
            format_version: crate::output::format::RUN_VERSION,
            run_id: self.run_id.unwrap_or_else(new_run_id),
            invocation: self.invocation,
            build: self.build.unwrap_or_else(BuildInfo::current),
            spec: self.spec,
            seeds: Seeds {
                master: self.master,
                drawn: self.drawn,
                schedule: seed::derive(self.master, Domain::Schedule, &[]),
                bootstrap: Vec::new(),
                cells: Vec::new(),
            },
            cells: Vec::new(),
            jobs: Vec::new(),
            forks,
            pairs_sha256: pairs,
            database: self.database,
            gate_sizing: self.gate_sizing,
            stops: Vec::new(),
            stop_method,
            imported,
            shard,
            merged,
            environment: self.environment,
            started_at: self.started_at.unwrap_or_else(now_rfc3339),
            finished_at,
            // Set by the writer, from what is recorded then.
            record_sha256: None,
        };
        info.forks.sort_by_key(|f| (f.summary.cell, f.summary.fork));
        info.replan();
        verify::check(&info)?;
        Ok(info)
    }
}

impl RunInfo {
    /// Puts the plan that the spec, master seed and gate sizing give into
    /// the record: cells, the jobs this folder holds (the plan; a shard's
    /// share; a merge less its missing jobs) and their seeds. Jobs keep the
    /// schedule's order (each phase of the plan is ordered on its own, so
    /// sizing a gate only appends).
    pub(crate) fn replan(&mut self) {
        let master = self.seeds.master;
        let exp = &self.spec.experiment;
        let plan = runner_plan::plan(exp, master, self.gate_sizing.as_ref());
        let forks = exp.design.forks.get();
        let jobs: Vec<Job> = match (&self.shard, &self.merged) {
            (Some(s), _) => runner_plan::deal::share(&plan.jobs, forks, s.index, s.count),
            (None, Some(m)) => {
                let missing: BTreeSet<(u32, u32)> =
                    m.missing.iter().map(|j| (j.cell, j.fork)).collect();
                plan.jobs
                    .iter()
                    .filter(|j| !missing.contains(&(j.cell, j.fork)))
                    .copied()
                    .collect()
            }
            (None, None) => plan.jobs.clone(),
        };
        // Forks from more than one machine add the machines level's streams.
        let hosts: BTreeSet<&str> = self
            .forks
            .iter()
            .filter_map(|f| f.host.as_deref())
            .collect();
        let machines = hosts.len() > 1;
        self.seeds.bootstrap = jobs
            .iter()
            .map(|j| DerivedSeed {
                cell: j.cell,
                fork: j.fork,
                seed: seed::fork_seed(master, j.cell, j.fork),
            })
            .collect();
        self.seeds.cells = plan
            .cells
            .iter()
            .map(|c| seed::CellSeeds {
                machines: machines.then(|| seed::machines_seed(master, c.cell)),
                ..seed::cell_seeds(master, c.cell)
            })
            .collect();
        self.cells = plan.cells;
        self.jobs = jobs;
    }
}
