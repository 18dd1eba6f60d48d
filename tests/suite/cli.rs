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
        "output      exec writes reports/small/ and replaces the report there once the run completes",
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
