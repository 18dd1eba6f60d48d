//! Experiment + master seed -> cells, jobs and their seeds (docs/guide/how-a-run-works.md).
//!
//! Pure: the same experiment and seed always give the same plan, which is what
//! makes a run's schedule, `first` column and inputs reproducible.

pub mod deal;
mod mismatch;
pub mod runs;
pub mod self_check;
pub mod stop;

pub use mismatch::PlanMismatch;

use crate::self_check::GateSizing;
use runner_core::seed::{self, Domain};
use runner_spec::placeholder::{self, Fill};
use runner_spec::{Design, Experiment, Schedule, StrategyKind, WorkloadParams};
use serde::{Deserialize, Serialize};

/// One combination of grid values, or one of a gate's self-check cells.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub cell: u32,
    pub delay_ns: u64,
    pub workload: WorkloadParams,
    /// The grid values as written (`{"delay_us": 25, "plans": 40}`), for reports.
    pub params: serde_json::Map<String, serde_json::Value>,
    /// What the cell is for, and so which strategies its arms run. Absent
    /// (an experiment cell) from the run.json of runs without a gate.
    #[serde(default, skip_serializing_if = "Role::is_experiment")]
    pub role: Role,
    /// The variant this cell's treatment arm runs, with several
    /// (`design.treatments`); absent with one treatment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub treatment: Option<String>,
}

/// The cell parameter that names a cell's variant when the design has
/// several treatments: a report groups and labels cells by it.
pub const TREATMENT_KEY: &str = "treatment";

/// The grid key of the injected delay: the one key a cell's group does not
/// share. Cells are grouped by every other grid value, the user's own keys
/// included, whatever they are named (`delayed`, `d`, `pair`, `fork`).
pub const DELAY_KEY: &str = "delay_us";

/// A cell's grid values without its delay: what the cells of one group
/// (the headline's, the gate's, a report panel's) share. The one place
/// that says which cells belong together.
pub fn group_params(
    params: &serde_json::Map<String, serde_json::Value>,
) -> serde_json::Map<String, serde_json::Value> {
    params
        .iter()
        .filter(|(k, _)| k.as_str() != DELAY_KEY)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// What a cell is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// A combination of the grid: the design's baseline vs its treatment.
    #[default]
    Experiment,
    /// The gate's self-check at d = 0: the baseline against itself, so any
    /// slowdown the gate's rule reports there is a false alarm.
    GateNull,
    /// A self-check cell at twice the threshold, which runs before the
    /// gate's power was computed from its deciding interval planned;
    /// no plan has it now, so a run.json that names it is refused by the
    /// plan check (its cells differ from what the spec derives).
    GatePower,
    /// The gate's self-check at half its threshold: a slowdown within the
    /// budget, so the share the rule flags is its false-block rate.
    GateWithin,
}

impl Role {
    pub fn is_experiment(&self) -> bool {
        *self == Role::Experiment
    }
}

impl Cell {
    /// The strategies the cell's two arms run (names in `[strategies]`):
    /// the design's for an experiment cell, the baseline on both sides for
    /// the gate's self-check (an A/A of what the gate protects).
    pub fn arms<'a>(&'a self, design: &'a Design) -> (&'a str, &'a str) {
        match self.role {
            Role::Experiment => (
                &design.baseline,
                self.treatment.as_deref().unwrap_or(&design.treatment),
            ),
            Role::GateNull | Role::GatePower | Role::GateWithin => {
                (&design.baseline, &design.baseline)
            }
        }
    }
}

/// One fork of one cell: what a single worker process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    pub cell: u32,
    pub fork: u32,
    /// Seeds the job's inputs and coin flips.
    pub seed: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub cells: Vec<Cell>,
    /// In execution order.
    pub jobs: Vec<Job>,
}

impl Plan {
    pub fn pairs_per_job(exp: &Experiment) -> u64 {
        exp.design.rows_per_fork()
    }
}

pub use runner_spec::values::{number, param_text};

/// Expands the grid into the experiment's cells: swept keys outermost, in
/// key order (the `[workload]` keys, other bare keys and
/// `strategies.NAME.KEY` sorted by name), delay innermost, so a report's
/// table reads delay by delay. A gate's self-check cells follow them
/// (see [`all_cells`]).
pub fn cells(exp: &Experiment) -> Vec<Cell> {
    let mut combos: Vec<(WorkloadParams, serde_json::Map<String, serde_json::Value>)> =
        vec![(exp.workload, serde_json::Map::new())];
    // Variants outermost: a report reads variant by variant.
    let mut swept = exp.grid.swept();
    if !exp.design.treatments.is_empty() {
        let names = exp.design.treatments.iter().map(|t| t.as_str().into());
        swept.insert(0, (TREATMENT_KEY.to_string(), names.collect()));
    }
    for (key, values) in swept {
        let mut next = Vec::new();
        for (w, p) in &combos {
            for v in &values {
                let mut w = *w;
                let n = v.as_u64().unwrap_or_default() as u32;
                match key.as_str() {
                    "plans" => w.plans = n,
                    "months" => w.months = n,
                    _ => {}
                }
                let mut p = p.clone();
                p.insert(key.clone(), v.clone());
                next.push((w, p));
            }
        }
        combos = next;
    }
    let mut out = Vec::new();
    for (w, p) in combos {
        for (&ns, &us) in exp.grid.delay_ns.iter().zip(&exp.grid.delay_us) {
            let mut params = serde_json::Map::new();
            params.insert(DELAY_KEY.into(), number(us));
            params.extend(p.clone());
            out.push(Cell {
                cell: out.len() as u32,
                delay_ns: ns,
                workload: w,
                treatment: (!exp.design.treatments.is_empty())
                    .then(|| p.get(TREATMENT_KEY).and_then(|v| v.as_str()))
                    .flatten()
                    .map(String::from),
                params,
                role: Role::Experiment,
            });
        }
    }
    out
}

/// The CPU placement of `cell`: its swept value, else the design's.
pub fn placement(exp: &Experiment, cell: &Cell) -> runner_os::placement::Placement {
    cell.params
        .get("placement")
        .and_then(|v| v.as_str())
        .and_then(runner_os::placement::Placement::parse)
        .unwrap_or(exp.design.placement)
}

/// The memory layout of `cell`: its swept value, else the design's.
pub fn layout(exp: &Experiment, cell: &Cell) -> runner_os::memory_layout::Layout {
    cell.params
        .get("layout")
        .and_then(|v| v.as_str())
        .and_then(runner_os::memory_layout::Layout::parse)
        .unwrap_or(exp.design.layout)
}

/// Strategy `name` as it runs in `cell`: the file's strategy with the cell's
/// swept keys applied and every grid placeholder filled (`{input}` and
/// `{scratch}` stay for the worker). Pure, so a job can be rebuilt from
/// run.json alone.
pub fn bind(exp: &Experiment, cell: &Cell, name: &str) -> StrategyKind {
    let mut kind = exp.strategies[name].clone();
    for s in exp.grid.strategy_keys.iter().filter(|s| s.strategy == name) {
        let chosen = cell.params.get(&s.label());
        if let Some(i) = s.written.iter().position(|w| Some(w) == chosen) {
            kind.apply(&s.values[i]);
        }
    }
    // A swept `clients` sets every sql arm of the cell alike.
    let clients = cell.params.get(runner_spec::CLIENTS_KEY);
    if let (StrategyKind::Sql(_), Some(n)) = (&kind, clients.and_then(|v| v.as_u64())) {
        kind.apply(&runner_spec::Field::Clients(n as u32));
    }
    let fill = |text: &str, into: placeholder::Quoting| -> String {
        placeholder::substitute(text, false, |n| match cell.params.get(n) {
            Some(v) if !n.starts_with("strategies.") => {
                Fill::With(placeholder::escape(&into.quote(&param_text(v))))
            }
            _ => Fill::Keep,
        })
        .text
    };
    kind.map_texts(fill);
    kind
}

/// The experiment's cells, then a gate's self-check cells: every cell a run
/// measures. The 2x cells of a percentage threshold appear only once
/// `sizing` (measured from the experiment cells) gives their delay.
pub fn all_cells(exp: &Experiment, sizing: Option<&GateSizing>) -> Vec<Cell> {
    let mut out = cells(exp);
    let extra = crate::self_check::self_check(exp, &out, sizing);
    out.extend(extra);
    out
}

/// The full plan for `master_seed` (and, for a gate with a percentage
/// threshold, its recorded sizing). Jobs of cells that run in the second
/// phase (the 2x cells sized from the first) come after all the others,
/// each phase in its own seeded order.
pub fn plan(exp: &Experiment, master_seed: u64, sizing: Option<&GateSizing>) -> Plan {
    let cells = all_cells(exp, sizing);
    let jobs_of = |phase: u32| -> Vec<Job> {
        let mut jobs: Vec<Job> = cells
            .iter()
            .filter(|c| crate::self_check::phase(exp, c) == phase)
            .flat_map(|c| {
                let forks = crate::self_check::forks_of(exp, &cells, c);
                (0..forks).map(move |fork| Job {
                    cell: c.cell,
                    fork,
                    seed: seed::derive(
                        master_seed,
                        Domain::Job,
                        &[u64::from(c.cell), u64::from(fork)],
                    ),
                })
            })
            .collect();
        if exp.design.schedule == Schedule::Shuffled {
            // run.json records the first phase's seed as `seeds.schedule`;
            // the second phase's is the same path with the phase appended.
            let path: &[u64] = if phase == 0 { &[] } else { &[u64::from(phase)] };
            let mut rng = seed::rng(master_seed, Domain::Schedule, path);
            if exp.design.stop.is_some() {
                jobs = stop::rounds(jobs, &mut rng);
            } else {
                seed::shuffle(&mut rng, &mut jobs);
            }
        }
        jobs
    };
    let mut jobs = jobs_of(0);
    jobs.extend(jobs_of(1));
    Plan { cells, jobs }
}

/// A rough duration of one job in nanoseconds, for `check`. The per-run
/// costs were measured on the development machine: the calculator at
/// about 0.8 ns per cohort step, a tx-rollback preview about 55 µs more on
/// SQLite and 500 µs more on a local PostgreSQL. The user's own code is a guess (a small process, a short
/// query): runner cannot know what it costs before it runs it. They are
/// orders of magnitude, not promises.
pub fn estimate_job_ns(exp: &Experiment, cell: &Cell, on_postgres: bool) -> u64 {
    let run_ns = |name: &str| estimate_run_ns(exp, cell, name, on_postgres);
    let (baseline, treatment) = cell.arms(&exp.design);
    let per_pair = run_ns(baseline)
        + run_ns(treatment)
        + cell.delay_ns * if exp.design.pad_baseline { 2 } else { 1 };
    // Process start, strategy set-up and the agreement check.
    let setup_ns = 30_000_000;
    setup_ns + per_pair * Plan::pairs_per_job(exp)
}

/// A rough duration of one run of strategy `name` in `cell` (see
/// [`estimate_job_ns`]); also what `check` takes as the baseline median a
/// percentage gate is sized from.
pub fn estimate_run_ns(exp: &Experiment, cell: &Cell, name: &str, on_postgres: bool) -> u64 {
    use runner_spec::StrategyKind::*;
    let steps = u64::from(cell.workload.months).pow(2) * u64::from(cell.workload.plans) / 2;
    let calc = steps * 4 / 5;
    match exp.strategies.get(name) {
        Some(InMemory) => calc + 2_000,
        Some(TxRollback) if on_postgres => calc + 500_000,
        Some(TxRollback) => calc + 55_000,
        Some(Spin { duration_ns }) => *duration_ns + 100,
        Some(Command(_)) => 1_000_000,
        Some(Sql(_)) if on_postgres => 300_000,
        Some(Sql(_)) => 50_000,
        Some(Noop) | Some(Imported) | None => 100,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use runner_spec::{CommandSpec, Program, StrategyKind};

    fn experiment(text: &str) -> Experiment {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.toml");
        std::fs::write(&path, text).unwrap();
        runner_spec::load(&path, &[]).unwrap().experiment
    }

    fn argv(kind: &StrategyKind) -> Vec<String> {
        match kind {
            StrategyKind::Command(c) => c.program.argv(),
            other => panic!("not a command: {other:?}"),
        }
    }

    /// Cells: swept keys in name order, outermost first, delay innermost;
    /// `bind` applies the cell's swept key and fills its grid values, keeps
    /// `{input}` and `{scratch}`, and escapes what it inserts.
    #[test]
    fn cells_and_bind_follow_the_grid() {
        let exp = experiment(
            r#"
[strategies.a]
kind = "command"
argv = ["echo", "{level}", "{input}", "{scratch}", "{{level}"]
[strategies.b]
kind = "command"
argv = ["echo", "b"]
[design]
baseline = "a"
treatment = "b"
[grid]
level = ["x{y}", "z"]
delay_us = [0, 5]
"strategies.b.argv" = [["echo", "b"], ["echo", "{level}"]]
"#,
        );
        let cells = cells(&exp);
        let keys: Vec<String> = cells
            .iter()
            .map(|c| serde_json::Value::Object(c.params.clone()).to_string())
            .collect();
        assert_eq!(cells.len(), 8);
        assert_eq!(
            keys[0],
            r#"{"delay_us":0,"level":"x{y}","strategies.b.argv":["echo","b"]}"#
        );
        assert_eq!(
            keys[3],
            r#"{"delay_us":5,"level":"x{y}","strategies.b.argv":["echo","{level}"]}"#
        );
        assert_eq!(
            keys[4],
            r#"{"delay_us":0,"level":"z","strategies.b.argv":["echo","b"]}"#
        );
        let a = bind(&exp, &cells[0], "a");
        assert_eq!(
            argv(&a),
            ["echo", "x{{y}", "{input}", "{scratch}", "{{level}"]
        );
        let b = bind(&exp, &cells[3], "b");
        assert_eq!(argv(&b), ["echo", "x{{y}"]);
        assert_eq!(argv(&bind(&exp, &cells[4], "b")), ["echo", "b"]);
        // What the worker finally runs: escapes resolved once.
        let t = runner_spec::placeholder::Template::compile(&argv(&b)[1]).unwrap();
        assert_eq!(t.render(9), "x{y}");
        assert_eq!(
            exp.strategies["b"],
            StrategyKind::Command(Box::new(CommandSpec {
                program: Program::Argv(vec!["echo".into(), "b".into()]),
                compare_output: true,
                ..CommandSpec::default()
            })),
            "binding leaves the experiment as written"
        );
    }
}
