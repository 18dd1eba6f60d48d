//! analysis.json's versions: a file of an older version holds an older
//! runner's statistics and is refused in one sentence that says how to
//! make it again (`runner report`); a current file missing a key is
//! damaged, refused naming the key.

use super::model::Analysis;
use super::{analyse, AnalysisInput, CellInfo};
use runner_folder::output::format::{parse, Kind, ReadError};
use serde_json::Value;
use std::path::Path;

/// A gate run's analysis.json as a version 1 runner wrote it (a frozen
/// copy, not the committed report a run may rewrite).
const OLD_GATE_RUN: &[u8] = include_bytes!("../../../tests/fixtures/folders/gate-aa/analysis.json");

fn read(file: &Value) -> Result<Analysis, ReadError> {
    let bytes = serde_json::to_vec_pretty(file).unwrap();
    parse(Path::new("analysis.json"), &bytes, Kind::Analysis)
}

/// This runner's analysis of the small fixture the reference test uses.
fn current() -> Value {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("tests/fixtures/small_pairs.csv");
    let pairs = runner_core::record::read_pairs_csv(&path).unwrap();
    let cell = |cell: u32, us: u64| CellInfo {
        cell,
        params: serde_json::json!({"delay_us": us})
            .as_object()
            .unwrap()
            .clone(),
        delay_ns: us * 1000,
    };
    let input = AnalysisInput {
        master_seed: 1,
        resamples: 100,
        confidence: 0.95,
        ordering: runner_spec::Ordering::PairedRandom,
        pad_baseline: true,
        cells: vec![cell(0, 0), cell(1, 5)],
        target_half_width_ns: None,
        clock_resolution_ns: 0.0,
    };
    serde_json::to_value(analyse(&input, &pairs).unwrap()).unwrap()
}

#[test]
fn an_older_analysis_is_refused_saying_how_to_make_it_again() {
    let old: Value = serde_json::from_slice(OLD_GATE_RUN).unwrap();
    assert_eq!(old["format_version"], 1, "a version 1 file");
    let e = read(&old).unwrap_err().to_string();
    assert!(
        e.starts_with("analysis.json: it holds an older runner's analysis")
            && e.contains(
                "`runner report` on its folder writes it anew from run.json and pairs.csv"
            ),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1);
}

#[test]
fn a_current_analysis_reads_and_without_a_key_is_refused_naming_it() {
    let mut file = current();
    assert_eq!(file["format_version"], 2);
    assert!(read(&file).is_ok());
    file["cells"][0]["over_forks"]
        .as_object_mut()
        .unwrap()
        .remove("ci_ns");
    let e = read(&file).unwrap_err().to_string();
    assert!(e.starts_with("missing field `ci_ns` at line "), "{e}");
    assert_eq!(e.lines().count(), 1);
}
