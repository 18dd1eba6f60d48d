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
    pub strategies: BTreeMap<String, super::StrategyKind>,
    pub design: Design,
    pub grid: Grid,
    pub analysis: AnalysisConfig,
    pub report: ReportConfig,
    /// `[gate]`: exec is a CI regression gate. Absent from the run.json of
    /// runs without one, so theirs stays as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<super::Gate>,
}

/// Size of the preview model (docs/guide/experiment-file.md).
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

pub use runner_db::config::{Backend, DatabaseConfig};

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
    /// The treatment; with several variants (`treatments`), the first.
    pub treatment: String,
    /// Several variants, each compared with the one baseline in cells of
    /// its own (`design.treatments`); empty for one treatment, and absent
    /// from the run.json of such runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub treatments: Vec<String>,
    pub forks: NonZeroU32,
    /// May be zero: warm-up is advice, not a requirement.
    pub warmup_pairs: u32,
    pub pairs: NonZeroU32,
    /// The counts of a fork's pairs the file left out, which the trial
    /// runs choose before the first fork (`plan::runs`); until then the
    /// two counts above hold the fewest that rule may choose. Absent from
    /// the run.json of designs that set both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_per_fork: Option<RunsPerFork>,
    pub ordering: Ordering,
    pub pad_baseline: bool,
    pub schedule: Schedule,
    /// A fork still running after this long is killed and reported.
    pub fork_timeout_s: u64,
    /// Where the worker and its database backend run (docs/guide/how-a-run-works.md).
    pub placement: runner_os::placement::Placement,
    /// The memory layout of each fork (`runner_os::memory_layout`); absent from the
    /// run.json of runs with the default, and of runs recorded before it.
    #[serde(
        default = "default_layout",
        skip_serializing_if = "runner_os::memory_layout::Layout::is_system"
    )]
    pub layout: runner_os::memory_layout::Layout,
    /// `[design.stop]`: a sequential design, whose cells stop once their
    /// rule holds (`forks` is then its `max_forks`). Absent from the
    /// run.json of fixed designs, so theirs stays as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<super::StopRule>,
    /// `measure` holds `"instructions"`: the arms' instructions are counted
    /// too, in runs of their own. Absent from the run.json of runs that
    /// time alone (the default), so theirs stays as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counting: Option<Counting>,
}

/// How a run counts instructions (`design.measure`, docs/guide/instructions.md).
///
/// Counted runs are never timed ones: each runs the command under the
/// counter (valgrind, 20 to 50 times slower), in pairs of its own drawn
/// from the fork's stream as timed pairs are. With `time`, a fork makes
/// its warm-up and measured pairs, timed, and then `pairs` counted pairs
/// (`pairs.csv` phase `count`); without it, the design's measured pairs
/// are the counted ones, and nothing is timed but the counted runs
/// themselves, whose times say what the counter cost.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct Counting {
    /// Time is measured too (`measure = ["time", "instructions"]`).
    pub time: bool,
    /// Counted pairs per fork after the timed ones (`design.counted_pairs`);
    /// 0 when time is not measured (the measured pairs are counted).
    pub pairs: u32,
    /// valgrind simulates the caches too (`design.cache_sim`): L1 and
    /// last-level misses and an estimated cycle count per run.
    pub cache_sim: bool,
}

impl Counting {
    /// Counted pairs per fork when the file sets none (beside the timed
    /// ones, or as the measured pairs of a run that counts alone): one.
    /// The forks are what an interval counts, and a program's count moves
    /// between processes (its environment, its addresses) if at all, not
    /// between runs of one; a second pair in a fork would add two runs
    /// under valgrind, each 20 to 50 times a run, and tell nearly nothing.
    /// A program whose count varies from run to run gets a fork interval
    /// of some width from more (`counted_pairs`, or `pairs` counted alone).
    pub const DEFAULT_PAIRS: u32 = 1;
}

/// Which of `warmup_pairs` and `pairs` the file left to runner, and how
/// they were chosen.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct RunsPerFork {
    /// The file has no `warmup_pairs`: it is chosen.
    pub warmup_pairs: bool,
    /// The file has no `pairs`: it is chosen.
    pub pairs: bool,
    /// The file has neither `pairs` nor `design.stop.min_forks`: the
    /// forks of a sequential design's first look are chosen with the pairs
    /// (`plan::runs::first_look`). Absent in run.json, false: runs made
    /// before runner chose it, whose `min_forks` is the file's or 3.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub min_forks: bool,
    /// How the counts were chosen; none until they are (the run.json of a
    /// run whose trial runs have not run yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen: Option<Chosen>,
}

/// Where a run's chosen counts came from.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "by", rename_all = "kebab-case")]
pub enum Chosen {
    /// This run's trial runs: what one pair of runs and a fork's start
    /// cost on the machine, as they measured it (`plan::runs::choose`).
    Trials { pair_ns: u64, fork_start_ns: u64 },
    /// A runner from before the trial runs chose them filled in fixed
    /// defaults (80 warm-up and 300 measured pairs); the format's
    /// migration says so for the files such runners wrote.
    Defaults,
}

impl RunsPerFork {
    /// The fewest warm-up pairs the trial runs may choose: what an
    /// unchosen count holds.
    pub const FEWEST_WARMUP: u32 = 0;
    /// The fewest measured pairs they may choose: a fork's estimate is the
    /// median of its pairs, and the median of five ignores any two runs
    /// the machine disturbed (a preemption, a page fault).
    pub const FEWEST_PAIRS: NonZeroU32 = match NonZeroU32::new(5) {
        Some(n) => n,
        None => unreachable!(),
    };

    /// Whether the counts still wait for the trial runs.
    pub fn pending(&self) -> bool {
        self.chosen.is_none()
    }
}

fn default_layout() -> runner_os::memory_layout::Layout {
    runner_os::memory_layout::DEFAULT
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
    /// The key that sets the forks per cell: `design.forks`, or in a
    /// sequential design, where that is the default of `max_forks` and
    /// both given must agree, `design.stop.max_forks`. What a message
    /// suggesting more forks names.
    pub fn forks_key(&self) -> &'static str {
        if self.stop.is_some() {
            "design.stop.max_forks"
        } else {
            "design.forks"
        }
    }

    /// `from`'s chosen counts of a fork's pairs, where this design leaves
    /// the same counts to the trial runs as `from` did: how a recorded
    /// run's spec, validated again from its text (which does not hold
    /// them), gets the counts that run chose. Anything else is left for
    /// the comparison with the record to find.
    pub fn adopt_runs(&mut self, from: &Design) {
        let (Some(mine), Some(theirs)) = (self.runs_per_fork, from.runs_per_fork) else {
            return;
        };
        let same_keys = (mine.warmup_pairs, mine.pairs, mine.min_forks)
            == (theirs.warmup_pairs, theirs.pairs, theirs.min_forks);
        if !same_keys || theirs.pending() {
            return;
        }
        if mine.warmup_pairs {
            self.warmup_pairs = from.warmup_pairs;
        }
        if mine.pairs {
            self.pairs = from.pairs;
        }
        if mine.min_forks {
            if let (Some(stop), Some(chosen)) = (self.stop.as_mut(), from.stop.as_ref()) {
                stop.min_forks = chosen.min_forks;
            }
        }
        self.runs_per_fork = Some(theirs);
    }

    /// The counted pairs a fork makes after its timed ones (0 without
    /// counting, or when its measured pairs are the counted ones).
    pub fn counted_pairs(&self) -> u32 {
        self.counting.map_or(0, |c| c.pairs)
    }

    /// Whether the runs are timed (measured pairs whose times are the
    /// commands' own): true unless the file counts instructions alone.
    pub fn times(&self) -> bool {
        self.counting.is_none_or(|c| c.time)
    }

    /// Rows a fork writes: warm-up, measured, then counted pairs.
    pub fn rows_per_fork(&self) -> u64 {
        u64::from(self.warmup_pairs) + u64::from(self.pairs.get()) + u64::from(self.counted_pairs())
    }

    /// Same strategy name on both sides: an A/A experiment sharing one instance.
    pub fn is_aa(&self) -> bool {
        self.treatments.is_empty() && self.baseline == self.treatment
    }

    /// Every treatment the baseline is compared with, in the file's order.
    pub fn variants(&self) -> Vec<&str> {
        if self.treatments.is_empty() {
            vec![self.treatment.as_str()]
        } else {
            self.treatments.iter().map(String::as_str).collect()
        }
    }

    /// Every strategy a cell of the experiment may run: the baseline, then
    /// each treatment.
    pub fn arms(&self) -> Vec<&str> {
        let mut out = vec![self.baseline.as_str()];
        for v in self.variants() {
            if !out.contains(&v) {
                out.push(v);
            }
        }
        out
    }
}

/// The `[grid]` key that sweeps every `sql` arm's concurrent clients together.
pub const CLIENTS_KEY: &str = "clients";

/// The swept parameters; every combination is one cell.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Grid {
    /// Injected delays in nanoseconds, unique, in the file's order.
    pub delay_ns: Vec<u64>,
    /// `delay_us` as written in the file (for cell labels and reports).
    pub delay_us: Vec<f64>,
    /// Swept workload keys (`plans`, `months`) with their values, in key order.
    pub workload: BTreeMap<String, Vec<u32>>,
    /// Every other bare key, values as written: what `{name}` placeholders read.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, Vec<serde_json::Value>>,
    /// Swept strategy keys (`strategies.NAME.KEY`), in key order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub strategy_keys: Vec<SweptKey>,
    /// Swept CPU placements (`placement = [...]`), in the file's order;
    /// empty when not swept (every cell then has `design.placement`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placement: Vec<runner_os::placement::Placement>,
    /// Swept memory layouts (`layout = [...]`), in the file's order; empty
    /// when not swept (every cell then has `design.layout`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layout: Vec<runner_os::memory_layout::Layout>,
    /// Swept concurrent clients (`clients = [1, 4, 8]`), in the file's
    /// order: each cell sets `clients` of every `sql` arm to its value, so
    /// both arms of a cell always run at the same level of contention.
    /// Empty when not swept (each arm then has its own `clients`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<u32>,
    /// `[grid.labels]`: short names for a swept key's values, in the order
    /// of its values, shown in reports instead of the values themselves.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, Vec<String>>,
}

/// `strategies.NAME.KEY = [...]` in `[grid]`: one validated [`super::Field`]
/// per value.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SweptKey {
    pub strategy: String,
    pub key: String,
    pub values: Vec<super::Field>,
    /// The values as written, for the cells' `params` (unique).
    pub written: Vec<serde_json::Value>,
    /// Where the sweep is written (`grid."strategies.a.run"` or the nested
    /// `grid.strategies.a.run`), for error positions; not recorded.
    #[serde(skip)]
    pub at: Vec<String>,
}

impl SweptKey {
    /// The cell parameter's name: `strategies.NAME.KEY`.
    pub fn label(&self) -> String {
        format!("strategies.{}.{}", self.strategy, self.key)
    }
}

impl Grid {
    /// A cell's params as a report names them: each value of a labelled
    /// key replaced by its label (`[grid.labels]`).
    pub fn labelled(
        &self,
        params: &serde_json::Map<String, serde_json::Value>,
    ) -> serde_json::Map<String, serde_json::Value> {
        let mut out = params.clone();
        let swept = self.swept();
        for (key, labels) in &self.labels {
            let Some(value) = params.get(key) else {
                continue;
            };
            let values = swept.iter().find(|(k, _)| k == key).map(|(_, v)| v);
            if let Some(i) = values.and_then(|v| v.iter().position(|x| x == value)) {
                if let Some(l) = labels.get(i) {
                    out.insert(key.clone(), l.clone().into());
                }
            }
        }
        out
    }

    /// Every swept key except the delay, with its values as a cell's
    /// `params` shows them, sorted by key: the order cells are expanded in.
    pub fn swept(&self) -> Vec<(String, Vec<serde_json::Value>)> {
        let mut out: Vec<(String, Vec<serde_json::Value>)> = Vec::new();
        for (k, v) in &self.workload {
            out.push((k.clone(), v.iter().map(|&x| x.into()).collect()));
        }
        for (k, v) in &self.params {
            out.push((k.clone(), v.clone()));
        }
        for s in &self.strategy_keys {
            out.push((s.label(), s.written.clone()));
        }
        if !self.placement.is_empty() {
            let written = self.placement.iter().map(|p| p.to_string().into());
            out.push(("placement".into(), written.collect()));
        }
        if !self.layout.is_empty() {
            let written = self.layout.iter().map(|l| l.to_string().into());
            out.push(("layout".into(), written.collect()));
        }
        if !self.clients.is_empty() {
            out.push((
                CLIENTS_KEY.into(),
                self.clients.iter().map(|&n| n.into()).collect(),
            ));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
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
