//! How many pairs a fork runs when the experiment file leaves it to runner
//! (no `design.warmup_pairs` or no `design.pairs`; `runner ab` writes
//! neither unless `--warmup` or `--runs` is given): chosen once per run,
//! before its first fork, from the trial runs that `check` and exec make
//! anyway (`exec::trials`), and recorded in run.json's spec
//! (`design.runs_per_fork`), so `runner report` and `--resume` use the
//! same counts.
//!
//! The cost model (docs/guide/performance.md, "Runs per fork from the
//! command's length"): a fork costs its start `s` (a fresh worker process,
//! the arms' set-up and the agreement check, the parent's records), then
//! `w` warm-up and `m` measured pairs of `p` each, `s + (w + m) p`. Its
//! estimate has the variance `sb² + sw² / m` (the between-fork and
//! within-fork components, Kalibera and Jones 2013), and a cell's interval
//! over `n` forks shrinks with `(sb² + sw² / m) / n`. Pairs inside a fork
//! lower only the second term; forks lower both but each pays `s` again,
//! and a sequential design runs at least `min_forks` of them whatever they
//! cost. So a fork gets the pairs that fit a fixed budget of time
//! ([`PAIRS_BUDGET_NS`]: short runs get many pairs, where they are cheap,
//! and long runs the fewest a fork's median needs), and at least as long
//! on its pairs as on its own start ([`START_SHARE`]): a fork whose set-up
//! takes seconds gets more pairs to pay for it. In the committed reports
//! of commands, `sw²` was 76 to 7000 times `sb²`, so a fork of up to a few
//! hundred pairs still narrows the interval; [`MAX_PAIRS`] caps it there.
//!
//! The warm-up pays for what a fork's first runs meet cold (caches, a
//! connection's plans). A command runs a fresh process per run, and the
//! agreement check runs the arms before timing, so the budget for it is
//! small ([`WARMUP_BUDGET_NS`]): a run longer than it gets none.

use runner_spec::{Chosen, Design, RunsPerFork};
use std::num::NonZeroU32;

/// The time a fork's measured pairs are given: about half a second.
pub const PAIRS_BUDGET_NS: u64 = 500_000_000;
/// A fork's measured pairs take at least this many times its start.
pub const START_SHARE: u64 = 1;
/// The time a fork's warm-up pairs are given.
pub const WARMUP_BUDGET_NS: u64 = 100_000_000;
/// At most this many measured pairs per fork (see the module doc).
pub const MAX_PAIRS: u32 = 1000;
/// At most this many warm-up pairs per fork.
pub const MAX_WARMUP: u32 = 100;

/// What the trial runs measured that the choice rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Costs {
    /// One pair of the most expensive experiment cell: its two runs and
    /// the waits of its delay, as the trial runs timed them (or guessed).
    pub pair_ns: u64,
    /// A fork's cost besides its pairs: the worker's start, the arms'
    /// set-up and the agreement check, and the parent's records.
    pub fork_start_ns: u64,
}

/// The counts a fork runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Runs {
    pub warmup_pairs: u32,
    pub pairs: NonZeroU32,
}

/// The counts for `costs` (see the module doc), within the rows pairs.csv
/// may hold for `jobs` forks.
pub fn choose(costs: Costs, jobs: u64) -> Runs {
    let p = costs.pair_ns.max(1);
    let time = PAIRS_BUDGET_NS.max(START_SHARE.saturating_mul(costs.fork_start_ns));
    let fewest = RunsPerFork::FEWEST_PAIRS.get();
    let pairs = u32::try_from(time / p)
        .unwrap_or(u32::MAX)
        .clamp(fewest, MAX_PAIRS);
    let warmup_pairs = u32::try_from(WARMUP_BUDGET_NS / p)
        .unwrap_or(u32::MAX)
        .clamp(RunsPerFork::FEWEST_WARMUP, MAX_WARMUP);
    // Every row of every fork is read into memory by the analysis.
    let rows = runner_spec::limits::MAX_ROWS / jobs.max(1);
    let pairs = pairs
        .min(u32::try_from(rows).unwrap_or(u32::MAX))
        .max(fewest);
    let warmup_pairs =
        warmup_pairs.min(u32::try_from(rows.saturating_sub(u64::from(pairs))).unwrap_or(0));
    Runs {
        warmup_pairs,
        pairs: NonZeroU32::new(pairs).expect("at least the fewest, which is positive"),
    }
}

/// Sets the counts `design` left to the trial runs from `costs`, and
/// records how; a design that set both, or whose counts are chosen
/// already (a resumed run), is left as it is. Whether it changed.
pub fn apply(design: &mut Design, costs: Costs, jobs: u64) -> bool {
    let Some(asked) = design.runs_per_fork.filter(RunsPerFork::pending) else {
        return false;
    };
    let runs = choose(costs, jobs);
    if asked.warmup_pairs {
        design.warmup_pairs = runs.warmup_pairs;
    }
    if asked.pairs {
        design.pairs = runs.pairs;
    }
    design.runs_per_fork = Some(RunsPerFork {
        chosen: Some(Chosen::Trials {
            pair_ns: costs.pair_ns,
            fork_start_ns: costs.fork_start_ns,
        }),
        ..asked
    });
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn runs(pair_ms: f64, start_ms: f64) -> (u32, u32) {
        let r = choose(
            Costs {
                pair_ns: (pair_ms * MS as f64) as u64,
                fork_start_ns: (start_ms * MS as f64) as u64,
            },
            30,
        );
        (r.warmup_pairs, r.pairs.get())
    }

    #[test]
    fn a_fork_gets_the_pairs_of_its_budget_and_at_least_five() {
        // gzip on 1 MB: a pair of about 25 ms.
        assert_eq!(runs(25.0, 15.0), (4, 20));
        // gzip -1 against -6 on 6 MB: runs of 100 and 300 ms.
        assert_eq!(runs(400.0, 15.0), (0, 5));
        // A run of minutes still gets the five a median needs.
        assert_eq!(runs(120_000.0, 15.0), (0, 5));
        // The in-memory preview: the caps.
        assert_eq!(runs(0.02, 10.0), (MAX_WARMUP, MAX_PAIRS));
    }

    #[test]
    fn an_expensive_start_buys_more_pairs() {
        // A setup of 2 s per fork: its pairs take at least as long.
        assert_eq!(runs(100.0, 2000.0).1, 20);
        assert_eq!(runs(100.0, 10.0).1, 5);
    }

    #[test]
    fn the_rows_of_every_fork_fit_what_the_analysis_reads() {
        let r = choose(
            Costs {
                pair_ns: 1,
                fork_start_ns: 0,
            },
            100_000,
        );
        let rows = 100_000 * u64::from(r.warmup_pairs + r.pairs.get());
        assert!(rows <= runner_spec::limits::MAX_ROWS, "{rows}");
        assert_eq!(r.pairs.get(), 200);
    }

    #[test]
    fn only_the_counts_the_file_left_out_are_set_once() {
        let toml = "[strategies.a]\nkind = \"noop\"\n[design]\nbaseline = \"a\"\ntreatment = \"a\"\nwarmup_pairs = 7\n";
        let mut d = runner_spec::parse_recorded("a.toml", toml, &Default::default())
            .unwrap()
            .design;
        assert_eq!(
            d.runs_per_fork,
            Some(RunsPerFork {
                warmup_pairs: false,
                pairs: true,
                chosen: None
            })
        );
        let costs = Costs {
            pair_ns: 25 * MS,
            fork_start_ns: 15 * MS,
        };
        assert!(apply(&mut d, costs, 10));
        assert_eq!((d.warmup_pairs, d.pairs.get()), (7, 20));
        assert_eq!(
            d.runs_per_fork.and_then(|r| r.chosen),
            Some(Chosen::Trials {
                pair_ns: 25 * MS,
                fork_start_ns: 15 * MS
            })
        );
        // Chosen once: a resumed run keeps them, whatever its trials say.
        let slower = Costs {
            pair_ns: 400 * MS,
            ..costs
        };
        assert!(!apply(&mut d, slower, 10));
        assert_eq!(d.pairs.get(), 20);
    }
}
