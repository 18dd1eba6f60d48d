use super::*;
use rand::{Rng, SeedableRng};
use runner_analysis::{analyse, AnalysisInput, CellInfo};
use runner_core::record::{Arm, PairRecord, Phase};
use runner_spec::Ordering;
use serde_json::json;

const DELAYS_NS: [u64; 8] = [0, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000];

/// One cell of a fixture: its params, its delay, the factor of the
/// treatment's run time over the baseline's.
pub(super) struct FixtureCell {
    pub params: serde_json::Value,
    pub delay_ns: u64,
    pub scale: f64,
}

/// `cells` x `forks` forks of 60 pairs around 800 µs, each fork with its
/// own offset (the fork effect) and a little noise, analysed.
pub(super) fn measured(cells: &[FixtureCell], forks: u32) -> (Analysis, Vec<PairRecord>) {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
    let mut pairs = Vec::new();
    for (cell, c) in cells.iter().enumerate() {
        let d = c.delay_ns;
        for fork in 0..forks {
            let offset = 800_000 + 7_000 * u64::from(fork);
            for pair in 0..60u32 {
                let b = offset + rng.gen_range(0..4_000);
                let t = (offset as f64 * c.scale) as u64 + d + rng.gen_range(0..4_000);
                let slot = 10_000_000 * u64::from(pair);
                pairs.push(PairRecord {
                    cell: cell as u32,
                    fork,
                    phase: Phase::Measure,
                    pair,
                    first: if pair % 2 == 0 {
                        Arm::Baseline
                    } else {
                        Arm::Treatment
                    },
                    baseline_ns: b,
                    treatment_ns: t,
                    delay_ns: d,
                    spin_ns: d,
                    baseline_at_ns: slot,
                    treatment_at_ns: slot + 2_000_000,
                    usage: Default::default(),
                    counts: Default::default(),
                });
            }
        }
    }
    let input = AnalysisInput {
        master_seed: 11,
        resamples: 100,
        confidence: 0.95,
        ordering: Ordering::PairedRandom,
        pad_baseline: true,
        cells: cells
            .iter()
            .enumerate()
            .map(|(cell, c)| CellInfo {
                cell: cell as u32,
                params: c.params.as_object().unwrap().clone(),
                delay_ns: c.delay_ns,
            })
            .collect(),
        target_half_width_ns: None,
        clock_resolution_ns: 0.0,
    };
    let a = analyse(&input, &pairs).expect("fixture analyses");
    (a, pairs)
}

/// The study's shape: 8 delays, both arms the same.
fn study(forks: u32) -> Analysis {
    let cells: Vec<FixtureCell> = DELAYS_NS
        .iter()
        .map(|&d| FixtureCell {
            params: json!({ "delay_us": d / 1000 }),
            delay_ns: d,
            scale: 1.0,
        })
        .collect();
    measured(&cells, forks).0
}

/// The study's panels: `d = ...` titles, both arms the same.
pub(super) fn study_input<'a>(a: &'a Analysis, pairs: &'a [PairRecord]) -> Input<'a> {
    Input {
        analysis: a,
        kind: Kind::Study,
        aa: true,
        baseline: "app".into(),
        panels: a
            .cells
            .iter()
            .filter(|c| !c.forks.is_empty())
            .map(|c| Panel {
                cell: c,
                title: format!("d = {}", crate::numbers::delay(c.delay_ns as f64)),
                compares: false,
                treatment: "app".into(),
            })
            .collect(),
        groups: a
            .headline
            .groups
            .iter()
            .map(|g| crate::numbers::params(&g.params))
            .collect(),
        pairs,
        clients: Vec::new(),
    }
}

fn plots(a: &Analysis) -> std::collections::BTreeMap<&'static str, String> {
    render_all(&study_input(a, &[]))
        .expect("plots draw")
        .into_iter()
        .collect()
}

pub(super) fn count(svg: &str, needle: &str) -> usize {
    svg.matches(needle).count()
}

#[test]
fn every_plot_is_an_svg_with_its_labels_and_one_mark_per_fork() {
    let a = study(10);
    let p = plots(&a);
    for (name, svg) in &p {
        assert!(svg.starts_with("<svg"), "{name}");
        assert!(svg.trim_end().ends_with("</svg>"), "{name}");
        assert!(!svg.contains("NaN"), "{name}");
    }
    let det = &p["detection.svg"];
    assert!(det.contains("true delay d (µs)"));
    assert!(det.contains("share (0 to 1)"));
    for label in ["0", "5", "25", "500"] {
        assert!(det.contains(&format!("\n{label}\n</text>")), "tick {label}");
    }
    // The legend gives n for each share and says why d = 0 has no cross-run point.
    assert!(det.contains("forks whose CI was above 0 (n = 10 per delay)"));
    assert!(det.contains(
        "two separate runs pointing the right way (n = 90; none at d = 0: no way is right)"
    ));
    assert!(det.contains("d = 0: forks with a false difference, seen or reversed (n = 10)"));
    assert!(det.contains("5 %: false positives that 95 % confidence allows"));
    // A filled circle per delay > 0, a hollow one at d = 0, and one of each in the legend.
    assert_eq!(count(det, "<circle"), (DELAYS_NS.len() - 1) + 1 + 2);

    let forest = &p["forest.svg"];
    assert!(forest.contains("median D and 95 % CI (µs)"));
    assert!(forest.contains("d = 25 µs: 10/10 saw it"));
    // One circle per fork, plus three in the legend.
    assert_eq!(count(forest, "<circle"), 80 + 3);
    // Zero is off the range of the large delays' panels, and said so.
    assert!(count(forest, "← zero is off the range") >= 3);
    // One unit for every panel: the d = 0 panel is in µs too.
    assert_eq!(count(forest, "median D and 95 % CI (µs)"), 8);

    let medians = &p["medians.svg"];
    assert!(medians
        .contains("r: Pearson correlation of the forks&apos; baseline and treatment medians"));
    assert_eq!(count(medians, "baseline median (ms)"), 8);
    assert_eq!(count(medians, "treatment median (ms)"), 8);
    assert_eq!(count(medians, "<circle"), 80 + 1);
}

/// The pixel steps of every dashed segment of y = x + d (the green
/// polylines that are not horizontal, i.e. not the legend sample).
fn diagonal_steps(svg: &str) -> Vec<(i32, i32)> {
    svg.lines()
        .filter(|l| {
            l.contains("<polyline")
                && l.contains(&format!(
                    "stroke=\"#{:02X}{:02X}{:02X}\"",
                    GREEN.0, GREEN.1, GREEN.2
                ))
        })
        .filter_map(|l| {
            let points = l.split("points=\"").nth(1)?.split('"').next()?;
            let xy: Vec<(i32, i32)> = points
                .split_whitespace()
                .filter_map(|p| {
                    let (x, y) = p.split_once(',')?;
                    Some((x.parse().ok()?, y.parse().ok()?))
                })
                .collect();
            let (a, b) = (xy.first()?, xy.last()?);
            (a.1 != b.1).then_some((b.0 - a.0, b.1 - a.1))
        })
        .collect()
}

#[test]
fn the_medians_diagonal_runs_at_45_degrees() {
    let p = plots(&study(10));
    let steps = diagonal_steps(&p["medians.svg"]);
    assert!(steps.len() > 50, "{steps:?}");
    let (dx, dy) = steps.iter().fold((0, 0), |(x, y), s| (x + s.0, y + s.1));
    // Equal pixels per ns on both axes: every step goes as far right as up
    // (pixel rounding aside).
    assert!(dx > 0 && (dx + dy).abs() * 50 <= dx, "dx {dx}, dy {dy}");
}

#[test]
fn d0_is_a_false_positive_rate_counting_reversed_forks_and_is_not_joined_to_the_delays() {
    let mut a = study(10);
    a.cells[0].forks_seen = 1;
    a.cells[0].forks_reversed = 2;
    let x_of = |d: u64| DELAYS_NS.iter().position(|x| *x == d).unwrap() as f64;
    let series = detection::series(&a, &x_of, true, &[]);
    let solid = &series[0];
    assert!(
        solid.points.iter().all(|(x, _)| *x > 0.0),
        "{:?}",
        solid.points
    );
    let zero = &series[1];
    assert_eq!(zero.points, [(0.0, 0.3)]);
    assert!(matches!(zero.entry.line, Line::None));
    // An A/B experiment has no false positives: d = 0 is an ordinary point.
    let ab = detection::series(&a, &x_of, false, &[]);
    assert_eq!(ab[0].points[0], (0.0, 0.1));
}

#[test]
fn the_same_analysis_draws_the_same_bytes() {
    let a = study(3);
    assert_eq!(plots(&a), plots(&a.clone()));
}

#[test]
fn one_fork_leaves_out_the_cross_run_series() {
    let a = study(1);
    let p = plots(&a);
    assert!(!p["detection.svg"].contains("two separate runs"));
    assert_eq!(count(&p["forest.svg"], "<circle"), 8 + 3);
    assert_eq!(count(&p["medians.svg"], "<circle"), 8 + 1);
}

#[test]
fn an_analysis_without_cells_still_draws() {
    let mut a = study(1);
    a.cells.clear();
    a.headline.groups.clear();
    let p = plots(&a);
    assert!(p.values().all(|s| s.starts_with("<svg")));
}
