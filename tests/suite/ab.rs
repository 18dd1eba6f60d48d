//! `runner ab`: one line to a committed experiment file and its report,
//! with the real binary in a fresh folder.

use crate::common;

use common::{run_in, runner, section};
use std::path::Path;

fn folder() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("experiments")).unwrap();
    tmp
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The issue's own line: a 2 ms difference between two sleeps is found,
/// in the file's words, and the file it wrote runs under exec.
#[test]
fn one_line_writes_the_file_runs_it_and_says_which_is_faster() {
    // 7 ms apart, 8x: a loaded machine stretches both sleeps alike, and
    // the paired difference stays far outside any interval.
    let tmp = folder();
    let out = runner()
        .current_dir(tmp.path())
        .args(["ab", "--name", "q", "sleep 0.008", "sleep 0.001"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let spec = read(&tmp.path().join("experiments/q.toml"));
    assert!(spec.contains("[design.stop]"), "{spec}");
    let report = read(&tmp.path().join("reports/q/report.md"));
    let finding = section(&report, "Finding").expect("a Finding");
    let first = finding.trim_start().lines().next().unwrap();
    assert!(
        first.starts_with("`sleep 0.001` is **faster** than `sleep 0.008`: **"),
        "{first}"
    );
    assert!(first.contains("x ["), "a ratio with its interval: {first}");
    // The Finding is printed, as exec prints it.
    assert!(
        stdout.contains("`sleep 0.001` is faster than `sleep 0.008`"),
        "{stdout}"
    );
    // What was run is exec of the file: its Reproduce command says so.
    assert!(
        report.contains("runner exec experiments/q.toml"),
        "{report}"
    );
    let again = runner()
        .current_dir(tmp.path())
        .args(["exec", "experiments/q.toml", "--quiet", "--out", "again"])
        .args(["--set", "design.pairs=5", "--set", "design.warmup_pairs=1"])
        .output()
        .unwrap();
    assert_eq!(
        again.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert!(tmp.path().join("again/report.md").is_file());
}

#[test]
fn a_file_it_did_not_write_or_that_was_changed_is_never_replaced() {
    let tmp = folder();
    let spec = tmp.path().join("experiments/mine.toml");
    std::fs::write(&spec, "# my own experiment\n").unwrap();
    let out = runner()
        .current_dir(tmp.path())
        .args(["ab", "--name", "mine", "true", "false"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("experiments/mine.toml is not a file runner wrote"),
        "{err}"
    );
    assert!(err.contains("--name"), "{err}");
    assert_eq!(read(&spec), "# my own experiment\n");
    assert!(!tmp.path().join("reports").exists(), "nothing ran");

    // Its own file it may write again, until someone changes it.
    let write = |name: &str| {
        runner()
            .current_dir(tmp.path())
            .args(["ab", "--no-run", "--name", name, "true", "sleep 0"])
            .output()
            .unwrap()
    };
    let first = write("own");
    assert_eq!(first.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&first.stdout),
        "experiments/own.toml\nrun it with: runner exec experiments/own.toml\n"
    );
    assert_eq!(write("own").status.code(), Some(0));
    let own = tmp.path().join("experiments/own.toml");
    let edited = format!("{}# tuned by hand\n", read(&own));
    std::fs::write(&own, &edited).unwrap();
    let refused = write("own");
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("was changed since runner wrote it"));
    assert_eq!(read(&own), edited);
    assert!(
        !tmp.path().join("reports").exists(),
        "--no-run runs nothing"
    );
}

/// hyperfine's JSON: its keys, seconds, one time and exit code per run;
/// runner's paired effect under `runner`. An export path runner did not
/// write is refused before anything runs.
#[test]
fn export_json_is_hyperfines_schema() {
    let tmp = folder();
    std::fs::write(tmp.path().join("theirs.json"), "{}").unwrap();
    let refused = runner()
        .current_dir(tmp.path())
        .args(["ab", "--export-json", "theirs.json", "true", "sleep 0.001"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(!tmp
        .path()
        .join("experiments/true-vs-sleep-0.001.toml")
        .exists());

    let out = runner()
        .current_dir(tmp.path())
        .args([
            "ab",
            "--quiet",
            "--runs",
            "5",
            "--warmup",
            "1",
            "--max-forks",
            "3",
        ])
        .args(["--export-json", "h.json", "--export-markdown", "h.md"])
        .args(["-L", "ms", "1", "true", "sleep 0.00{ms}"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_str(&read(&tmp.path().join("h.json"))).unwrap();
    let results = json["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["command"], "true");
    assert_eq!(results[1]["command"], "sleep 0.001");
    for r in results {
        for key in ["mean", "stddev", "median", "min", "max", "user", "system"] {
            assert!(r[key].as_f64().is_some_and(|v| v >= 0.0), "{key}: {r}");
        }
        let times = r["times"].as_array().unwrap();
        // 3 forks x 5 pairs: the runs of the measured phase.
        assert_eq!(times.len(), 15, "{r}");
        assert_eq!(r["exit_codes"].as_array().unwrap().len(), times.len());
        assert_eq!(
            r["memory_usage_byte"].as_array().unwrap().len(),
            times.len()
        );
        assert!(r["exit_codes"].as_array().unwrap().iter().all(|c| c == 0));
        let (min, max) = (r["min"].as_f64().unwrap(), r["max"].as_f64().unwrap());
        assert!(times
            .iter()
            .all(|t| (min..=max).contains(&t.as_f64().unwrap())));
        assert!(max < 10.0, "seconds, not nanoseconds: {r}");
        assert_eq!(r["parameters"]["ms"], "1");
    }
    let effect = &results[1]["runner"]["effect"];
    assert_eq!(results[1]["runner"]["baseline"], "true");
    assert!(
        effect["ratio"].as_f64().is_some_and(|r| r > 0.0),
        "{effect}"
    );
    assert!(effect["direction"].is_string(), "{effect}");
    assert_eq!(results[0]["runner"]["role"], "baseline");
    let md = read(&tmp.path().join("h.md"));
    assert!(md.starts_with("| Command | Mean ["), "{md}");
    assert!(md.contains("| `sleep 0.001` |"), "{md}");
}

/// A swept line names each cell's command with its value filled in: the
/// title lists the values, the Finding and the terminal name `sleep 0.008`,
/// never `sleep 0.00{ms}`.
#[test]
fn a_sweep_fills_its_placeholders_in_the_title_and_the_finding() {
    let tmp = folder();
    let out = runner()
        .current_dir(tmp.path())
        .args(["ab", "--name", "sweep", "--runs", "5", "--warmup", "0"])
        .args(["--max-forks", "3", "-L", "ms", "1,8"])
        .args(["sleep 0.001", "sleep 0.00{ms}"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = read(&tmp.path().join("reports/sweep/report.md"));
    assert!(
        report.starts_with("# sleep 0.001 vs sleep 0.00{1,8}\n"),
        "{report}"
    );
    let finding = section(&report, "Finding").expect("a Finding");
    assert!(finding.contains("`sleep 0.008`"), "{finding}");
    assert!(!finding.contains("{ms}"), "{finding}");
    assert!(!stdout.contains("{ms}"), "{stdout}");
}

/// Both quote kinds, a newline, a backslash and unicode in the commands:
/// the file ab writes reads back under `runner check`, whose trial runs
/// find the commands print the same bytes, so each ran as typed.
#[test]
fn commands_with_both_quotes_or_a_newline_write_a_file_that_runs_as_typed() {
    let tmp = folder();
    let cases: [(&str, &str, &[&str]); 2] = [
        // `it's "q" é\`, quoted two ways; no shell.
        (
            r#"printf '%s\n' "it's \"q\" é\\""#,
            r#"printf '%s\n' 'it'"'"'s "q" é\'"#,
            &[],
        ),
        // A newline inside a quoted argument, against printf's own `\n`.
        ("printf '%s' 'x\ny'", r"printf 'x\ny'", &["--shell"]),
    ];
    for (i, (a, b, flags)) in cases.iter().enumerate() {
        let name = format!("q{i}");
        let mut args = vec!["ab", "--no-run", "--compare-output", "--name", &name];
        args.extend(flags.iter());
        args.extend([a, b]);
        let o = run_in(tmp.path(), &args);
        assert_eq!(o.status.code(), Some(0), "{}", common::err_of(&o));
        let spec = format!("experiments/{name}.toml");
        let text = read(&tmp.path().join(&spec));
        assert!(text.parse::<toml::Table>().is_ok(), "{text}");
        let check = run_in(tmp.path(), &["check", &spec]);
        assert_eq!(
            check.status.code(),
            Some(0),
            "{text}\n{}",
            common::err_of(&check)
        );
    }
}

/// A scan of every i64 is refused in one sentence (it panicked with
/// "capacity overflow"), and nothing is written.
#[test]
fn a_scan_too_wide_is_refused_not_a_panic() {
    let tmp = folder();
    let o = run_in(
        tmp.path(),
        &[
            "ab",
            "-P",
            "x",
            "-9223372036854775808",
            "9223372036854775807",
            "echo {x}",
            "true",
        ],
    );
    common::assert_refused(&o, &["-P x", "18446744073709551616 values", "at most 100"]);
    assert_eq!(common::err_of(&o).lines().count(), 1);
    assert_eq!(
        std::fs::read_dir(tmp.path().join("experiments"))
            .unwrap()
            .count(),
        0
    );
}

/// A file exec would refuse is not written: a placeholder inside the
/// shell's quotes (exec shell-quotes the values it puts there).
#[test]
fn a_file_that_would_not_read_back_is_not_written() {
    let tmp = folder();
    let o = run_in(
        tmp.path(),
        &[
            "ab",
            "--no-run",
            "--shell",
            "-L",
            "n",
            "1,2",
            "echo '{n}'",
            "true",
        ],
    );
    common::assert_refused(&o, &["does not read back", "{n}", "inside single quotes"]);
    assert_eq!(
        std::fs::read_dir(tmp.path().join("experiments"))
            .unwrap()
            .count(),
        0
    );
}

/// A committed run's report folder, copied into `dir` as `sh1` under reports.
fn another_run(dir: &Path) -> std::path::PathBuf {
    let to = dir.join("reports/sh1");
    common::copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/stop-gzip"),
        &to,
    );
    to
}

/// No export replaces data: inside another run's report folder, onto this
/// run's own folder or experiment file, onto any experiment file, onto a
/// file runner did not write, or into a folder that does not exist, each is
/// refused before the first fork (exit 2, one sentence), and every file is
/// as it was.
#[test]
fn no_export_replaces_data_and_each_is_refused_before_anything_runs() {
    let tmp = folder();
    let dir = tmp.path();
    another_run(dir);
    std::fs::create_dir(dir.join("reports/sh1/sub")).unwrap();
    std::fs::write(dir.join("experiments/mine.toml"), "# my experiment\n").unwrap();
    std::fs::write(dir.join("notes.md"), "my notes\n").unwrap();
    let before = common::tree(dir);
    let cases: [(&str, &str, &[&str]); 9] = [
        (
            "--export-json",
            "reports/sh1/pairs.csv",
            &["inside the report folder", "sh1"],
        ),
        (
            "--export-markdown",
            "reports/sh1/report.md",
            &["inside the report folder"],
        ),
        (
            "--export-json",
            "reports/sh1/sub/h.json",
            &["inside the report folder"],
        ),
        (
            "--export-json",
            "reports/./sh1/../sh1/h.json",
            &["inside the report folder"],
        ),
        (
            "--export-markdown",
            "reports/ex/run.json",
            &["this run's own report folder"],
        ),
        ("--export-json", "experiments/ex.toml", &["experiment file"]),
        (
            "--export-json",
            "experiments/mine.toml",
            &["experiment file"],
        ),
        (
            "--export-markdown",
            "notes.md",
            &["is not a file runner wrote"],
        ),
        (
            "--export-json",
            "missing/h.json",
            &["the folder missing does not exist"],
        ),
    ];
    for (flag, path, fragments) in cases {
        let o = run_in(
            dir,
            &["ab", "--name", "ex", flag, path, "true", "sleep 0.001"],
        );
        let mut want = vec![flag, path];
        want.extend(fragments);
        common::assert_refused(&o, &want);
        assert_eq!(
            common::err_of(&o).lines().count(),
            1,
            "{}",
            common::err_of(&o)
        );
        assert_eq!(common::tree(dir), before, "{flag} {path} changed a file");
    }
    assert!(!dir.join("experiments/ex.toml").exists(), "nothing written");
    assert!(!dir.join("reports/ex").exists(), "nothing ran");
    // The run's own folder, already there from an earlier run of the line.
    std::fs::create_dir_all(dir.join("reports/ex.partial")).unwrap();
    let o = run_in(
        dir,
        &[
            "ab",
            "--name",
            "ex",
            "--export-json",
            "reports/ex.partial/h.json",
            "true",
            "false",
        ],
    );
    common::assert_refused(&o, &["this run's own report folder"]);
    // One file for two exports.
    let o = run_in(
        dir,
        &[
            "ab",
            "--export-json",
            "h",
            "--export-markdown",
            "./h",
            "true",
            "false",
        ],
    );
    common::assert_refused(&o, &["both name h"]);
}
