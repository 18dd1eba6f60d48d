//! Faults on the real binary: crashed, hung and garbled workers, Ctrl-C,
//! two execs on one folder, unwritable and full disks, broken templates, a
//! changed spec on resume. Each must keep every finished fork, exit with the
//! documented code, and say in one sentence what happened and what to do.
//! Workers fail on purpose through the `RUNNER_FAULT` hook (src/exec/fault.rs).

use crate::common;
use common::faults::*;
use common::*;
use std::time::Duration;

/// 2 cells x 2 forks of 5 + 40 pairs.
const ROWS_PER_FORK: usize = 45;

#[test]
fn crashed_hung_or_garbled_workers_keep_finished_forks_and_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "small", SMALL_AA);
    // The third job fails, so the first two are kept.
    let (reference, (c, f), before) = reference_run(t, &spec);

    let cases: [(&str, &[&str], &[&str]); 5] = [
        (
            "panic@cell={c},fork={f},pair=10",
            &[],
            &["the worker exited with code 101", "injected fault"],
        ),
        (
            "exit=3@cell={c},fork={f},pair=10",
            &[],
            &[
                "the worker exited with code 3",
                "worker stderr (last lines):\n  injected fault (RUNNER_FAULT): exit 3",
            ],
        ),
        (
            "sigkill@cell={c},fork={f}",
            &[],
            &["the worker was killed by signal 9 (SIGKILL)"],
        ),
        (
            "garbage@cell={c},fork={f},pair=10",
            &[],
            &["the worker printed a malformed record on line"],
        ),
        (
            "hang@cell={c},fork={f},pair=10",
            &["--set", "design.fork_timeout_s=1"],
            &["after the fork timeout of 1 s (design.fork_timeout_s) and was killed"],
        ),
    ];
    for (i, (fault, extra, says)) in cases.iter().enumerate() {
        let fault = fault
            .replace("{c}", &c.to_string())
            .replace("{f}", &f.to_string());
        let out = format!("out{i}");
        let o = exec(t, &spec, &out, Some(&fault), extra);
        let err = stderr(&o);
        eprintln!("--- {fault}\n{err}");
        assert_eq!(o.status.code(), Some(1), "{fault}: {err}");
        let seed = read_json(&t.join(format!("{out}.partial/run.json")))["jobs"][2]["seed"]
            .as_u64()
            .unwrap();
        assert!(
            err.starts_with(&format!(
                "error: cell {c} fork {f} (job seed {seed}) failed: "
            )),
            "{fault}: {err}"
        );
        for s in *says {
            assert!(err.contains(s), "{fault}: expected {s:?} in {err}");
        }
        if !fault.starts_with("panic") {
            assert!(!err.contains("panicked"), "{err}");
        }
        assert!(
            err.contains("2 of 4 forks finished and are kept in"),
            "{err}"
        );
        let partial = t.join(format!("{out}.partial"));
        assert_eq!(kept_forks(&partial), before, "{fault}");
        assert_whole_records(&partial, ROWS_PER_FORK);
        assert!(!partial.join("lock").exists(), "lock released");
        assert!(!t.join(&out).exists());

        run_printed_resume(t, &err);
        assert!(!partial.exists());
        assert_same_run(&t.join(&out), &reference);
    }
}

/// Ctrl-C while the third job's worker runs: to the whole process group (a
/// terminal) and to the parent alone (`kill -INT`). Either way the worker
/// stops, the finished forks stay whole, the half fork is not counted, the
/// lock goes, and the printed command finishes the run.
#[test]
fn ctrl_c_keeps_finished_forks_and_the_run_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "small", SMALL_AA);
    let (reference, (c, f), before) = reference_run(t, &spec);

    for (out, to_group) in [("group", true), ("parent", false)] {
        // The worker hangs after 10 measured pairs: a fork in progress.
        let child = spawn_exec(
            t,
            &spec,
            out,
            &format!("hang@cell={c},fork={f},pair=10"),
            None,
        );
        let partial = t.join(format!("{out}.partial"));
        let tmp_csv = partial.join(format!("forks/c{c}-f{f}.csv.tmp"));
        wait_for("two finished forks", Duration::from_secs(60), || {
            partial.join("forks").is_dir() && kept_forks(&partial).len() == 2 && tmp_csv.exists()
        });
        std::thread::sleep(Duration::from_millis(300));
        let parent = child.id();
        let worker = worker_pid(parent).expect("a worker runs");
        let target = if to_group {
            -(parent as i32)
        } else {
            parent as i32
        };
        assert!(common::leftovers::send_signal(target, libc::SIGINT));
        let o = wait_output(child, Duration::from_secs(20));
        let err = stderr(&o);
        eprintln!("--- SIGINT to {out}\n{err}");
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.starts_with("error: interrupted"), "{err}");
        assert!(err.contains(&format!("cell {c} fork {f}")), "{err}");
        assert!(err.contains("2 of 4 forks finished"), "{err}");
        assert_eq!(
            err.lines().count(),
            2,
            "one sentence plus what to do: {err}"
        );
        wait_for("the worker to stop", Duration::from_secs(5), || {
            gone(worker)
        });
        assert_eq!(kept_forks(&partial), before);
        assert_whole_records(&partial, ROWS_PER_FORK);
        assert!(!tmp_csv.exists(), "the unfinished fork is discarded");
        assert!(!partial.join("lock").exists(), "lock released");

        run_printed_resume(t, &err);
        assert_same_run(&t.join(out), &reference);
    }
}

#[test]
fn a_second_exec_on_the_same_folder_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "small", SMALL_AA);
    let first = spawn_exec(t, &spec, "out", "hang", None);
    let partial = t.join("out.partial");
    wait_for("the first exec's lock", Duration::from_secs(30), || {
        partial.join("lock").exists() && partial.join("run.json").exists()
    });
    let second = exec(t, &spec, "out", None, &[]);
    let resume = exec(t, &spec, "out", None, &["--resume", "out.partial"]);
    common::leftovers::send_signal(first.id() as i32, libc::SIGINT);
    let o = wait_output(first, Duration::from_secs(20));
    assert_eq!(o.status.code(), Some(1));
    for o in [second, resume] {
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains("out.partial is in use by another runner exec (pid"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // The refused execs did not disturb the first one, which stopped
    // before any fork finished and so kept nothing that would block the
    // next exec.
    assert!(
        stderr(&o).contains("no fork had finished, so nothing was kept"),
        "{}",
        stderr(&o)
    );
    assert!(!partial.exists());
}

#[test]
fn an_output_folder_under_a_file_is_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "small", SMALL_AA);
    std::fs::write(t.join("file"), "not a folder").unwrap();
    let o = exec(t, &spec, "file/out", None, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cannot create the output folder file/out"),
        "{err}"
    );
    assert!(err.to_lowercase().contains("not a directory"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(
        std::fs::read_to_string(t.join("file")).unwrap(),
        "not a folder"
    );
}

/// A 64 KiB tmpfs fills during the second fork: exit 1, the disk named, the
/// first fork kept.
#[test]
#[cfg_attr(
    not(runner_tmpfs),
    ignore = "SKIPPED: cannot mount a tmpfs (needs root with CAP_SYS_ADMIN)"
)]
fn a_disk_that_fills_mid_run_fails_the_run_with_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let disk = t.join("disk");
    let _disk = small_tmpfs(&disk, "64k");
    let spec = write_spec(t, "small", SMALL_AA);
    // Each fork writes about 35 KB of records.
    let o = exec(
        t,
        &spec,
        "disk/out",
        None,
        &[
            "--set",
            "grid.delay_us=[0]",
            "--set",
            "design.forks=3",
            "--set",
            "design.pairs=600",
        ],
    );
    let err = stderr(&o);
    eprintln!("{err}");
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(err.contains("--resume disk/out.partial"), "{err}");
    assert!(!kept_forks(&disk.join("out.partial")).is_empty());
    assert_whole_records(&disk.join("out.partial"), 605);
}

/// The disk fills after the last fork, while pairs.csv and the
/// report are written: exit 1, the resume command printed, every fork kept;
/// with room again, the printed command renders the report.
#[test]
#[cfg_attr(
    not(runner_tmpfs),
    ignore = "SKIPPED: cannot mount a tmpfs (needs root with CAP_SYS_ADMIN)"
)]
fn a_disk_that_fills_after_the_forks_prints_the_resume_command() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let disk = t.join("disk");
    let _disk = small_tmpfs(&disk, "64k");
    let spec = write_spec(t, "small", SMALL_AA);
    // One fork of about 35 KB fits; pairs.csv, a second copy, does not.
    let set = [
        "--set",
        "grid.delay_us=[0]",
        "--set",
        "design.forks=1",
        "--set",
        "design.pairs=600",
    ];
    let o = exec(t, &spec, "disk/out", None, &set);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(
        err.contains("every fork finished and is kept in disk/out.partial"),
        "{err}"
    );
    assert_eq!(kept_forks(&disk.join("out.partial")), [(0, 0)]);
    assert!(remount(&disk, "4m"));
    run_printed_resume(t, &err);
    assert!(disk.join("out/report.md").is_file());
}

#[test]
fn broken_templates_are_exit_2_and_leave_the_report_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "small", SMALL_AA);
    assert!(exec(t, &spec, "out", None, &[]).status.success());
    let out = t.join("out");
    let before = snapshot(&out);
    std::fs::write(t.join("syntax.j2"), "# {{ spec.title }}\n{% if %}\n").unwrap();
    std::fs::write(
        t.join("undefined.j2"),
        "# {{ spec.title }}\n{{ no_such.thing }}\n",
    )
    .unwrap();

    // runner report --template
    for (name, says) in [
        ("syntax.j2", "syntax.j2:2: template error"),
        ("undefined.j2", "undefined.j2:2: template error"),
    ] {
        let o = runner()
            .current_dir(t)
            .args(["report", "out", "--template", name])
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(says), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(snapshot(&out), before, "{name} changed the report folder");
    }

    // A spec whose report.template does not parse fails before any fork.
    let with = |template: &str| format!("{SMALL_AA}\n[report]\ntemplate = \"{template}\"\n");
    let bad = write_spec(t, "bad", &with("syntax.j2"));
    let o = exec(t, &bad, "out", None, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("syntax.j2:2: template error"), "{err}");
    assert!(!t.join("out.partial").exists());
    assert_eq!(snapshot(&out), before);

    // One that fails only when rendered: the run's data is kept, the old
    // report untouched, and once the template is fixed the resume renders.
    let late = write_spec(t, "late", &with("undefined.j2"));
    let o = exec(t, &late, "out", None, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("undefined.j2:2: template error"), "{err}");
    assert!(
        err.contains("every fork finished and is kept in out.partial"),
        "{err}"
    );
    assert_eq!(snapshot(&out), before);
    std::fs::write(t.join("undefined.j2"), "# {{ spec.title }}\nfixed\n").unwrap();
    run_printed_resume(t, &err);
    assert_eq!(
        std::fs::read_to_string(out.join("report.md")).unwrap(),
        "# Small A/A\nfixed"
    );
}

#[test]
fn resuming_with_a_changed_spec_is_refused_naming_the_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "small", SMALL_AA);
    // The second job of seed 7's schedule: one fork is kept to resume.
    let o = exec(t, &spec, "out", Some("exit=3@cell=1,fork=1,pair=1"), &[]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(kept_forks(&t.join("out.partial")), [(0, 1)]);
    let o = exec(
        t,
        &spec,
        "out",
        None,
        &[
            "--resume",
            "out.partial",
            "--set",
            "design.pairs=41",
            "--set",
            "analysis.resamples=300",
        ],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("analysis.resamples, design.pairs"), "{err}");
    assert!(
        err.contains("the spec changed since this run was started"),
        "{err}"
    );
    assert!(t.join("out.partial/run.json").is_file());
    assert!(!t.join("out.partial/lock").exists());
}

/// A strategy that returns a different result stops the run before any
/// timing, with exit 2 (the experiment must change; no re-run helps),
/// naming the strategies and the input, and keeps nothing. The test hook
/// `wrong-result` flips the last bit of the treatment's projection (and
/// of its fingerprints).
#[test]
fn a_strategy_that_disagrees_stops_the_run_naming_strategy_and_input() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    // Two instances (different names, same kind): the arms disagree.
    let ab = SMALL_AA.replace(
        "[design]\nbaseline = \"memory\"\ntreatment = \"memory\"",
        "[strategies.other]\nkind = \"in-memory\"\n[design]\nbaseline = \"memory\"\ntreatment = \"other\"",
    );
    assert_ne!(ab, SMALL_AA);
    let spec = write_spec(t, "ab", &ab);
    let o = exec(t, &spec, "ab", Some("wrong-result"), &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "baseline `memory` (in-memory) and treatment `other` (in-memory) disagree on the same input (input "
        ),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(!err.contains("--resume"), "{err}");
    assert!(!t.join("ab.partial").exists());

    // One shared instance (A/A): it agrees with itself, but not with the
    // in-memory calculation.
    let spec = write_spec(t, "aa", SMALL_AA);
    let o = exec(t, &spec, "aa", Some("wrong-result"), &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("strategy `memory` (in-memory) disagrees with the in-memory calculation on the same input (input "),
        "{err}"
    );
}

/// The fault hook exists only in debug builds (which `cargo test`
/// runs); a debug build records its profile, and the hook when set, in
/// run.json, and the report says the run is not a measurement to compare.
#[test]
fn a_debug_build_and_an_active_fault_hook_are_recorded_and_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "small", SMALL_AA);
    let fault = "pause=1@cell=0,fork=0,pair=3";
    for (out, hook) in [("plain", None), ("hooked", Some(fault))] {
        let o = exec(t, &spec, out, hook, &[]);
        assert!(o.status.success(), "{}", stderr(&o));
        let run = read_json(&t.join(out).join("run.json"));
        assert_eq!(run["build"]["profile"], "debug");
        assert_eq!(
            run["build"]["fault"],
            hook.map_or(serde_json::Value::Null, Into::into)
        );
        let report = std::fs::read_to_string(t.join(out).join("report.md")).unwrap();
        assert!(
            report
                .contains("- **Not a measurement to compare:** made with a debug build of runner"),
            "{report}"
        );
        assert_eq!(
            report.contains(&format!("the test hook `RUNNER_FAULT={fault}` was active")),
            hook.is_some()
        );
    }
}

/// The committed reports were made by release builds, with no hook.
#[test]
#[cfg_attr(not(runner_git), ignore = "SKIPPED: not a git checkout")]
fn every_committed_report_was_made_by_a_release_build() {
    let dirs = common::committed::reports();
    assert!(dirs.len() > 10, "{dirs:?}");
    for dir in dirs {
        let run = read_json(&dir.join("run.json"));
        assert_eq!(run["build"]["profile"], "release", "{}", dir.display());
        assert!(
            run["build"].get("fault").is_none_or(|f| f.is_null()),
            "{}",
            dir.display()
        );
        let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
        assert!(
            !report.contains("Not a measurement to compare"),
            "{}",
            dir.display()
        );
    }
}
