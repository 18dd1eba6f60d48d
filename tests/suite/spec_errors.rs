//! Every bad input in `tests/spec_cases/cases.toml` must make the real binary
//! exit 2 with one `error: ` line naming the position and the key; every good
//! one must pass `runner check`. Adding a case is one `[[bad]]` entry there.

use assert_cmd::Command;
use serde::Deserialize;
use std::path::Path;

#[derive(Deserialize)]
struct Cases {
    bad: Vec<Bad>,
    good: Vec<Good>,
}

#[derive(Deserialize)]
struct Bad {
    name: String,
    spec: String,
    #[serde(default)]
    set: Vec<String>,
    expect: Vec<String>,
}

#[derive(Deserialize)]
struct Good {
    name: String,
    spec: String,
    #[serde(default)]
    set: Vec<String>,
}

fn cases() -> Cases {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/spec_cases/cases.toml");
    toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Writes the spec (or the special input a marker asks for) as `spec.toml`
/// in `dir`, and runs `runner check spec.toml` there.
fn check(dir: &Path, spec: &str, set: &[String]) -> std::process::Output {
    let file = dir.join("spec.toml");
    match spec {
        "@empty" => std::fs::write(&file, "").unwrap(),
        "@dir" => std::fs::create_dir(&file).unwrap(),
        "@missing" => {}
        "@non-utf8" => std::fs::write(&file, b"name = \"ok\"\nx = \"\xff\xfe\"\n").unwrap(),
        text => std::fs::write(&file, text).unwrap(),
    }
    let mut cmd = Command::cargo_bin("runner").unwrap();
    cmd.current_dir(dir)
        .env_remove("RUNNER_DATABASE_URL")
        .env_remove("RUST_BACKTRACE")
        .args(["check", "spec.toml"]);
    for flag in set {
        cmd.args(["--set", flag]);
    }
    cmd.output().unwrap()
}

#[test]
fn bad_inputs_exit_2_with_one_clear_line() {
    let cases = cases();
    assert!(cases.bad.len() >= 25, "only {} bad cases", cases.bad.len());
    let mut failures = Vec::new();
    for case in &cases.bad {
        let dir = tempfile::tempdir().unwrap();
        let out = check(dir.path(), &case.spec, &case.set);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let mut wrong = Vec::new();
        if out.status.code() != Some(2) {
            wrong.push(format!("exit {:?}, not 2", out.status.code()));
        }
        if !stderr.starts_with("error: ") || stderr.trim_end().lines().count() != 1 {
            wrong.push("stderr is not one `error: ` line".to_string());
        }
        if stderr.contains("panicked") {
            wrong.push("panicked".to_string());
        }
        for fragment in &case.expect {
            if !stderr.contains(fragment.as_str()) {
                wrong.push(format!("missing {fragment:?}"));
            }
        }
        if !wrong.is_empty() {
            failures.push(format!(
                "{}: {}\n  stderr: {}",
                case.name,
                wrong.join("; "),
                stderr.trim_end()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.bad.len(),
        failures.join("\n")
    );
}

#[test]
fn good_inputs_pass_check() {
    for case in cases().good {
        let dir = tempfile::tempdir().unwrap();
        let out = check(dir.path(), &case.spec, &case.set);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            case.name,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn case_names_are_distinct() {
    let cases = cases();
    let mut names: Vec<&str> = cases
        .bad
        .iter()
        .map(|c| c.name.as_str())
        .chain(cases.good.iter().map(|c| c.name.as_str()))
        .collect();
    let total = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), total, "duplicate case names in cases.toml");
}

/// Four mistakes of different kinds in one file, all named in one run, in
/// the file's order, with what would be valid.
#[test]
fn every_mistake_of_a_file_is_named_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = "[strategies.fast]\nkind = \"comand\"\nargv = [\"gzip\", \"-1\", \"-c\", \"{scratch}/in\"]\n\n[strategies.slow]\nkind = \"comand\"\nargv = [\"gzip\", \"-6\", \"-c\", \"{scrach}/in\"]\n\n[design]\nbaseline = \"fast\"\ntreatment = \"slwo\"\nwarmup_pair = 3\n";
    let out = check(tmp.path(), spec, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    let expected = [
        "spec.toml:2:8: strategies.fast.kind must be one of",
        "spec.toml:6:8: strategies.slow.kind must be one of",
        "spec.toml:7:30: strategies.slow.argv[3] uses the placeholder {scrach}",
        "spec.toml:11:13: design.treatment names strategy `slwo`, which is not defined; did you mean `slow`?",
        "spec.toml:12:1: unknown key `design.warmup_pair`; did you mean `warmup_pairs`?",
    ];
    assert_eq!(lines.len(), expected.len(), "{err}");
    for (line, want) in lines.iter().zip(expected) {
        assert!(
            line.trim_start_matches("error: ").starts_with(want),
            "{want}\n{err}"
        );
    }
    assert!(lines[0].contains("did you mean `command`?"), "{err}");
    assert!(lines[2].contains("did you mean {scratch}?"), "{err}");
    assert!(lines[2].contains("valid here: {scratch}, {input}"), "{err}");
}
