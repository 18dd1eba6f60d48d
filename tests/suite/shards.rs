//! Shards, with real processes: `exec --shard I/N` (or a scheduler's
//! variables) runs its share of the one seeded plan, and `runner merge`
//! joins the shards into the folder a single process would have written
//! (same jobs, seeds, pairs; new timings). Refusals: tests/suite/merge.rs; the
//! machines level: tests/suite/machines.rs.

use crate::common;
use common::shards::*;
use common::*;
use std::path::{Path, PathBuf};

/// (cell, fork, phase, pair, first, delay_ns) of every row, in file order.
fn keys(path: &Path) -> Vec<[String; 6]> {
    let (h, rows) = csv_rows(path);
    let c: Vec<usize> = ["cell", "fork", "phase", "pair", "first", "delay_ns"]
        .iter()
        .map(|n| col(&h, n))
        .collect();
    rows.iter()
        .map(|r| std::array::from_fn(|i| r[c[i]].clone()))
        .collect()
}

fn aa_spec() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/aa.toml")
}

const AA_SMALL: [&str; 10] = [
    "--set",
    "design.forks=3",
    "--set",
    "design.pairs=20",
    "--set",
    "design.warmup_pairs=3",
    "--set",
    "grid.delay_us=[0, 50]",
    "--set",
    "analysis.resamples=200",
];

/// The study's aa.toml (small counts), once in one process and once as two
/// shards merged: the same rows (cell, fork, phase, pair, first, delay), the
/// same schedule and job seeds, the same results (checksums), and every
/// cell with forks on both shards. One host: no machines level.
#[test]
fn a_merged_two_shard_run_of_aa_has_the_rows_of_one_process() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let spec = aa_spec();
    let one = exec_ok(dir, &spec, "one", &AA_SMALL);
    let s1 = shard(dir, &spec, "1/2", "shards/1", &[], &AA_SMALL);
    let s2 = shard(dir, &spec, "2/2", "shards/2", &[], &AA_SMALL);
    let out = merge(dir, "merged", &[&s2, &s1], &[]);
    assert!(out.status.success(), "{}", err_of(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("merged 2 of 2 shards (6 forks)"),
        "{stdout}"
    );
    let merged = dir.join("merged");

    assert_eq!(
        keys(&merged.join("pairs.csv")),
        keys(&one.join("pairs.csv"))
    );
    let (m, o) = (
        read_json(&merged.join("run.json")),
        read_json(&one.join("run.json")),
    );
    assert_eq!(m["jobs"], o["jobs"], "the schedule and job seeds");
    assert_eq!(m["seeds"]["bootstrap"], o["seeds"]["bootstrap"]);
    let sums = |j: &serde_json::Value| -> Vec<serde_json::Value> {
        j["forks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                serde_json::json!([
                    f["cell"],
                    f["fork"],
                    f["checksum_baseline"],
                    f["checksum_treatment"]
                ])
            })
            .collect()
    };
    assert_eq!(sums(&m), sums(&o), "every input and result");

    // Each shard ran its jobs in the order of the one seeded schedule, and
    // every cell has forks on both.
    let order: Vec<serde_json::Value> = o["jobs"].as_array().unwrap().clone();
    for s in [&s1, &s2] {
        let jobs = read_json(&s.join("run.json"))["jobs"]
            .as_array()
            .unwrap()
            .clone();
        let positions: Vec<usize> = jobs
            .iter()
            .map(|j| order.iter().position(|o| o == j).unwrap())
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
        for cell in [0, 1] {
            assert!(
                jobs.iter().any(|j| j["cell"] == cell),
                "cell {cell} in {}",
                s.display()
            );
        }
    }
    let shards = m["merged"]["shards"].as_array().unwrap();
    assert_eq!(shards.len(), 2);
    assert_eq!(shards[0]["index"], 1);
    assert!(shards[0]["environment"]["cpu_model"].is_string());
    assert_eq!(m["merged"]["machines"].as_array().unwrap().len(), 1);

    // One host: no machines level; the folder re-renders byte for byte.
    let analysis = std::fs::read(merged.join("analysis.json")).unwrap();
    assert!(read_json(&merged.join("analysis.json"))
        .get("machines")
        .is_none());
    let report = std::fs::read_to_string(merged.join("report.md")).unwrap();
    assert!(
        report.contains("- Merged: joined by `runner merge` from 2 of 2 shards (6 forks)"),
        "{report}"
    );
    assert!(!report.contains("## Machines"));
    assert!(
        report.contains("--shard 1/2") && report.contains(" merge "),
        "{report}"
    );
    let o = run_in(dir, &["report", merged.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err_of(&o));
    assert_eq!(
        std::fs::read(merged.join("analysis.json")).unwrap(),
        analysis
    );

    // A shard's own report says what it holds.
    let own = std::fs::read_to_string(s1.join("report.md")).unwrap();
    assert!(
        own.contains("- Shard: this folder is shard 1 of 2 (3 of the plan's 6 jobs"),
        "{own}"
    );
}

/// Which shard a process is: the flag, Slurm's array variables, or
/// Kubernetes' index with --shards; and what exec refuses.
#[test]
fn the_shard_comes_from_the_flag_or_the_scheduler_and_is_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let spec = small(dir);
    let run = |env: &[(&str, &str)], extra: &[&str]| {
        let mut cmd = runner();
        cmd.current_dir(dir)
            .arg("exec")
            .arg(&spec)
            .arg("--quiet")
            .args(extra);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    };
    let slurm = [
        ("SLURM_ARRAY_TASK_ID", "5"),
        ("SLURM_ARRAY_TASK_MIN", "4"),
        ("SLURM_ARRAY_TASK_COUNT", "2"),
        ("SLURM_ARRAY_JOB_ID", "77"),
    ];
    let o = run(&slurm, &[]);
    assert!(o.status.success(), "{}", err_of(&o));
    let info = read_json(&dir.join("reports/small-shard-2-of-2/run.json"));
    assert_eq!(info["shard"]["index"], 2);
    assert_eq!(info["shard"]["source"], "SLURM_ARRAY_TASK_ID");
    assert_eq!(info["shard"]["scheduler"]["SLURM_ARRAY_JOB_ID"], "77");
    assert_eq!(info["shard"]["host_override"], false);

    let o = run(
        &[("JOB_COMPLETION_INDEX", "0"), ("RUNNER_HOSTNAME", "pod-a")],
        &["--shards", "2", "--out", "k0"],
    );
    assert!(o.status.success(), "{}", err_of(&o));
    let info = read_json(&dir.join("k0/run.json"));
    assert_eq!(info["shard"]["index"], 1);
    assert_eq!(info["shard"]["source"], "JOB_COMPLETION_INDEX");
    assert_eq!(info["shard"]["host"], "pod-a");
    assert_eq!(info["shard"]["host_override"], true);
    assert!(info["forks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["host"] == "pod-a"));

    assert_refused(&run(&[("JOB_COMPLETION_INDEX", "0")], &[]), &["--shards N"]);
    assert_refused(
        &run(&[], &["--shard", "1/5"]),
        &["only 4 jobs", "at most 4 shards"],
    );
    let unseeded = write_spec(dir, "unseeded", &SMALL_AA.replace("seed = 7", ""));
    let o = runner()
        .current_dir(dir)
        .args(["exec", unseeded.to_str().unwrap(), "--shard", "1/2"])
        .output()
        .unwrap();
    assert_refused(&o, &["without a seed", "--set seed=N"]);
    let o = runner()
        .current_dir(dir)
        .args(["exec", spec.to_str().unwrap(), "--shard", "3/2"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", err_of(&o));
    assert!(err_of(&o).contains("--shard 1/4"), "{}", err_of(&o));
}

/// A shard's run.json must hold exactly its share: moving it to another
/// index is refused by every reader, naming the job.
#[test]
fn a_shard_run_json_holds_exactly_its_share() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let spec = small(dir);
    let s1 = shard(dir, &spec, "1/2", "s1", &[], &[]);
    edit_json(&s1.join("run.json"), |v| v["shard"]["index"] = 2.into());
    let o = run_in(dir, &["report", s1.to_str().unwrap()]);
    assert_refused(&o, &["run.json", "is not a job of shard 2/2"]);
}

/// A shard that fails keeps its finished forks and prints the command that
/// resumes it as the same shard; resuming it as another shard is refused.
#[test]
fn a_failed_shard_resumes_as_the_same_shard() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let spec = small(dir);
    // Shard 2/2 holds cell 0 fork 1 and cell 1 fork 1.
    let o = runner()
        .current_dir(dir)
        .env("RUNNER_FAULT", "exit=3@cell=1,fork=1")
        .args([
            "exec",
            spec.to_str().unwrap(),
            "--quiet",
            "--shard",
            "2/2",
            "--out",
            "s2",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", err_of(&o));
    let err = err_of(&o);
    let cmd = err
        .lines()
        .find_map(|l| l.split("original seeds: ").nth(1))
        .unwrap_or_else(|| panic!("no resume command in: {err}"));
    let argv = shlex::split(cmd).unwrap();
    assert!(
        cmd.contains("--shard 2/2") && cmd.contains("--resume"),
        "{cmd}"
    );

    let partial = dir.join("s2.partial");
    let o = run_in(
        dir,
        &[
            "exec",
            spec.to_str().unwrap(),
            "--shard",
            "1/2",
            "--resume",
            partial.to_str().unwrap(),
        ],
    );
    assert_refused(&o, &["holds shard 2/2", "this exec is shard 1/2"]);

    let o = runner().current_dir(dir).args(&argv[1..]).output().unwrap();
    assert!(o.status.success(), "{}", err_of(&o));
    let s1 = shard(dir, &spec, "1/2", "s1", &[], &[]);
    let o = merge(dir, "m", &[&s1, &dir.join("s2")], &[]);
    assert!(o.status.success(), "{}", err_of(&o));
    assert_eq!(
        read_json(&dir.join("m/run.json"))["forks"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
}
