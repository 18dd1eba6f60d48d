//! How long a run will take, for `check` and for exec's progress: one
//! function, so both say the same thing (a `check` that promised one
//! duration and an exec that printed another would teach users to ignore
//! both).
//!
//! runner cannot know what the user's code costs before it runs it, so it
//! runs it: a few untimed trial runs of each distinct arm (as each cell
//! binds it), in trial workers contained like forks (`trials`), before any
//! fork starts; on PostgreSQL in a schema of their own (exec's run schema,
//! or one `check` makes and drops). What a failing trial (a command that
//! cannot start yet) leaves untimed is guessed from per-run costs measured
//! on the development machine (`runner_plan::estimate_run_ns`), and said so.

use super::error::ExecError;
use super::trials::Stopped;
use runner_db::DbTarget;
use runner_plan::{Cell, Plan};
use runner_spec::Experiment;

/// A fork's own cost outside its runs: a process start, the arms' set-up
/// (a connection and a seeded table on PostgreSQL), the agreement check,
/// and the parent's records. Measured on the development machine (2 vCPUs,
/// shared): about 10 to 20 ms without a database, 40 to 80 ms on a local
/// PostgreSQL; orders of magnitude again.
const FORK_START_NS: u64 = 30_000_000;
const FORK_START_POSTGRES_NS: u64 = 80_000_000;
/// A fork's cost besides the set-up a trial measured: the process start
/// and the parent's records (about 10 ms on the development machine).
const PROCESS_START_NS: u64 = 10_000_000;

/// The run's duration and where its per-run costs came from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Estimate {
    /// Every job of the plan, as nanoseconds of wall time: in a sequential
    /// design, every cell running its `max_forks`.
    pub total_ns: u64,
    /// In a sequential design, every experiment cell stopping at its
    /// `min_forks` (the gate's self-check cells run all theirs); else
    /// [`Estimate::total_ns`].
    pub fewest_ns: u64,
    /// The analysis and the report after the forks.
    pub analysis_ns: u64,
    /// Distinct arms timed here and their median trial run.
    pub timed: Vec<(String, u64)>,
    /// Trial runs behind each timed arm (fewer than [`TRIAL_RUNS`] when
    /// the budget ran out).
    pub runs: u32,
    /// Why some arm's cost is a guess; none when every arm was timed.
    pub guessed: Option<String>,
    /// Why the trials stopped short, if they did.
    pub stopped: Option<Stopped>,
    /// Each fork's set-up as the trials measured it (the arms built, with
    /// their `setup` and private copies, and checked); 0 when not measured.
    pub setup_ns: u64,
    /// The 1-minute load average and the CPUs when the trials ran.
    pub load: (f64, usize),
}

impl Estimate {
    /// What the trials proved a run cannot get past (the arms' outputs
    /// differ, a run that outlasts the fork timeout, a signal): exec stops
    /// with it before its first fork instead of at it. A trial that merely
    /// failed is left for the forks to report in their own words.
    pub(crate) fn blocking(&self) -> Option<runner_core::error::RunnerError> {
        let e = match self.stopped.as_ref()? {
            Stopped::Disagreement(m) => ExecError::TrialsDisagree(m.clone()),
            Stopped::TimedOut(m) => ExecError::TrialTimedOut(m.clone()),
            Stopped::Interrupted => ExecError::Interrupted(runner_os::interrupt::Interrupted),
            Stopped::Failed(_) => return None,
        };
        Some(e.into())
    }

    /// The whole forecast: the forks (a range in a sequential design) and
    /// the analysis after them.
    pub(crate) fn time(&self) -> String {
        let whole = |forks: u64| approx(forks + self.analysis_ns);
        if self.fewest_ns < self.total_ns {
            format!(
                "{} to {}",
                whole(self.fewest_ns),
                human(self.total_ns + self.analysis_ns)
            )
        } else {
            whole(self.total_ns)
        }
    }

    /// `about 11 s (...)`: the forecast `check` prints after `estimate`,
    /// and exec before its first fork.
    pub(crate) fn describe(&self) -> String {
        let setup = if self.setup_ns > 0 {
            format!(
                ", and each fork's set-up of {} measured the same way",
                runner_report::numbers::duration(self.setup_ns as f64)
            )
        } else {
            String::new()
        };
        let how = match (&self.guessed, self.timed.is_empty()) {
            (None, _) => format!(
                "a forecast from {} trial run{} per arm after a first one{setup}, timed here and not part of the run",
                self.runs,
                if self.runs == 1 { "" } else { "s" }
            ),
            (Some(why), true) => format!("a forecast from typical per-run costs: {why}"),
            (Some(why), false) => format!(
                "a forecast from {} trial run{} of some arms, timed here and not part of the run; the others guessed: {why}",
                self.runs,
                if self.runs == 1 { "" } else { "s" }
            ),
        };
        format!("{} ({how}; {})", self.time(), self.stretch())
    }

    /// How load would stretch the forecast: a run sharing its CPU with a
    /// busy process gets about half of it.
    fn stretch(&self) -> String {
        let (load, cpus) = self.load;
        let now = if cpus > 0 && load >= 0.5 * cpus as f64 {
            format!(" (the load was {load:.1} on {cpus} CPUs as the trials ran)")
        } else {
            String::new()
        };
        format!("a busier machine stretches it: with a busy process on every CPU, about twice as long{now}")
    }
}

/// `about 0.4 s`, or `under 0.1 s` (never "about under").
pub(crate) fn approx(ns: u64) -> String {
    let h = human(ns);
    if h.starts_with("under") {
        h
    } else {
        format!("about {h}")
    }
}

/// `under 0.1 s`, `0.4 s`, `11 s`, `3.5 min`, `1.2 h`.
pub(crate) fn human(ns: u64) -> String {
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

/// A rough duration of the analysis and the report, in nanoseconds. Per
/// cell the bootstrap draws `resamples` indices per measured pair about
/// five times over (fork intervals, pooled, hierarchical, order,
/// carry-over); one draw and its share of the median cost about 3 ns on
/// the development machine (2.4e8 draws in 0.65 s, `cargo bench --bench
/// analysis`). The report, its plots and the folder's files cost about a
/// tenth of a second more. An order of magnitude, so a user sees
/// `resamples = 100000` coming.
pub(crate) fn analysis_ns(exp: &Experiment, cells: u64) -> u64 {
    const NS_PER_DRAW: u64 = 3;
    const RENDER_NS: u64 = 100_000_000;
    let measured = cells * u64::from(exp.design.forks.get()) * u64::from(exp.design.pairs.get());
    5 * u64::from(exp.analysis.resamples) * measured * NS_PER_DRAW + RENDER_NS
}

/// A fork's start as the trials measured it (the worker's set-up and
/// checks, plus the process and the parent's records), or a typical one.
fn fork_start_ns(trials: &super::trials::Trials, db: Option<&DbTarget>) -> u64 {
    if trials.setup_ns > 0 {
        PROCESS_START_NS + trials.setup_ns
    } else if matches!(db, Some(DbTarget::Postgres { .. })) {
        FORK_START_POSTGRES_NS
    } else {
        FORK_START_NS
    }
}

/// What `name`'s whole run costs in `cell`: the trials' median, or the
/// typical cost of its kind.
fn run_cost(
    exp: &Experiment,
    cell: &Cell,
    name: &str,
    trials: &super::trials::Trials,
    db: Option<&DbTarget>,
) -> u64 {
    let on_postgres = matches!(db, Some(DbTarget::Postgres { .. }));
    trials
        .cycle_ns(&runner_plan::bind(exp, cell, name))
        .unwrap_or_else(|| runner_plan::estimate_run_ns(exp, cell, name, on_postgres))
}

/// What the counts of a fork's pairs are chosen from (`runner_plan::runs`): the
/// most expensive experiment cell's pair and a fork's start, from the
/// trials (or, for an arm they did not time, its kind's typical cost).
pub(crate) fn costs(
    exp: &Experiment,
    cells: &[Cell],
    db: Option<&DbTarget>,
    (trials, _): &super::trials::Outcome,
) -> runner_plan::runs::Costs {
    let pair_ns = cells
        .iter()
        .filter(|c| c.role.is_experiment())
        .map(|cell| pair_ns(exp, cell, |name| run_cost(exp, cell, name, trials, db)))
        .max()
        .unwrap_or(0);
    runner_plan::runs::Costs {
        pair_ns,
        fork_start_ns: fork_start_ns(trials, db),
    }
}

/// The estimate from trials already run (`trials::run`).
pub(crate) fn from_trials(
    exp: &Experiment,
    cells: &[Cell],
    db: Option<&DbTarget>,
    (trials, stopped): &super::trials::Outcome,
) -> Estimate {
    let why = match stopped {
        None => None,
        Some(Stopped::Interrupted) => Some("the trial runs were interrupted".to_string()),
        Some(Stopped::Disagreement(_)) => {
            Some("the trial runs stopped: the arms' outputs differ".to_string())
        }
        Some(Stopped::Failed(_)) => Some("a trial run failed".to_string()),
        Some(Stopped::TimedOut(_)) => {
            Some("a trial run was still running at the fork timeout".to_string())
        }
    };
    let start = fork_start_ns(trials, db);
    let job = |cell: &Cell| {
        job_ns(exp, cell, start, |name| {
            run_cost(exp, cell, name, trials, db)
        }) + counted_ns(exp, cell, trials)
    };
    let total_ns = cells
        .iter()
        .map(|cell| u64::from(runner_plan::self_check::forks_of(exp, cells, cell)) * job(cell))
        .sum();
    let fewest_ns = match exp.design.stop {
        None => total_ns,
        Some(rule) => cells
            .iter()
            .map(|cell| {
                let forks = match cell.role.is_experiment() {
                    true => rule.min_forks.get(),
                    false => runner_plan::self_check::forks_of(exp, cells, cell),
                };
                u64::from(forks) * job(cell)
            })
            .sum(),
    };
    // By the names the file gives the arms (two names may run one thing).
    let mut timed: Vec<(String, u64)> = Vec::new();
    for cell in cells {
        let (b, t) = cell.arms(&exp.design);
        for name in [b, t] {
            let ns = trials.run_ns(&runner_plan::bind(exp, cell, name));
            if let Some(ns) = ns.filter(|_| !timed.iter().any(|(n, _)| n == name)) {
                timed.push((name.to_string(), ns));
            }
        }
    }
    // Every arm timed: nothing was guessed, whatever stopped afterwards.
    let all_timed = cells.iter().all(|cell| {
        let (b, t) = cell.arms(&exp.design);
        [b, t]
            .iter()
            .all(|n| trials.run_ns(&runner_plan::bind(exp, cell, n)).is_some())
    });
    Estimate {
        total_ns,
        fewest_ns,
        analysis_ns: analysis_ns(exp, cells.len() as u64),
        timed,
        runs: trials.runs,
        guessed: if all_timed {
            None
        } else {
            why.or_else(|| Some("an arm was not timed".into()))
        },
        stopped: stopped.clone(),
        setup_ns: trials.setup_ns,
        load: (
            runner_os::environment::load_average()[0],
            std::thread::available_parallelism().map_or(0, usize::from),
        ),
    }
}

/// What a job's counted runs add (`design.measure`), from one counted
/// run of each arm in the trials: its counted pairs after the timed ones,
/// or, counted alone, its measured pairs counted rather than timed (their
/// timed cost, in `job_ns`, is then the smaller part and is left in).
fn counted_ns(exp: &Experiment, cell: &Cell, trials: &super::trials::Trials) -> u64 {
    let Some(c) = exp.design.counting else {
        return 0;
    };
    let (b, t) = cell.arms(&exp.design);
    let run = |name: &str| {
        trials
            .counted_ns(&runner_plan::bind(exp, cell, name))
            .unwrap_or(0)
    };
    let pairs = if c.time {
        u64::from(c.pairs)
    } else {
        Plan::pairs_per_job(exp)
    };
    pairs * (run(b) + run(t))
}

/// One pair: both runs and the waits of d (the treatment's, and the
/// baseline's padding).
fn pair_ns(exp: &Experiment, cell: &Cell, run_ns: impl Fn(&str) -> u64) -> u64 {
    let (baseline, treatment) = cell.arms(&exp.design);
    let waits = if exp.design.pad_baseline { 2 } else { 1 };
    run_ns(baseline) + run_ns(treatment) + cell.delay_ns * waits
}

/// One job: its start, then every pair's two runs and the waits of d.
pub(crate) fn job_ns(
    exp: &Experiment,
    cell: &Cell,
    start_ns: u64,
    run_ns: impl Fn(&str) -> u64,
) -> u64 {
    start_ns + pair_ns(exp, cell, run_ns) * Plan::pairs_per_job(exp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_at_a_glance() {
        assert_eq!(approx(1_000_000), "under 0.1 s");
        assert_eq!(approx(420_000_000), "about 0.4 s");
        assert_eq!(human(420_000_000), "0.4 s");
        assert_eq!(human(11_300_000_000), "11 s");
        assert_eq!(human(210_000_000_000), "3.5 min");
    }

    #[test]
    fn the_line_says_where_the_costs_came_from_and_what_load_does() {
        let mut e = Estimate {
            total_ns: 10_900_000_000,
            fewest_ns: 10_900_000_000,
            analysis_ns: 100_000_000,
            timed: vec![("gzip1".into(), 30_000_000)],
            runs: 3,
            guessed: None,
            stopped: None,
            setup_ns: 0,
            load: (0.2, 2),
        };
        assert_eq!(
            e.describe(),
            "about 11 s (a forecast from 3 trial runs per arm after a first one, timed here and not part of the run; a busier machine stretches it: with a busy process on every CPU, about twice as long)"
        );
        e.timed.clear();
        e.guessed = Some("no schema".into());
        e.fewest_ns = 3_300_000_000;
        e.load = (1.9, 2);
        assert_eq!(
            e.describe(),
            "about 3.4 s to 11 s (a forecast from typical per-run costs: no schema; a busier machine stretches it: with a busy process on every CPU, about twice as long (the load was 1.9 on 2 CPUs as the trials ran))"
        );
    }
}
