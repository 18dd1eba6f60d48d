//! `runner merge` refuses, exit 2 with one sentence naming the folders and
//! what differs, whatever does not fit together, and with `--allow-missing`
//! merges what there is and says what is missing.

use crate::common;
use common::shards::*;
use common::*;
use std::path::PathBuf;

/// Merges that cannot be right are refused, exit 2, naming what differs
/// (another build is a run.json edited as a shard from another commit
/// would record it).
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
    let rebuilt = shard(dir, &spec, "2/2", "rebuilt", &[], &[]);
    edit_json(&rebuilt.join("run.json"), |v| {
        v["environment"]["git_commit"] = "0123456789abcdef".into();
    });
    let o = merge(dir, "m", &[&s1, &rebuilt], &[]);
    assert_refused(
        &o,
        &[
            "rebuilt was measured by runner ",
            "commit 0123456789ab)",
            "same runner binary",
        ],
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
            "--shard 2/2",
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

    // run.json may not claim another job is the missing one.
    edit_json(&m.join("run.json"), |v| {
        v["merged"]["missing"][0]["fork"] = 0.into()
    });
    let o = run_in(dir, &["report", m.to_str().unwrap()]);
    assert_refused(
        &o,
        &["merged.missing names cell 0 fork 0 of shard 2, which is not a job of that shard"],
    );
}
