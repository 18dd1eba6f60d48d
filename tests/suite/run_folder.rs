//! run.json has one owner (`run_folder`): exec, merge and
//! analyze folders all read back with its one checked reader, each records
//! the command that made it as parsed (`invocation`), an older folder's raw
//! argv (`command_line`) reads as the same, and a damaged or foreign
//! run.json is one sentence and exit 2 with the folder left as it was.

use crate::common;
use common::shards::{merge, shard, small};
use common::*;
use runner_folder::invocation::{AnalyzeArgs, ExecArgs, MergeArgs};
use runner_folder::Invocation;
use std::path::Path;

const PAIRS: &str = "\
cell,fork,pair,first,baseline_ns,treatment_ns
a,1,0,baseline,1000,1100
a,1,1,treatment,1010,1090
a,2,0,treatment,1200,1290
a,2,1,baseline,1190,1300
";

fn report(dir: &Path) -> std::process::Output {
    runner()
        .current_dir(dir.parent().unwrap())
        .arg("report")
        .arg(dir)
        .output()
        .unwrap()
}

/// A report without its Code line: a run written before version 2
/// recorded no user's code, so that line says so where the run it was
/// made from says what it found.
fn but_code(report: &[u8]) -> String {
    String::from_utf8_lossy(report)
        .lines()
        .filter(|l| !l.starts_with("- Code:"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `run` as a runner before version 2 wrote it: without what version 2
/// introduced (the user's code; the counts a spec left out, chosen by
/// trial runs), which the migration fills as those runners read it.
fn before_version_2(run: &mut serde_json::Value) {
    run["environment"].as_object_mut().unwrap().remove("code");
    run["spec"]["experiment"]["design"]
        .as_object_mut()
        .unwrap()
        .remove("runs_per_fork");
}

#[test]
fn exec_merge_and_analyze_folders_read_back_with_their_invocation() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let spec = small(dir);

    let whole = exec_ok(dir, &spec, "whole", &["--set", "design.pairs=30"]);
    let s1 = shard(dir, &spec, "1/2", "s1", &[], &[]);
    let s2 = shard(dir, &spec, "2/2", "s2", &[], &[]);
    let o = merge(dir, "m", &[&s1, &s2], &[]);
    assert!(o.status.success(), "{}", err_of(&o));
    std::fs::write(dir.join("pairs.csv"), PAIRS).unwrap();
    let o = run_in(
        dir,
        &[
            "analyze",
            "pairs.csv",
            "--out",
            "imp",
            "--seed",
            "3",
            "--baseline",
            "old",
        ],
    );
    assert!(o.status.success(), "{}", err_of(&o));

    let read = |d: &Path| runner_folder::read(d).unwrap_or_else(|e| panic!("{e}"));
    let exec = ExecArgs {
        out: Some(dir.join("whole")),
        set: vec!["design.pairs=30".into()],
        quiet: true,
        ..ExecArgs::of_spec(spec.clone())
    };
    assert_eq!(read(&whole).invocation(), &Invocation::Exec(exec.clone()));
    assert_eq!(
        read(&s2).invocation(),
        &Invocation::Exec(ExecArgs {
            out: Some(dir.join("s2")),
            set: Vec::new(),
            shard: Some((2, 2)),
            ..exec
        })
    );
    let merged = read(&dir.join("m"));
    assert_eq!(
        merged.invocation(),
        &Invocation::Merge(MergeArgs {
            out: dir.join("m"),
            shards: vec![s1.clone(), s2.clone()],
            allow_missing: false,
        })
    );
    // Each shard's own invocation is kept in the merge's record.
    let shards = &merged.merged().as_ref().unwrap().shards;
    assert_eq!(&shards[0].invocation, read(&s1).invocation());
    assert_eq!(
        read(&dir.join("imp")).invocation(),
        &Invocation::Analyze(AnalyzeArgs {
            csv: "pairs.csv".into(),
            out: Some("imp".into()),
            seed: Some(3),
            baseline: "old".into(),
            treatment: "treatment".into(),
            title: None,
            resamples: 2000,
            confidence: 0.95,
            clock_resolution_ns: 0,
            quiet: false,
        })
    );
    // Recorded once, as parsed: no raw argv beside it.
    for d in [whole, s1, dir.join("m"), dir.join("imp")] {
        let run = read_json(&d.join("run.json"));
        assert!(run["invocation"]["command"].is_string(), "{}", d.display());
        assert!(run.get("command_line").is_none(), "{}", d.display());
    }
}

/// A folder an older runner wrote recorded argv as given; it reads as the
/// same invocation and renders the same report, Reproduce text included.
#[test]
fn an_older_folders_argv_is_parsed_once_into_the_invocation() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let spec = small(dir);
    let out = exec_ok(dir, &spec, "r", &["--set", "design.pairs=30"]);
    let report_md = std::fs::read(out.join("report.md")).unwrap();
    let mut run = read_json(&out.join("run.json"));
    let now = run["invocation"].clone();
    before_version_2(&mut run);
    let obj = run.as_object_mut().unwrap();
    // Older runners wrote no format_version either: the file is version 0.
    obj.remove("format_version");
    obj.remove("invocation");
    obj.insert(
        "command_line".into(),
        serde_json::json!([
            "./target/release/runner",
            "exec",
            spec,
            "--quiet",
            "--set=design.pairs=30",
            "--out",
            out,
        ]),
    );
    // Written by hand, as an older runner did (no guard record of it).
    std::fs::write(
        out.join("run.json"),
        serde_json::to_string_pretty(&run).unwrap(),
    )
    .unwrap();
    std::fs::remove_file(out.join(".runner-files.json")).unwrap();
    let info = runner_folder::read(&out).unwrap();
    assert_eq!(serde_json::to_value(info.invocation()).unwrap(), now);
    std::fs::remove_file(out.join("report.md")).unwrap();
    let o = report(&out);
    assert!(o.status.success(), "{}", err_of(&o));
    assert_eq!(
        but_code(&std::fs::read(out.join("report.md")).unwrap()),
        but_code(&report_md)
    );
}

#[test]
fn a_damaged_or_foreign_run_json_is_one_sentence_and_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let spec = small(dir);
    let out = exec_ok(dir, &spec, "r", &[]);
    let good = std::fs::read_to_string(out.join("run.json")).unwrap();
    let mut run: serde_json::Value = serde_json::from_str(&good).unwrap();

    let mut wrong_command = run.clone();
    wrong_command["invocation"] = serde_json::json!({
        "command": "merge", "out": "x", "shards": ["a"], "allow_missing": false
    });
    let mut foreign_argv = run.clone();
    foreign_argv
        .as_object_mut()
        .unwrap()
        .remove("format_version");
    foreign_argv.as_object_mut().unwrap().remove("invocation");
    before_version_2(&mut foreign_argv);
    foreign_argv["command_line"] = serde_json::json!(["runner", "frobnicate", "--now"]);
    // Version 2 always writes `resource_usage`: a file of that version
    // without it is damaged, not older.
    let mut no_key = run.clone();
    no_key["forks"][0]
        .as_object_mut()
        .unwrap()
        .remove("resource_usage");
    // A current file relabelled as version 0, without a key version 0
    // would fill (here how runner was launched, which the Reproduce line
    // shows): refused, not read with version 0's values.
    let mut relabelled = run.clone();
    relabelled["format_version"] = 0.into();
    relabelled["build"]
        .as_object_mut()
        .unwrap()
        .remove("launched_as");
    run["invocation"]["quiet"] = serde_json::json!("yes");
    let cases = [
        (
            serde_json::to_string(&relabelled).unwrap(),
            "run.json says format_version 0 but holds `format_version`, which runners write only from format_version 1 on: a file relabelled as older is not read",
        ),
        (good[..good.len() / 2].to_string(), "is not a valid run.json"),
        ("{\"hello\": 1}".to_string(), "is not a valid run.json"),
        (
            serde_json::to_string(&foreign_argv).unwrap(),
            "is not a runner exec, merge or analyze command line",
        ),
        (
            serde_json::to_string(&run).unwrap(),
            "invocation: invalid type",
        ),
        (
            serde_json::to_string(&no_key).unwrap(),
            "missing field `resource_usage`",
        ),
        (
            serde_json::to_string(&wrong_command).unwrap(),
            "invocation is a `runner merge` command, but the folder is one that `runner exec` makes",
        ),
    ];
    for (text, says) in cases {
        // Written by hand, like an edit outside runner; the guard's record
        // goes too, so nothing but run.json decides.
        std::fs::write(out.join("run.json"), &text).unwrap();
        let _ = std::fs::remove_file(out.join(".runner-files.json"));
        let before = tree(&out);
        let o = report(&out);
        let e = err_of(&o);
        assert_eq!(o.status.code(), Some(2), "{says}: {e}");
        assert!(e.contains(says), "expected {says:?} in: {e}");
        assert!(e.contains("run.json"), "names the file: {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "one line: {e}");
        assert!(!e.contains("panicked"), "{e}");
        assert_eq!(tree(&out), before, "{says}: the folder changed");
    }
}

/// run.json starts with its format: a newer runner's folder is refused in
/// one sentence that says to upgrade; one without the key (written before
/// it), and without the keys runners of that time did not write yet, still
/// reads, to the same report; `exec` writes the current one.
#[test]
fn a_newer_format_is_refused_and_an_older_one_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let spec = small(dir);
    let out = exec_ok(dir, &spec, "r", &[]);
    let path = out.join("run.json");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("{\n  \"format_version\": 2,"),
        "{}",
        &text[..60]
    );
    let analysis = std::fs::read_to_string(out.join("analysis.json")).unwrap();
    assert!(analysis.starts_with("{\n  \"format_version\": 2,"));
    let mut run: serde_json::Value = serde_json::from_str(&text).unwrap();
    run["format_version"] = serde_json::json!(3);
    std::fs::write(&path, serde_json::to_string_pretty(&run).unwrap()).unwrap();
    let o = report(&out);
    assert_eq!(o.status.code(), Some(2), "{}", err_of(&o));
    assert!(
        err_of(&o).contains("has format_version 3, written by a newer runner; this runner reads format_version 0 to 2: upgrade runner to read it"),
        "{}",
        err_of(&o)
    );
    run.as_object_mut().unwrap().remove("format_version");
    before_version_2(&mut run);
    // Each key older runners did not write goes where it holds the value
    // reading its absence gives (here all of them: same-core, no usage
    // columns), so the report must not change.
    let drop = |o: &mut serde_json::Value, key: &str, default: serde_json::Value| {
        assert_eq!(o[key], default, "{key}");
        o.as_object_mut().unwrap().remove(key);
    };
    drop(
        &mut run["spec"]["experiment"]["design"],
        "placement",
        serde_json::json!("same-core"),
    );
    for fork in run["forks"].as_array_mut().unwrap() {
        drop(fork, "resource_usage", serde_json::json!(false));
    }
    std::fs::write(&path, serde_json::to_string_pretty(&run).unwrap()).unwrap();
    let report_md = std::fs::read(out.join("report.md")).unwrap();
    std::fs::remove_file(out.join("report.md")).unwrap();
    let o = report(&out);
    assert!(o.status.success(), "{}", err_of(&o));
    assert_eq!(
        but_code(&std::fs::read(out.join("report.md")).unwrap()),
        but_code(&report_md)
    );
}
