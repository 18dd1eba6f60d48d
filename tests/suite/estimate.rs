//! `check`'s time estimate knows the user's code, because
//! it runs each arm a few times (untimed by the run, and said so), and exec
//! prints the same estimate before its first fork ends. The workload's cost
//! is known by construction (`sleep 0.05`), and the margins are ones a
//! loaded machine cannot break (0.5x to 20x).

use crate::common;
use common::*;
use std::path::Path;

/// 2 forks x (1 warm-up + 3 measured pairs) x 2 runs of 50 ms: 0.8 s of
/// runs, before any process start.
const SLEEPS: &str = r#"
name = "sleeps"
seed = 3
[strategies.a]
kind = "command"
argv = ["sleep", "0.05"]
[strategies.b]
kind = "command"
argv = ["sleep", "0.05"]
[design]
baseline = "a"
treatment = "b"
forks = 2
warmup_pairs = 1
pairs = 3
[analysis]
resamples = 200
"#;
const KNOWN_S: f64 = 0.8;

/// The seconds in `about 1.2 s (...)` / `about 3.5 min (...)`.
fn seconds(estimate: &str) -> f64 {
    let rest = estimate
        .split("about ")
        .nth(1)
        .unwrap_or_else(|| panic!("no `about` in {estimate:?}"));
    match rest.split_whitespace().collect::<Vec<_>>()[..] {
        [n, "s", ..] => n.parse().unwrap(),
        [n, "min", ..] => n.parse::<f64>().unwrap() * 60.0,
        _ => panic!("{estimate}"),
    }
}

fn within_margin(s: f64, what: &str) {
    assert!(
        (0.5 * KNOWN_S..20.0 * KNOWN_S).contains(&s),
        "{what}: {s} s for {KNOWN_S} s of runs"
    );
}

#[test]
fn check_times_the_arms_and_says_so_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "sleeps", SLEEPS);
    let before = tree(tmp.path());
    let o = run_in(tmp.path(), &["check", spec.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err_of(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let trial = text
        .lines()
        .find(|l| l.starts_with("trial "))
        .unwrap_or_else(|| panic!("no trial line: {text}"));
    assert!(trial.contains("untimed by the run"), "{trial}");
    assert!(trial.contains("`a`") && trial.contains("`b`"), "{trial}");
    let estimate = text
        .lines()
        .find_map(|l| l.strip_prefix("estimate    "))
        .unwrap_or_else(|| panic!("no estimate line: {text}"));
    assert!(estimate.contains("trial runs per arm"), "{estimate}");
    within_margin(seconds(estimate), "check's estimate");
    assert_eq!(tree(tmp.path()), before, "check writes nothing");
}

#[test]
fn exec_prints_the_estimate_before_the_first_fork_ends() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "sleeps", SLEEPS);
    // stderr is a pipe here: progress comes as plain lines, in order.
    let started = std::time::Instant::now();
    let o = run_in(
        tmp.path(),
        &["exec", spec.to_str().unwrap(), "--out", "out"],
    );
    let exec_ns = started.elapsed().as_nanos() as u64;
    assert!(o.status.success(), "{}", err_of(&o));
    let err = err_of(&o);
    let lines: Vec<&str> = err.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("estimate: "))
        .unwrap_or_else(|| panic!("no estimate line: {err}"));
    let first_done = lines
        .iter()
        .position(|l| l.starts_with("[1/2]"))
        .unwrap_or_else(|| panic!("no progress line: {err}"));
    assert!(at < first_done, "{err}");
    assert!(
        lines[at].contains("2 forks of 1 warm-up and 3 measured pairs"),
        "{}",
        lines[at]
    );
    within_margin(seconds(lines[at]), "exec's estimate");
    // The trial runs are not data: the run has exactly its planned pairs.
    let (_, rows) = csv_rows(&tmp.path().join("out/pairs.csv"));
    assert_eq!(rows.len(), 8);
    // The parent's time per fork is recorded: each covers at least the
    // fork's timing, and together they fit in the run's wall time (the
    // next worker sets up while a fork is stored, so a fork's job_ns runs
    // from the previous commit to its own). The report states the ratio.
    let run = read_json(&tmp.path().join("out/run.json"));
    let forks = run["forks"].as_array().unwrap();
    for f in forks {
        assert!(
            f["job_ns"].as_u64().unwrap() >= f["timed_ns"].as_u64().unwrap(),
            "{f}"
        );
    }
    let job_ns: u64 = forks.iter().map(|f| f["job_ns"].as_u64().unwrap()).sum();
    assert!(job_ns <= exec_ns, "{job_ns} ns of jobs in {exec_ns} ns");
    let report = std::fs::read_to_string(tmp.path().join("out/report.md")).unwrap();
    assert!(report.contains("- Overhead: the forks took "), "{report}");
}

#[test]
fn quiet_exec_runs_no_trials() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "sleeps", SLEEPS);
    let o = run_in(
        tmp.path(),
        &["exec", spec.to_str().unwrap(), "--out", "out", "--quiet"],
    );
    assert!(o.status.success(), "{}", err_of(&o));
    assert!(!err_of(&o).contains("estimate"), "{}", err_of(&o));
}

/// An arm that cannot run (here: `false`) is what check is for: it prints
/// the plan, says why as exec's first fork would, naming the cell, leaves
/// the estimate a guess, and exits 1.
#[test]
fn check_of_an_arm_that_fails_exits_non_zero_naming_the_cell() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(
        tmp.path(),
        "fails",
        &SLEEPS.replace(r#"argv = ["sleep", "0.05"]"#, r#"argv = ["false"]"#),
    );
    let o = run_in(tmp.path(), &["check", spec.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", err_of(&o));
    assert!(
        err_of(&o).contains("check's trial run failed, as exec's first fork would: cell 0: a trial run of `a` against `b` failed"),
        "{}",
        err_of(&o)
    );
    let text = String::from_utf8(o.stdout).unwrap();
    let trial = text
        .lines()
        .find(|l| l.starts_with("trial "))
        .unwrap_or_else(|| panic!("no trial line: {text}"));
    assert!(
        trial.contains("failed, as exec's first fork would")
            && trial.contains("command `false` of strategy `a` ended with exit 1"),
        "{trial}"
    );
    let estimate = text
        .lines()
        .find_map(|l| l.strip_prefix("estimate    "))
        .unwrap();
    assert!(
        estimate.contains("a forecast from typical per-run costs: a trial run failed"),
        "{estimate}"
    );
}

/// The same failed trial under `check --json`: the object is still printed
/// on stdout (for a CI script to read), with the failure in it, and the
/// error on stderr and the exit code are the text form's.
#[test]
fn check_json_of_an_arm_that_fails_prints_the_failure_and_exits_1() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(
        tmp.path(),
        "fails",
        &SLEEPS.replace(r#"argv = ["sleep", "0.05"]"#, r#"argv = ["false"]"#),
    );
    let o = run_in(tmp.path(), &["check", spec.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", err_of(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&o.stdout));
    });
    assert_eq!(v["failure"]["exit_code"], 1, "{v:#}");
    let message = v["failure"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("check's trial run failed, as exec's first fork would: cell 0:"),
        "{message}"
    );
    assert!(err_of(&o).contains(message), "{}", err_of(&o));
    let failed = v["trial"]["failed"].as_str().unwrap();
    assert!(
        failed.contains("command `false` of strategy `a` ended with exit 1"),
        "{failed}"
    );
}

/// A command whose run takes what `$D` says, so one experiment file can
/// be slow in one attempt and fast in the next.
const SLEEPS_OF_D: &str = r#"
name = "d"
seed = 3
[strategies.a]
kind = "command"
shell = "sleep $D"
[strategies.b]
kind = "command"
shell = "sleep $D"
[design]
baseline = "a"
treatment = "b"
forks = 2
schedule = "sequential"
[analysis]
resamples = 200
"#;

/// `runner ARGS` in `t` with runs of `wait` seconds (`$D`) and, for the
/// first attempt of a run, the fault that stops its second fork.
fn sleeps(t: &Path, wait: &str, fault: Option<&str>, args: &[&str]) -> std::process::Output {
    let mut c = runner();
    c.current_dir(t).env("D", wait);
    match fault {
        Some(f) => c.env("RUNNER_FAULT", f),
        None => c.env_remove("RUNNER_FAULT"),
    };
    c.args(args).output().unwrap()
}

/// `check`, then an exec of runs of 50 ms whose second fork fails, then
/// its resume with runs 50 times shorter; returns check's stdout and the
/// design run.json recorded when the first attempt stopped.
fn chosen_then_resumed(t: &Path, spec: &Path) -> (String, serde_json::Value) {
    let spec = spec.to_str().unwrap();
    let check = sleeps(t, "0.05", None, &["check", spec]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&check.stdout),
        err_of(&check)
    );
    let o = sleeps(
        t,
        "0.05",
        Some("exit=3@cell=0,fork=1"),
        &["exec", spec, "--out", "out", "--quiet"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", err_of(&o));
    let started = design(t, "out.partial");
    let o = sleeps(
        t,
        "0.001",
        None,
        &["exec", spec, "--out", "out", "--resume", "out.partial"],
    );
    assert!(o.status.success(), "{}", err_of(&o));
    // The resume kept what the first attempt chose, whatever its own
    // trials (on runs 50 times shorter) would say.
    assert_eq!(design(t, "out"), started);
    (text, started)
}

/// The design a run's folder recorded.
fn design(t: &Path, dir: &str) -> serde_json::Value {
    read_json(&t.join(dir).join("run.json"))["spec"]["experiment"]["design"].clone()
}

/// `runner report` on a copy of `out`'s run.json and pairs.csv writes the
/// same report.md and analysis.json.
fn renders_again_byte_for_byte(t: &Path) {
    let copy = t.join("copy");
    std::fs::create_dir(&copy).unwrap();
    for f in ["run.json", "pairs.csv"] {
        std::fs::copy(t.join("out").join(f), copy.join(f)).unwrap();
    }
    let o = run_in(t, &["report", copy.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err_of(&o));
    for f in ["report.md", "analysis.json"] {
        assert_eq!(
            std::fs::read(copy.join(f)).unwrap(),
            std::fs::read(t.join("out").join(f)).unwrap(),
            "{f}"
        );
    }
}

/// A file without `warmup_pairs` and `pairs`: exec chooses them from its
/// trial runs before the first fork, with `--quiet` too (a pair of two
/// 50 ms runs is longer than the warm-up's budget and fits the half second
/// of a fork's own budget once, so no warm-up and at least the 5 a median
/// needs), and records them; `check` says what it would choose. A resume
/// keeps the recorded counts even when its own trials would choose others
/// (the runs are 50 times shorter then), and `runner report` renders the
/// folder byte for byte.
#[test]
fn counts_the_file_leaves_out_are_chosen_by_trial_runs_and_kept_on_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "d", SLEEPS_OF_D);
    let (text, started) = chosen_then_resumed(t, &spec);
    assert!(
        text.contains("design      2 forks per cell x (0 warm-up + ")
            && text.contains(" measured pairs; both chosen from trial runs: a pair took about "),
        "{text}"
    );
    // The second fork failed: the first was kept, with the counts chosen.
    let pairs = started["pairs"].as_u64().unwrap();
    assert_eq!(started["warmup_pairs"].as_u64(), Some(0), "{started}");
    assert!(pairs >= 5, "{started}");
    let chosen = &started["runs_per_fork"];
    assert_eq!(chosen["chosen"]["by"], "trials", "{chosen}");
    assert!(
        chosen["chosen"]["pair_ns"].as_u64().unwrap() >= 100_000_000,
        "{chosen}"
    );
    let (_, rows) = csv_rows(&t.join("out/pairs.csv"));
    assert_eq!(
        rows.len() as u64,
        2 * pairs,
        "2 forks of the recorded pairs"
    );
    let report = std::fs::read_to_string(t.join("out/report.md")).unwrap();
    assert!(
        report.contains(&format!(
            "(0 warm-up + {pairs} measured pairs; both chosen from trial runs: a pair took about "
        )),
        "{report}"
    );
    renders_again_byte_for_byte(t);
}

/// A sequential design that leaves out `min_forks` as well as the pairs:
/// its first look is chosen with them. Runs of 50 ms give pairs of about
/// 100 ms, so 5 pairs a fork (the fewest), and a first look of at least 30
/// measured pairs takes 6 forks (their runs, about 3 s, fit the 6 s
/// budget, and would up to pairs of 200 ms). `check` says so, exec records
/// it and no cell stops before it; a resume keeps it although its own
/// trials (runs of 1 ms, hundreds of pairs a fork) would choose 3; and
/// `runner report` renders the folder byte for byte.
#[test]
fn a_first_look_left_out_is_chosen_with_the_pairs_and_kept_on_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let sequential = SLEEPS_OF_D.replace("forks = 2\n", "").replace(
        "[analysis]",
        "[design.stop]\ndecide = true\nmax_forks = 7\n[analysis]",
    );
    let spec = write_spec(t, "d", &sequential);
    let (text, started) = chosen_then_resumed(t, &spec);
    assert!(
        text.contains("; min_forks 6 with them (a first look of at least 30 measured pairs"),
        "{text}"
    );
    // The second fork failed: the first was kept, with the first look chosen.
    assert_eq!(started["pairs"].as_u64(), Some(5), "{started}");
    assert_eq!(started["stop"]["min_forks"].as_u64(), Some(6), "{started}");
    assert_eq!(started["runs_per_fork"]["min_forks"], true, "{started}");
    let run = read_json(&t.join("out/run.json"));
    let forks = run["forks"].as_array().unwrap().len();
    assert!((6..=7).contains(&forks), "{forks} forks: {}", run["stops"]);
    let report = std::fs::read_to_string(t.join("out/report.md")).unwrap();
    assert!(
        report.contains("; min_forks 6 with them (a first look of at least 30 measured pairs, within 6 s of runs)"),
        "{report}"
    );
    renders_again_byte_for_byte(t);
}
