//! `analyse` against an independent numpy computation of the same fixture.
//!
//! `tests/fixtures/small_pairs.csv` (2 cells x 3 forks, 6 or 7 measured
//! pairs, a few warm-up rows) is analysed here; `reference.py` computes the
//! same statistics with numpy from the CSV: per-fork and pooled intervals
//! as the exact bootstrap distribution in rational arithmetic, the
//! resampled ones from the indices in `small_indices.json` (dumped from
//! `resample_trace`, so they are checkable without reimplementing the
//! generator). The
//! reference JSON is a subset of `analysis.json`'s shape; every value in it
//! must match. To regenerate after an intended change:
//!
//! ```text
//! cargo test --test suite analysis_reference:: -- --ignored
//! python3 tests/fixtures/reference.py > tests/fixtures/reference.json
//! ```

use runner_analysis::{analyse, resample_trace, AnalysisInput, CellInfo, ResampleTrace};
use runner_core::record::read_pairs_csv;
use runner_spec::Ordering;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn input() -> AnalysisInput {
    let cell = |cell: u32, us: u64| CellInfo {
        cell,
        params: json!({"delay_us": us, "plans": 40})
            .as_object()
            .unwrap()
            .clone(),
        delay_ns: us * 1000,
    };
    AnalysisInput {
        master_seed: 20260814,
        resamples: 100,
        confidence: 0.95,
        ordering: Ordering::PairedRandom,
        pad_baseline: true,
        cells: vec![cell(0, 0), cell(1, 5)],
        target_half_width_ns: None,
        clock_resolution_ns: 0.0,
    }
}

fn trace() -> ResampleTrace {
    let pairs = read_pairs_csv(&fixture("small_pairs.csv")).unwrap();
    resample_trace(&input(), &pairs).unwrap()
}

#[test]
#[ignore = "writes tests/fixtures/small_indices.json"]
fn regenerate_indices_fixture() {
    let text = serde_json::to_string(&trace()).unwrap();
    std::fs::write(fixture("small_indices.json"), text + "\n").unwrap();
}

#[test]
fn indices_fixture_is_current() {
    let text = std::fs::read_to_string(fixture("small_indices.json")).unwrap();
    let stored: ResampleTrace = serde_json::from_str(&text).unwrap();
    assert!(
        stored == trace(),
        "the bootstrap streams changed: regenerate the fixtures (see this file's header)"
    );
}

#[test]
fn analysis_matches_the_numpy_reference() {
    let pairs = read_pairs_csv(&fixture("small_pairs.csv")).unwrap();
    let analysis = serde_json::to_value(analyse(&input(), &pairs).unwrap()).unwrap();
    let text = std::fs::read_to_string(fixture("reference.json")).unwrap();
    let reference: Value = serde_json::from_str(&text).unwrap();
    let mut checked = 0;
    compare(&reference, &analysis, "", &mut checked);
    assert!(checked > 150, "only {checked} values compared");
}

/// Every value in `expected` must be in `actual` at the same path; numbers
/// within a relative 1e-12 (numpy sums in a different order), except the
/// predicted half-width, whose z comes from Acklam's approximation in runner
/// (relative error < 1.2e-9) and from an exact inverse in Python.
fn compare(expected: &Value, actual: &Value, path: &str, checked: &mut usize) {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, v) in e {
                let sub = format!("{path}.{k}");
                let got = a
                    .get(k)
                    .unwrap_or_else(|| panic!("{sub}: missing in analysis"));
                compare(v, got, &sub, checked);
            }
        }
        (Value::Array(e), Value::Array(a)) => {
            assert_eq!(e.len(), a.len(), "{path}: lengths differ");
            for (i, (x, y)) in e.iter().zip(a).enumerate() {
                compare(x, y, &format!("{path}[{i}]"), checked);
            }
        }
        (Value::Number(e), Value::Number(a)) => {
            let (e, a) = (e.as_f64().unwrap(), a.as_f64().unwrap());
            // runner's normal quantile is an approximation (relative error
            // ~1e-9); these numbers go through it, numpy's NormalDist is exact.
            let through_z = ["half_width_ns", "median_between_ns2", "median_within_ns2"];
            let ratio_bound = path.contains(".ratio_ci[");
            let relative = if ratio_bound || through_z.iter().any(|k| path.ends_with(k)) {
                2e-9
            } else {
                1e-12
            };
            let tolerance = relative * e.abs().max(1.0);
            assert!((e - a).abs() <= tolerance, "{path}: numpy {e}, runner {a}");
            *checked += 1;
        }
        (e, a) => {
            assert_eq!(e, a, "{path}");
            *checked += 1;
        }
    }
}
