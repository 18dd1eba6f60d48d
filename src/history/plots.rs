//! The history's two SVG trends, drawn by `report::plots::trend`:
//! `effect.svg` (each version's change in run time, the speed ratio less
//! 1, less the injected delay, in % of its baseline median, with the
//! interval: the scale changes are marked on) and `medians.svg` (each arm's median, with the range of
//! its fork medians), one panel per cell, with the history's marks.

use super::History;
use runner_core::error::Result;
use runner_report::plots::trend::{self, Mark, Panel, Point, Scale, Trend};

/// Cell labels in order of first appearance.
pub(super) fn labels(h: &History) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, _, v, _) in h.runs() {
        for c in &v.cells {
            if !out.contains(&c.label) {
                out.push(c.label.clone());
            }
        }
    }
    out
}

/// The marks of one cell: a change where the rule marked it, a boundary
/// where the machine or the spec changed.
fn marks(h: &History, label: &str) -> Vec<Mark> {
    h.runs()
        .filter_map(|(n, _, _, step)| {
            let s = step?;
            if !s.boundaries.is_empty() {
                return Some(Mark::Boundary(n));
            }
            s.cells
                .iter()
                .any(|c| c.label == label && c.marked)
                .then_some(Mark::Change(n))
        })
        .collect()
}

fn range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    })
}

/// `(file name, SVG)` of both plots.
pub(super) fn render(h: &History) -> Result<Vec<(&'static str, String)>> {
    let versions = h.runs().count() as u32;
    let labels = labels(h);
    let (baseline, treatment) = h
        .runs()
        .last()
        .map(|(_, _, v, _)| {
            (
                v.experiment.design.baseline.clone(),
                v.experiment.design.treatment.clone(),
            )
        })
        .unwrap_or_default();
    let effect = Trend {
        file: "effect.svg",
        title: "Effect per version: treatment vs baseline, less any injected delay".into(),
        y_label: "change in run time − d, of the baseline median".into(),
        scale: Scale::Percent,
        series: vec!["effect with its interval".into()],
        versions,
        panels: labels
            .iter()
            .map(|label| Panel {
                title: label.clone(),
                series: vec![h
                    .runs()
                    .filter_map(|(n, _, v, _)| {
                        let c = v.cells.iter().find(|c| &c.label == label)?;
                        // Less the injected delay, which adds the same to
                        // every version: the scale the marks are made on.
                        let (b, d) = (c.baseline_ns, c.delay_ns as f64);
                        let [lo, hi] = c.effect.difference_ci_ns;
                        let pct = |x: f64| (x - d) / b * 100.0;
                        (b > 0.0).then(|| Point {
                            x: n,
                            y: pct(c.effect.difference_ns),
                            lo: pct(lo),
                            hi: pct(hi),
                        })
                    })
                    .collect()],
                marks: marks(h, label),
            })
            .collect(),
    };
    let arm = |label: &str, treatment: bool| -> Vec<Point> {
        h.runs()
            .filter_map(|(n, _, v, _)| {
                let c = v.cells.iter().find(|c| c.label == label)?;
                let (lo, hi) = range(c.forks.iter().map(|f| {
                    if treatment {
                        f.treatment_ns
                    } else {
                        f.baseline_ns
                    }
                }));
                let y = if treatment {
                    c.treatment_ns
                } else {
                    c.baseline_ns
                };
                Some(Point { x: n, y, lo, hi })
            })
            .collect()
    };
    let medians = Trend {
        file: "medians.svg",
        title: "Median run of each arm per version, with its fork range".into(),
        y_label: "median run".into(),
        scale: Scale::Time,
        series: vec![
            format!("baseline ({baseline})"),
            format!("treatment ({treatment})"),
        ],
        versions,
        panels: labels
            .iter()
            .map(|label| Panel {
                title: label.clone(),
                series: vec![arm(label, false), arm(label, true)],
                marks: marks(h, label),
            })
            .collect(),
    };
    Ok(vec![
        ("effect.svg", trend::render(&effect)?),
        ("medians.svg", trend::render(&medians)?),
    ])
}
