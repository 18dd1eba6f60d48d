//! The Slurm recipe for real: `examples/slurm/aa.sbatch` submits a job
//! array of shards and a dependent merge job to the cluster `.ci/slurm.sh`
//! starts (one node on 127.0.0.1), waits with `sbatch --wait`, and the
//! merged folder must be the single-process run of the same spec: the same
//! jobs, seeds and pairs (timings differ).

// Helpers shared by this crate's modules are `pub` for them; nothing
// outside the test binary can reach them anyway.
#![allow(unreachable_pub)]

mod common;
use common::*;
use std::path::Path;

/// (cell, fork, phase, pair, first) of every row, in file order.
fn keys(path: &Path) -> Vec<[String; 5]> {
    let (h, rows) = csv_rows(path);
    let c: Vec<usize> = ["cell", "fork", "phase", "pair", "first"]
        .iter()
        .map(|n| col(&h, n))
        .collect();
    rows.iter()
        .map(|r| std::array::from_fn(|i| r[c[i]].clone()))
        .collect()
}

#[test]
#[cfg_attr(not(runner_slurm), ignore = "SKIPPED: SLURM_CONF not set")]
fn a_slurm_array_of_shards_merges_into_the_single_process_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let spec = root.join("experiments/aa.toml");
    let args = "--set design.forks=2 --set design.pairs=20 --set design.warmup_pairs=3 --set grid.delay_us=[0,50] --set analysis.resamples=200";
    let merged = dir.join("merged");
    let shards = dir.join("shards");
    let out = std::process::Command::new("timeout")
        .current_dir(dir)
        .arg("300")
        .arg("bash")
        .arg(root.join("examples/slurm/aa.sbatch"))
        .env("RUNNER", assert_cmd::cargo::cargo_bin("runner"))
        .env("SPEC", &spec)
        .env("OUT", &merged)
        .env("SHARD_DIR", &shards)
        .env("SHARDS", "2")
        .env("RUNNER_ARGS", args)
        .env("WAIT", "1")
        .env("SLURM_CONF", slurm_conf())
        .env_remove("RUNNER_DATABASE_URL")
        .output()
        .unwrap();
    let logs: String = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("slurm-"))
        .map(|e| {
            format!(
                "--- {}\n{}",
                e.file_name().to_string_lossy(),
                std::fs::read_to_string(e.path()).unwrap_or_default()
            )
        })
        .collect();
    assert!(
        out.status.success(),
        "the Slurm recipe failed: {}\n{}\njob logs:\n{logs}",
        String::from_utf8_lossy(&out.stdout),
        err_of(&out)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("array job ") && stdout.contains("merge job "),
        "{stdout}"
    );

    // The same spec in one process, here.
    let extra: Vec<&str> = args.split(' ').collect();
    let one = exec_ok(dir, &spec, "one", &extra);

    assert_eq!(
        keys(&merged.join("pairs.csv")),
        keys(&one.join("pairs.csv"))
    );
    let (m, o) = (
        read_json(&merged.join("run.json")),
        read_json(&one.join("run.json")),
    );
    assert_eq!(m["jobs"], o["jobs"], "same jobs, order and seeds");
    assert_eq!(m["seeds"]["master"], o["seeds"]["master"]);
    assert_eq!(m["forks"].as_array().unwrap().len(), 4);
    let shards = m["merged"]["shards"].as_array().unwrap();
    assert_eq!(shards.len(), 2);
    for (i, s) in shards.iter().enumerate() {
        assert_eq!(s["index"], i + 1);
        assert_eq!(s["source"], "SLURM_ARRAY_TASK_ID");
        assert!(s["scheduler"]["SLURM_ARRAY_JOB_ID"].is_string(), "{s}");
        assert_eq!(s["scheduler"]["SLURM_ARRAY_TASK_ID"], (i + 1).to_string());
    }
    let report = std::fs::read_to_string(merged.join("report.md")).unwrap();
    assert!(
        report.contains("- Merged: joined by `runner merge` from 2 of 2 shards"),
        "{report}"
    );
}
