//! The plots of real reports: `runner analyze` on generated pairs, for a
//! study (an A/A design with a delay grid, and an A/B one with delays) and
//! a plain A/B comparison, each with one, two and eight cells. A folder has
//! the plots of its kind, and no plot draws a label over another or off its
//! canvas.

use crate::common;
use common::svg::{text_boxes, text_problems};
use common::*;
use std::path::{Path, PathBuf};

const STUDY: [&str; 3] = ["detection.svg", "forest.svg", "medians.svg"];
const COMPARISON: [&str; 2] = ["effect.svg", "distributions.svg"];
const DELAYS_US: [u64; 8] = [0, 5, 10, 25, 50, 100, 250, 500];

/// A fixed stream of noise, so every run of the test sees the same pairs.
struct Noise(u64);

impl Noise {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % below
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Design {
    /// The same code on both arms, a delay grid: the harness's calibration.
    AaStudy,
    /// Two versions with a delay grid: the effect plus each delay.
    AbStudy,
    /// Two versions (or several, one cell each), no delay.
    Comparison,
}

/// Writes the pairs of `cells` cells (3 forks x 40 pairs around 800 µs,
/// each fork with its own offset) and runs `runner analyze` on them.
fn analyzed(t: &Path, design: Design, cells: usize) -> PathBuf {
    let mut noise = Noise(0x9E37_79B9_7F4A_7C15 ^ cells as u64);
    // A comparison's cells by name (one cell: a delay column of zeros);
    // a study's by delay, the A/B study's single cell at 50 µs.
    let by_label = design == Design::Comparison && cells > 1;
    let delays_us: Vec<u64> = match (design, cells) {
        (Design::Comparison, _) => vec![0; cells],
        (Design::AbStudy, 1) => vec![50],
        (_, 2) => vec![0, 50],
        _ => DELAYS_US[..cells].to_vec(),
    };
    let mut csv = String::from(if by_label {
        "cell,fork,pair,first,baseline_ns,treatment_ns\n"
    } else {
        "delay_us,fork,pair,first,baseline_ns,treatment_ns\n"
    });
    for (cell, &d_us) in delays_us.iter().enumerate() {
        let d = d_us * 1000;
        // Faster, slower and unchanged variants in turn.
        let scale = [0.7, 1.25, 1.0][cell % 3];
        for fork in 1..=3u64 {
            for pair in 0..40u64 {
                let b = 800_000 + 9_000 * fork + noise.next(6_000);
                let t = match design {
                    Design::AaStudy => 800_000 + 9_000 * fork + noise.next(6_000) + d,
                    Design::AbStudy => (b as f64 * 0.8) as u64 + noise.next(2_000) + d,
                    Design::Comparison => (b as f64 * scale) as u64 + noise.next(6_000),
                };
                let first = if (pair + fork) % 2 == 0 {
                    "baseline"
                } else {
                    "treatment"
                };
                let key = if by_label {
                    format!("variant {cell} with a longer name,")
                } else {
                    format!("{d_us},")
                };
                csv.push_str(&format!("{key}{fork},{pair},{first},{b},{t}\n"));
            }
        }
    }
    let name = format!(
        "{}-{cells}",
        match design {
            Design::AaStudy => "aa",
            Design::AbStudy => "ab-study",
            Design::Comparison => "ab",
        }
    );
    let file = t.join(format!("{name}.csv"));
    std::fs::write(&file, csv).unwrap();
    let (baseline, treatment) = match design {
        Design::AaStudy => ("app", "app"),
        _ => ("before", "after"),
    };
    let out = t.join(&name);
    let o = runner()
        .current_dir(t)
        .arg("analyze")
        .arg(&file)
        .args(["--out", &name, "--seed", "5", "--resamples", "100"])
        .args(["--baseline", baseline, "--treatment", treatment])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

/// Checks every plot of `dir`: the kind's files are there (and no other
/// kind's), each labels something, and no label covers another.
fn check(dir: &Path, expected: &[&str], absent: &[&str]) {
    let mut problems = Vec::new();
    for name in expected {
        let svg = std::fs::read_to_string(dir.join(name))
            .unwrap_or_else(|e| panic!("{}/{name}: {e}", dir.display()));
        assert!(
            text_boxes(&svg).len() > 5,
            "{}/{name} has no labels",
            dir.display()
        );
        for p in text_problems(&svg) {
            problems.push(format!("{}/{name}: {p}", dir.display()));
        }
    }
    for name in absent {
        assert!(
            !dir.join(name).exists(),
            "{}/{name} was written",
            dir.display()
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_study_has_its_three_plots_and_no_text_over_text() {
    let tmp = tempfile::tempdir().unwrap();
    for cells in [1, 2, 8] {
        check(
            &analyzed(tmp.path(), Design::AaStudy, cells),
            &STUDY,
            &COMPARISON,
        );
    }
}

#[test]
fn an_ab_study_has_the_study_plots_and_no_text_over_text() {
    let tmp = tempfile::tempdir().unwrap();
    for cells in [1, 2, 8] {
        check(
            &analyzed(tmp.path(), Design::AbStudy, cells),
            &STUDY,
            &COMPARISON,
        );
    }
}

#[test]
fn a_comparison_has_the_effect_and_distributions_and_no_text_over_text() {
    let tmp = tempfile::tempdir().unwrap();
    for cells in [1, 2, 8] {
        check(
            &analyzed(tmp.path(), Design::Comparison, cells),
            &COMPARISON,
            &STUDY,
        );
    }
}

#[test]
fn report_redraws_a_comparisons_plots_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = analyzed(tmp.path(), Design::Comparison, 2);
    let before: Vec<Vec<u8>> = COMPARISON
        .iter()
        .map(|f| std::fs::read(dir.join(f)).unwrap())
        .collect();
    for f in COMPARISON {
        std::fs::remove_file(dir.join(f)).unwrap();
    }
    runner().arg("report").arg(&dir).assert().success();
    for (f, bytes) in COMPARISON.iter().zip(&before) {
        assert_eq!(&std::fs::read(dir.join(f)).unwrap(), bytes, "{f} differs");
    }
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    for f in COMPARISON {
        assert!(report.contains(&format!("]({f})")), "the report links {f}");
    }
}

/// The checker itself: anchors, baselines and rotation place the boxes
/// where a viewer draws the text, and a label off the canvas is caught.
#[test]
fn text_boxes_follow_anchor_baseline_and_rotation() {
    let svg = r#"<svg width="200" height="100" viewBox="0 0 200 100" xmlns="http://www.w3.org/2000/svg">
<text x="100" y="20" dy="0.5ex" text-anchor="middle" font-size="10">
abcd
</text>
<text x="10" y="50" dy="0.76em" text-anchor="end" font-size="10">
ab
</text>
<text x="100" y="60" text-anchor="middle" font-size="10" transform="rotate(270, 100, 60)">
abcdefghij
</text>
<text x="150" y="80" dominant-baseline="middle" font-size="10">
x &amp; y
</text>
</svg>"#;
    let b = text_boxes(svg);
    assert_eq!(b.len(), 4);
    let close = |a: f64, e: f64| assert!((a - e).abs() < 1e-6, "{a} vs {e}");
    // 4 characters of 0.6 em at 10 px, centred on 100.
    close(b[0].x0, 88.0);
    close(b[0].x1, 112.0);
    // Baseline 0.5 ex (a quarter em) under y, ascent 0.8 em above it.
    close(b[0].y0, 20.0 + 2.5 - 8.0);
    // End-anchored, hanging 0.76 em under y.
    close(b[1].x1, 10.0);
    close(b[1].y0, 50.0 + 7.6 - 8.0);
    // 60 px of text turned upright about its anchor.
    close(b[2].y1 - b[2].y0, 60.0);
    close(b[2].y0, 30.0);
    assert!(b[2].x1 - b[2].x0 < 11.0);
    assert_eq!(b[3].text, "x & y");
    assert!(!b[0].overlaps(&b[2]));
    // The second label starts left of the canvas.
    let problems = text_problems(svg);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("\"ab\" runs off"), "{problems:?}");
}
