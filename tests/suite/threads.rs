//! The resampled intervals (order, carry-over, machines) run
//! on every core; the thread count must not change a byte of the analysis.

use crate::common;
use common::*;

#[test]
fn analysis_is_identical_on_one_and_on_two_threads() {
    // A real run, frozen: the study's A/A (8 cells of 10 forks).
    let committed =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/folders/aa");
    let tmp = tempfile::tempdir().unwrap();
    let mut analyses = Vec::new();
    for threads in ["1", "2"] {
        let copy = tmp.path().join(format!("threads-{threads}"));
        std::fs::create_dir(&copy).unwrap();
        for f in ["run.json", "pairs.csv"] {
            std::fs::copy(committed.join(f), copy.join(f)).unwrap();
        }
        assert!(!copy.join("analysis.json").exists());
        runner()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("RUNNER_THREADS", threads)
            .arg("report")
            .arg(&copy)
            .assert()
            .success();
        analyses.push(std::fs::read(copy.join("analysis.json")).unwrap());
    }
    assert!(
        analyses[0] == analyses[1],
        "analysis.json differs between 1 and 2 threads"
    );
    // Not a vacuous comparison: the resampled intervals have width.
    let a: serde_json::Value = serde_json::from_slice(&analyses[0]).unwrap();
    let ci = &a["cells"][0]["order"]["ci_ns"];
    assert!(ci[0].as_f64().unwrap() < ci[1].as_f64().unwrap(), "{ci}");
    assert!(a["resamples"].as_u64().unwrap() > u64::from(runner_stats::resample::CHUNK));
}
