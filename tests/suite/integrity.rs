//! The raw data is bound to its run: `report`
//! and `--resume` refuse, exit 2, data or a run.json that is not the run's,
//! naming the fork file or the key, never panicking, never computing a
//! number from it and never changing a file.

use crate::common;
use common::faults::printed_resume;
use common::*;
use std::path::{Path, PathBuf};

/// An edit of run.json.
type Edit = Box<dyn Fn(&mut serde_json::Value)>;

/// A finished run of SMALL_AA in `t/fin`.
fn finished(t: &Path) -> PathBuf {
    let spec = write_spec(t, "small", SMALL_AA);
    exec_ok(t, &spec, "fin", &[])
}

/// An unfinished run in `t/p.partial` with some forks kept; returns the
/// printed resume command.
fn unfinished(t: &Path) -> Vec<String> {
    write_spec(t, "small", SMALL_AA);
    let o = runner()
        .current_dir(t)
        .env("RUNNER_FAULT", "exit=3@cell=1,fork=1,pair=2")
        .args(["exec", "small.toml", "--quiet", "--out", "p"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", err_of(&o));
    printed_resume(&err_of(&o))
}

/// Runs `args` in a copy of `t` changed by `damage`; asserts the refusal
/// and that the copy is left exactly as damaged.
fn refused_after(t: &Path, args: &[&str], damage: impl FnOnce(&Path), says: &[&str]) {
    let copy = tempfile::tempdir().unwrap();
    copy_tree(t, copy.path());
    damage(copy.path());
    let before = tree(copy.path());
    let o = run_in(copy.path(), args);
    assert_refused(&o, says);
    assert_eq!(tree(copy.path()), before, "{args:?} changed a file");
}

fn pairs_lines(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("pairs.csv"))
        .unwrap()
        .lines()
        .map(|l| format!("{l}\n"))
        .collect()
}

fn write_lines(path: &Path, lines: &[String]) {
    std::fs::write(path, lines.concat()).unwrap();
}

#[test]
fn report_refuses_rows_that_are_not_the_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    finished(t);
    let report = ["report", "fin"];
    // A duplicated row (before: the fork analysed with one pair too many).
    refused_after(
        t,
        &report,
        |c| {
            let mut lines = pairs_lines(&c.join("fin"));
            let row = lines[60].clone();
            lines.insert(60, row);
            write_lines(&c.join("fin/pairs.csv"), &lines);
        },
        &["fin/pairs.csv: the rows of cell 0 fork 1 (fork file c0-f1.csv): the SHA-256 differs from the one recorded when cell 0 fork 1 finished"],
    );
    // 100 rows cut at a line end (before: re-rendered silently).
    refused_after(
        t,
        &report,
        |c| {
            let lines = pairs_lines(&c.join("fin"));
            write_lines(&c.join("fin/pairs.csv"), &lines[..lines.len() - 100]);
        },
        &[
            "fin/pairs.csv:",
            "the SHA-256 differs from the one recorded",
        ],
    );
    // One number changed.
    refused_after(
        t,
        &report,
        |c| {
            let mut lines = pairs_lines(&c.join("fin"));
            lines[100] = lines[100].replace('\n', "1\n");
            write_lines(&c.join("fin/pairs.csv"), &lines);
        },
        &["the SHA-256 differs from the one recorded"],
    );
    // The header changed: every fork's rows are intact, the file is not.
    refused_after(
        t,
        &report,
        |c| {
            let mut lines = pairs_lines(&c.join("fin"));
            lines[0] = lines[0].replace("spin_ns", "spin");
            write_lines(&c.join("fin/pairs.csv"), &lines);
        },
        &["the first line is not the header"],
    );
}

/// Another run's pairs.csv under this run.json (before: "3000 measured
/// pairs" reported for data of 1500).
#[test]
fn report_refuses_another_runs_pairs() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    finished(t);
    let spec = write_spec(t, "small", SMALL_AA);
    exec_ok(t, &spec, "other", &["--set", "design.forks=4"]);
    exec_ok(t, &spec, "same", &[]);
    for other in ["other", "same"] {
        refused_after(
            t,
            &["report", "fin"],
            |c| {
                std::fs::copy(c.join(other).join("pairs.csv"), c.join("fin/pairs.csv")).unwrap();
            },
            &["fin/pairs.csv:"],
        );
    }
}

/// run.json damaged or edited: every check names the key (before,
/// `design.baseline` naming no strategy panicked in the report).
#[test]
fn report_refuses_an_edited_run_json_naming_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    finished(t);
    let run = |c: &Path| c.join("fin/run.json");
    let cases: Vec<(Edit, &str)> = vec![
        (
            Box::new(|v| v["spec"]["experiment"]["design"]["baseline"] = "nothing".into()),
            "spec.experiment.design.baseline differs from what the recorded spec.toml gives",
        ),
        (
            Box::new(|v| {
                let toml = v["spec"]["toml"]
                    .as_str()
                    .unwrap()
                    .replace("baseline = \"memory\"", "baseline = \"nothing\"");
                v["spec"]["sha256"] = sha256_hex(&toml).into();
                v["spec"]["toml"] = toml.into();
            }),
            "the recorded spec.toml is not a valid spec: spec.toml:",
        ),
        (
            Box::new(|v| v["spec"]["toml"] = "seed = 8".into()),
            "spec.sha256 is not the SHA-256 of spec.toml",
        ),
        (
            Box::new(|v| v["cells"][1]["delay_ns"] = 60000.into()),
            "cells[1].delay_ns differs from the cells the spec gives",
        ),
        (
            Box::new(|v| v["seeds"]["master"] = 8.into()),
            "seeds.master is 8 (drawn: false), but the spec's seed is 7",
        ),
        (
            Box::new(|v| v["jobs"][0]["cell"] = 99.into()),
            "jobs[0] is cell 99 fork",
        ),
        (
            Box::new(|v| v["jobs"][0]["seed"] = 1.into()),
            "jobs[0].seed is 1, but the master seed gives cell",
        ),
        (
            Box::new(|v| v["forks"][1]["rows"] = 46.into()),
            "is recorded with 46 rows, but the spec gives every fork 5 warm-up + 40 pairs",
        ),
        (
            Box::new(|v| v["forks"].as_array_mut().unwrap().truncate(3)),
            "the run is marked finished but has no record of cell 1 fork 1",
        ),
        (
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("pairs_sha256");
            }),
            "pairs_sha256 is missing",
        ),
        (
            Box::new(|v| v["pairs_sha256"] = serde_json::Value::Null),
            "pairs_sha256 is missing: nothing binds pairs.csv to this run",
        ),
        (
            Box::new(|v| v["seeds"]["bootstrap"][0]["seed"] = 5.into()),
            "seeds.bootstrap is not what the master seed derives",
        ),
    ];
    for (edit, says) in cases {
        refused_after(t, &["report", "fin"], |c| edit_json(&run(c), edit), &[says]);
    }
    // Not JSON at all, or cut short.
    refused_after(
        t,
        &["report", "fin"],
        |c| {
            let text = std::fs::read_to_string(run(c)).unwrap();
            std::fs::write(run(c), &text[..text.len() / 2]).unwrap();
        },
        &["fin/run.json is not a valid run.json: EOF while parsing"],
    );
}

/// `--resume` checks every kept fork and run.json before running anything.
#[test]
fn resume_refuses_forks_or_a_run_json_that_are_not_the_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let resume = unfinished(t);
    let resume: Vec<&str> = resume.iter().map(String::as_str).collect();
    let forks = t.join("p.partial/forks");
    let (c, f) = common::faults::kept_forks(&t.join("p.partial"))[0];
    let csv = format!("c{c}-f{f}.csv");
    assert!(forks.join(&csv).is_file());
    let fork_csv = move |d: &Path| d.join("p.partial/forks").join(format!("c{c}-f{f}.csv"));
    // A duplicated row (before: resumed to exit 0 with 46 rows in that fork).
    refused_after(
        t,
        &resume,
        |d| {
            let text = std::fs::read_to_string(fork_csv(d)).unwrap();
            let first = text.lines().next().unwrap();
            std::fs::write(fork_csv(d), format!("{first}\n{text}")).unwrap();
        },
        &[&format!("p.partial/forks/{csv}: the SHA-256 differs from the one recorded when cell {c} fork {f} finished"), "delete p.partial/forks/"],
    );
    // Cut at a line end.
    refused_after(
        t,
        &resume,
        |d| {
            let text = std::fs::read_to_string(fork_csv(d)).unwrap();
            let cut: Vec<&str> = text.lines().take(30).collect();
            std::fs::write(fork_csv(d), cut.join("\n") + "\n").unwrap();
        },
        &[&format!("p.partial/forks/{csv}: the SHA-256 differs")],
    );
    // A record that names another fork.
    refused_after(
        t,
        &resume,
        |d| {
            edit_json(&d.join(format!("p.partial/forks/c{c}-f{f}.json")), |v| {
                v["fork"] = (f + 7).into()
            })
        },
        &["it records cell", "not the fork its name says"],
    );
    // run.json edited: a cell's delay, the master seed, a job's cell out of
    // range (before: a panic, index out of bounds).
    for (edit, says) in [
        (
            Box::new(|v: &mut serde_json::Value| v["cells"][1]["delay_ns"] = 1.into()) as Edit,
            "cells[1].delay_ns differs",
        ),
        (
            Box::new(|v: &mut serde_json::Value| v["seeds"]["master"] = 99.into()),
            "seeds.master is 99",
        ),
        (
            Box::new(|v: &mut serde_json::Value| v["jobs"][3]["cell"] = 7.into()),
            "jobs[3] is cell 7 fork",
        ),
    ] {
        refused_after(
            t,
            &resume,
            |d| edit_json(&d.join("p.partial/run.json"), edit),
            &["p.partial/run.json: ", says],
        );
    }
    // Untouched, it resumes.
    let o = run_in(t, &resume);
    assert!(o.status.success(), "{}", err_of(&o));
}
