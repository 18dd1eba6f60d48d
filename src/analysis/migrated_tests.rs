//! analysis.json of an older format reads as it always did: a committed
//! gate run's file, with every key a version 0 file may lack taken out,
//! reads to the same analysis with those keys at the values their absence
//! always gave (`output::format` adds them); the same keys missing from a
//! current file are a damaged file, refused.

use super::model::Analysis;
use crate::output::format::{parse, Kind, ReadError};
use serde_json::Value;
use std::path::Path;

const GATE_RUN: &[u8] = include_bytes!("../../reports/gate-aa/analysis.json");

fn read(file: &Value) -> Result<Analysis, ReadError> {
    let bytes = serde_json::to_vec_pretty(file).unwrap();
    parse(Path::new("analysis.json"), &bytes, Kind::Analysis)
}

fn remove(object: &mut Value, key: &str) {
    object.as_object_mut().unwrap().remove(key);
}

#[test]
fn a_version_0_analysis_reads_each_absent_key_as_its_old_default() {
    let full: Value = serde_json::from_slice(GATE_RUN).unwrap();
    let mut old = full.clone();
    remove(&mut old, "format_version");
    for cell in old["cells"].as_array_mut().unwrap() {
        remove(&mut cell["pooled"], "share_tied");
        remove(&mut cell["cross_runs"], "faster");
    }
    let gate = &mut old["gate"];
    for key in ["max_false_block", "false_blocks", "power", "advice"] {
        remove(gate, key);
    }
    remove(&mut gate["false_alarms"], "lower_bound");
    for group in gate["groups"].as_array_mut().unwrap() {
        remove(group, "power");
        remove(group, "false_blocks");
        remove(&mut group["false_alarms"], "lower_bound");
    }

    let mut want = read(&full).unwrap();
    for cell in &mut want.cells {
        cell.pooled.share_tied = 0.0;
        cell.cross_runs.faster = 0;
    }
    let gate = want.gate.as_mut().unwrap();
    gate.max_false_block = crate::spec::DEFAULT_MAX_FALSE_BLOCK;
    gate.false_blocks = None;
    gate.power = None;
    gate.advice = None;
    gate.false_alarms.as_mut().unwrap().lower_bound = 0.0;
    for group in &mut gate.groups {
        group.power = None;
        group.false_blocks = None;
        group.false_alarms.as_mut().unwrap().share.lower_bound = 0.0;
    }
    assert_eq!(read(&old).unwrap(), want);
    // What was taken out was there to take: the old defaults differ from
    // this run's values, so the test would see a key that is not added.
    assert_ne!(read(&full).unwrap(), want);
}

#[test]
fn a_version_0_measured_power_reads_as_none() {
    let mut old: Value = serde_json::from_slice(GATE_RUN).unwrap();
    remove(&mut old, "format_version");
    old["gate"]["power"] = serde_json::json!({"cell": 0, "flagged": 28, "forks": 29});
    assert_eq!(read(&old).unwrap().gate.unwrap().power, None);
}

#[test]
fn a_current_analysis_without_a_key_is_refused_naming_it() {
    let mut file: Value = serde_json::from_slice(GATE_RUN).unwrap();
    remove(&mut file["cells"][0]["pooled"], "share_tied");
    let e = read(&file).unwrap_err().to_string();
    assert!(e.starts_with("missing field `share_tied` at line "), "{e}");
    assert_eq!(e.lines().count(), 1);
}
