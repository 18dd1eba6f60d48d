//! The output folder on the real binary:
//! runner never replaces, deletes or overwrites what it did not write; it
//! refuses before anything runs, exit 2, and leaves every file as it was.

use crate::common;
use common::faults::{kept_forks, printed_resume};
use common::*;
use std::path::Path;

fn small(t: &Path) -> std::path::PathBuf {
    write_spec(t, "small", SMALL_AA)
}

fn exec_out(t: &Path, out: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["exec", "small.toml", "--quiet", "--out", out];
    args.extend_from_slice(extra);
    run_in(t, &args)
}

/// As reproduced: `u/` holds a user's notes and `u.old/` a user's
/// folder; before, runner deleted both. Now: refused before anything runs.
#[test]
fn an_out_that_is_not_runners_is_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    small(t);
    std::fs::create_dir_all(t.join("u/s")).unwrap();
    std::fs::create_dir_all(t.join("u.old")).unwrap();
    std::fs::write(t.join("u/notes.txt"), "x\n").unwrap();
    std::fs::write(t.join("u.old/i.txt"), "y\n").unwrap();
    std::fs::write(t.join("file"), "a file\n").unwrap();
    std::os::unix::fs::symlink("u", t.join("link")).unwrap();
    // A link to a real report folder is refused too: neither the link nor
    // its target is replaced.
    exec_ok(t, Path::new("small.toml"), "real", &[]);
    std::os::unix::fs::symlink("real", t.join("link-to-report")).unwrap();
    let before = tree(t);

    let cases: [(&str, &[&str]); 6] = [
        (
            "u",
            &[
                "--out u is a folder that runner did not write",
                "choose another --out",
            ],
        ),
        ("file", &["--out file is a file, not a folder"]),
        ("link", &["--out link is a symbolic link (to u)"]),
        (
            "link-to-report",
            &["--out link-to-report is a symbolic link (to real)"],
        ),
        (".", &["--out . does not name a folder"]),
        ("..", &["--out .. does not name a folder"]),
    ];
    for (out, says) in cases {
        let o = exec_out(t, out, &[]);
        assert_refused(&o, says);
        assert_eq!(err_of(&o).lines().count(), 1, "{}", err_of(&o));
        assert_eq!(tree(t), before, "--out {out} changed something");
    }
    // The current folder, named by its absolute path, or a parent of it.
    let sub = t.join("u/s");
    for out in [sub.clone(), t.join("u")] {
        let o = runner()
            .current_dir(&sub)
            .args(["exec", "../../small.toml", "--quiet", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        assert_refused(&o, &[]);
        assert_eq!(tree(t), before);
    }
}

/// A report folder runner wrote is replaced only once the new one is whole;
/// the previous one is kept in `DIR.old` (replacing an older report there),
/// and a `DIR.old` that is not runner's blocks the run before it starts.
#[test]
fn a_report_folder_is_replaced_and_the_previous_one_kept_in_out_old() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    small(t);
    let out = exec_ok(t, Path::new("small.toml"), "r", &[]);
    let first = tree(&out);
    // The replaced report, whole, and a .gitignore that keeps it out of
    // git (which the folder's record lists as runner's).
    let kept = |dir: &Path| {
        let mut files = tree(dir);
        let ignore = files.remove(Path::new(".gitignore"));
        assert_eq!(
            ignore.as_deref(),
            Some(&b"# runner: the report a newer run replaced, kept out of git\n*\n"[..])
        );
        files.remove(Path::new(".runner-files.json"));
        files
    };
    let without_record = |mut files: std::collections::BTreeMap<std::path::PathBuf, Vec<u8>>| {
        files.remove(Path::new(".runner-files.json"));
        files
    };
    exec_ok(t, Path::new("small.toml"), "r", &[]);
    assert_eq!(
        kept(&t.join("r.old")),
        without_record(first.clone()),
        "the previous report, whole"
    );
    let second = tree(&out);
    assert_ne!(second, first, "a new run_id, new timings");
    exec_ok(t, Path::new("small.toml"), "r", &[]);
    assert_eq!(kept(&t.join("r.old")), without_record(second));
    assert!(!t.join("r.partial").exists());

    // A user's file in the report folder, or a user's r.old: refused,
    // nothing changed.
    std::fs::write(out.join("notes.md"), "mine\n").unwrap();
    let before = tree(t);
    assert_refused(
        &exec_out(t, "r", &[]),
        &["holds files runner did not write (notes.md)"],
    );
    assert_eq!(tree(t), before);
    std::fs::remove_file(out.join("notes.md")).unwrap();
    std::fs::remove_dir_all(t.join("r.old")).unwrap();
    std::fs::create_dir(t.join("r.old")).unwrap();
    std::fs::write(t.join("r.old/i.txt"), "y\n").unwrap();
    let before = tree(t);
    assert_refused(
        &exec_out(t, "r", &[]),
        &["--out r holds an earlier report, which a new run moves to r.old, but r.old"],
    );
    assert_eq!(tree(t), before);
}

/// A finished folder is not resumed (it was re-measured and
/// overwritten, keeping the old run id); only an unfinished .partial is.
#[test]
fn a_finished_folder_is_never_resumed() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    small(t);
    exec_ok(t, Path::new("small.toml"), "fin", &[]);
    // A finished run that was not moved into place (e.g. killed between the
    // last write and the rename) looks like this.
    std::fs::create_dir(t.join("done.partial")).unwrap();
    for f in std::fs::read_dir(t.join("fin")).unwrap().flatten() {
        std::fs::copy(f.path(), t.join("done.partial").join(f.file_name())).unwrap();
    }
    let before = tree(t);
    assert_refused(
        &exec_out(t, "fin", &["--resume", "fin"]),
        &["fin holds a run that finished at", "nothing to resume"],
    );
    assert_refused(
        &run_in(t, &["exec", "small.toml", "--resume", "fin"]),
        &["fin does not end in .partial"],
    );
    assert_refused(
        &run_in(t, &["exec", "small.toml", "--resume", "done.partial"]),
        &[
            "done.partial holds a run that finished at",
            "runner report done.partial",
        ],
    );
    assert_eq!(tree(t), before);
}

/// `report DIR --out` never overwrites the raw data, a user's file,
/// or anything inside DIR but its report.md.
#[test]
fn report_out_never_overwrites_raw_data_or_a_users_file() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    small(t);
    exec_ok(t, Path::new("small.toml"), "fin", &[]);
    std::fs::write(t.join("mine.md"), "my notes\n").unwrap();
    std::fs::create_dir(t.join("docs")).unwrap();
    std::fs::write(t.join("docs/forest.svg"), "my drawing\n").unwrap();
    let before = tree(t);
    for (out, says) in [
        (
            "fin/pairs.csv",
            "--out fin/pairs.csv is inside the report folder fin",
        ),
        (
            "fin/run.json",
            "--out fin/run.json is inside the report folder fin",
        ),
        (
            "fin/notes.md",
            "--out fin/notes.md is inside the report folder fin",
        ),
        (
            "fin/../fin/./analysis.json",
            "is inside the report folder fin",
        ),
        (
            "mine.md",
            "mine.md is not a file runner wrote; runner never replaces",
        ),
        ("docs/r.md", "docs/forest.svg is not a file runner wrote"),
    ] {
        let o = run_in(t, &["report", "fin", "--out", out]);
        assert_refused(&o, &[says]);
        assert_eq!(tree(t), before, "--out {out} changed something");
    }
    // Its own report.md, and a new file elsewhere (twice: the same bytes
    // again are not a user's file).
    assert!(run_in(t, &["report", "fin", "--out", "fin/report.md"])
        .status
        .success());
    assert_eq!(tree(t), before, "re-rendering reproduces the folder");
    for _ in 0..2 {
        let o = run_in(t, &["report", "fin", "--out", "copy/r.md"]);
        assert!(o.status.success(), "{}", err_of(&o));
    }
    assert!(t.join("copy/forest.svg").is_file());
}

/// The printed resume command names the folders this attempt used,
/// not the ones the run was first started with.
#[test]
fn the_resume_command_names_the_folders_given() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    small(t);
    let fault = "exit=3@cell=1,fork=1,pair=2";
    let o = runner()
        .current_dir(t)
        .env("RUNNER_FAULT", fault)
        .args(["exec", "small.toml", "--quiet", "--out", "a"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", err_of(&o));
    std::fs::rename(t.join("a.partial"), t.join("b.partial")).unwrap();
    let o = runner()
        .current_dir(t)
        .env("RUNNER_FAULT", fault)
        .args([
            "exec",
            "small.toml",
            "--quiet",
            "--out",
            "b",
            "--resume",
            "b.partial",
        ])
        .output()
        .unwrap();
    let err = err_of(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let cmd = printed_resume(&err);
    assert_eq!(
        cmd,
        [
            "exec",
            "small.toml",
            "--out",
            "b",
            "--quiet",
            "--resume",
            "b.partial"
        ],
        "{err}"
    );
    let o = run_in(t, &cmd.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", err_of(&o));
    assert!(t.join("b/report.md").is_file() && !t.join("a").exists());
}

/// A stray file in forks/ (a copy of a fork's record) is not a
/// second copy of that fork.
#[test]
fn a_stray_file_in_forks_is_not_counted() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    small(t);
    let o = runner()
        .current_dir(t)
        .env("RUNNER_FAULT", "exit=3@cell=1,fork=1,pair=2")
        .args(["exec", "small.toml", "--quiet", "--out", "o"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let partial = t.join("o.partial");
    let kept = kept_forks(&partial);
    assert!(!kept.is_empty());
    let (c, f) = kept[0];
    let forks = partial.join("forks");
    for ext in ["json", "csv"] {
        std::fs::copy(
            forks.join(format!("c{c}-f{f}.{ext}")),
            forks.join(format!("c{c}-f{f} copy.{ext}")),
        )
        .unwrap();
    }
    std::fs::write(forks.join("notes.txt"), "mine\n").unwrap();
    let o = run_in(
        t,
        &printed_resume(&err_of(&o))
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert!(o.status.success(), "{}", err_of(&o));
    let run = read_json(&t.join("o/run.json"));
    assert_eq!(run["forks"].as_array().unwrap().len(), 4);
    let (_, rows) = csv_rows(&t.join("o/pairs.csv"));
    assert_eq!(rows.len(), 4 * 45);
}

/// A kept fork's record starts with its own `format_version`: one written
/// before records had it (version 0, by an older runner) is resumed, read
/// with its version's values; one from a newer runner, or a current one
/// relabelled as version 0, is refused in one sentence, exit 2, before
/// anything runs.
#[test]
fn a_kept_fork_record_carries_its_version() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    small(t);
    let o = runner()
        .current_dir(t)
        .env("RUNNER_FAULT", "exit=3@cell=1,fork=1,pair=2")
        .args(["exec", "small.toml", "--quiet", "--out", "o"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let resume = printed_resume(&err_of(&o));
    let resume: Vec<&str> = resume.iter().map(String::as_str).collect();
    let partial = t.join("o.partial");
    let (c, f) = kept_forks(&partial)[0];
    let record = partial.join(format!("forks/c{c}-f{f}.json"));
    let text = std::fs::read_to_string(&record).unwrap();
    assert!(text.starts_with("{\n  \"format_version\": 1,\n"), "{text}");
    let current = read_json(&record);

    for (version, says) in [
        (
            serde_json::json!(2),
            "has format_version 2, written by a newer runner; this runner reads format_version 0 to 1: upgrade runner to read it",
        ),
        (
            serde_json::json!(0),
            "says format_version 0 but holds `format_version`, which runners write only from format_version 1 on",
        ),
    ] {
        let mut edited = current.clone();
        edited["format_version"] = version;
        std::fs::write(&record, serde_json::to_string_pretty(&edited).unwrap()).unwrap();
        let before = tree(t);
        let o = run_in(t, &resume);
        assert_refused(&o, &[&format!("c{c}-f{f}.json"), says]);
        assert_eq!(err_of(&o).trim_end().lines().count(), 1, "{}", err_of(&o));
        assert_eq!(tree(t), before);
    }

    // Version 0: no key, and none of the keys version 1 added to a fork.
    let mut old = current.clone();
    let fork = old.as_object_mut().unwrap();
    fork.remove("format_version");
    assert_eq!(fork.remove("resource_usage"), Some(false.into()));
    std::fs::write(&record, serde_json::to_string_pretty(&old).unwrap()).unwrap();
    let o = run_in(t, &resume);
    assert!(o.status.success(), "{}", err_of(&o));
    let run = read_json(&t.join("o/run.json"));
    let forks = run["forks"].as_array().unwrap();
    let resumed = forks
        .iter()
        .find(|r| r["cell"] == c && r["fork"] == f)
        .unwrap();
    assert_eq!(resumed["resource_usage"], false);
    assert!(
        resumed.get("format_version").is_none(),
        "run.json's forks are versioned by run.json"
    );
}

/// A disk full at the very start leaves no half-made `.partial`
/// (before, one that neither exec nor resume accepted); once there is room
/// the same command runs.
#[test]
#[cfg_attr(
    not(runner_tmpfs),
    ignore = "SKIPPED: cannot mount a tmpfs (needs root with CAP_SYS_ADMIN)"
)]
fn a_disk_full_at_the_start_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    small(t);
    let _disk = small_tmpfs(&t.join("disk"), "8k");
    // Fill what little there is.
    let mut i = 0;
    while std::fs::write(t.join(format!("disk/fill{i}")), vec![0u8; 4096]).is_ok() {
        i += 1;
    }
    let o = exec_out(t, "disk/out", &[]);
    let err = err_of(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    let left: Vec<_> = std::fs::read_dir(t.join("disk"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().into_string().unwrap())
        .filter(|n| !n.starts_with("fill"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    for j in 0..i {
        std::fs::remove_file(t.join(format!("disk/fill{j}"))).unwrap();
    }
    assert!(remount(&t.join("disk"), "2m"));
    let o = exec_out(t, "disk/out", &[]);
    assert!(o.status.success(), "{}", err_of(&o));
}
