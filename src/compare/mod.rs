//! `runner compare DIR_A DIR_B`: two finished runs of one experiment (e.g.
//! yesterday's and today's, or before and after a change to the machine).
//!
//! What a paired run measures is the effect: treatment against baseline,
//! inside each fork. So compare sets the two runs' effects side by side,
//! per experiment cell, in the words of the report (faster / slower / no
//! difference resolved, ratio, % and difference), and gives the change of
//! the effect from A to B: the verdict judges B's speed ratio over A's
//! (each run's ratio is on its own baseline, so a machine busier in one
//! run does not move it the way it moves D in ms), with the MOVER
//! interval of the difference of their logs; beside it, median D in B −
//! median D in A, with an interval from a hierarchical bootstrap over
//! each run's forks (`runner_stats::hierarchical_median_shift` on each fork's
//! dithered D). When the baseline's median moved by more than 20 %
//! between the runs, the output says so first. Separate
//! runs share no process, so that interval is as narrow as two runs on this
//! machine can resolve; the Markdown says so. Beside it, how each arm's
//! median run moved (the machine's drift as much as the code's).
//!
//! Both folders are read and checked like `runner report` reads one. Runs
//! of different specs are refused (exit 2) naming the keys that differ;
//! what names or describes a run may differ (`name`, `title`,
//! `description`, `seed`, `report`), and so may its size (forks, pairs,
//! warm-up), which changes precision, not what is measured. Different
//! machines, and machine checks that differ, are said, not refused. The
//! output is Markdown, on stdout or in `--out FILE`.
//!
//! Seeds: the stream of cell c and arm a (0 baseline, 1 treatment, 2 the
//! effect) is `seed::derive(master_A, Compare, [master_B, c, a])`, printed
//! with the output, so the same two folders always give the same intervals.

mod markdown;

use rand::SeedableRng;
use runner_analysis::effect::Effect;
use runner_core::error::Result;
use runner_core::record::{PairRecord, Phase};
use runner_core::seed::{self, Domain};
use runner_folder::verify::{DESCRIPTIVE, NOT_MEASURED, SIZE};
use runner_folder::RunInfo;
use runner_report::read_folder;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why two runs cannot be compared: the user named them wrongly (two
/// specs, or `--out` inside one), or a cell's figures cannot be computed
/// from its rows. Each is the user's input to fix (exit 2); the statistic's
/// or the analysis's error stays the `source`.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CompareError {
    /// A cell's rows give no statistic (no measured runs in one of them).
    #[error("cell {cell}: cannot compare: {source}")]
    Statistic {
        cell: u32,
        #[source]
        source: runner_stats::StatsError,
    },
    /// A cell's rows do not fit its run's record.
    #[error("cell {cell}: cannot compare: {source}")]
    Rows {
        cell: u32,
        #[source]
        source: runner_analysis::AnalysisError,
    },
    /// runner writes nothing into a finished run's folder but its own files.
    #[error("--out {} is inside the report folder {}; runner writes nothing into a finished run's folder but its own files, so choose a path outside it", .out.display(), .dir.display())]
    OutInside { out: PathBuf, dir: PathBuf },
    /// The runs measure different things: their specs differ in `keys`
    /// (besides the descriptive and size ones).
    #[error("{} and {} are runs of different specs ({} differ); compare reads two runs of one experiment, which may differ only in {} and in their size ({})", .a.display(), .b.display(), listed(.keys), DESCRIPTIVE.join(", "), SIZE.join(", "))]
    DifferentSpecs {
        a: PathBuf,
        b: PathBuf,
        keys: Vec<String>,
    },
}

impl runner_core::error::Coded for CompareError {
    fn failure(&self) -> runner_core::error::Failure {
        runner_core::error::Failure::BadInput
    }
}

/// The first eight keys, and how many more.
fn listed(keys: &[String]) -> String {
    if keys.len() > 8 {
        format!("{} and {} more", keys[..8].join(", "), keys.len() - 8)
    } else {
        keys.join(", ")
    }
}

/// One run as compare reads it.
pub(crate) struct Run {
    pub dir: PathBuf,
    pub info: RunInfo,
    pub pairs: Vec<PairRecord>,
    pub analysis: runner_analysis::Analysis,
}

/// Which arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arm {
    Baseline,
    Treatment,
}

impl Arm {
    fn index(self) -> u64 {
        match self {
            Arm::Baseline => 0,
            Arm::Treatment => 1,
        }
    }
}

/// The stream index of the effect's bootstrap (after the two arms').
const EFFECT_STREAM: u64 = 2;

/// One cell and arm: how its median run moved from A to B.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub cell: u32,
    pub arm: Arm,
    pub median_a: f64,
    pub median_b: f64,
    pub change: runner_stats::MedianEstimate,
    /// Range of the fork medians in each run.
    pub forks_a: (f64, f64),
    pub forks_b: (f64, f64),
    pub n_forks: (usize, usize),
    /// Measured runs of the arm in the cell, in each run: with one, there
    /// is nothing to draw an interval from.
    pub n_runs: (usize, usize),
    pub seed: u64,
}

/// One cell: the effect in each run and how it changed.
#[derive(Debug, Clone)]
pub(crate) struct EffectRow {
    pub cell: u32,
    /// The treatment strategy of the cell (its variant).
    pub treatment: String,
    pub a: Effect,
    pub b: Effect,
    /// Median D in B − median D in A, hierarchical interval.
    pub change: runner_stats::MedianEstimate,
    /// B's speed ratio over A's, with the MOVER interval of the
    /// difference of their logs: what the verdict judges, since each
    /// run's ratio is on its own baseline and D in ms moves with the
    /// machine's load.
    pub ratio_change: runner_stats::apart::Bounded,
    /// Measured pairs of the cell in each run (see [`Row::n_runs`]).
    pub n_pairs: (usize, usize),
    pub seed: u64,
}

/// `b`'s speed ratio over `a`'s: the difference of their logs with a
/// MOVER interval (`runner_stats::apart::difference`), back as a factor.
pub(crate) fn ratio_quotient(a: &Effect, b: &Effect) -> runner_stats::apart::Bounded {
    quotient((a.ratio, a.ratio_ci), (b.ratio, b.ratio_ci))
}

/// `b`'s ratio over `a`'s, each with its interval (see [`ratio_quotient`]).
pub(crate) fn quotient(a: (f64, [f64; 2]), b: (f64, [f64; 2])) -> runner_stats::apart::Bounded {
    use runner_stats::apart::Bounded;
    let log = |(r, ci): (f64, [f64; 2])| Bounded {
        estimate: r.ln(),
        lo: ci[0].ln(),
        hi: ci[1].ln(),
    };
    let d = runner_stats::apart::difference(log(a), log(b));
    Bounded {
        estimate: d.estimate.exp(),
        lo: d.lo.exp(),
        hi: d.hi.exp(),
    }
}

/// One cell of two runs that counted instructions: each run's
/// instructions ratio and B's over A's.
#[derive(Debug, Clone)]
pub(crate) struct CountRow {
    pub cell: u32,
    pub a: runner_analysis::instructions::CountEffect,
    pub b: runner_analysis::instructions::CountEffect,
    pub change: runner_stats::apart::Bounded,
}

/// The cells both runs counted.
fn count_rows(a: &Run, b: &Run) -> Vec<CountRow> {
    a.analysis
        .cells
        .iter()
        .filter_map(|ca| {
            let ia = ca.instructions.as_ref()?;
            let cb = b.analysis.cells.iter().find(|c| c.cell == ca.cell)?;
            let ib = cb.instructions.as_ref()?;
            Some(CountRow {
                cell: ca.cell,
                change: quotient(
                    (ia.effect.ratio, ia.effect.ratio_ci),
                    (ib.effect.ratio, ib.effect.ratio_ci),
                ),
                a: ia.effect.clone(),
                b: ib.effect.clone(),
            })
        })
        .collect()
}

/// The seed of cell `cell`, arm `arm`'s bootstrap (see the module doc).
pub fn stream_seed(master_a: u64, master_b: u64, cell: u32, arm: u64) -> u64 {
    seed::derive(master_a, Domain::Compare, &[master_b, u64::from(cell), arm])
}

/// The keys in which two runs' specs differ, besides the descriptive and
/// size ones.
fn spec_differences(a: &RunInfo, b: &RunInfo) -> Vec<String> {
    runner_folder::verify::spec_differences(
        &a.spec().experiment,
        &b.spec().experiment,
        &NOT_MEASURED,
    )
}

/// Each fork's measured values of one arm in one cell, in fork order.
fn arm_values(pairs: &[PairRecord], cell: u32, arm: Arm) -> Vec<Vec<u64>> {
    let mut forks: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    for p in pairs
        .iter()
        .filter(|p| p.cell == cell && p.phase == Phase::Measure)
    {
        forks.entry(p.fork).or_default().push(match arm {
            Arm::Baseline => p.baseline_ns,
            Arm::Treatment => p.treatment_ns,
        });
    }
    forks.into_values().collect()
}

fn fork_range(forks: &[Vec<u64>]) -> Result<(f64, f64), runner_stats::StatsError> {
    let medians = forks
        .iter()
        .map(|f| runner_stats::median(f))
        .collect::<Result<Vec<f64>, _>>()?;
    Ok(medians
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &m| {
            (lo.min(m), hi.max(m))
        }))
}

fn fail(cell: u32) -> impl Fn(runner_stats::StatsError) -> CompareError {
    move |source| CompareError::Statistic { cell, source }
}

fn rows(a: &Run, b: &Run) -> Result<Vec<Row>, CompareError> {
    let exp = &a.info.spec().experiment;
    let (resamples, confidence) = (exp.analysis.resamples, exp.analysis.confidence);
    let (ma, mb) = (a.info.seeds().master, b.info.seeds().master);
    let mut out = Vec::new();
    for cell in a.info.cells().iter().filter(|c| c.role.is_experiment()) {
        for arm in [Arm::Baseline, Arm::Treatment] {
            let (va, vb) = (
                arm_values(&a.pairs, cell.cell, arm),
                arm_values(&b.pairs, cell.cell, arm),
            );
            let fail = fail(cell.cell);
            let ga: Vec<&[u64]> = va.iter().map(Vec::as_slice).collect();
            let gb: Vec<&[u64]> = vb.iter().map(Vec::as_slice).collect();
            let seed = stream_seed(ma, mb, cell.cell, arm.index());
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
            let change =
                runner_stats::hierarchical_median_shift(&ga, &gb, resamples, confidence, &mut rng)
                    .map_err(&fail)?;
            let all = |v: &[Vec<u64>]| v.iter().flatten().copied().collect::<Vec<u64>>();
            out.push(Row {
                cell: cell.cell,
                arm,
                median_a: runner_stats::median(&all(&va)).map_err(&fail)?,
                median_b: runner_stats::median(&all(&vb)).map_err(&fail)?,
                change,
                forks_a: fork_range(&va).map_err(&fail)?,
                forks_b: fork_range(&vb).map_err(&fail)?,
                n_forks: (va.len(), vb.len()),
                n_runs: (all(&va).len(), all(&vb).len()),
                seed,
            });
        }
    }
    Ok(out)
}

/// The effect of each experiment cell in A and in B, and its change.
fn effect_rows(a: &Run, b: &Run) -> Result<Vec<EffectRow>, CompareError> {
    let exp = &a.info.spec().experiment;
    let (resamples, confidence) = (exp.analysis.resamples, exp.analysis.confidence);
    let (ma, mb) = (a.info.seeds().master, b.info.seeds().master);
    let (input_a, input_b) = (
        runner_analysis::run::input(&a.info),
        runner_analysis::run::input(&b.info),
    );
    let mut out = Vec::new();
    for cell in a.info.cells().iter().filter(|c| c.role.is_experiment()) {
        let find = |r: &Run| {
            r.analysis
                .cells
                .iter()
                .find(|c| c.cell == cell.cell)
                .map(|c| c.effect())
        };
        let (Some(ea), Some(eb)) = (find(a), find(b)) else {
            continue;
        };
        let diffs = |input, r: &Run| {
            runner_analysis::fork_diffs(input, &r.pairs, cell.cell).map_err(|source| {
                CompareError::Rows {
                    cell: cell.cell,
                    source,
                }
            })
        };
        let (da, db) = (diffs(&input_a, a)?, diffs(&input_b, b)?);
        let ga: Vec<&[f64]> = da.iter().map(Vec::as_slice).collect();
        let gb: Vec<&[f64]> = db.iter().map(Vec::as_slice).collect();
        let seed = stream_seed(ma, mb, cell.cell, EFFECT_STREAM);
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        let change =
            runner_stats::hierarchical_median_shift(&ga, &gb, resamples, confidence, &mut rng)
                .map_err(fail(cell.cell))?;
        out.push(EffectRow {
            cell: cell.cell,
            treatment: cell.arms(&exp.design).1.to_string(),
            ratio_change: ratio_quotient(&ea, &eb),
            a: ea,
            b: eb,
            change,
            n_pairs: (da.iter().map(Vec::len).sum(), db.iter().map(Vec::len).sum()),
            seed,
        });
    }
    Ok(out)
}

fn read(dir: &Path) -> Result<Run> {
    let (info, pairs) = read_folder(dir)?;
    let analysis = runner_analysis::run::analyse(&info, &pairs)?;
    Ok(Run {
        dir: dir.to_path_buf(),
        info,
        pairs,
        analysis,
    })
}

/// `runner compare DIR_A DIR_B [--out FILE]`: the Markdown, and where it
/// went (`None`: the caller prints it).
pub fn compare(
    dir_a: &Path,
    dir_b: &Path,
    out: Option<&Path>,
) -> Result<(String, Option<PathBuf>)> {
    if let Some(o) = out {
        for d in [dir_a, dir_b] {
            if let (Ok(d), Ok(f)) = (
                runner_folder::output::target::absolute(d),
                runner_folder::output::target::absolute(o),
            ) {
                if f.starts_with(&d) {
                    return Err(CompareError::OutInside {
                        out: o.to_path_buf(),
                        dir: d,
                    }
                    .into());
                }
            }
        }
    }
    let a = read(dir_a)?;
    let b = read(dir_b)?;
    let keys = spec_differences(&a.info, &b.info);
    if !keys.is_empty() {
        return Err(CompareError::DifferentSpecs {
            a: dir_a.to_path_buf(),
            b: dir_b.to_path_buf(),
            keys,
        }
        .into());
    }
    let effects = effect_rows(&a, &b)?;
    let rows = rows(&a, &b)?;
    let counts = count_rows(&a, &b);
    let text = markdown::render(&a, &b, &effects, &rows, &counts);
    match out {
        None => Ok((text, None)),
        Some(o) => {
            runner_folder::output::guard::write(o, text.as_bytes())?;
            Ok((text, Some(o.to_path_buf())))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::CompareError;
    use runner_core::error::RunnerError;
    use std::path::PathBuf;

    /// Each kind's sentence (the one the user read before these were
    /// typed); every one is exit 2.
    #[test]
    fn each_kind_says_its_sentence() {
        let keys = |n: usize| (0..n).map(|i| format!("k{i}")).collect::<Vec<_>>();
        let specs = |keys| CompareError::DifferentSpecs {
            a: PathBuf::from("r/a"),
            b: PathBuf::from("r/b"),
            keys,
        };
        let cases: Vec<(CompareError, &str)> = vec![
            (
                CompareError::Statistic {
                    cell: 3,
                    source: runner_stats::StatsError::Empty,
                },
                "cell 3: cannot compare: no observations",
            ),
            (
                CompareError::OutInside {
                    out: PathBuf::from("r/a/c.md"),
                    dir: PathBuf::from("/w/r/a"),
                },
                "--out r/a/c.md is inside the report folder /w/r/a; runner writes nothing into a finished run's folder but its own files, so choose a path outside it",
            ),
            (
                specs(keys(2)),
                "r/a and r/b are runs of different specs (k0, k1 differ); compare reads two runs of one experiment, which may differ only in name, title, description, seed, report and in their size (design.forks, design.pairs, design.warmup_pairs, design.runs_per_fork, design.stop.min_forks)",
            ),
            (
                specs(keys(10)),
                "r/a and r/b are runs of different specs (k0, k1, k2, k3, k4, k5, k6, k7 and 2 more differ); compare reads two runs of one experiment, which may differ only in name, title, description, seed, report and in their size (design.forks, design.pairs, design.warmup_pairs, design.runs_per_fork, design.stop.min_forks)",
            ),
        ];
        for (e, text) in cases {
            assert_eq!(e.to_string(), text);
            let e = RunnerError::from(e);
            assert_eq!((e.to_string().as_str(), e.exit_code()), (text, 2));
        }
    }
}
