//! `runner env`: the machine checks as OK / WARN / N/A lines, the whole
//! record with `--json`, and the checks recorded in run.json (old run.json
//! files without them still read).

use crate::common;
use common::*;
use runner_os::environment::{CheckKind, Environment};

const KINDS: [CheckKind; 7] = [
    CheckKind::Governor,
    CheckKind::Turbo,
    CheckKind::Aslr,
    CheckKind::Swap,
    CheckKind::Load,
    CheckKind::BusyProcesses,
    CheckKind::CpuSteal,
];

#[test]
fn env_prints_one_status_line_per_check() {
    let out = runner().arg("env").assert().success().get_output().clone();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("machine checks"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("clock ")), "{text}");
    for kind in KINDS {
        let line = text
            .lines()
            .find(|l| l.contains(&format!(" {}: ", kind.label())))
            .unwrap_or_else(|| panic!("no line for {}:\n{text}", kind.label()));
        let tag = line.split_whitespace().next().unwrap();
        assert!(["OK", "WARN", "N/A"].contains(&tag), "{line}");
    }
}

#[test]
fn env_json_is_the_recorded_environment() {
    let out = runner()
        .args(["env", "--json"])
        .assert()
        .success()
        .get_output()
        .clone();
    let env: Environment = serde_json::from_slice(&out.stdout).unwrap();
    let kinds: Vec<CheckKind> = env.checks.iter().map(|c| c.check).collect();
    assert_eq!(kinds, KINDS);
    assert!(env.clock.read_cost_ns > 0.0);
    assert!(env.busiest_processes.len() <= 5);
}

#[test]
fn exec_records_the_checks_in_run_json() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "small", SMALL_AA);
    let out = tmp.path().join("out");
    runner()
        .current_dir(tmp.path())
        .args([
            "exec",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .args([
            "--quiet",
            "--set",
            "design.forks=1",
            "--set",
            "grid.delay_us=[0]",
        ])
        .assert()
        .success();
    let run = read_json(&out.join("run.json"));
    let checks = run["environment"]["checks"].as_array().unwrap();
    assert_eq!(checks.len(), KINDS.len());
    assert!(checks
        .iter()
        .all(|c| ["ok", "warn", "unknown"].contains(&c["status"].as_str().unwrap())));
}

/// A run.json recorded before runner had machine checks, sentinels and
/// placement (the committed reports of earlier stops) still reads, with
/// those fields empty: a version 0 aa run, frozen, with them taken out.
#[test]
fn run_json_without_checks_still_reads() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/folders/aa/run.json");
    let mut run = read_json(&path);
    let env = run["environment"].as_object_mut().unwrap();
    env.remove("checks");
    env.remove("busiest_processes");
    for f in run["forks"].as_array_mut().unwrap() {
        let f = f.as_object_mut().unwrap();
        f.remove("sentinel");
        f.remove("placement");
    }
    let tmp = tempfile::tempdir().unwrap();
    let old = tmp.path().join("run.json");
    std::fs::write(&old, serde_json::to_string_pretty(&run).unwrap()).unwrap();
    let info = runner_folder::RunInfo::read(&old).unwrap();
    assert!(info.environment().checks.is_empty());
    assert!(info.environment().busiest_processes.is_empty());
    assert!(info
        .forks()
        .iter()
        .all(|f| f.sentinel.is_none() && f.summary.placement.is_none()));
}
