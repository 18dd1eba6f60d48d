//! Instructions beside time (`design.measure`, docs/guide/instructions.md):
//! the counted pairs of each cell analysed as its timed pairs are, with
//! the same statistic and the same interval.
//!
//! Each fork's ratio is median(treatment's counts) / median(baseline's)
//! on its own counted pairs (`runner_stats::ratio::paired_ratio`), and the
//! cell's is the geometric mean of its forks' ratios with Student's t
//! interval over their logs (`runner_stats::ratio::over_forks`), or in a
//! sequential design that stopped on counts the interval it stopped on
//! (`analysis::stop`): one method for time and counts, so "4.8 % more
//! instructions" and "+4.8 % run time" are read the same way. A count
//! has no clock step, so nothing is dithered; a deterministic program's
//! counts vary by a few instructions between runs (its environment and
//! the addresses the kernel gives it), and its interval is as narrow as
//! that.

use super::effect::{fork_counts_of, IntervalKind};
use super::{AnalysisInput, ForkData};
use runner_core::record::{PairRecord, RunCount};
use runner_stats::ratio::RatioEstimate;
use runner_stats::StatsError;
use serde::{Deserialize, Serialize};

/// `cells[].instructions`: present only for runs that count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Instructions {
    /// Counted pairs (both arms counted) over the cell's forks.
    pub n: u32,
    /// The pooled median count of each arm's counted runs.
    pub baseline_median: f64,
    pub treatment_median: f64,
    /// max / min - 1 of the forks' baseline medians: how much the count
    /// itself moved between processes (0 for a program that executes the
    /// same instructions every time).
    pub baseline_spread: f64,
    /// The median time of one counted run, both arms together: what the
    /// counter cost (valgrind is 20 to 50 times a run), never a timing of
    /// the command.
    pub counted_run_ns: f64,
    pub effect: CountEffect,
    pub forks: Vec<ForkCount>,
    /// With a simulated cache (`design.cache_sim`): its misses and the
    /// estimated cycles; absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<Cache>,
}

/// One fork's counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForkCount {
    pub fork: u32,
    pub n: u32,
    pub baseline_median: f64,
    pub treatment_median: f64,
    /// median(treatment) / median(baseline) and its interval, from the
    /// fork's pairs resampled together.
    pub ratio: f64,
    pub ratio_ci: [f64; 2],
}

/// Which way the treatment moved the count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CountDirection {
    Fewer,
    More,
    NoDifference,
}

impl CountDirection {
    /// A ratio's direction: its interval wholly below 1 is fewer.
    pub fn of_ratio(ci: [f64; 2]) -> CountDirection {
        if ci[1] < 1.0 {
            CountDirection::Fewer
        } else if ci[0] > 1.0 {
            CountDirection::More
        } else {
            CountDirection::NoDifference
        }
    }
}

/// A count's effect: the ratio, its interval, and the same in two more
/// units (the change, ratio - 1, and the difference per run at the
/// baseline's median count), as `effect::Effect` is for time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CountEffect {
    pub direction: CountDirection,
    pub interval: IntervalKind,
    pub ratio: f64,
    pub ratio_ci: [f64; 2],
    pub change: f64,
    pub change_ci: [f64; 2],
    /// Per run, in the count's unit (instructions, or estimated cycles).
    pub difference: f64,
    pub difference_ci: [f64; 2],
    pub baseline_median: f64,
    /// Forks whose own ratio's interval lay below / above 1.
    pub forks_fewer: u32,
    pub forks_more: u32,
    pub forks: u32,
}

impl CountEffect {
    /// The effect of a ratio and its interval, at `baseline_median`.
    pub fn new(
        interval: IntervalKind,
        baseline_median: f64,
        (ratio, ratio_ci): (f64, [f64; 2]),
        [forks_fewer, forks_more]: [u32; 2],
        forks: u32,
    ) -> CountEffect {
        let change_ci = [ratio_ci[0] - 1.0, ratio_ci[1] - 1.0];
        CountEffect {
            direction: CountDirection::of_ratio(ratio_ci),
            interval,
            ratio,
            ratio_ci,
            change: ratio - 1.0,
            change_ci,
            difference: baseline_median * (ratio - 1.0),
            difference_ci: change_ci.map(|c| baseline_median * c),
            baseline_median,
            forks_fewer,
            forks_more,
            forks,
        }
    }
}

/// A simulated cache's figures: each arm's median misses, and the
/// estimated cycles (`RunCount::estimated_cycles`) with their own effect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cache {
    pub l1_misses: ArmMedians,
    pub ll_misses: ArmMedians,
    pub cycles: ArmMedians,
    pub cycles_effect: CountEffect,
}

/// Each arm's median over the cell's counted runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ArmMedians {
    pub baseline: f64,
    pub treatment: f64,
}

/// A fork's counted pairs with both arms counted, as (baseline,
/// treatment) counts.
fn both(rows: &[&PairRecord]) -> Vec<(RunCount, RunCount)> {
    rows.iter()
        .filter_map(|p| {
            let c = p.counts();
            Some((c.baseline?, c.treatment?))
        })
        .collect()
}

/// One measure of a count: instructions, or estimated cycles.
type Measure = fn(&RunCount) -> Option<u64>;

const INSTRUCTIONS: Measure = |c| Some(c.instructions);
const CYCLES: Measure = RunCount::estimated_cycles;

/// Each arm's values of `measure` over a fork's counted pairs.
fn arms(pairs: &[(RunCount, RunCount)], measure: Measure) -> (Vec<f64>, Vec<f64>) {
    pairs
        .iter()
        .filter_map(|(b, t)| Some((measure(b)? as f64, measure(t)? as f64)))
        .unzip()
}

/// One fork's ratio of `measure` and its interval; `None` for a fork
/// without counted pairs.
fn fork_ratio(
    input: &AnalysisInput,
    f: &ForkData<'_>,
    measure: Measure,
) -> Result<Option<RatioEstimate>, StatsError> {
    let (b, t) = arms(&both(&f.counted), measure);
    if b.is_empty() {
        return Ok(None);
    }
    runner_stats::ratio::paired_ratio(&b, &t, input.confidence).map(Some)
}

/// Each fork's instructions ratio and its interval, in fork order: what
/// a gate on instructions holds a self-check fork's rule to.
pub(crate) fn fork_ratio_of(
    input: &AnalysisInput,
    f: &ForkData<'_>,
) -> Result<Option<RatioEstimate>, StatsError> {
    fork_ratio(input, f, INSTRUCTIONS)
}

/// Each fork's log ratio of instructions (ln of its medians' quotient),
/// in fork order: what a sequential design on counts looks at. Errors
/// on a fork without counted pairs.
pub(crate) fn fork_logs(forks: &[ForkData<'_>]) -> Result<Vec<f64>, StatsError> {
    forks
        .iter()
        .map(|f| {
            let (b, t) = arms(&both(&f.counted), INSTRUCTIONS);
            Ok((runner_stats::median(&t)? / runner_stats::median(&b)?).ln())
        })
        .collect()
}

/// The effect of `measure` over the cell's forks: Student's t over their
/// log ratios, or one fork's own interval.
fn effect_of(
    input: &AnalysisInput,
    forks: &[ForkData<'_>],
    measure: Measure,
    baseline_median: f64,
) -> Result<(CountEffect, Vec<RatioEstimate>), StatsError> {
    let ratios: Vec<RatioEstimate> = forks
        .iter()
        .map(|f| fork_ratio(input, f, measure))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .flatten()
        .collect();
    let combined = runner_stats::ratio::over_forks(&ratios, input.confidence)?;
    let interval = if ratios.len() >= 2 {
        IntervalKind::Forks
    } else {
        IntervalKind::OneFork
    };
    let cis: Vec<[f64; 2]> = ratios.iter().map(|r| r.ci).collect();
    Ok((
        CountEffect::new(
            interval,
            baseline_median,
            (combined.ratio, combined.ci),
            fork_counts_of(&cis),
            ratios.len() as u32,
        ),
        ratios,
    ))
}

/// `cells[].instructions` of a cell whose forks are `forks`; `None` when
/// none of them counted.
pub(crate) fn instructions(
    input: &AnalysisInput,
    forks: &[ForkData<'_>],
) -> Result<Option<Instructions>, StatsError> {
    let per_fork: Vec<Vec<(RunCount, RunCount)>> = forks.iter().map(|f| both(&f.counted)).collect();
    let all: Vec<(RunCount, RunCount)> = per_fork.iter().flatten().copied().collect();
    if all.is_empty() {
        return Ok(None);
    }
    let pooled = |measure: Measure| -> Result<ArmMedians, StatsError> {
        let (b, t) = arms(&all, measure);
        Ok(ArmMedians {
            baseline: runner_stats::median(&b)?,
            treatment: runner_stats::median(&t)?,
        })
    };
    let medians = pooled(INSTRUCTIONS)?;
    let (effect, ratios) = effect_of(input, forks, INSTRUCTIONS, medians.baseline)?;
    let mut fork_counts = Vec::new();
    let mut ratios = ratios.into_iter();
    for (f, pairs) in forks.iter().zip(&per_fork) {
        if pairs.is_empty() {
            continue;
        }
        let (b, t) = arms(pairs, INSTRUCTIONS);
        let r = ratios.next().expect("a ratio per fork with counted pairs");
        fork_counts.push(ForkCount {
            fork: f.fork,
            n: pairs.len() as u32,
            baseline_median: runner_stats::median(&b)?,
            treatment_median: runner_stats::median(&t)?,
            ratio: r.ratio,
            ratio_ci: r.ci,
        });
    }
    let (lo, hi) = fork_counts
        .iter()
        .map(|f| f.baseline_median)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), m| {
            (lo.min(m), hi.max(m))
        });
    let times: Vec<u64> = forks
        .iter()
        .flat_map(|f| {
            f.counted
                .iter()
                .flat_map(|p| [p.baseline_ns, p.treatment_ns])
        })
        .collect();
    let cached = all
        .iter()
        .all(|(b, t)| b.cache.is_some() && t.cache.is_some());
    let cache = if cached {
        let cycles = pooled(CYCLES)?;
        Some(Cache {
            l1_misses: pooled(|c| c.cache.map(|m| m.l1))?,
            ll_misses: pooled(|c| c.cache.map(|m| m.ll))?,
            cycles,
            cycles_effect: effect_of(input, forks, CYCLES, cycles.baseline)?.0,
        })
    } else {
        None
    };
    Ok(Some(Instructions {
        n: all.len() as u32,
        baseline_median: medians.baseline,
        treatment_median: medians.treatment,
        baseline_spread: if lo > 0.0 { hi / lo - 1.0 } else { 0.0 },
        counted_run_ns: runner_stats::median(&times)?,
        effect,
        forks: fork_counts,
        cache,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use runner_core::record::{Arm, PairCounts, Phase};

    fn counted(fork: u32, pair: u32, b: u64, t: u64) -> PairRecord {
        PairRecord {
            cell: 0,
            fork,
            phase: Phase::Count,
            pair,
            first: Arm::Baseline,
            baseline_ns: 1_000_000,
            treatment_ns: 1_050_000,
            delay_ns: 0,
            spin_ns: 0,
            baseline_at_ns: 0,
            treatment_at_ns: 0,
            usage: None,
            counts: PairCounts {
                baseline: Some(RunCount {
                    instructions: b,
                    cache: None,
                }),
                treatment: Some(RunCount {
                    instructions: t,
                    cache: None,
                }),
            }
            .boxed(),
        }
    }

    fn input() -> AnalysisInput {
        AnalysisInput {
            master_seed: 1,
            resamples: 200,
            confidence: 0.95,
            ordering: runner_spec::Ordering::PairedRandom,
            pad_baseline: true,
            cells: vec![],
            target_half_width_ns: None,
            clock_resolution_ns: 0.0,
        }
    }

    fn forks(rows: &[PairRecord]) -> Vec<ForkData<'_>> {
        let mut out: Vec<ForkData<'_>> = Vec::new();
        for r in rows {
            match out.iter_mut().find(|f| f.fork == r.fork) {
                Some(f) => f.counted.push(r),
                None => out.push(ForkData {
                    fork: r.fork,
                    measured: Vec::new(),
                    all: Vec::new(),
                    counted: vec![r],
                    dither: (1, 0, 0.0),
                }),
            }
        }
        out
    }

    /// Counts of a deterministic program: the ratio is the quotient of
    /// the medians, its interval as narrow as the counts' own wobble,
    /// and it says "more" for a treatment 5 % above.
    #[test]
    fn nearly_constant_counts_give_the_ratio_and_a_narrow_interval() {
        let mut rows = Vec::new();
        for fork in 0..3 {
            for pair in 0..3 {
                let wobble = u64::from(fork * 3 + pair) % 4;
                rows.push(counted(
                    fork,
                    pair,
                    1_000_000 + wobble,
                    1_050_000 + 2 * wobble,
                ));
            }
        }
        let f = forks(&rows);
        let c = instructions(&input(), &f).unwrap().unwrap();
        assert_eq!(c.n, 9);
        assert!((c.effect.ratio - 1.05).abs() < 1e-5, "{}", c.effect.ratio);
        let [lo, hi] = c.effect.ratio_ci;
        assert!(lo <= c.effect.ratio && c.effect.ratio <= hi);
        assert!(hi - lo < 1e-4, "{lo} {hi}");
        assert_eq!(c.effect.direction, CountDirection::More);
        assert_eq!(c.effect.interval, IntervalKind::Forks);
        assert_eq!((c.effect.forks_more, c.effect.forks), (3, 3));
        assert!((c.effect.difference - 50_000.0).abs() < 10.0);
        assert_eq!(c.forks.len(), 3);
        assert!(c.baseline_spread < 1e-5);
        assert_eq!(c.counted_run_ns, 1_025_000.0);
        assert!(c.cache.is_none());
        assert_eq!(fork_logs(&f).unwrap().len(), 3);
    }

    /// An A/A on counts: identical counts give a ratio of exactly 1 and an
    /// interval that holds it.
    #[test]
    fn an_aa_on_counts_holds_one() {
        let rows: Vec<PairRecord> = (0..4)
            .flat_map(|fork| (0..3).map(move |pair| counted(fork, pair, 777, 777)))
            .collect();
        let c = instructions(&input(), &forks(&rows)).unwrap().unwrap();
        assert_eq!(c.effect.ratio, 1.0);
        assert!(c.effect.ratio_ci[0] <= 1.0 && c.effect.ratio_ci[1] >= 1.0);
        assert_eq!(c.effect.direction, CountDirection::NoDifference);
    }

    /// One counted pair per fork (the default): each fork's ratio is its
    /// pair's, and the forks' spread makes the interval.
    #[test]
    fn one_counted_pair_per_fork_is_enough_for_an_interval() {
        let rows: Vec<PairRecord> = (0..4)
            .map(|fork| {
                counted(
                    fork,
                    0,
                    1_000_000 + u64::from(fork),
                    1_100_000 + u64::from(fork),
                )
            })
            .collect();
        let c = instructions(&input(), &forks(&rows)).unwrap().unwrap();
        let [lo, hi] = c.effect.ratio_ci;
        assert!(lo < c.effect.ratio && c.effect.ratio < hi, "[{lo}, {hi}]");
        assert!(hi - lo < 1e-5 && (c.effect.ratio - 1.1).abs() < 1e-5);
        assert_eq!(c.forks.iter().map(|f| f.n).sum::<u32>(), 4);
    }

    #[test]
    fn a_run_without_counts_has_no_instructions() {
        assert_eq!(instructions(&input(), &[]).unwrap(), None);
    }
}
