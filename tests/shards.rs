//! Shards and merge, with real processes: `exec --shard I/N` runs its share
//! of the one seeded plan, `runner merge` joins the shards into the folder a
//! single process would have written (same jobs, seeds, pairs; new timings),
//! and refuses, exit 2 with one sentence, whatever does not fit together.

mod common;
use common::*;
use std::path::{Path, PathBuf};

/// `runner exec SPEC --shard I/N --out DIR EXTRA...` in `dir`, with `env`.
fn shard(
    dir: &Path,
    spec: &Path,
    shard: &str,
    out: &str,
    env: &[(&str, &str)],
    extra: &[&str],
) -> PathBuf {
    let out = dir.join(out);
    let mut cmd = runner();
    cmd.current_dir(dir)
        .arg("exec")
        .arg(spec)
        .args(["--quiet", "--shard", shard, "--out"])
        .arg(&out)
        .args(extra);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.assert().success();
    out
}

fn merge(dir: &Path, out: &str, shards: &[&Path], extra: &[&str]) -> std::process::Output {
    runner()
        .current_dir(dir)
        .arg("merge")
        .arg(dir.join(out))
        .args(shards)
        .args(extra)
        .output()
        .unwrap()
}

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
        report.contains("--shard 1/2") && report.contains("-- merge "),
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

fn small(dir: &Path) -> PathBuf {
    write_spec(dir, "small", SMALL_AA)
}

/// Merges that cannot be right are refused, exit 2, naming what differs.
#[test]
fn merge_refuses_another_spec_seed_count_a_job_twice_and_a_missing_shard() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let spec = small(dir);
    let s1 = shard(dir, &spec, "1/2", "s1", &[], &[]);
    let s2 = shard(dir, &spec, "2/2", "s2", &[], &[]);
    let again = shard(dir, &spec, "1/2", "s1-again", &[], &[]);
    let seed = shard(dir, &spec, "2/2", "seed8", &[], &["--set", "seed=8"]);
    let titled = shard(dir, &spec, "2/2", "titled", &[], &["--set", "title=Other"]);
    let thirds = shard(dir, &spec, "2/3", "thirds", &[], &[]);

    let o = merge(dir, "m", &[&s1, &seed], &[]);
    assert_refused(&o, &["seed8 has master seed 8", "s1 has 7"]);
    let o = merge(dir, "m", &[&s1, &titled], &[]);
    assert_refused(
        &o,
        &["titled ran another spec than", "(SHA-256 ", "title differ"],
    );
    let o = merge(dir, "m", &[&s1, &thirds], &[]);
    assert_refused(&o, &["thirds is shard 2/3", "shard 1/2"]);
    let o = merge(dir, "m", &[&s1, &s2, &again], &[]);
    assert_refused(
        &o,
        &[
            "cell 0 fork 0, cell 1 fork 0 are held by both",
            "s1-again",
            "both shard 1/2",
        ],
    );
    let o = merge(dir, "m", &[&s1], &[]);
    assert_refused(
        &o,
        &[
            "shard 2/2 is missing (its 2 jobs: cell 0 fork 1, cell 1 fork 1)",
            "runner exec",
            "--shard 2/2 --out",
            "--allow-missing",
        ],
    );
    let whole = exec_ok(dir, &spec, "whole", &[]);
    let o = merge(dir, "m", &[&s1, &whole], &[]);
    assert_refused(&o, &["whole is not a shard"]);
    let o = merge(dir, "s1", &[&s1, &s2], &[]);
    assert_refused(&o, &["one inside the other"]);
    assert!(!dir.join("m").exists() && !dir.join("m.partial").exists());

    // The --shard command a refusal prints runs the missing shard.
    let o = merge(dir, "m", &[&s1], &[]);
    let err = err_of(&o);
    let cmd = err.split('`').nth(1).unwrap();
    let argv = shlex::split(cmd).unwrap();
    assert_eq!(argv[0], "runner");
    let o = runner()
        .current_dir(dir)
        .args(&argv[1..])
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err_of(&o));
    let filled = PathBuf::from(&argv[argv.iter().position(|a| a == "--out").unwrap() + 1]);
    let o = merge(dir, "m", &[&s1, &filled], &[]);
    assert!(o.status.success(), "{}", err_of(&o));
}

/// `--allow-missing` merges what there is; run.json and the report name
/// every missing job, and the folder reads back like any other.
#[test]
fn a_partial_merge_names_the_missing_jobs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let spec = small(dir);
    let s1 = shard(dir, &spec, "1/3", "s1", &[], &[]);
    let s3 = shard(dir, &spec, "3/3", "s3", &[], &[]);
    let o = merge(dir, "m", &[&s1, &s3], &["--allow-missing"]);
    assert!(o.status.success(), "{}", err_of(&o));
    let m = dir.join("m");
    let run = read_json(&m.join("run.json"));
    // 2 cells x 2 forks dealt over 3 shards: jobs 0..4 mod 3, so shard 2
    // holds cell 0 fork 1 only.
    assert_eq!(
        run["merged"]["missing"],
        serde_json::json!([{"cell": 0, "fork": 1, "shard": 2}])
    );
    assert_eq!(run["jobs"].as_array().unwrap().len(), 3);
    let report = std::fs::read_to_string(m.join("report.md")).unwrap();
    assert!(
        report.contains("**Incomplete:** this run was merged without shard 2/3 (`--allow-missing`), so 1 of its 4 jobs are missing: cell 0 fork 1."),
        "{report}"
    );
    let before = std::fs::read(m.join("report.md")).unwrap();
    let o = run_in(dir, &["report", m.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err_of(&o));
    assert_eq!(std::fs::read(m.join("report.md")).unwrap(), before);
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

/// Several machines simulated on one: the shards run as separate
/// processes with different recorded host names (RUNNER_HOSTNAME), and the
/// "slow" one really is slower: the command's work is read from WORK in its
/// environment, as a slower machine would take longer for the same work.
/// The treatment does twice the baseline's work, so D itself differs by
/// machine, and the machines level must say so.
#[test]
fn the_machines_level_finds_the_slower_machine() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let spec = write_spec(
        dir,
        "machines",
        r#"
name = "machines"
seed = 3
[strategies.base]
kind = "command"
shell = "i=0; while [ $i -lt ${WORK:-10} ]; do i=$((i+1)); done"
[strategies.double]
kind = "command"
shell = "i=0; n=$((2 * ${WORK:-10})); while [ $i -lt $n ]; do i=$((i+1)); done"
[design]
baseline = "base"
treatment = "double"
forks = 4
warmup_pairs = 2
pairs = 15
[analysis]
resamples = 200
"#,
    );
    let fast = shard(
        dir,
        &spec,
        "1/2",
        "fast",
        &[("RUNNER_HOSTNAME", "fast"), ("WORK", "10")],
        &[],
    );
    let slow = shard(
        dir,
        &spec,
        "2/2",
        "slow",
        &[("RUNNER_HOSTNAME", "slow"), ("WORK", "3000")],
        &[],
    );
    let o = merge(dir, "m", &[&fast, &slow], &[]);
    assert!(o.status.success(), "{}", err_of(&o));
    let m = dir.join("m");
    let a = read_json(&m.join("analysis.json"));
    let hosts = a["machines"]["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 2);
    assert_eq!(
        (hosts[0]["host"].as_str(), hosts[0]["forks"].as_u64()),
        (Some("fast"), Some(2))
    );
    assert_eq!(
        (hosts[1]["host"].as_str(), hosts[1]["forks"].as_u64()),
        (Some("slow"), Some(2))
    );
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    assert!(
        f(&hosts[1]["baseline_min_ns"]) > f(&hosts[0]["baseline_max_ns"]),
        "the slow host's baseline medians lie above the fast one's: {hosts:?}"
    );
    let cell = &a["cells"][0]["machines"];
    let per_host = cell["hosts"].as_array().unwrap();
    assert!(
        f(&per_host[1]["median_ns"]) > f(&per_host[0]["median_ns"]),
        "{cell}"
    );
    let v = &cell["variance"];
    assert!(
        f(&v["median_between_machines_ns2"]) > f(&v["median_between_forks_ns2"]),
        "{v}"
    );
    assert_eq!(v["narrows_most"], "machines", "{v}");
    assert!(
        f(&v["twice_machines_half_width_ns"]) < f(&v["twice_forks_half_width_ns"]),
        "{v}"
    );
    let ci = cell["hierarchical"]["ci_ns"].as_array().unwrap();
    assert!(
        f(&ci[0]) <= f(&per_host[1]["median_ns"]) && f(&ci[1]) >= f(&per_host[0]["median_ns"]),
        "{cell}"
    );

    let run = read_json(&m.join("run.json"));
    assert!(run["seeds"]["cells"][0]["machines"].is_u64());
    let machines = run["merged"]["machines"].as_array().unwrap();
    assert!(machines.iter().all(|x| x["host_override"] == true));
    let report = std::fs::read_to_string(m.join("report.md")).unwrap();
    for needle in [
        "## Machines",
        "| `fast` (RUNNER_HOSTNAME) |",
        "| `slow` (RUNNER_HOSTNAME) |",
        "more machines |",
        "one run over 2 machines",
        "the spread between machines is the larger part of the variance: more machines narrow the interval most",
    ] {
        assert!(report.contains(needle), "{needle:?} not in:\n{report}");
    }
    // The machines level reproduces byte for byte from the folder.
    let before = std::fs::read(m.join("analysis.json")).unwrap();
    let o = run_in(dir, &["report", m.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err_of(&o));
    assert_eq!(std::fs::read(m.join("analysis.json")).unwrap(), before);
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
    assert!(cmd.contains("--shard 2/2 --resume"), "{cmd}");

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
