//! docs/ci.md's Gate step, run verbatim as a script against a base and a
//! pull request checkout: the experiment comes from the base branch, so a
//! pull request that deletes `[gate]` or raises `max_slowdown` in its own
//! copy of the file is still judged by the base's gate; a base file without
//! a gate is an error (exit 2), not a pass; a gate still inconclusive
//! after its one retry fails the step; the page says how the workflow
//! itself is protected.

use crate::common;

use std::path::Path;
use std::process::Command;

/// The `run: |` script of the workflow step named `Gate` in docs/ci.md.
fn gate_step() -> String {
    let doc = doc();
    let start = doc
        .find("      - name: Gate\n        run: |\n")
        .expect("docs/ci.md has a step named Gate with a run: | script");
    let body = &doc[start..];
    let mut lines = body.lines().skip(2);
    let mut script = String::new();
    for line in lines.by_ref() {
        let Some(text) = line.strip_prefix("          ") else {
            break;
        };
        script.push_str(text);
        script.push('\n');
    }
    assert!(
        script.contains("base/perf/gate.toml") && script.contains("--gate-required"),
        "the Gate step reads the base branch's file with --gate-required:\n{script}"
    );
    script
}

/// docs/ci.md.
fn doc() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ci.md"))
        .expect("read docs/ci.md")
}

/// A busy loop of `n` steps in sh: a program whose run time scales with n.
fn program(n: u32) -> String {
    format!("i=0\nwhile [ \"$i\" -lt {n} ]; do i=$((i + 1)); done\n")
}

/// The base branch's experiment: the pull request's program against the
/// base's, with a gate of 25 %. The self-check is off so the test does not
/// depend on thirty forks per cell; the rule and the file's origin are what
/// it checks.
fn gate_file(gate: &str) -> String {
    format!(
        r#"
name = "gate"
title = "Pull request vs base"
seed = 11

[strategies.base]
kind = "command"
argv = ["sh", "base/prog.sh"]
compare_output = false

[strategies.pr]
kind = "command"
argv = ["sh", "pr/prog.sh"]
compare_output = false

[design]
baseline = "base"
treatment = "pr"
forks = 4
warmup_pairs = 3
pairs = 20
{gate}
"#
    )
}

const BASE_GATE: &str = "[gate]\nmax_slowdown = \"25%\"\nself_check = false\n";

/// Lays out a workspace as the workflow does (base/, pr/, runner/) and runs
/// the Gate step in it; the pull request's program is twice as slow.
fn run_step(dir: &Path, base_gate: &str, pr_gate: &str) -> (i32, String, String) {
    run_step_with(dir, base_gate, pr_gate, &program(6000))
}

/// [`run_step`] with the pull request's program given.
fn run_step_with(dir: &Path, base_gate: &str, pr_gate: &str, pr: &str) -> (i32, String, String) {
    for (side, prog, gate) in [
        ("base", program(3000), base_gate),
        ("pr", pr.to_string(), pr_gate),
    ] {
        std::fs::create_dir_all(dir.join(side).join("perf")).unwrap();
        std::fs::write(dir.join(side).join("prog.sh"), prog).unwrap();
        std::fs::write(dir.join(side).join("perf/gate.toml"), gate_file(gate)).unwrap();
    }
    let bin = dir.join("runner/target/release");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("runner"), bin.join("runner")).unwrap();
    let summary = dir.join("step-summary.md");
    let out = Command::new("bash")
        .arg("-c")
        .arg(gate_step())
        .current_dir(dir)
        .env_remove("RUNNER_DATABASE_URL")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_SERVER_URL", "https://github.com")
        .env("GITHUB_REPOSITORY", "org/repo")
        .env("GITHUB_RUN_ID", "42")
        .output()
        .expect("run bash");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (
        out.status.code().unwrap_or(-1),
        text,
        std::fs::read_to_string(&summary).unwrap_or_default(),
    )
}

#[test]
fn a_pull_request_that_deletes_its_gate_is_judged_by_the_base() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, summary) = run_step(dir.path(), BASE_GATE, "");
    assert_eq!(code, 3, "regression by the base's gate:\n{out}");
    assert!(out.contains("::error::perf gate: regression"), "{out}");
    assert!(summary.contains("runner gate: REGRESSION"), "{summary}");
    // Paths a reviewer can follow: relative to the workspace, and the run.
    assert!(summary.contains("`perf-gate/report.md`"), "{summary}");
    assert!(
        summary.contains("https://github.com/org/repo/actions/runs/42"),
        "{summary}"
    );
    assert!(
        !summary.contains(&dir.path().display().to_string()),
        "no absolute path of the runner machine:\n{summary}"
    );
}

#[test]
fn a_pull_request_that_raises_max_slowdown_is_judged_by_the_base() {
    let dir = tempfile::tempdir().unwrap();
    let lenient = "[gate]\nmax_slowdown = \"1000%\"\nself_check = false\n";
    let (code, out, _) = run_step(dir.path(), BASE_GATE, lenient);
    assert_eq!(
        code, 3,
        "regression by the base's 25 %, not the 1000 %:\n{out}"
    );
    let gate = common::read_json(&dir.path().join("perf-gate/gate.json"));
    assert_eq!(gate["max_slowdown"], "25%");
}

#[test]
fn a_base_file_without_a_gate_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, _) = run_step(dir.path(), "", BASE_GATE);
    assert_eq!(
        code, 2,
        "--gate-required refuses a file with no [gate]:\n{out}"
    );
    assert!(out.contains("has no [gate] table"), "{out}");
    assert!(!dir.path().join("perf-gate").exists());
}

/// A pull request whose program sleeps 40 ms in every other fork (it
/// counts the forks by their worker, its parent process, with shell
/// builtins only): the forks' D alternate between about 0 and 40 ms, so
/// the interval over them straddles a 10 ms threshold at 4 forks and at 8,
/// however loaded the machine is. The gate is inconclusive; it runs once
/// more with the design it names, or twice the forks, unless that would
/// cost more than `gate.max_retry_factor` times the first run; either way
/// it ends inconclusive and the step fails: doubt does not merge.
#[test]
fn a_gate_still_inconclusive_after_its_retry_fails_the_step() {
    let dir = tempfile::tempdir().unwrap();
    let flip = format!(
        "{}if [ ! -e pr/seen-$PPID ]; then : > pr/seen-$PPID; read n < pr/forks || n=0; echo $((n + 1)) > pr/forks; fi\nread n < pr/forks\nif [ $((n % 2)) -eq 1 ]; then sleep 0.04; fi\n",
        program(3000)
    );
    let gate = "[gate]\nmax_slowdown = \"10ms\"\nself_check = false\n";
    let (code, out, summary) = run_step_with(dir.path(), gate, gate, &flip);
    assert_eq!(code, 4, "{out}");
    assert!(
        out.contains("::error::perf gate: still inconclusive"),
        "{out}"
    );
    if out.contains("gate: inconclusive; running it once more with --set design.") {
        // Both runs appended their verdict; the second names its overrides.
        assert_eq!(
            summary.matches("### runner gate: INCONCLUSIVE").count(),
            2,
            "{summary}"
        );
        assert!(summary.contains("- `--set design."), "{summary}");
        let g = common::read_json(&dir.path().join("perf-gate/gate.json"));
        assert!(!g["overrides"].as_array().unwrap().is_empty(), "{g}");
    } else {
        assert!(
            out.contains("gate: inconclusive, and not retried: the retry it names")
                && out.contains("more than gate.max_retry_factor = 4"),
            "{out}"
        );
        assert_eq!(
            summary.matches("### runner gate: INCONCLUSIVE").count(),
            1,
            "{summary}"
        );
    }
}

/// The workflow retries an inconclusive gate instead of passing it, tries
/// the exact command line first, and the page says how to keep the pull
/// request away from the gate and that its code runs in the job.
#[test]
fn the_page_retries_doubt_and_says_how_the_workflow_is_protected() {
    let doc = doc();
    let step = gate_step();
    assert!(step.contains("--retry-inconclusive"), "{step}");
    let four = step
        .lines()
        .find(|l| l.trim_start().starts_with("4)"))
        .expect("a 4) branch");
    assert!(
        four.contains("::error::") && !four.contains("code=0"),
        "{four}"
    );
    assert!(
        doc.contains("run: runner/target/release/runner check base/perf/gate.toml --gate-required --retry-inconclusive --out perf-gate"),
        "a pre-flight step with the Gate step's flags"
    );
    for needle in [
        "required status check",
        "CODEOWNERS",
        "/.github/workflows/",
        "/perf/",
        "pull_request_target",
        "permissions: contents: read",
        "persist-credentials: false",
        "the pull request's code runs in the",
    ] {
        assert!(doc.contains(needle), "docs/ci.md lacks {needle:?}");
    }
}

/// The Pre-flight step runs as written and passes on a gated base file.
#[test]
fn the_pre_flight_step_runs_the_gates_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let doc = doc();
    let line = doc
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("run: runner/target/release/runner check ")
        })
        .expect("a Pre-flight step");
    for side in ["base", "pr"] {
        std::fs::create_dir_all(dir.path().join(side).join("perf")).unwrap();
        std::fs::write(dir.path().join(side).join("prog.sh"), program(300)).unwrap();
        std::fs::write(
            dir.path().join(side).join("perf/gate.toml"),
            gate_file(BASE_GATE),
        )
        .unwrap();
    }
    let args: Vec<&str> = line.split_whitespace().collect();
    let o = common::runner()
        .current_dir(dir.path())
        .arg("check")
        .args(&args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("--retry-inconclusive"), "{text}");
    assert!(!dir.path().join("perf-gate").exists());
}
