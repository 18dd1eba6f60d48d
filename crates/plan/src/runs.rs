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
//! A sequential design's first look comes after `min_forks` forks, and its
//! interval over them is Student's t on `min_forks - 1` degrees of freedom:
//! at 3 forks its multiplier is 4.30, more than twice what the forks'
//! spread alone would ask (1.96), and the interval's width varies
//! fourfold from one run to the next; a fourth fork narrows it by a third,
//! a sixth by half. Where a fork is cheap beside what it measures (long
//! runs, so few pairs, each worth more than the fork's start), forks are
//! the better buy. So when the file leaves out `min_forks` too, the first
//! look rests on at least [`FIRST_LOOK_PAIRS`] measured pairs, in as many
//! forks as that takes ([`first_look`]), as long as their runs fit
//! [`FIRST_LOOK_BUDGET_NS`]: a command of seconds keeps 3 forks.
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

/// The measured pairs a sequential design's first look rests on at least,
/// when runner chooses its `min_forks` (see the module doc).
pub const FIRST_LOOK_PAIRS: u32 = 30;
/// ... as long as the first look's measured runs fit this time: about six
/// seconds, what hyperfine's defaults give two commands (three each).
pub const FIRST_LOOK_BUDGET_NS: u64 = 6_000_000_000;

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

/// The forks of a sequential design's first look, for `pairs` measured
/// pairs of `pair_ns` a fork: enough for [`FIRST_LOOK_PAIRS`] while their
/// runs fit [`FIRST_LOOK_BUDGET_NS`], never fewer than `floor` (the rule's
/// default) nor more than `max` (its `max_forks`).
pub fn first_look(
    floor: NonZeroU32,
    max: NonZeroU32,
    pairs: NonZeroU32,
    pair_ns: u64,
) -> NonZeroU32 {
    let by_pairs = FIRST_LOOK_PAIRS.div_ceil(pairs.get());
    let fork_ns = u64::from(pairs.get()).saturating_mul(pair_ns.max(1));
    let by_time = u32::try_from(FIRST_LOOK_BUDGET_NS / fork_ns).unwrap_or(u32::MAX);
    let n = by_pairs
        .min(by_time)
        .max(floor.get())
        .min(max.get().max(floor.get()));
    NonZeroU32::new(n).unwrap_or(floor)
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
    if asked.min_forks {
        if let Some(stop) = design.stop.as_mut() {
            stop.min_forks =
                first_look(stop.min_forks, stop.max_forks, design.pairs, costs.pair_ns);
        }
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

    fn look(pairs: u32, pair_ms: f64, max: u32) -> u32 {
        let n = |v: u32| NonZeroU32::new(v).unwrap();
        first_look(n(3), n(max), n(pairs), (pair_ms * MS as f64) as u64).get()
    }

    #[test]
    fn the_first_look_rests_on_thirty_pairs_where_forks_are_cheap() {
        // gzip -1 against -6 on 6 MB, runs of about 50 and 120 ms: five
        // pairs a fork, so six forks (5.1 s of runs).
        assert_eq!(look(5, 170.0, 10), 6);
        // gzip on 1 MB: 20 pairs a fork already; three forks.
        assert_eq!(look(20, 25.0, 10), 3);
        // Seven pairs: five forks.
        assert_eq!(look(7, 70.0, 10), 5);
        // Runs of a second: three forks of five pairs are 30 s already.
        assert_eq!(look(5, 2000.0, 10), 3);
        // Runs of 300 ms: the budget allows four forks of five pairs.
        assert_eq!(look(5, 300.0, 10), 4);
        // Never more than max_forks.
        assert_eq!(look(5, 170.0, 4), 4);
        assert_eq!(look(5, 170.0, 3), 3);
    }

    #[test]
    fn a_stop_without_min_forks_has_its_first_look_chosen_with_the_pairs() {
        let file = |stop: &str, pairs: &str| {
            format!("[strategies.a]\nkind = \"noop\"\n[design]\nbaseline = \"a\"\ntreatment = \"a\"\n{pairs}[design.stop]\ndecide = true\nmax_forks = 10\n{stop}")
        };
        let costs = Costs {
            pair_ns: 170 * MS,
            fork_start_ns: 15 * MS,
        };
        let design = |toml: &str| {
            let mut d = runner_spec::parse_recorded("a.toml", toml, &Default::default())
                .unwrap()
                .design;
            apply(&mut d, costs, 10);
            (
                d.stop.unwrap().min_forks.get(),
                d.runs_per_fork.map(|r| r.min_forks),
            )
        };
        assert_eq!(design(&file("", "")), (6, Some(true)));
        // A min_forks the file sets, or pairs it sets, keep the rule's.
        assert_eq!(design(&file("min_forks = 3\n", "")), (3, Some(false)));
        assert_eq!(design(&file("", "pairs = 5\n")).0, 3);
        // Chosen once: a recorded design keeps it through adopt_runs.
        let mut d = runner_spec::parse_recorded("a.toml", &file("", ""), &Default::default())
            .unwrap()
            .design;
        let mut recorded = d.clone();
        apply(&mut recorded, costs, 10);
        d.adopt_runs(&recorded);
        assert_eq!(d.stop.unwrap().min_forks.get(), 6);
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
                min_forks: false,
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
