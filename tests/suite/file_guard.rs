//! One guard for every file runner writes, on the
//! real binary: `compare`, `report`, `analyze`, `merge` and `exec` never
//! replace a user's file, a link or a device; a report folder records the
//! files runner wrote (`.runner-files.json`) and only those are ever moved
//! or removed, so a user's `logo.svg` survives any number of runs. Every
//! case compares the file system before and after, byte for byte.

use crate::common;
use common::*;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

fn small(t: &Path) {
    write_spec(t, "small", SMALL_AA);
}

fn exec_out(t: &Path, out: &str) -> std::process::Output {
    run_in(t, &["exec", "small.toml", "--quiet", "--out", out])
}

fn is_char_device(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.file_type().is_char_device())
}

fn mkfifo(p: &Path) {
    use rustix::fs::{mknodat, FileType, Mode, CWD};
    mknodat(CWD, p, FileType::Fifo, Mode::from_raw_mode(0o644), 0).unwrap();
}

fn is_fifo(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_fifo())
}

/// `compare --out` onto a user's file, a link to it, a FIFO or
/// `/dev/null` is refused, exit 2, and nothing changes; its own output it
/// replaces, until the user edits it.
#[test]
fn compare_out_never_replaces_a_users_file_a_link_or_a_device() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    small(t);
    exec_ok(t, Path::new("small.toml"), "a", &[]);
    exec_ok(t, Path::new("small.toml"), "b", &[]);
    std::fs::write(t.join("imp.txt"), "important\n").unwrap();
    std::os::unix::fs::symlink("imp.txt", t.join("link.md")).unwrap();
    // The FIFO lives outside `t`: reading it for the tree would block.
    let fifo_dir = tempfile::tempdir().unwrap();
    let fifo = fifo_dir.path().join("pipe");
    mkfifo(&fifo);
    let before = tree(t);
    let cases: [(&str, &str); 4] = [
        ("imp.txt", "imp.txt is not a file runner wrote"),
        ("link.md", "link.md is a symbolic link (to imp.txt)"),
        (fifo.to_str().unwrap(), "is not a regular file"),
        ("/dev/null", "/dev/null is not a regular file"),
    ];
    for (out, says) in cases {
        let o = run_in(t, &["compare", "a", "b", "--out", out]);
        assert_refused(&o, &[says, "runner never replaces a file it did not write"]);
        assert_eq!(err_of(&o).lines().count(), 1, "{}", err_of(&o));
        assert_eq!(tree(t), before, "--out {out} changed something");
    }
    assert!(is_fifo(&fifo), "the FIFO is still a FIFO");
    assert!(is_char_device(Path::new("/dev/null")));

    // Its own file: written, recorded, replaced on the next compare.
    for _ in 0..2 {
        let o = run_in(t, &["compare", "a", "b", "--out", "cmp.md"]);
        assert!(o.status.success(), "{}", err_of(&o));
    }
    let record = read_json(&t.join(".runner-files.json"));
    let listed = record["files"]["cmp.md"].as_str().unwrap().to_string();
    assert_eq!(
        listed,
        sha256_hex(&std::fs::read_to_string(t.join("cmp.md")).unwrap())
    );
    assert!(record["files"].get("imp.txt").is_none());
    // Edited by the user: runner's no longer.
    std::fs::write(t.join("cmp.md"), "my edits\n").unwrap();
    let before = tree(t);
    let o = run_in(t, &["compare", "a", "b", "--out", "cmp.md"]);
    assert_refused(&o, &["cmp.md was changed since runner wrote it"]);
    assert_eq!(tree(t), before);
}

/// `report --out`, `analyze --out`, `merge OUT` and `exec --out` onto a
/// user's file, a link to it, a device or a folder with a user's files:
/// refused, exit 2, nothing changed.
#[test]
fn every_out_refuses_a_users_file_a_link_a_device_and_a_users_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    small(t);
    exec_ok(t, Path::new("small.toml"), "fin", &[]);
    for i in 1..=2 {
        let shard = format!("{i}/2");
        let out = format!("s{i}");
        let o = run_in(
            t,
            &[
                "exec",
                "small.toml",
                "--quiet",
                "--shard",
                &shard,
                "--out",
                &out,
            ],
        );
        assert!(o.status.success(), "{}", err_of(&o));
    }
    std::fs::write(t.join("imp.txt"), "important\n").unwrap();
    std::os::unix::fs::symlink("imp.txt", t.join("link")).unwrap();
    std::fs::create_dir(t.join("mine")).unwrap();
    std::fs::write(t.join("mine/notes.md"), "notes\n").unwrap();
    let before = tree(t);
    let report = |out: &str| run_in(t, &["report", "fin", "--out", out]);
    let analyze = |out: &str| {
        run_in(
            t,
            &[
                "analyze",
                "fin/pairs.csv",
                "--seed",
                "1",
                "--resamples",
                "100",
                "--out",
                out,
            ],
        )
    };
    let merge = |out: &str| run_in(t, &["merge", out, "s1", "s2"]);
    let cases: Vec<(std::process::Output, &[&str])> = vec![
        (report("imp.txt"), &["imp.txt is not a file runner wrote"]),
        (report("link"), &["--out link is a symbolic link"]),
        (report("/dev/null"), &["/dev/null is not a regular file"]),
        (
            report("mine/notes.md"),
            &["mine/notes.md is not a file runner wrote"],
        ),
        (
            analyze("imp.txt"),
            &["--out imp.txt is a file, not a folder"],
        ),
        (
            analyze("link"),
            &["--out link is a symbolic link (to imp.txt)"],
        ),
        (
            analyze("mine"),
            &["--out mine is a folder that runner did not write"],
        ),
        (merge("imp.txt"), &["OUT imp.txt is a file, not a folder"]),
        (merge("link"), &["OUT link is a symbolic link (to imp.txt)"]),
        (
            merge("mine"),
            &["OUT mine is a folder that runner did not write"],
        ),
        (
            exec_out(t, "imp.txt"),
            &["--out imp.txt is a file, not a folder"],
        ),
        (
            exec_out(t, "link"),
            &["--out link is a symbolic link (to imp.txt)"],
        ),
        (
            exec_out(t, "mine"),
            &["--out mine is a folder that runner did not write"],
        ),
    ];
    for (o, says) in &cases {
        assert_refused(o, says);
        assert_eq!(tree(t), before, "{says:?} changed something");
    }
    assert!(is_char_device(Path::new("/dev/null")));
    // The same outputs to new paths work, and record what they wrote.
    assert!(report("copy/r.md").status.success());
    let rec = read_json(&t.join("copy/.runner-files.json"));
    let mut names: Vec<&String> = rec["files"].as_object().unwrap().keys().collect();
    names.sort();
    assert_eq!(
        names,
        ["detection.svg", "forest.svg", "medians.svg", "r.md"]
    );
    assert!(analyze("imp").status.success());
    assert!(merge("m").status.success());
    for dir in ["imp", "m", "fin"] {
        let rec = read_json(&t.join(dir).join(".runner-files.json"));
        for f in [
            "run.json",
            "pairs.csv",
            "analysis.json",
            "report.md",
            "forest.svg",
        ] {
            let listed = rec["files"][f].as_str().unwrap_or_default();
            let bytes = std::fs::read(t.join(dir).join(f)).unwrap();
            assert_eq!(
                listed,
                sha256_hex(std::str::from_utf8(&bytes).unwrap()),
                "{dir}/{f}"
            );
        }
    }
}

/// A user's `logo.svg` in a report folder is never taken for a
/// plot. The next run refuses to move the folder aside; so does the one
/// after, when the logo is put into `DIR.old`; `runner report` re-renders
/// around it. The same holds in a folder of an older runner (no record).
#[test]
fn a_users_logo_survives_every_later_run() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    small(t);
    exec_ok(t, Path::new("small.toml"), "r", &[]);
    std::fs::write(t.join("r/logo.svg"), "<svg>my logo</svg>\n").unwrap();
    let before = tree(t);
    for _ in 0..2 {
        let o = exec_out(t, "r");
        assert_refused(&o, &["--out r holds files runner did not write (logo.svg)"]);
        assert_eq!(tree(t), before);
    }
    // `runner report` writes only its own files beside it.
    let o = run_in(t, &["report", "r"]);
    assert!(o.status.success(), "{}", err_of(&o));
    assert_eq!(tree(t), before, "re-rendering reproduces the folder");

    // The logo moved into r.old after the folder was replaced: the next
    // run would have removed r.old; it refuses instead.
    std::fs::remove_file(t.join("r/logo.svg")).unwrap();
    let o = exec_out(t, "r");
    assert!(o.status.success(), "{}", err_of(&o));
    assert!(t.join("r.old/report.md").is_file());
    std::fs::write(t.join("r.old/logo.svg"), "<svg>my logo</svg>\n").unwrap();
    let before = tree(t);
    let o = exec_out(t, "r");
    assert_refused(&o, &["r.old holds files runner did not write (logo.svg)"]);
    assert_eq!(tree(t), before);
    // Without the logo, r.old (runner's) is replaced by the previous r.
    std::fs::remove_file(t.join("r.old/logo.svg")).unwrap();
    let previous = std::fs::read(t.join("r/run.json")).unwrap();
    let o = exec_out(t, "r");
    assert!(o.status.success(), "{}", err_of(&o));
    assert_eq!(std::fs::read(t.join("r.old/run.json")).unwrap(), previous);

    // A report.md the user edited is no longer runner's either.
    std::fs::write(t.join("r/report.md"), "my edits\n").unwrap();
    let before = tree(t);
    assert_refused(
        &exec_out(t, "r"),
        &["report.md, changed since runner wrote it"],
    );
    assert_refused(
        &run_in(t, &["report", "r"]),
        &["r/report.md was changed since runner wrote it"],
    );
    assert_eq!(tree(t), before);

    // An older runner's folder (no record, as the committed ones): its
    // fixed names are runner's, a `*.svg` by pattern is not.
    exec_ok(t, Path::new("small.toml"), "old", &[]);
    std::fs::remove_file(t.join("old/.runner-files.json")).unwrap();
    std::fs::write(t.join("old/logo.svg"), "<svg>my logo</svg>\n").unwrap();
    let before = tree(t);
    assert_refused(
        &exec_out(t, "old"),
        &["--out old holds files runner did not write (logo.svg)"],
    );
    assert_eq!(tree(t), before);
    // Re-rendered, it gains a record of runner's files only.
    let o = run_in(t, &["report", "old"]);
    assert!(o.status.success(), "{}", err_of(&o));
    let rec = read_json(&t.join("old/.runner-files.json"));
    assert!(rec["files"].get("logo.svg").is_none(), "{rec}");
    assert!(rec["files"]["pairs.csv"].is_string(), "{rec}");
    assert_eq!(
        std::fs::read_to_string(t.join("old/logo.svg")).unwrap(),
        "<svg>my logo</svg>\n"
    );
}

const NOOP_GATE: &str = r#"
name = "gate"
seed = 11
[strategies.noop]
kind = "noop"
[design]
baseline = "noop"
treatment = "noop"
forks = 3
warmup_pairs = 3
pairs = 30
[analysis]
resamples = 100
[gate]
max_slowdown = "2us"
self_check = false
"#;

/// Gate outputs: `$GITHUB_STEP_SUMMARY` is appended to only as a regular
/// file (never through a link, never to a device or FIFO; a warning, the
/// verdict stands); gate.json is runner's until the user edits it.
#[test]
fn gate_outputs_go_through_the_guard() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    write_spec(t, "gate", NOOP_GATE);
    std::fs::write(t.join("imp.txt"), "important\n").unwrap();
    std::os::unix::fs::symlink("imp.txt", t.join("summary-link")).unwrap();
    let fifo_dir = tempfile::tempdir().unwrap();
    let fifo = fifo_dir.path().join("pipe");
    mkfifo(&fifo);
    for (summary, says) in [
        (t.join("summary-link"), "symbolic link"),
        (fifo.clone(), "not a regular file"),
    ] {
        let _ = std::fs::remove_dir_all(t.join("out"));
        let _ = std::fs::remove_dir_all(t.join("out.old"));
        let o = runner()
            .current_dir(t)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .args(["exec", "gate.toml", "--out", "out", "--quiet"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", err_of(&o));
        let err = err_of(&o);
        assert!(
            err.contains("cannot append the gate's verdict to GITHUB_STEP_SUMMARY")
                && err.contains(says),
            "{err}"
        );
        assert!(t.join("out/gate.json").is_file());
    }
    assert_eq!(
        std::fs::read_to_string(t.join("imp.txt")).unwrap(),
        "important\n"
    );
    assert!(std::fs::symlink_metadata(t.join("summary-link"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(is_fifo(&fifo));
    // gate.json edited by the user: `runner report` refuses before writing
    // anything (report.md included).
    std::fs::write(t.join("out/gate.json"), "{}\n").unwrap();
    std::fs::remove_file(t.join("imp.txt")).unwrap();
    std::fs::remove_file(t.join("summary-link")).unwrap();
    let before = tree(t);
    assert_refused(
        &run_in(t, &["report", "out"]),
        &["out/gate.json was changed since runner wrote it"],
    );
    assert_eq!(tree(t), before);
}
