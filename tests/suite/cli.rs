//! What a first-time user reads on the terminal: every argument of exec,
//! check and report has a help text, the help names RUNNER_DATABASE_URL and
//! says that exec replaces a previous report folder, and check's plan
//! counts jobs as cells x forks.

use crate::common;
use common::*;

fn help(args: &[&str]) -> String {
    let out = runner().args(args).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

#[test]
fn every_argument_of_exec_check_and_report_is_described() {
    let exec = help(&["exec", "--help"]);
    for needle in [
        "<SPEC>\n          The experiment file",
        "--out <DIR>\n          Output folder, default reports/<name>/",
        "--set <KEY=VALUE>\n          Override any key",
        "--resume <DIR.partial>\n          Finish an interrupted",
        "--quiet\n          No progress",
        "RUNNER_DATABASE_URL",
        "replaces DIR (a previous report there included) only when it is complete",
    ] {
        assert!(
            exec.contains(needle),
            "exec --help lacks {needle:?}:\n{exec}"
        );
    }
    let check = help(&["check", "--help"]);
    for needle in [
        "The experiment file",
        "--set <KEY=VALUE>",
        "Override any key of the file, as for exec",
        "--gate-required",
        "--retry-inconclusive",
        "--shard <I/N>",
        "RUNNER_DATABASE_URL",
    ] {
        assert!(
            check.contains(needle),
            "check --help lacks {needle:?}:\n{check}"
        );
    }
    let report = help(&["report", "--help"]);
    for needle in [
        "<DIR>\n          A finished report folder",
        "--template <FILE>\n          A minijinja template",
        "--out <FILE>\n          Where to write the report",
    ] {
        assert!(
            report.contains(needle),
            "report --help lacks {needle:?}:\n{report}"
        );
    }
    assert!(help(&["--help"]).contains("RUNNER_DATABASE_URL"));
}

#[test]
fn check_counts_jobs_as_cells_x_forks_and_names_where_exec_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "small", SMALL_AA);
    let out = runner()
        .current_dir(tmp.path())
        .args([
            "check",
            spec.to_str().unwrap(),
            "--set",
            "grid.delay_us=[0, 5, 10]",
        ])
        .assert()
        .success();
    let out = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    for needle in [
        "design      2 forks per cell x (5 warm-up + 40 measured pairs)",
        "  cell 1   delay_us = 5\n",
        "jobs        6 (3 cells x 2 forks), each a fresh process",
        "output      exec writes reports/small/ (--out DIR to write elsewhere) once the run completes; a report already there moves to reports/small.old/, which git ignores",
    ] {
        assert!(out.contains(needle), "check lacks {needle:?}:\n{out}");
    }
}

#[test]
fn progress_counts_jobs_and_ends_with_the_total_time() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "small", SMALL_AA);
    let out = runner()
        .current_dir(tmp.path())
        .args(["exec", spec.to_str().unwrap(), "--out", "r"])
        .assert()
        .success();
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    // Not a terminal: one line per job, then the total, which stays.
    assert!(err.contains("[1/4] cell "), "{err}");
    let last = err.lines().last().unwrap_or("");
    assert!(last.starts_with("4 jobs (cell x fork) run in "), "{err}");
    assert!(last.ends_with(" s"), "{err}");
}

#[test]
fn shards_and_merge_are_described() {
    let exec = help(&["exec", "--help"]);
    for needle in [
        "--shard <I/N>\n          Run only shard I of N",
        "SLURM_ARRAY_TASK_ID",
        "--shards <N>\n          The number of shards when the index comes from JOB_COMPLETION_INDEX",
    ] {
        assert!(exec.contains(needle), "exec --help lacks {needle:?}:\n{exec}");
    }
    let merge = help(&["merge", "--help"]);
    for needle in [
        "<OUT>\n          The merged report folder",
        "<SHARD_DIR>...\n          The shard folders",
        "--allow-missing\n          Merge even when shards are missing",
        "naming the --shard command that runs it",
    ] {
        assert!(
            merge.contains(needle),
            "merge --help lacks {needle:?}:\n{merge}"
        );
    }
}

/// `check --json` prints the plan as one JSON object with the documented
/// fields, and the text form prints the same plan: both are renderings of
/// one `CheckSummary`. Bad input prints no object, only the one-sentence
/// error (exit 2).
#[test]
fn check_json_prints_the_plan_the_text_prints() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "small", SMALL_AA);
    let args = [
        "check",
        spec.to_str().unwrap(),
        "--set",
        "grid.delay_us=[0, 5, 10]",
    ];
    let out = runner()
        .current_dir(tmp.path())
        .args(args)
        .arg("--json")
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let v: serde_json::Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("check --json printed no JSON object ({e}):\n{stdout}"));
    assert_eq!(v["experiment"], "small");
    assert_eq!(v["seed"], 7);
    assert_eq!(v["cells_total"], 3);
    assert_eq!(v["forks"], 2);
    assert_eq!(v["jobs"], 6);
    assert_eq!(v["pairs"], 6 * 45);
    assert_eq!(v["measured_pairs"], 6 * 40);
    let cells: Vec<&str> = v["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(cells.len(), 3, "{v:#}");
    assert_eq!(cells[1], "cell 1   delay_us = 5");
    let design = v["design"].as_str().unwrap();
    assert!(
        design.starts_with("2 forks per cell x (5 warm-up + 40 measured pairs)"),
        "{design}"
    );
    // The forecast: a sentence and the number of nanoseconds behind it,
    // from trial runs that timed each arm.
    assert!(!v["estimate"].as_str().unwrap().is_empty(), "{v:#}");
    assert!(v["estimate_ns"].as_u64().unwrap() > 0, "{v:#}");
    let timed = v["trial"]["timed"].as_array().unwrap();
    assert!(!timed.is_empty(), "{v:#}");
    for arm in timed {
        assert!(arm["arm"].is_string(), "{arm}");
        assert!(arm["median_ns"].as_u64().is_some(), "{arm}");
    }
    assert!(v["failure"].is_null(), "{v:#}");

    // The text form says the same plan, line by line.
    let out = runner()
        .current_dir(tmp.path())
        .args(args)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        serde_json::from_str::<serde_json::Value>(&text).is_err(),
        "{text}"
    );
    assert!(text.contains(&format!("design      {design}\n")), "{text}");
    for c in &cells {
        assert!(
            text.contains(&format!("\n  {c}\n")),
            "{c:?} not in:\n{text}"
        );
    }
    assert!(
        text.contains("jobs        6 (3 cells x 2 forks), each a fresh process"),
        "{text}"
    );
    assert!(text.contains("\nestimate    "), "{text}");

    // Bad input: no object on stdout, one sentence on stderr, exit 2.
    let out = runner()
        .current_dir(tmp.path())
        .args(["check", spec.to_str().unwrap(), "--json"])
        .args(["--set", "design.forks=zero"])
        .assert()
        .code(2);
    let o = out.get_output();
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let err = String::from_utf8(o.stderr.clone()).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}
