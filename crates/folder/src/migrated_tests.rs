//! run.json of an older format reads as it always did: folders as runners
//! wrote them at version 0 (some with the raw argv as `command_line`),
//! frozen under `tests/fixtures/folders/`, with every key a version 0 file
//! may lack taken out, read to the same record with those keys at version
//! 0's values, asserted here as literals (`output::format` adds them); the
//! same keys missing from a current file are a damaged file, refused
//! naming the key.

use super::{FolderError, Invocation, RunInfo};
use serde_json::Value;
use std::path::Path;

/// A gate run whose run.json records `invocation`.
const GATE_RUN: &[u8] = include_bytes!("../../../tests/fixtures/folders/gate-aa/run.json");
/// A run whose run.json records the raw argv (`command_line`).
const ARGV_RUN: &[u8] = include_bytes!("../../../tests/fixtures/folders/blocked-postgres/run.json");

fn read(file: &Value) -> Result<RunInfo, FolderError> {
    RunInfo::parse(
        Path::new("run.json"),
        &serde_json::to_vec_pretty(file).unwrap(),
    )
}

fn json(info: &RunInfo) -> Value {
    serde_json::to_value(info).unwrap()
}

fn remove(object: &mut Value, key: &str) {
    object.as_object_mut().unwrap().remove(key);
}

#[test]
fn a_version_0_run_json_reads_each_absent_key_as_its_old_default() {
    let full: Value = serde_json::from_slice(GATE_RUN).unwrap();
    assert!(full.get("format_version").is_none(), "a version 0 file");
    let mut old = full.clone();
    for fork in old["forks"].as_array_mut().unwrap() {
        remove(fork, "resource_usage");
        remove(&mut fork["checks"], "matches_in_memory");
        if fork["placement"].is_object() {
            remove(&mut fork["placement"], "backend_cpus");
            remove(&mut fork["placement"], "backend_ticks");
        }
    }
    remove(&mut old["build"], "launched_as");
    remove(&mut old["environment"], "checks");
    remove(&mut old["environment"], "busiest_processes");
    let experiment = &mut old["spec"]["experiment"];
    remove(&mut experiment["design"], "placement");
    remove(&mut experiment["gate"], "max_false_block");
    remove(&mut experiment["gate"], "within_check");

    let mut want = read(&full).unwrap();
    want.build.launched_as = "cargo run --release --".into();
    want.environment.checks.clear();
    want.environment.busiest_processes.clear();
    for fork in &mut want.forks {
        fork.summary.resource_usage = false;
        fork.checks.matches_in_memory = None;
        if let Some(p) = fork.summary.placement.as_mut() {
            p.backend_cpus.clear();
            p.backend_ticks = 0;
        }
    }
    let experiment = &mut want.spec.experiment;
    experiment.design.placement = runner_os::placement::Placement::SameCore;
    let gate = experiment.gate.as_mut().unwrap();
    gate.max_false_block = 0.1;
    gate.within_check = false;
    assert_eq!(json(&read(&old).unwrap()), json(&want));
    // The run's own values differ from the old defaults somewhere, so a
    // key the migration did not add would show.
    assert_ne!(json(&read(&full).unwrap()), json(&want));
    assert_eq!(want.format_version, 2);
    // What version 2 added, as the runners before it read it: no cap on a
    // retry's cost, every --set taken.
    let gate = want.spec.experiment.gate.unwrap();
    assert_eq!((gate.max_retry_factor, gate.allow_overrides), (None, true));
    // Version 1 recorded no user's code: it reads as not recorded.
    assert_eq!(
        want.environment.code,
        runner_os::environment::Code::NotRecorded
    );
}

#[test]
fn a_version_0_argv_reads_as_the_invocation_it_parses_to() {
    let file: Value = serde_json::from_slice(ARGV_RUN).unwrap();
    let argv: Vec<String> = serde_json::from_value(file["command_line"].clone()).unwrap();
    let info = read(&file).unwrap();
    assert_eq!(info.invocation, Invocation::from_argv(&argv).unwrap());
    assert!(matches!(info.invocation, Invocation::Exec(_)));
    // An analyze folder from before the clock's step was an argument.
    let mut analyze = file.clone();
    remove(&mut analyze, "command_line");
    analyze["invocation"] = serde_json::json!({
        "command": "analyze", "csv": "pairs.csv", "out": null, "seed": 3,
        "baseline": "baseline", "treatment": "treatment", "title": null,
        "resamples": 2000, "confidence": 0.95,
    });
    match read(&analyze).unwrap().invocation {
        Invocation::Analyze(a) => assert_eq!(a.clock_resolution_ns, 0),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_current_run_json_without_a_key_is_refused_naming_it() {
    let mut file: Value = serde_json::from_slice(GATE_RUN).unwrap();
    // The version 0 file as version 2 writes it: its keys, and the gate's
    // two of version 2.
    file["format_version"] = 2.into();
    file["spec"]["experiment"]["gate"]["max_retry_factor"] = 4.0.into();
    file["spec"]["experiment"]["gate"]["allow_overrides"] = true.into();
    file["environment"]["code"] = serde_json::json!({"state": "not-recorded"});
    assert!(read(&file).is_ok());
    // Each key at the place it was taken from (a JSON pointer).
    for (at, key) in [
        ("/forks/0", "resource_usage"),
        ("/build", "launched_as"),
        ("/spec/experiment/design", "placement"),
        ("/spec/experiment/gate", "within_check"),
    ] {
        let mut damaged = file.clone();
        remove(damaged.pointer_mut(at).unwrap(), key);
        let e = read(&damaged).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "run.json is not a valid run.json: missing field `{key}`"
            )),
            "{e}"
        );
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    // And a version 2 file never holds the raw argv.
    let mut argv: Value = serde_json::from_slice(ARGV_RUN).unwrap();
    argv["format_version"] = 2.into();
    argv["build"]["launched_as"] = "runner".into();
    argv["environment"]["code"] = serde_json::json!({"state": "not-recorded"});
    let e = read(&argv).unwrap_err().to_string();
    assert!(e.contains("missing field `invocation`"), "{e}");
}
