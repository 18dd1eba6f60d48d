use super::*;
use crate::analysis::{analyse, AnalysisInput, CellInfo};
use crate::record::{Arm, PairRecord, Phase};
use crate::spec::Ordering;
use rand::{Rng, SeedableRng};
use serde_json::json;

const DELAYS_NS: [u64; 8] = [0, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000];

/// The study's shape: 8 delays x `forks` forks of 60 pairs around 800 µs,
/// each fork with its own offset (the fork effect) and a little noise.
fn study(forks: u32) -> Analysis {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
    let mut pairs = Vec::new();
    for (cell, &d) in DELAYS_NS.iter().enumerate() {
        for fork in 0..forks {
            let offset = 800_000 + 7_000 * u64::from(fork);
            for pair in 0..60u32 {
                let b = offset + rng.gen_range(0..4_000);
                let t = offset + d + rng.gen_range(0..4_000);
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
        cells: DELAYS_NS
            .iter()
            .enumerate()
            .map(|(cell, &d)| CellInfo {
                cell: cell as u32,
                params: json!({ "delay_us": d / 1000 }).as_object().unwrap().clone(),
                delay_ns: d,
            })
            .collect(),
        target_half_width_ns: None,
    };
    analyse(&input, &pairs).expect("fixture analyses")
}

fn plots(a: &Analysis) -> std::collections::BTreeMap<&'static str, String> {
    render_all(a).expect("plots draw").into_iter().collect()
}

fn count(svg: &str, needle: &str) -> usize {
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
    assert!(det.contains("two separate runs"));
    for label in ["0", "5", "25", "500"] {
        assert!(det.contains(&format!("\n{label}\n</text>")), "tick {label}");
    }
    // One circle per cell on the forks line, plus the legend's.
    assert_eq!(count(det, "<circle"), DELAYS_NS.len() + 1);

    let forest = &p["forest.svg"];
    assert!(forest.contains("median D and 95.0 % CI"));
    assert!(forest.contains("d = 25.0 µs: 10/10 saw it"));
    // One circle per fork, plus three in the legend.
    assert_eq!(count(forest, "<circle"), 80 + 3);

    let medians = &p["medians.svg"];
    assert!(medians.contains("baseline median (µs)"));
    assert!(medians.contains("treatment median (µs)"));
    assert_eq!(count(medians, "<circle"), 80 + 1);
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
