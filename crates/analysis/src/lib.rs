//! Pairs -> every number of the report (docs/guide/statistics.md), as `analysis.json`.
//!
//! All statistics are per cell, over measured pairs only (warm-up rows are
//! read for nothing but the run order that carry-over needs). D is
//! treatment_ns - baseline_ns. Every bootstrap stream is derived from the
//! master seed (see [`streams`]), so the same pairs and seed give
//! byte-identical JSON.
//!
//! Files: [`model`] the JSON types; `fork` per-fork estimates, spread and
//! correlation; `pooled` pooled, over the forks and calibration; `cross_runs`
//! two separate runs; `order` and `carry_over` the history effects;
//! [`gate`] a regression gate's verdict and self-check;
//! `variance` components and sizing; `steady` the changepoint classes of
//! each fork's measured phase; `usage` CPU time and peak memory of
//! command runs; `headline` the answer across cells; [`machines`] the
//! machines level of a run over several hosts (added by [`machines::add`]);
//! [`layout`] the spread under each memory layout (added by [`layout::add`]);
//! [`resample_trace`] the indices behind every interval, for independent checks.

mod carry_over;
mod cross_runs;
mod dither;
pub mod effect;
mod fork;
pub mod gate;
mod headline;
pub mod instructions;
pub mod layout;
pub mod machines;
pub(crate) mod model;
mod order;
mod pooled;
pub mod run;
mod steady;
pub mod stop;
pub(crate) mod streams;
mod trace;
pub(crate) mod usage;
mod variance;

pub use model::*;
pub use trace::{resample_trace, CellTrace, ResampleTrace};
/// The sizing search's limits, which the report states beside its answer.
pub use variance::{DEFAULT_TARGET_FRACTION, FORK_OVERHEAD_PAIRS, MAX_FORKS, PAIRS_OPTIONS};

use runner_core::record::{PairRecord, Phase};
use runner_spec::Ordering;
use runner_stats::ratio::RatioEstimate;
use runner_stats::StatsError;
use std::collections::BTreeMap;

/// What the analysis needs besides the pairs: seeds, settings, the cells.
#[derive(Debug, Clone)]
pub struct AnalysisInput {
    pub master_seed: u64,
    pub resamples: u32,
    pub confidence: f64,
    pub ordering: Ordering,
    pub pad_baseline: bool,
    /// The cells in report order; every pair's cell must be here.
    pub cells: Vec<CellInfo>,
    /// CI half-width the sizing recommendation aims at; `None`: 1 % of the
    /// cell's pooled median baseline, the size of effect a performance
    /// change is usually argued about.
    pub target_half_width_ns: Option<f64>,
    /// The step of the clock that timed the runs (`run.json`
    /// `environment.clock.resolution_ns`); D is dithered within it before
    /// its medians are taken (`dither`). 0: values as recorded.
    pub clock_resolution_ns: f64,
}

/// One cell of the grid, as the plan made it.
#[derive(Debug, Clone)]
pub struct CellInfo {
    pub cell: u32,
    /// The grid values, e.g. `{"delay_us": 25, "plans": 40}`.
    pub params: serde_json::Map<String, serde_json::Value>,
    pub delay_ns: u64,
}

/// Data that cannot be analysed; the message names the cell and fork.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnalysisError {
    #[error("confidence {0} is outside (0, 1)")]
    BadConfidence(f64),
    #[error("resamples must be at least 1")]
    NoResamples,
    #[error("cell {0} is listed twice")]
    DuplicateCell(u32),
    #[error("pairs.csv has cell {0}, which the run does not define")]
    UnknownCell(u32),
    #[error(
        "cell {cell} fork {fork}: pair {pair} has delay_ns {found}, the cell's delay is {expected}"
    )]
    DelayMismatch {
        cell: u32,
        fork: u32,
        pair: u32,
        found: u64,
        expected: u64,
    },
    #[error("cell {0} has no measured pairs")]
    EmptyCell(u32),
    #[error("cell {cell} fork {fork} has warm-up pairs but no measured pairs")]
    EmptyFork { cell: u32, fork: u32 },
    #[error("cell {cell}: {source}")]
    Stats { cell: u32, source: StatsError },
    #[error("{0}")]
    GateSizing(String),
    /// A sequential design's recorded stop does not match its data.
    #[error("{0}")]
    Stop(String),
}

/// Rows that do not fit their run's record are the folder's to fix: bad
/// input (exit 2), as a damaged run.json is.
impl runner_core::error::Coded for AnalysisError {
    fn failure(&self) -> runner_core::error::Failure {
        runner_core::error::Failure::BadInput
    }
}

/// Every statistic of docs/guide/statistics.md, for all cells, plus the headline.
pub fn analyse(input: &AnalysisInput, pairs: &[PairRecord]) -> Result<Analysis, AnalysisError> {
    analyse_with(input, None, None, pairs)
}

/// [`analyse`] with the run's gate and stopping rule: `input.cells` are
/// the experiment's cells (the report's tables and headline), `gate.cells`
/// the self-check cells, whose rows `pairs` also holds, and the gate's
/// verdict goes into `gate` (see [`gate`]); in a sequential design each
/// experiment cell gets its stop (`cells[].stop`, see [`stop`]), checked
/// against the one run.json records, and a gate decides on that interval.
/// A recorded run is analysed by [`run::analyse`], which reads all three
/// from its run.json.
pub fn analyse_with(
    input: &AnalysisInput,
    gate: Option<&gate::GateInput>,
    stop: Option<&stop::StopInput>,
    pairs: &[PairRecord],
) -> Result<Analysis, AnalysisError> {
    if !(input.confidence > 0.0 && input.confidence < 1.0) {
        return Err(AnalysisError::BadConfidence(input.confidence));
    }
    if input.resamples == 0 {
        return Err(AnalysisError::NoResamples);
    }
    let checks: std::collections::BTreeSet<u32> = gate
        .iter()
        .flat_map(|g| g.cells.iter().map(|c| c.cell))
        .collect();
    let grouped = group(input, pairs.iter().filter(|p| !checks.contains(&p.cell)))?;
    // Cells are independent: analysed on the analysis's pool
    // (`stats::pool`), results in cell order.
    let one = |info: &CellInfo| {
        analyse_cell(input, info, &grouped[&info.cell]).map_err(|source| AnalysisError::Stats {
            cell: info.cell,
            source,
        })
    };
    let cells = runner_stats::pool::map_in_order(&input.cells, one);
    let mut cells = cells.into_iter().collect::<Result<Vec<_>, _>>()?;
    if let Some(s) = stop {
        for c in &mut cells {
            let cell_stop = stop::cell(input, s, c.cell, &grouped[&c.cell])?;
            // The effect of a cell that stopped on its data is the
            // interval it stopped on, the one that stays valid there.
            c.effect = effect::Effect::new(
                effect::IntervalKind::Sequence,
                c.pooled.baseline_median_ns,
                (cell_stop.ratio, cell_stop.ratio_ci),
                effect::fork_counts(&c.forks),
                c.forks.len() as u32,
            );
            carry_over::mark(&mut c.carry_over, resolved_ns(&c.effect));
            if let (Some(counts), Some(ratio), Some(ci)) = (
                c.instructions.as_mut(),
                cell_stop.instructions_ratio,
                cell_stop.instructions_ratio_ci,
            ) {
                let e = &counts.effect;
                counts.effect = instructions::CountEffect::new(
                    effect::IntervalKind::Sequence,
                    e.baseline_median,
                    (ratio, ci),
                    [e.forks_fewer, e.forks_more],
                    e.forks,
                );
            }
            c.stop = Some(cell_stop);
        }
    }
    let headline = headline::headline(&cells);
    let gate = match gate {
        None => None,
        Some(g) => {
            let checks_input = AnalysisInput {
                cells: g
                    .cells
                    .iter()
                    .map(|c| CellInfo {
                        cell: c.cell,
                        params: c.params.clone(),
                        delay_ns: c.delay_ns,
                    })
                    .collect(),
                ..input.clone()
            };
            let of_checks = group(
                &checks_input,
                pairs.iter().filter(|p| checks.contains(&p.cell)),
            )?;
            let forks = |cell: u32| -> &[ForkData<'_>] { &of_checks[&cell] };
            Some(gate::gate(input, g, &cells, forks, pairs)?)
        }
    };
    Ok(Analysis {
        format_version: runner_folder::output::format::ANALYSIS_VERSION,
        confidence: input.confidence,
        resamples: input.resamples,
        cells,
        headline,
        gate,
        machines: None,
        layout: None,
    })
}

/// Each fork's measured D of `cell`, dithered within the clock's step as
/// every median of D is (`dither`), in fork order: what a comparison of two
/// runs' effects resamples.
pub fn fork_diffs(
    input: &AnalysisInput,
    pairs: &[PairRecord],
    cell: u32,
) -> Result<Vec<Vec<f64>>, AnalysisError> {
    let only = AnalysisInput {
        cells: input
            .cells
            .iter()
            .filter(|c| c.cell == cell)
            .cloned()
            .collect(),
        ..input.clone()
    };
    let grouped = group(&only, pairs.iter().filter(|p| p.cell == cell))?;
    Ok(grouped
        .get(&cell)
        .map(|forks| forks.iter().map(ForkData::diffs).collect())
        .unwrap_or_default())
}

/// The two-group contrast that order and carry-over both report, over the
/// forks that have values in both groups: median(a) - median(b) with a
/// percentile bootstrap CI that resamples forks. From
/// `stats::CLUSTER_MIN_FORKS` forks on, each chosen fork keeps its values
/// as they are (the cluster bootstrap, `stats::cluster_median_diff`);
/// with fewer, its a and b values are resampled too
/// (`stats::hierarchical_median_diff`), wider, because a few forks alone
/// give too few distinct resamples.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Contrast {
    /// Values in each group over the forks used; when no fork can be used,
    /// over all forks, so that a reader sees what there was.
    pub n_a: u32,
    pub n_b: u32,
    pub median_a: Option<f64>,
    pub median_b: Option<f64>,
    pub difference_ns: Option<f64>,
    pub ci_ns: Option<[f64; 2]>,
    /// Forks with values in only one of the groups (or in neither).
    pub forks_left_out: u32,
}

/// One fork's two groups of a contrast.
pub(crate) type Groups<'a, T> = (&'a [T], &'a [T]);

/// Forks whose two groups are both non-empty (in fork order), and how many
/// were left out.
pub(crate) fn usable<T>(per_fork: &[(Vec<T>, Vec<T>)]) -> (Vec<Groups<'_, T>>, u32) {
    let used: Vec<Groups<'_, T>> = per_fork
        .iter()
        .filter(|(a, b)| !a.is_empty() && !b.is_empty())
        .map(|(a, b)| (a.as_slice(), b.as_slice()))
        .collect();
    let left_out = (per_fork.len() - used.len()) as u32;
    (used, left_out)
}

/// See [`Contrast`]; `per_fork` is each fork's (a, b), in fork order.
pub(crate) fn contrast<T: runner_stats::Value>(
    input: &AnalysisInput,
    per_fork: &[(Vec<T>, Vec<T>)],
    rng: &mut rand_pcg::Pcg64,
) -> Result<Contrast, StatsError> {
    let (used, forks_left_out) = usable(per_fork);
    let all: Vec<Groups<'_, T>> = per_fork
        .iter()
        .map(|(a, b)| (a.as_slice(), b.as_slice()))
        .collect();
    let shown = if used.is_empty() { &all } else { &used };
    let a: Vec<T> = shown.iter().flat_map(|f| f.0.iter().copied()).collect();
    let b: Vec<T> = shown.iter().flat_map(|f| f.1.iter().copied()).collect();
    let (difference_ns, ci_ns) = if used.is_empty() {
        (None, None)
    } else {
        let (b, c) = (input.resamples, input.confidence);
        let e = if runner_stats::resamples_whole_forks(used.len()) {
            runner_stats::cluster_median_diff(&used, b, c, rng)?
        } else {
            runner_stats::hierarchical_median_diff(&used, b, c, rng)?
        };
        (Some(e.median), Some([e.ci.lo, e.ci.hi]))
    };
    Ok(Contrast {
        n_a: a.len() as u32,
        n_b: b.len() as u32,
        median_a: runner_stats::median(&a).ok(),
        median_b: runner_stats::median(&b).ok(),
        difference_ns,
        ci_ns,
        forks_left_out,
    })
}

fn analyse_cell(
    input: &AnalysisInput,
    info: &CellInfo,
    forks: &[ForkData<'_>],
) -> Result<CellAnalysis, StatsError> {
    let fork_results = fork::forks(input, forks)?;
    let pooled = pooled::pooled(input, forks)?;
    let calibration = pooled::calibration(input, info, forks, &fork_results, &pooled)?;
    let count = |v: Verdict| fork_results.iter().filter(|f| f.verdict == v).count() as u32;
    let over_forks = pooled::over_forks(input, &fork_results)?;
    let ratios: Vec<RatioEstimate> = fork_results
        .iter()
        .map(|f| RatioEstimate::from_interval(f.ratio, f.ratio_ci, input.confidence))
        .collect();
    let ratio = runner_stats::ratio::over_forks(&ratios, input.confidence)?;
    let effect = effect::effect(&pooled, &fork_results, &ratio);
    let mut carry_over = carry_over::carry_over(input, info, forks)?;
    carry_over::mark(&mut carry_over, resolved_ns(&effect));
    Ok(CellAnalysis {
        effect,
        cell: info.cell,
        params: info.params.clone(),
        delay_ns: info.delay_ns,
        n: forks.iter().map(|f| f.measured.len() as u32).sum(),
        forks_total: forks.len() as u32,
        forks_seen: count(Verdict::Seen),
        forks_reversed: count(Verdict::Reversed),
        over_forks,
        cross_runs: cross_runs::cross_runs(info, &fork_results),
        correlation: fork::correlation(&fork_results),
        spread: fork::spread(&fork_results),
        order: order::order(input, info, forks, &fork_results)?,
        carry_over,
        variance: variance::variance(input, forks, &fork_results, &pooled)?,
        steady_state: steady::cell(
            &fork_results
                .iter()
                .map(|f| &f.steady_state)
                .collect::<Vec<_>>(),
        ),
        usage: usage::usage(input, forks)?,
        machines: None,
        stop: None,
        instructions: instructions::instructions(input, forks)?,
        calibration,
        pooled,
        forks: fork_results,
    })
}

/// The effect's D when a direction is resolved, else 0: what carry-over is
/// held against.
fn resolved_ns(e: &effect::Effect) -> f64 {
    if e.direction == effect::Direction::NoDifference {
        0.0
    } else {
        e.difference_ns
    }
}

/// One fork's rows: measured pairs in `pair` order, and every row (warm-up
/// included) for the run order ([`ForkData::all`]).
pub(crate) struct ForkData<'a> {
    pub fork: u32,
    pub measured: Vec<&'a PairRecord>,
    /// Every row in the order read; empty when that is `measured` (no
    /// warm-up rows, measured rows read in pair order), which an import
    /// of millions of pairs would otherwise hold twice. Counted rows are
    /// not in it: they ran after the fork's timed runs, in runs of their own.
    all: Vec<&'a PairRecord>,
    /// The counted pairs in `pair` order: the rows of phase `count`, or in
    /// a run that counts alone the measured rows (which carry counts).
    pub counted: Vec<&'a PairRecord>,
    /// What draws the fork's offsets within the clock's step (`dither`):
    /// drawn when asked for rather than held, a value per measured pair
    /// being as much memory as the pairs' references.
    dither: (u64, u32, f64),
}

impl<'a> ForkData<'a> {
    /// Every row of the fork (warm-up included), in the order read.
    pub(crate) fn all(&self) -> &[&'a PairRecord] {
        if self.all.is_empty() {
            &self.measured
        } else {
            &self.all
        }
    }
    /// One offset per measured pair within the clock's step (`dither`).
    fn dither(&self) -> Vec<f64> {
        let (master, cell, resolution) = self.dither;
        dither::offsets(master, cell, self.fork, resolution, self.measured.len())
    }
    /// Two offsets within the clock's step per measured pair, (baseline,
    /// treatment) in pair order, for the runs' own times (the speed ratio,
    /// carry-over): drawn from the fork's stream after D's offsets, which
    /// stay what they were.
    pub(crate) fn arm_dither(&self) -> Vec<[f64; 2]> {
        let (master, cell, resolution) = self.dither;
        let n = self.measured.len();
        let all = dither::offsets(master, cell, self.fork, resolution, 3 * n);
        all[n..].chunks_exact(2).map(|c| [c[0], c[1]]).collect()
    }
    /// Each measured pair's two run times, dithered (`arm_dither`), in pair
    /// order: (baselines, treatments). A run the clock saw as taking no
    /// time took less than one step; it counts as half a step (half a
    /// nanosecond when the step is unknown), so every time has a ratio.
    pub(crate) fn arm_times(&self) -> (Vec<f64>, Vec<f64>) {
        let floor = (self.dither.2 / 2.0).max(0.5);
        let positive = |x: f64| if x > 0.0 { x } else { floor };
        self.measured
            .iter()
            .zip(self.arm_dither())
            .map(|(p, [b, t])| {
                (
                    positive(p.baseline_ns as f64 + b),
                    positive(p.treatment_ns as f64 + t),
                )
            })
            .unzip()
    }
    /// D of each measured pair, dithered within the clock's step: the
    /// values every median of D is taken from.
    pub(crate) fn diffs(&self) -> Vec<f64> {
        self.measured
            .iter()
            .zip(self.dither())
            .map(|(p, o)| p.diff_ns() as f64 + o)
            .collect()
    }
    /// D - spin_ns, dithered like D: what D would be had every pair's wait
    /// been exactly its delay.
    pub(crate) fn unwaited(&self) -> Vec<f64> {
        self.measured
            .iter()
            .zip(self.dither())
            .map(|(p, o)| (p.diff_ns() - p.spin_ns as i64) as f64 + o)
            .collect()
    }
    pub(crate) fn baselines(&self) -> Vec<u64> {
        self.measured.iter().map(|p| p.baseline_ns).collect()
    }
    pub(crate) fn treatments(&self) -> Vec<u64> {
        self.measured.iter().map(|p| p.treatment_ns).collect()
    }
}

/// Cell -> its forks in ascending fork order, checked against the cell list.
fn group<'a, I>(
    input: &AnalysisInput,
    pairs: I,
) -> Result<BTreeMap<u32, Vec<ForkData<'a>>>, AnalysisError>
where
    I: IntoIterator<Item = &'a PairRecord>,
    I::IntoIter: Clone,
{
    let pairs = pairs.into_iter();
    // Each fork's rows counted first, so its lists are made at their size
    // (grown by doubling they would take up to twice the memory: these
    // lists are the analysis's largest after the rows themselves). Rows
    // come fork by fork, so the maps are looked up once per run of rows of
    // one (cell, fork), not once per row.
    let mut sizes: std::collections::HashMap<(u32, u32), (usize, usize)> = Default::default();
    let mut add = |(key, (all, measured)): ((u32, u32), (usize, usize))| {
        let s = sizes.entry(key).or_default();
        s.0 += all;
        s.1 += measured;
    };
    let mut run: Option<((u32, u32), (usize, usize))> = None;
    for p in pairs.clone() {
        let key = (p.cell, p.fork);
        if run.is_none_or(|(k, _)| k != key) {
            if let Some(ended) = run.replace((key, (0, 0))) {
                add(ended);
            }
        }
        if let Some((_, s)) = &mut run {
            // Counted rows are a fork's own list, never in its run order.
            s.0 += usize::from(p.phase != Phase::Count);
            s.1 += usize::from(p.phase == Phase::Measure);
        }
    }
    if let Some(ended) = run {
        add(ended);
    }
    let mut by_cell: BTreeMap<u32, BTreeMap<u32, ForkData<'a>>> = BTreeMap::new();
    let mut delays = BTreeMap::new();
    for info in &input.cells {
        if delays.insert(info.cell, info.delay_ns).is_some() {
            return Err(AnalysisError::DuplicateCell(info.cell));
        }
        by_cell.insert(info.cell, BTreeMap::new());
    }
    // The fork of the run of rows being read, and its cell's delay.
    let mut current: Option<((u32, u32), u64, &mut ForkData<'a>)> = None;
    for p in pairs {
        let key = (p.cell, p.fork);
        if current.as_ref().is_none_or(|(k, _, _)| *k != key) {
            let expected = *delays
                .get(&p.cell)
                .ok_or(AnalysisError::UnknownCell(p.cell))?;
            let fork = by_cell
                .get_mut(&p.cell)
                .expect("every listed cell has an entry")
                .entry(p.fork)
                .or_insert_with(|| {
                    let (all, measured) = sizes[&key];
                    ForkData {
                        fork: p.fork,
                        measured: Vec::with_capacity(measured),
                        // Without warm-up rows, every row is a measured one.
                        all: Vec::with_capacity(if all == measured { 0 } else { all }),
                        counted: Vec::new(),
                        dither: (input.master_seed, p.cell, input.clock_resolution_ns),
                    }
                });
            current = Some((key, expected, fork));
        }
        let Some((_, expected, fork)) = current.as_mut() else {
            unreachable!("set above")
        };
        if p.delay_ns != *expected {
            return Err(AnalysisError::DelayMismatch {
                cell: p.cell,
                fork: p.fork,
                pair: p.pair,
                found: p.delay_ns,
                expected: *expected,
            });
        }
        if p.phase == Phase::Count {
            fork.counted.push(p);
            continue;
        }
        if fork.all.capacity() > 0 {
            fork.all.push(p);
        }
        if p.phase == Phase::Measure {
            fork.measured.push(p);
        }
    }
    let mut out = BTreeMap::new();
    for (cell, forks) in by_cell {
        let mut forks: Vec<ForkData<'a>> = forks.into_values().collect();
        if forks.is_empty() {
            return Err(AnalysisError::EmptyCell(cell));
        }
        for f in &mut forks {
            if f.measured.is_empty() {
                return Err(AnalysisError::EmptyFork { cell, fork: f.fork });
            }
            if f.all.is_empty() && !f.measured.is_sorted_by_key(|p| p.pair) {
                // The order read is not pair order: keep it for `all`.
                f.all = f.measured.clone();
            }
            f.measured.sort_by_key(|p| p.pair);
            if f.counted.is_empty() {
                // Counted alone: the measured pairs are the counted ones.
                f.counted = f
                    .measured
                    .iter()
                    .copied()
                    .filter(|p| p.counts.is_some())
                    .collect();
            }
            f.counted.sort_by_key(|p| p.pair);
        }
        out.insert(cell, forks);
    }
    Ok(out)
}

#[cfg(test)]
mod migrated_tests;
#[cfg(test)]
mod tests;
