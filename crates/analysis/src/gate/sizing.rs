//! Sizing the 2x self-check cells of a percentage threshold: the
//! threshold is a share of the baseline's median run, which only the run
//! itself can measure. Once every first-phase fork has finished, each
//! group's threshold is taken from the pooled median of the measured
//! baseline runs of its experiment cells (the same median the report shows
//! as the baseline's), and its 2x cell is planned with twice that.
//!
//! The sizing is recorded in run.json (`gate_sizing`); a reader checks it
//! twice: against the spec (`plan::self_check::check`: groups, threshold,
//! delay), and against the data in the analysis (the baseline median of
//! the rows). The type and the check live with the plan, which derives the
//! 2x cells from a sizing; only measuring it needs the analysis.

use super::baseline_median;
use runner_core::record::PairRecord;
use runner_plan::self_check::{groups, power_delay_ns, GateSizing, GroupSizing};
use runner_plan::Cell;
use runner_spec::{Experiment, MaxSlowdown};

mod sizing_error;
pub(crate) use sizing_error::SizingError;

/// The sizing of a percentage gate from the first phase's rows (those of
/// the experiment cells at least). `None` without a percentage gate.
pub fn size(
    exp: &Experiment,
    cells: &[Cell],
    rows: &[PairRecord],
) -> Result<GateSizing, SizingError> {
    let Some(MaxSlowdown::Percent(_)) = exp.gate.map(|g| g.max_slowdown) else {
        return Err(SizingError::NotPercent);
    };
    let max = exp.gate.expect("a gate").max_slowdown;
    groups(cells)
        .into_iter()
        .map(|(_, members)| {
            let median =
                baseline_median(rows, &members).ok_or_else(|| SizingError::NoBaseline {
                    cells: members.clone(),
                })?;
            let threshold_ns = max.ns_for(median);
            Ok(GroupSizing {
                cells: members,
                baseline_median_ns: median,
                threshold_ns,
                delay_ns: power_delay_ns(threshold_ns),
            })
        })
        .collect::<Result<Vec<_>, SizingError>>()
        .map(|groups| GateSizing { groups })
}

#[cfg(test)]
mod tests {
    use super::*;
    use runner_core::record::{Arm, Phase};
    use runner_plan::self_check::{check, estimate};
    use runner_plan::PlanMismatch;

    fn experiment(text: &str) -> Experiment {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.toml");
        std::fs::write(&path, text).unwrap();
        runner_spec::load(&path, &[]).unwrap().experiment
    }

    /// The capped gate of tests/suite/gate.rs too.
    const SLOW_SPIN: &str = include_str!("../../../../tests/fixtures/capped_gate.toml");

    fn row(cell: u32, baseline_ns: u64) -> PairRecord {
        PairRecord {
            cell,
            fork: 0,
            phase: Phase::Measure,
            pair: 0,
            first: Arm::Baseline,
            baseline_ns,
            treatment_ns: baseline_ns,
            delay_ns: 0,
            spin_ns: 0,
            baseline_at_ns: 0,
            treatment_at_ns: 0,
            usage: Default::default(),
            counts: Default::default(),
        }
    }

    /// A percentage that is large against a slow baseline: 1000 % of a 60 ms
    /// baseline is a 600 ms threshold, whose 2x cell would inject 1.2 s;
    /// it injects runner's largest delay, 1 s, and the recorded sizing
    /// checks out against the spec.
    #[test]
    fn a_percentage_of_a_slow_baseline_injects_at_most_one_second() {
        let exp = experiment(SLOW_SPIN);
        let cells = runner_plan::cells(&exp);
        let rows: Vec<PairRecord> = [59_900_000, 60_000_000, 60_100_000]
            .into_iter()
            .map(|ns| row(0, ns))
            .collect();
        let s = size(&exp, &cells, &rows).unwrap();
        assert_eq!(s.groups[0].baseline_median_ns, 60_000_000.0);
        assert_eq!(s.groups[0].threshold_ns, 600_000_000.0);
        assert_eq!(s.groups[0].delay_ns, runner_spec::limits::MAX_DELAY_NS);
        check(&exp, &cells, Some(&s)).unwrap();
        let all = runner_plan::all_cells(&exp, Some(&s));
        assert!(all.iter().all(|c| c.delay_ns <= 1_000_000_000));
        // A recorded 1.2 s (what runner injected before) is refused.
        let mut over = s.clone();
        over.groups[0].delay_ns = 1_200_000_000;
        let e = check(&exp, &cells, Some(&over)).unwrap_err();
        assert!(
            matches!(
                e,
                PlanMismatch::SizingDelay {
                    recorded: 1_200_000_000,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("delay_ns is 1200000000"), "{e}");
        // Below the cap: twice the threshold, exactly.
        let fast: Vec<PairRecord> = [1_000_000].into_iter().map(|ns| row(0, ns)).collect();
        assert_eq!(
            size(&exp, &cells, &fast).unwrap().groups[0].delay_ns,
            20_000_000
        );
    }

    /// `check` sizes the 0.5x cells from its per-run guess, so its
    /// estimate counts them, with half the threshold injected, and the
    /// self-check cells with their quarter of the forks.
    #[test]
    fn checks_estimate_counts_the_half_threshold_cells() {
        let exp = experiment(SLOW_SPIN);
        let cells = runner_plan::cells(&exp);
        let s = estimate(&exp, &cells, |c| {
            runner_plan::estimate_run_ns(&exp, c, "spin", false)
        })
        .unwrap();
        let all = runner_plan::all_cells(&exp, Some(&s));
        let within = all
            .iter()
            .find(|c| c.role == runner_plan::Role::GateWithin)
            .unwrap();
        // Half of 1000 % of the guessed 60 ms + 100 ns run.
        assert_eq!(within.delay_ns, 300_000_500);
        assert!(all.iter().all(|c| c.delay_ns <= 1_000_000_000));
        let forks: Vec<u32> = all
            .iter()
            .map(|c| runner_plan::self_check::forks_of(&exp, &all, c))
            .collect();
        assert_eq!(forks, [2, 1, 1], "2 forks: a quarter is 1");
        let total: u64 = all
            .iter()
            .zip(&forks)
            .map(|(c, &f)| runner_plan::estimate_job_ns(&exp, c, false) * u64::from(f))
            .sum();
        // 12 pairs a fork: the experiment's 2 forks x 12 x 120 ms, about
        // 3 s; the d = 0 fork 1.5 s; the 0.5x fork 12 x (120 ms + 2 x 300
        // ms padded), about 8.7 s.
        assert!((12e9..15e9).contains(&(total as f64)), "{total}");
    }
}
