//! The Layout section's numbers: how far apart the forks'
//! baseline medians are under each memory layout, whether randomizing the
//! layout widened that spread (random over fixed, with a bootstrap
//! interval), and how much of the between-fork variance under `random`
//! each recorded layout factor explains.
//!
//! Spread is the standard deviation of ln(baseline median) between the
//! forks of a cell, pooled over the cells of one layout (each cell centred
//! on its own mean, so cells with different delays or workloads do not
//! count as spread): about the forks' coefficient of variation. It includes
//! each median's own sampling noise, which with hundreds of pairs per fork
//! is small beside the differences between processes this section is about.
//!
//! Added by [`add`] only when some fork recorded a layout, so the analysis
//! of other runs is unchanged byte for byte.

use super::Analysis;
use runner_os::memory_layout::{ForkLayout, Layout};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `analysis.json` `layout` (top level).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayoutAnalysis {
    /// One per layout the run used (`fixed` before `random`).
    pub groups: Vec<LayoutGroup>,
    /// Every cell whose forks recorded a layout, in cell order.
    pub cells: Vec<LayoutCell>,
    /// Spread under `random` over spread under `fixed`; null unless both ran.
    pub ratio: Option<SpreadRatio>,
    /// Under `random`: the share of the between-fork variance of
    /// ln(baseline median) each recorded factor explains.
    pub factors: Vec<Factor>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayoutGroup {
    pub layout: Layout,
    pub cells: u32,
    pub forks: u32,
    /// Pooled between-fork SD of ln(baseline median); null without a cell
    /// of two forks.
    pub spread: Option<f64>,
    /// The widest cell's max / min baseline fork median.
    pub max_over_min: Option<f64>,
    /// Forks that ran with ASLR on, and off.
    pub aslr_on: u32,
    pub aslr_off: u32,
    /// Why ASLR was not what the layout asked, each reason once.
    pub aslr_notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayoutCell {
    pub cell: u32,
    pub layout: Layout,
    pub forks: u32,
    pub baseline_min_ns: f64,
    pub baseline_max_ns: f64,
    pub max_over_min: Option<f64>,
    /// SD of ln(baseline median) over the cell's forks.
    pub spread: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpreadRatio {
    /// spread(random) / spread(fixed).
    pub estimate: Option<f64>,
    /// Percentile bootstrap over forks (each cell's forks resampled with
    /// replacement, both layouts at once); stream in `analysis::streams`.
    pub ci: Option<[f64; 2]>,
    /// Why there is no estimate or interval.
    pub note: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Factor {
    /// A key of `forks[].layout`.
    pub factor: String,
    /// Forks in cells of two or more `random` forks.
    pub n: u32,
    /// Squared correlation of the factor with ln(baseline median), both
    /// centred per cell: the share of the between-fork variance a straight
    /// line in the factor explains. Null when the factor or the medians do
    /// not vary.
    pub r2: Option<f64>,
    /// What R² averages when the factor explains nothing: 1 / (n - cells).
    pub chance_r2: Option<f64>,
    /// The fitted line's change in the baseline median per KiB of the
    /// factor, in percent.
    pub slope_pct_per_kib: Option<f64>,
    /// Share of within-cell permutations of the medians whose R² is at
    /// least this one's (with the observed one counted): a p-value that
    /// assumes nothing about the medians' distribution.
    pub p_value: Option<f64>,
}

/// The factors regressed, in report order: the three drawn and the two the
/// worker observed.
pub(crate) const FACTORS: [&str; 5] = [
    "env_pad_bytes",
    "stack_offset_bytes",
    "heap_offset_bytes",
    "stack_page_offset",
    "heap_page_offset",
];

fn factor_value(l: &ForkLayout, name: &str) -> f64 {
    f64::from(match name {
        "env_pad_bytes" => l.plan.env_pad_bytes,
        "stack_offset_bytes" => l.plan.stack_offset_bytes,
        "heap_offset_bytes" => l.plan.heap_offset_bytes,
        "stack_page_offset" => l.stack_page_offset,
        _ => l.heap_page_offset,
    })
}

/// One cell's forks: ln(baseline median) and their layout records.
struct CellForks<'a> {
    cell: u32,
    layout: Layout,
    logs: Vec<f64>,
    medians: Vec<f64>,
    records: Vec<&'a ForkLayout>,
}

/// Sum of squared deviations from the mean, and the degrees of freedom.
fn ss(xs: impl Iterator<Item = f64> + Clone) -> (f64, u32) {
    let n = xs.clone().count();
    if n < 2 {
        return (0.0, 0);
    }
    let mean = xs.clone().sum::<f64>() / n as f64;
    (xs.map(|x| (x - mean).powi(2)).sum(), n as u32 - 1)
}

/// Pooled SD over cells given as index lists into each cell's logs.
fn pooled_sd<'a>(cells: impl Iterator<Item = (&'a [f64], &'a [usize])>) -> Option<f64> {
    let (mut total, mut df) = (0.0, 0u32);
    for (logs, picks) in cells {
        let (s, d) = ss(picks.iter().map(|&i| logs[i]));
        total += s;
        df += d;
    }
    (df > 0).then(|| (total / f64::from(df)).sqrt())
}

/// Adds `layout` to `analysis` when some fork in `records` (by cell, fork)
/// recorded one.
pub fn add(analysis: &mut Analysis, master: u64, records: &BTreeMap<(u32, u32), ForkLayout>) {
    if records.is_empty() {
        return;
    }
    let mut cells: Vec<CellForks<'_>> = Vec::new();
    for c in &analysis.cells {
        let mut cf = CellForks {
            cell: c.cell,
            layout: Layout::System,
            logs: Vec::new(),
            medians: Vec::new(),
            records: Vec::new(),
        };
        for f in &c.forks {
            let Some(r) = records.get(&(c.cell, f.fork)) else {
                continue;
            };
            if f.baseline_median_ns <= 0.0 || !f.baseline_median_ns.is_finite() {
                continue;
            }
            cf.layout = r.plan.layout;
            cf.logs.push(f.baseline_median_ns.ln());
            cf.medians.push(f.baseline_median_ns);
            cf.records.push(r);
        }
        if !cf.records.is_empty() {
            cells.push(cf);
        }
    }
    if cells.is_empty() {
        return;
    }
    let all = |n: usize| -> Vec<usize> { (0..n).collect() };
    let cell_rows: Vec<LayoutCell> = cells
        .iter()
        .map(|c| {
            let min = c.medians.iter().copied().fold(f64::INFINITY, f64::min);
            let max = c.medians.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let idx = all(c.logs.len());
            LayoutCell {
                cell: c.cell,
                layout: c.layout,
                forks: c.logs.len() as u32,
                baseline_min_ns: min,
                baseline_max_ns: max,
                max_over_min: (c.logs.len() > 1).then_some(max / min),
                spread: pooled_sd(std::iter::once((c.logs.as_slice(), idx.as_slice()))),
            }
        })
        .collect();
    let mut groups = Vec::new();
    for layout in [Layout::Fixed, Layout::Random] {
        let of: Vec<&CellForks<'_>> = cells.iter().filter(|c| c.layout == layout).collect();
        if of.is_empty() {
            continue;
        }
        let idx: Vec<Vec<usize>> = of.iter().map(|c| all(c.logs.len())).collect();
        let mut notes: Vec<String> = Vec::new();
        for n in of
            .iter()
            .flat_map(|c| &c.records)
            .filter_map(|r| r.aslr_note.clone())
        {
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
        let records = || of.iter().flat_map(|c| &c.records);
        groups.push(LayoutGroup {
            layout,
            cells: of.len() as u32,
            forks: records().count() as u32,
            spread: pooled_sd(
                of.iter()
                    .zip(&idx)
                    .map(|(c, i)| (c.logs.as_slice(), i.as_slice())),
            ),
            max_over_min: cell_rows
                .iter()
                .filter(|r| r.layout == layout)
                .filter_map(|r| r.max_over_min)
                .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x)))),
            aslr_on: records().filter(|r| r.aslr).count() as u32,
            aslr_off: records().filter(|r| !r.aslr).count() as u32,
            aslr_notes: notes,
        });
    }
    let ratio = spread_ratio(&cells, &groups, master, analysis);
    let random: Vec<&CellForks<'_>> = cells
        .iter()
        .filter(|c| c.layout == Layout::Random && c.logs.len() > 1)
        .collect();
    let factors = if random.is_empty() {
        Vec::new()
    } else {
        FACTORS
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let mut rng = super::streams::layout_factor(master, i as u64);
                factor(&random, f, analysis.resamples, &mut rng)
            })
            .collect()
    };
    analysis.layout = Some(LayoutAnalysis {
        groups,
        cells: cell_rows,
        ratio,
        factors,
    });
}

fn spread_ratio(
    cells: &[CellForks<'_>],
    groups: &[LayoutGroup],
    master: u64,
    analysis: &Analysis,
) -> Option<SpreadRatio> {
    let spread = |l: Layout| groups.iter().find(|g| g.layout == l).map(|g| g.spread);
    let (Some(fixed), Some(random)) = (spread(Layout::Fixed), spread(Layout::Random)) else {
        return None;
    };
    let none = |note: &str| {
        Some(SpreadRatio {
            estimate: None,
            ci: None,
            note: Some(note.into()),
        })
    };
    let (Some(fixed), Some(random)) = (fixed, random) else {
        return none("a spread needs a cell with at least two forks under each layout");
    };
    if fixed <= 0.0 {
        return none("the fixed forks' baseline medians are all equal, so no ratio can be formed");
    }
    let estimate = random / fixed;
    let of = |l: Layout| -> Vec<&CellForks<'_>> {
        cells
            .iter()
            .filter(|c| c.layout == l && c.logs.len() > 1)
            .collect()
    };
    let (f_cells, r_cells) = (of(Layout::Fixed), of(Layout::Random));
    let mut rng = super::streams::layout(master);
    let mut draw = |c: &CellForks<'_>| -> Vec<usize> {
        (0..c.logs.len())
            .map(|_| runner_core::seed::below(&mut rng, c.logs.len() as u64) as usize)
            .collect()
    };
    let mut ratios = Vec::with_capacity(analysis.resamples as usize);
    let mut degenerate = 0u32;
    for _ in 0..analysis.resamples {
        let fp: Vec<Vec<usize>> = f_cells.iter().map(|c| draw(c)).collect();
        let rp: Vec<Vec<usize>> = r_cells.iter().map(|c| draw(c)).collect();
        let sd = |cs: &[&CellForks<'_>], picks: &[Vec<usize>]| {
            pooled_sd(
                cs.iter()
                    .zip(picks)
                    .map(|(c, p)| (c.logs.as_slice(), p.as_slice())),
            )
            .unwrap_or(0.0)
        };
        let (f, r) = (sd(&f_cells, &fp), sd(&r_cells, &rp));
        if f > 0.0 {
            ratios.push(r / f);
        } else {
            degenerate += 1;
        }
    }
    let alpha = (1.0 - analysis.confidence) / 2.0;
    // A resample whose fixed forks are all one fork has no spread to divide
    // by; more than the interval's tail of them and the interval is not
    // worth printing.
    if f64::from(degenerate) > alpha * f64::from(analysis.resamples) || ratios.is_empty() {
        return Some(SpreadRatio {
            estimate: Some(estimate),
            ci: None,
            note: Some(format!(
                "{degenerate} of {} resamples drew one fixed fork over and over (too few forks per cell for an interval)",
                analysis.resamples
            )),
        });
    }
    ratios.sort_by(f64::total_cmp);
    let q = |p: f64| runner_stats::quantile(&ratios, p).ok();
    let ci = match (q(alpha), q(1.0 - alpha)) {
        (Some(lo), Some(hi)) => Some([lo, hi]),
        _ => None,
    };
    Some(SpreadRatio {
        estimate: Some(estimate),
        ci,
        note: None,
    })
}

/// Sums of squares and products of `xs` and `ys`, each centred per cell.
fn moments(cells: &[(Vec<f64>, Vec<f64>)]) -> (f64, f64, f64) {
    let (mut sxx, mut syy, mut sxy) = (0.0, 0.0, 0.0);
    for (xs, ys) in cells {
        let k = xs.len() as f64;
        let mx = xs.iter().sum::<f64>() / k;
        let my = ys.iter().sum::<f64>() / k;
        for (x, y) in xs.iter().zip(ys) {
            sxx += (x - mx).powi(2);
            syy += (y - my).powi(2);
            sxy += (x - mx) * (y - my);
        }
    }
    (sxx, syy, sxy)
}

fn r2_of(cells: &[(Vec<f64>, Vec<f64>)]) -> Option<f64> {
    let (sxx, syy, sxy) = moments(cells);
    (sxx > 0.0 && syy > 0.0).then(|| (sxy * sxy / (sxx * syy)).min(1.0))
}

fn factor(
    cells: &[&CellForks<'_>],
    name: &str,
    permutations: u32,
    rng: &mut impl rand::RngCore,
) -> Factor {
    let mut data: Vec<(Vec<f64>, Vec<f64>)> = cells
        .iter()
        .map(|c| {
            let xs = c.records.iter().map(|r| factor_value(r, name)).collect();
            (xs, c.logs.clone())
        })
        .collect();
    let n: u32 = data.iter().map(|(x, _)| x.len() as u32).sum();
    let k = cells.len() as u32;
    let (sxx, _, sxy) = moments(&data);
    let r2 = r2_of(&data);
    // Medians shuffled among the forks of their cell: what R² looks like
    // when the factor has nothing to do with them.
    let p_value = r2.map(|observed| {
        let mut at_least = 1u32;
        for _ in 0..permutations {
            for (_, ys) in data.iter_mut() {
                runner_core::seed::shuffle(rng, ys);
            }
            if r2_of(&data).is_some_and(|r| r >= observed - 1e-12) {
                at_least += 1;
            }
        }
        f64::from(at_least) / f64::from(permutations + 1)
    });
    Factor {
        factor: name.to_string(),
        n,
        r2,
        chance_r2: (n > k).then(|| 1.0 / f64::from(n - k)),
        slope_pct_per_kib: (sxx > 0.0).then(|| ((sxy / sxx * 1024.0).exp() - 1.0) * 100.0),
        p_value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use runner_os::memory_layout::{draw, LayoutPlan};

    fn record(layout: Layout, seed: u64) -> ForkLayout {
        ForkLayout {
            plan: draw(layout, seed),
            aslr: layout == Layout::Random,
            randomize_va_space: Some(2),
            aslr_note: None,
            env_bytes: 1000,
            stack_page_offset: 0,
            heap_page_offset: 0,
        }
    }

    fn medians(layout: Layout, f: impl Fn(&LayoutPlan) -> f64) -> (Vec<f64>, Vec<ForkLayout>) {
        let recs: Vec<ForkLayout> = (0..12).map(|s| record(layout, s)).collect();
        (recs.iter().map(|r| f(&r.plan)).collect(), recs)
    }

    fn cells_of(groups: &[(Vec<f64>, Vec<ForkLayout>)]) -> Vec<CellForks<'_>> {
        groups
            .iter()
            .enumerate()
            .map(|(i, (m, r))| CellForks {
                cell: i as u32,
                layout: r[0].plan.layout,
                logs: m.iter().map(|x| x.ln()).collect(),
                medians: m.clone(),
                records: r.iter().collect(),
            })
            .collect()
    }

    /// Medians that follow the padding exactly: it explains all of the
    /// variance, the others about what chance gives.
    #[test]
    fn a_factor_that_drives_the_medians_explains_them() {
        let g = [medians(Layout::Random, |p| {
            1000.0 * (1.0 + f64::from(p.env_pad_bytes) / 4096.0)
        })];
        let cells = cells_of(&g);
        let refs: Vec<&CellForks<'_>> = cells.iter().collect();
        let mut rng = crate::streams::layout_factor(1, 0);
        let pad = factor(&refs, "env_pad_bytes", 200, &mut rng);
        assert!(pad.r2.unwrap() > 0.98, "{pad:?}");
        assert_eq!(pad.n, 12);
        assert_eq!(pad.chance_r2, Some(1.0 / 11.0));
        assert!(pad.slope_pct_per_kib.unwrap() > 0.0);
        assert!(pad.p_value.unwrap() < 0.01, "{pad:?}");
        let stack = factor(&refs, "stack_offset_bytes", 200, &mut rng);
        assert!(stack.r2.unwrap() < 0.6, "{stack:?}");
        assert!(stack.p_value.unwrap() > 0.01, "{stack:?}");
        let page = factor(&refs, "stack_page_offset", 200, &mut rng);
        assert_eq!((page.r2, page.p_value), (None, None));
    }

    #[test]
    fn pooled_spread_centres_each_cell() {
        let logs_a = [1.0, 3.0];
        let logs_b = [11.0, 13.0];
        let i = [0usize, 1];
        let sd = pooled_sd([(&logs_a[..], &i[..]), (&logs_b[..], &i[..])].into_iter());
        assert_eq!(sd, Some(2f64.sqrt()));
    }
}
