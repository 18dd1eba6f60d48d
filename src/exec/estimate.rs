//! How long a run will take, for `check` and for exec's progress: one
//! function, so both say the same thing (a `check` that promised one
//! duration and an exec that printed another would teach users to ignore
//! both).
//!
//! runner cannot know what the user's code costs before it runs it, so it
//! runs it: a few untimed trial runs of each distinct arm (as each cell
//! binds it) in this process, before any worker starts. What it cannot
//! run here it guesses from per-run costs measured on the development
//! machine (`plan::estimate_run_ns`) and says so: an arm on PostgreSQL
//! needs the run's own schema, which only exec creates, and a failing
//! trial (a command that cannot start yet) must not stop `check`.

use super::worker::{draws::Draws, timed_run};
use crate::db::DbTarget;
use crate::plan::{self, Cell, Plan};
use crate::spec::{Experiment, StrategyKind};
use crate::strategy::{self, Setting};
use std::time::{Duration, Instant};

/// Trial runs per arm.
pub const TRIAL_RUNS: u32 = 3;
/// Trials of one arm stop after this much time, once one run is in: an
/// arm that takes minutes must not make `check` take as long as a fork.
const TRIAL_BUDGET: Duration = Duration::from_secs(2);
/// A fork's own cost outside its runs: a process start, the arms' set-up
/// (a connection and a seeded table on PostgreSQL), the agreement check,
/// and the parent's records. Measured on the development machine (2 vCPUs,
/// shared): about 10 to 20 ms without a database, 40 to 80 ms on a local
/// PostgreSQL; orders of magnitude again.
const FORK_START_NS: u64 = 30_000_000;
const FORK_START_POSTGRES_NS: u64 = 80_000_000;

/// The run's duration and where its per-run costs came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// Every job of the plan, as nanoseconds of wall time.
    pub total_ns: u64,
    /// Distinct arms timed here and their median trial run.
    pub timed: Vec<(String, u64)>,
    /// Trial runs behind each timed arm (fewer than [`TRIAL_RUNS`] when
    /// the budget ran out).
    pub runs: u32,
    /// Why some arm's cost is a guess; none when every arm was timed.
    pub guessed: Option<String>,
}

impl Estimate {
    /// `about 11.2 s (...)`: the line `check` prints after `estimate`, and
    /// exec in its progress.
    pub fn describe(&self) -> String {
        let how = match (&self.guessed, self.timed.is_empty()) {
            (None, _) => format!(
                "from {} trial run{} per arm after a first one, timed here and not part of the run",
                self.runs,
                if self.runs == 1 { "" } else { "s" }
            ),
            (Some(why), true) => format!("a guess from typical per-run costs: {why}"),
            (Some(why), false) => format!(
                "from {} trial run{} of some arms, timed here and not part of the run; the others guessed: {why}",
                self.runs,
                if self.runs == 1 { "" } else { "s" }
            ),
        };
        format!("about {} ({how})", human(self.total_ns))
    }
}

/// `under 0.1 s`, `0.4 s`, `11 s`, `3.5 min`, `1.2 h`.
pub fn human(ns: u64) -> String {
    let s = ns as f64 / 1e9;
    if s < 0.05 {
        "under 0.1 s".into()
    } else if s < 10.0 {
        format!("{s:.1} s")
    } else if s < 60.0 {
        format!("{s:.0} s")
    } else if s < 3600.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// One distinct arm (a strategy as a cell binds it) and what its trial found.
struct Arm {
    kind: StrategyKind,
    /// Median trial run; none when it was not timed.
    run_ns: Option<u64>,
}

/// The estimate for running every job of `cells` (x `design.forks`), with
/// the arms run a few times here against `db`.
pub fn estimate(exp: &Experiment, cells: &[Cell], db: Option<&DbTarget>) -> Estimate {
    let on_postgres = matches!(db, Some(DbTarget::Postgres { .. }));
    let mut arms: Vec<Arm> = Vec::new();
    let mut why: Option<String> = None;
    let mut runs = TRIAL_RUNS;
    for cell in cells {
        let (b, t) = cell.arms(&exp.design);
        for name in [b, t] {
            let kind = plan::bind(exp, cell, name);
            if arms.iter().any(|a| a.kind == kind) {
                continue;
            }
            let run_ns = if kind.needs_database() && on_postgres {
                why.get_or_insert_with(|| {
                    "an arm on PostgreSQL is not run before the run has its own schema".into()
                });
                None
            } else {
                match trial(&kind, name, cell, db) {
                    Ok((median, n)) => {
                        runs = runs.min(n);
                        Some(median)
                    }
                    Err(e) => {
                        why.get_or_insert_with(|| format!("a trial run of `{name}` failed: {e:#}"));
                        None
                    }
                }
            };
            arms.push(Arm { kind, run_ns });
        }
    }
    let forks = u64::from(exp.design.forks.get());
    let start = if on_postgres {
        FORK_START_POSTGRES_NS
    } else {
        FORK_START_NS
    };
    let total_ns = cells
        .iter()
        .map(|cell| {
            let run_ns = |name: &str| {
                let kind = plan::bind(exp, cell, name);
                arms.iter()
                    .find(|a| a.kind == kind)
                    .and_then(|a| a.run_ns)
                    .unwrap_or_else(|| plan::estimate_run_ns(exp, cell, name, on_postgres))
            };
            forks * job_ns(exp, cell, start, run_ns)
        })
        .sum();
    // By the names the file gives the arms (two names may run one thing).
    let mut timed: Vec<(String, u64)> = Vec::new();
    for cell in cells {
        let (b, t) = cell.arms(&exp.design);
        for name in [b, t] {
            let kind = plan::bind(exp, cell, name);
            let ns = arms.iter().find(|a| a.kind == kind).and_then(|a| a.run_ns);
            if let Some(ns) = ns.filter(|_| !timed.iter().any(|(n, _)| n == name)) {
                timed.push((name.to_string(), ns));
            }
        }
    }
    Estimate {
        total_ns,
        timed,
        runs,
        guessed: why,
    }
}

/// One job: its start, then every pair's two runs and the waits of d (the
/// treatment's, and the baseline's padding).
pub fn job_ns(exp: &Experiment, cell: &Cell, start_ns: u64, run_ns: impl Fn(&str) -> u64) -> u64 {
    let (baseline, treatment) = cell.arms(&exp.design);
    let waits = if exp.design.pad_baseline { 2 } else { 1 };
    let per_pair = run_ns(baseline) + run_ns(treatment) + cell.delay_ns * waits;
    start_ns + per_pair * Plan::pairs_per_job(exp)
}

/// Up to [`TRIAL_RUNS`] runs of `kind` in this process after one that is
/// not counted, with its set-up and teardown; the median run and how many
/// there were.
fn trial(
    kind: &StrategyKind,
    name: &str,
    cell: &Cell,
    db: Option<&DbTarget>,
) -> anyhow::Result<(u64, u32)> {
    let at = Setting {
        workload: cell.workload,
        db,
        slot: "trial",
        name,
        table: None,
    };
    let mut s = strategy::build(kind, &at)?;
    let mut draws = Draws::new(u64::from(cell.cell));
    let started = Instant::now();
    let mut times = Vec::new();
    let outcome = (|| -> anyhow::Result<()> {
        let mut once = || -> anyhow::Result<u64> {
            let input = draws.input();
            s.before(input)?;
            let (elapsed, _) = timed_run(s.as_mut(), input, 0, 0)?;
            s.after()?;
            Ok(elapsed)
        };
        // A first run that is not counted: it pays for cold caches (a
        // program's pages, a file just written by `setup`), as a fork's
        // warm-up pairs do, and would make the estimate too high.
        let cold = once()?;
        while times.len() < TRIAL_RUNS as usize && started.elapsed() < TRIAL_BUDGET {
            times.push(once()?);
        }
        if times.is_empty() {
            times.push(cold);
        }
        Ok(())
    })();
    let down = s.teardown();
    outcome?;
    down?;
    times.sort_unstable();
    Ok((times[times.len() / 2], times.len() as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_at_a_glance() {
        assert_eq!(human(420_000_000), "0.4 s");
        assert_eq!(human(11_300_000_000), "11 s");
        assert_eq!(human(210_000_000_000), "3.5 min");
    }

    #[test]
    fn the_line_says_where_the_costs_came_from() {
        let mut e = Estimate {
            total_ns: 11_000_000_000,
            timed: vec![("gzip1".into(), 30_000_000)],
            runs: 3,
            guessed: None,
        };
        assert_eq!(
            e.describe(),
            "about 11 s (from 3 trial runs per arm after a first one, timed here and not part of the run)"
        );
        e.timed.clear();
        e.guessed = Some("no schema".into());
        assert_eq!(
            e.describe(),
            "about 11 s (a guess from typical per-run costs: no schema)"
        );
    }
}
