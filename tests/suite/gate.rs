//! The regression gate on the real binary: verdicts and exit codes, the
//! self-check's shares, the deciding interval's power, gate.json,
//! `$GITHUB_STEP_SUMMARY`, overrides, a percentage threshold sized in a
//! second phase (and resumed there), an inconclusive verdict's advice and
//! `--retry-inconclusive`.
//!
//! Margins: the thresholds are far from what the arms do (a 2 µs gate on
//! `noop`, whose pairs differ by tens of ns; 1 µs and 4 µs injected against
//! it), so a loaded machine cannot move a verdict. An inconclusive verdict
//! comes from a treatment that sleeps 50 ms on every other run: each fork's
//! D is half near 0 and half near 50 ms, so its median's interval spans a
//! 10 ms threshold however loaded the machine is.

use crate::common;
use common::faults::{exec, printed_resume, stderr};
use common::*;
use runner_plan::self_check::{power_delay_ns, within_delay_ns};
use runner_spec::MaxSlowdown;
use std::path::Path;

const NOOP_GATE: &str = r#"
name = "gate"
seed = 11
[strategies.noop]
kind = "noop"
[design]
baseline = "noop"
treatment = "noop"
forks = 3
warmup_pairs = 5
pairs = 60
[analysis]
resamples = 200
[gate]
max_slowdown = "2us"
"#;

/// `exec SPEC` into `out` with one cell of `delay_us` injected and no
/// self-check: the gate judges that cell alone.
fn gate_without_self_check(
    dir: &std::path::Path,
    spec: &std::path::Path,
    delay_us: u32,
) -> std::process::Output {
    let delay = format!("grid.delay_us=[{delay_us}]");
    exec(
        dir,
        spec,
        "out",
        None,
        &["--set", &delay, "--set", "gate.self_check=false"],
    )
}

fn code(o: &std::process::Output) -> i32 {
    o.status.code().expect("exited")
}

#[test]
fn an_aa_gate_passes_states_its_rates_its_overrides_and_appends_the_step_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "gate", NOOP_GATE);
    let summary = tmp.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let o = runner()
        .current_dir(tmp.path())
        .env("GITHUB_STEP_SUMMARY", &summary)
        .args(["exec", spec.to_str().unwrap(), "--out", "out", "--quiet"])
        .args(["--set", "design.forks=12"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert!(
        stdout.starts_with("gate: PASS, OVERRIDDEN (exit 0). Passed"),
        "{stdout}"
    );
    // The treatment is the baseline: the verdict says A/A, and names the
    // override it was reached under.
    assert!(
        stdout.contains(" A/A: the treatment is the baseline itself (`noop`)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("overrides of the experiment file: `--set design.forks=12`"),
        "{stdout}"
    );
    let g = read_json(&tmp.path().join("out/gate.json"));
    assert_eq!(g["verdict"], "pass");
    assert_eq!(g["exit_code"], 0);
    assert_eq!(g["overrides"], serde_json::json!(["--set design.forks=12"]));
    assert_eq!(g["aa"], true);
    // The self-check: a quarter of the 12 forks in each of its two cells.
    assert_eq!(g["false_positive_forks"][1], 3);
    assert_eq!(g["false_block_forks"][1], 3);
    // 0 of 3 is at most 63.2 %: a bound that says nothing, so the words
    // say what such a self-check is good for instead of stating it; the
    // gate blocks only on a rate shown above 10 %.
    let bound = g["false_block_upper_bound"].as_f64().unwrap();
    assert!((bound - 0.6316).abs() < 1e-3, "{g}");
    assert_eq!(g["self_check_bounds"], false);
    assert!(
        stdout.contains("so it only guards against grossly invalid intervals"),
        "{stdout}"
    );
    assert!(!stdout.contains("at most 63.2 %"), "{stdout}");
    // The power is the deciding interval's, computed: tens of ns of
    // spread against a 2 µs threshold.
    assert_eq!(g["power_method"], "deciding-interval");
    assert!(g["power"].as_f64().unwrap() >= 0.99, "{g}");
    assert_eq!(g["power_slowdown"], 4000.0);
    assert!(g["forks_needed"].is_null() && g["advice"].is_null());
    assert_eq!(g["threshold_ns"], 2000.0);
    // The self-check cells ran, with 3 forks each: 12 + 3 + 3 jobs.
    let run = read_json(&tmp.path().join("out/run.json"));
    let roles: Vec<&str> = run["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["role"].as_str().unwrap_or("experiment"))
        .collect();
    assert_eq!(roles, ["experiment", "gate-null", "gate-within"]);
    assert_eq!(run["cells"][2]["delay_ns"], 1000);
    assert_eq!(run["jobs"].as_array().unwrap().len(), 18);
    // analysis.json keeps the self-check out of `cells`.
    let a = read_json(&tmp.path().join("out/analysis.json"));
    assert_eq!(a["cells"].as_array().unwrap().len(), 1);
    assert_eq!(a["gate"]["groups"][0]["false_alarms"]["cell"], 1);
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(
        text.starts_with("earlier step\n### runner gate: PASS"),
        "{text}"
    );
    assert!(text.contains("`out/gate.json`"), "{text}");
    // No table of rates the self-check cannot bound.
    assert!(!text.contains("| false alarm"), "{text}");
    assert!(text.contains("- `--set design.forks=12`"), "{text}");
    assert!(text.contains("A/A"), "{text}");
    let report = std::fs::read_to_string(tmp.path().join("out/report.md")).unwrap();
    assert!(report.contains("## Gate: PASS, OVERRIDDEN"), "{report}");
    // `runner report` rewrites gate.json byte for byte.
    let before = std::fs::read(tmp.path().join("out/gate.json")).unwrap();
    std::fs::remove_file(tmp.path().join("out/gate.json")).unwrap();
    runner()
        .current_dir(tmp.path())
        .args(["report", "out"])
        .assert()
        .success();
    assert_eq!(
        std::fs::read(tmp.path().join("out/gate.json")).unwrap(),
        before
    );
}

#[test]
fn an_injected_slowdown_of_twice_the_threshold_is_exit_3() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "gate", NOOP_GATE);
    let o = gate_without_self_check(tmp.path(), &spec, 4);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert!(
        stdout.starts_with("gate: REGRESSION, OVERRIDDEN (exit 3)."),
        "{stdout}"
    );
    let g = read_json(&tmp.path().join("out/gate.json"));
    assert_eq!(g["verdict"], "regression");
    assert_eq!(g["self_check"], false);
    // No self-check: no rates; the power is the interval's, computed.
    assert!(
        g["false_positive_share"].is_null() && g["power"].is_f64(),
        "{g}"
    );
    // A duration judges D, in ns.
    assert_eq!(g["judges"], "difference");
    let est = g["estimate"].as_f64().unwrap();
    assert!(est > 2000.0 && g["ci"][0].as_f64().unwrap() > 0.0, "{g}");
    // The run is complete: the folder is in place, not left partial.
    assert!(tmp.path().join("out/report.md").is_file());
    assert!(!tmp.path().join("out.partial").exists());
}

/// Two forks per cell: an interval over two forks rests on their effects
/// being normal, which nothing in two forks can check, so a gate on them
/// is inconclusive, however narrow, and names three forks; `check` says so
/// before anything runs.
#[test]
fn a_two_fork_gate_is_inconclusive_and_names_three_forks() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "gate", NOOP_GATE);
    let o = exec(tmp.path(), &spec, "out", None, &["--set", "design.forks=2"]);
    assert_eq!(code(&o), 4, "{}", stderr(&o));
    let g = read_json(&tmp.path().join("out/gate.json"));
    assert_eq!(g["reason"], "too-few-forks", "{g}");
    assert_eq!(g["forks_needed"], 3, "{g}");
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert!(
        stdout.contains("2 forks per cell cannot bound an effect for a gate"),
        "{stdout}"
    );
    assert!(stdout.contains("3 forks at least"), "{stdout}");
    assert!(stdout.contains("design.forks=3"), "{stdout}");
    let o = runner()
        .current_dir(tmp.path())
        .args(["check", spec.to_str().unwrap(), "--set", "design.forks=2"])
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("a gate decides on 3 forks per cell at least"),
        "{text}"
    );
}

/// A treatment that sleeps 40 ms in every other fork (its `setup` counts
/// the forks in a file), against `true`, gated at 10 ms: the forks' D
/// alternate between about 0 and about 40 ms, so the interval over the
/// forks straddles the threshold at 3 forks and at 6, however loaded the
/// machine is, and whatever the forks' order (also the inconclusive step
/// of tests/suite/bisect.rs).
pub(crate) fn flip_gate(dir: &Path) -> std::path::PathBuf {
    let count = dir.join("flip-forks");
    let setup = format!("echo x >> '{}'", count.display());
    let script = format!(
        "n=$(wc -l < '{0}'); if [ $((n % 2)) -eq 1 ]; then sleep 0.04; fi",
        count.display()
    );
    let text = format!(
        r#"
name = "flip"
seed = 3
[strategies.base]
kind = "command"
argv = ["sh", "-c", "true"]
[strategies.flip]
kind = "command"
argv = ["sh", "-c", {script:?}]
setup = ["sh", "-c", {setup:?}]
[design]
baseline = "base"
treatment = "flip"
forks = 3
warmup_pairs = 0
pairs = 8
[analysis]
resamples = 200
[gate]
max_slowdown = "10ms"
self_check = false
"#
    );
    write_spec(dir, "flip", &text)
}

/// Forks whose D alternate between about 0 and 40 ms: the interval over
/// them straddles 10 ms, so the gate is inconclusive and names the
/// design predicted to decide, never fewer forks or pairs than ran; with
/// `--retry-inconclusive` it runs once more with that design (recorded as
/// an override) and, still inconclusive, exits 4.
#[test]
fn an_inconclusive_gate_names_a_design_and_retries_it_once() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = flip_gate(tmp.path());
    let o = exec(tmp.path(), &spec, "out", None, &[]);
    assert_eq!(code(&o), 4, "{}", stderr(&o));
    let g = read_json(&tmp.path().join("out/gate.json"));
    assert_eq!(g["reason"], "interval-reaches-threshold", "{g}");
    let (forks, pairs) = (
        g["forks_needed"].as_u64().unwrap(),
        g["pairs_needed"].as_u64().unwrap(),
    );
    assert!(forks >= 3 && pairs >= 8 && forks * pairs > 24, "{g}");
    let advice = g["advice"].as_str().unwrap().to_string();
    assert!(advice.starts_with("--set design."), "{advice}");
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert!(stdout.contains(&format!("(`{advice}`)")), "{stdout}");
    assert!(
        stdout.contains("predicted from the cell's variance components"),
        "{stdout}"
    );

    let o = exec(tmp.path(), &spec, "out", None, &["--retry-inconclusive"]);
    assert_eq!(code(&o), 4, "{}", stderr(&o));
    // The folder holds the retry, which says what it ran under: the
    // design the first run named (its own data, so not necessarily the
    // advice above).
    // Forks that alternate between 0 and 40 ms need many more forks to
    // decide: a retry that costs more than `gate.max_retry_factor` (4)
    // times the first run is not run, and stderr says what it would have
    // cost; with a cap that allows it, the retry runs and says what it
    // ran under.
    let err = stderr(&o);
    if err.contains("gate: inconclusive, and not retried") {
        assert!(
            err.contains("the retry it names (--set design.")
                && err.contains("more than gate.max_retry_factor = 4"),
            "{err}"
        );
        let first = read_json(&tmp.path().join("out/gate.json"));
        let (forks, pairs) = (
            first["forks_needed"].as_u64().unwrap(),
            first["pairs_needed"].as_u64().unwrap(),
        );
        // 3 forks of 8 pairs ran: the named design costs more than 4x.
        assert!(forks * pairs > 4 * 24, "{first}");
        assert!(first["overrides"].as_array().unwrap().is_empty(), "{first}");
    } else {
        let g = read_json(&tmp.path().join("out/gate.json"));
        let overrides: Vec<&str> = g["overrides"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o.as_str().unwrap())
            .collect();
        let retried = overrides.join(" ");
        assert!(retried.starts_with("--set design."), "{g}");
        assert!(
            err.contains(&format!(
                "gate: inconclusive; running it once more with {retried}"
            )),
            "{err}"
        );
        // The retry itself is not asked to retry.
        let run = read_json(&tmp.path().join("out/run.json"));
        assert!(
            run["invocation"].get("retry_inconclusive").is_none(),
            "{run}"
        );
    }
}

/// A percentage threshold judges the speed ratio: the verdict, the
/// gate's table and the Finding print the same change in run time.
#[test]
fn a_percentage_verdict_states_the_findings_percentage() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(
        tmp.path(),
        "pct",
        &NOOP_GATE
            .replace("kind = \"noop\"", "kind = \"spin\"\nduration_us = 20")
            .replace("\"2us\"", "\"10%\""),
    );
    let o = gate_without_self_check(tmp.path(), &spec, 8);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let stdout = String::from_utf8(o.stdout).unwrap();
    // 8 µs on a 20 µs spin is +40 %, against the 10 % allowed.
    assert!(stdout.contains(", above the 10 % allowed"), "{stdout}");
    let g = read_json(&tmp.path().join("out/gate.json"));
    assert_eq!(g["judges"], "ratio");
    assert!(
        (g["threshold"].as_f64().unwrap() - 1.1).abs() < 1e-12,
        "{g}"
    );
    let change = |text: &str| -> String {
        let from = text
            .find("+3")
            .or_else(|| text.find("+4"))
            .expect("a change in %");
        text[from..].split(" run time").next().unwrap().to_string()
    };
    let verdict = stdout.lines().next().unwrap();
    let said = change(verdict);
    assert!(said.contains(" % ["), "{verdict}");
    let report = std::fs::read_to_string(tmp.path().join("out/report.md")).unwrap();
    let a = read_json(&tmp.path().join("out/analysis.json"));
    let e = &a["cells"][0]["effect"];
    let pct = 100.0 * e["change"].as_f64().unwrap();
    assert!((30.0..50.0).contains(&pct), "{e}");
    assert_eq!(
        g["estimate"], e["ratio"],
        "the gate judges the Finding's ratio"
    );
    assert_eq!(g["ci"], e["ratio_ci"]);
    assert!(
        report.contains(&format!("{said} run time")),
        "the report prints the verdict's {said}: {report}"
    );
}

/// The keys of the guide's `gate.json` table (docs/guide/gate.md).
fn documented_keys() -> Vec<String> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guide/gate.md"))
            .unwrap();
    let section = readme
        .split("## `gate.json`")
        .nth(1)
        .expect("docs/guide/gate.md has a gate.json section");
    let mut keys = Vec::new();
    for line in section.lines().skip_while(|l| !l.starts_with('|')) {
        if !line.starts_with('|') {
            break;
        }
        let first = line.split('|').nth(1).unwrap_or_default();
        keys.extend(first.split('`').skip(1).step_by(2).map(String::from));
    }
    keys
}

#[test]
fn gate_json_has_every_documented_key_and_no_other() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "gate", NOOP_GATE);
    let o = exec(tmp.path(), &spec, "out", None, &["--set", "design.forks=4"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let g = read_json(&tmp.path().join("out/gate.json"));
    let mut have: Vec<String> = g.as_object().unwrap().keys().cloned().collect();
    let mut documented = documented_keys();
    have.sort();
    documented.sort();
    assert_eq!(have, documented);
    for k in ["master", "schedule", "self_check"] {
        assert!(g["seeds"].get(k).is_some(), "seeds.{k}");
    }
    // 1 self-check fork at d = 0 and 1 at 0.5x, each with its stream's
    // seed.
    assert_eq!(g["seeds"]["self_check"].as_array().unwrap().len(), 2);
}

/// A percentage: the 0.5x cell is sized from the first phase and runs
/// last; a fork of it that fails leaves a partial folder whose run.json
/// has the sizing, and the printed resume finishes it. The test fault the
/// run was made under is one of the verdict's overrides.
#[test]
fn a_percentage_gate_sizes_its_second_phase_and_resumes_there() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(
        tmp.path(),
        "pct",
        &NOOP_GATE
            .replace("kind = \"noop\"", "kind = \"spin\"\nduration_us = 20")
            .replace("\"2us\"", "\"10%\""),
    );
    // Cells: 0 experiment (3 forks), 1 the d = 0 check and 2 the 0.5x
    // check (1 fork each: a quarter of 3, rounded up).
    let o = exec(tmp.path(), &spec, "out", Some("exit=9@cell=2,fork=0"), &[]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let err = stderr(&o);
    let run = read_json(&tmp.path().join("out.partial/run.json"));
    let sizing = &run["gate_sizing"]["groups"][0];
    let median = sizing["baseline_median_ns"].as_f64().unwrap();
    assert!(median >= 20_000.0, "a 20 µs spin: {median}");
    // Through runner's own arithmetic (10 / 100 * m is not always m / 10 in
    // floating point: 2013.5500000000002 against 2013.55).
    let threshold = MaxSlowdown::Percent(10.0).ns_for(median);
    assert_eq!(sizing["threshold_ns"].as_f64().unwrap(), threshold);
    assert!((threshold - median / 10.0).abs() <= 1e-9 * median);
    let delay = sizing["delay_ns"].as_u64().unwrap();
    assert_eq!(delay, power_delay_ns(threshold));
    assert!(delay.abs_diff((median / 5.0).round() as u64) <= 1);
    let half = run["cells"][2]["delay_ns"].as_u64().unwrap();
    assert_eq!(half, within_delay_ns(threshold));
    assert_eq!(run["cells"].as_array().unwrap().len(), 3);
    // The 0.5x job comes after every first-phase job.
    let cells: Vec<u64> = run["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["cell"].as_u64().unwrap())
        .collect();
    assert_eq!(cells.len(), 5);
    assert_eq!(cells[4..], [2], "{cells:?}");
    assert!(printed_resume(&err).iter().any(|a| a == "--resume"));
    let o = runner()
        .current_dir(tmp.path())
        .env_remove("RUNNER_FAULT")
        .args(printed_resume(&err))
        .output()
        .unwrap();
    assert!([0, 3, 4].contains(&code(&o)), "{}", stderr(&o));
    let g = read_json(&tmp.path().join("out/gate.json"));
    assert_eq!(g["max_slowdown"], "10%");
    assert_eq!(g["baseline_median_ns"].as_f64().unwrap(), median);
    assert_eq!(g["false_block_forks"][1], 1);
    assert!(
        g["overrides"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o == "RUNNER_FAULT=exit=9@cell=2,fork=0"),
        "{g}"
    );
    // An edited sizing is refused on read, naming the key.
    let path = tmp.path().join("out/run.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = text.replacen(
        &format!("\"delay_ns\": {delay}\n"),
        &format!("\"delay_ns\": {}\n", delay + 1),
        1,
    );
    assert_ne!(text, edited);
    std::fs::write(&path, edited).unwrap();
    let o = runner()
        .current_dir(tmp.path())
        .args(["report", "out"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("gate_sizing"), "{}", stderr(&o));
}

#[test]
fn bad_gate_keys_are_refused_naming_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "gate", NOOP_GATE);
    for (set, says) in [
        (
            "gate.max_slowdown=2",
            "gate.max_slowdown must be a slowdown",
        ),
        ("gate.max_slowdown=\"2\"", "gate.max_slowdown needs a unit"),
        (
            "gate.max_slowdown=\"5 minutes\"",
            "has the unit \"minutes\"",
        ),
        ("gate.min_power=1.5", "gate.min_power must be a share"),
        (
            "gate.statistic=\"mean\"",
            "gate.statistic is no longer a choice",
        ),
        ("gate.threshold=\"2%\"", "unknown key `gate.threshold`"),
    ] {
        let o = runner()
            .current_dir(tmp.path())
            .args(["check", spec.to_str().unwrap(), "--set", set])
            .output()
            .unwrap();
        assert_eq!(code(&o), 2, "{set}");
        assert!(stderr(&o).contains(says), "{set}: {}", stderr(&o));
    }
}

/// The experiment file of docs/ci.md validates (its programs replaced by
/// `true`, since they are the reader's), and its gate is what the text says.
#[test]
fn the_ci_doc_experiment_is_a_valid_gate() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ci.md")).unwrap();
    let toml = doc
        .split("```toml\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("docs/ci.md has a toml block");
    let workflow = doc.split("```yaml\n").nth(1).expect("a yaml block");
    assert!(workflow.contains(
        "runner exec base/perf/gate.toml --gate-required --retry-inconclusive --out perf-gate"
    ));
    assert!(workflow.contains("path: perf-gate*"));
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "gate", toml);
    let o = runner()
        .current_dir(tmp.path())
        .args(["check", spec.to_str().unwrap()])
        .args(["--set", "strategies.base.argv=[\"true\"]"])
        .args(["--set", "strategies.pr.argv=[\"true\"]"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("gate        max_slowdown 2%"), "{text}");
    // The file's 30 forks are enough for the self-check to mean something.
    assert!(!text.contains("will be inconclusive"), "{text}");
    assert!(
        text.contains("(gate self-check: `base` against itself)"),
        "{text}"
    );
}

/// A percentage of a slow baseline (1000 % of a 60 ms spin): `check` sizes
/// the 0.5x cell from its trial runs (half of 600 ms injected) and counts
/// it, with the self-check's quarter of the forks, in its estimate.
#[test]
fn check_counts_a_percentage_gates_half_threshold_cells() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(
        tmp.path(),
        "cap",
        include_str!("../fixtures/capped_gate.toml"),
    );
    let o = runner()
        .current_dir(tmp.path())
        .args(["check", spec.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("at half the threshold, sized once"), "{text}");
    assert!(
        text.contains("jobs        4 (3 cells, 2 forks per experiment cell)"),
        "{text}"
    );
    let estimate = text
        .lines()
        .find_map(|l| l.strip_prefix("estimate    about "))
        .expect("an estimate line");
    let secs = match estimate.split_whitespace().collect::<Vec<_>>()[..] {
        [n, "s", ..] => n.parse::<f64>().unwrap(),
        [n, "min", ..] => n.parse::<f64>().unwrap() * 60.0,
        _ => panic!("{estimate}"),
    };
    // 12 pairs a fork: the experiment's 2 forks x 12 x 120 ms, about 3 s;
    // the d = 0 fork 1.5 s; the 0.5x fork 12 x (120 ms + 2 x 300 ms), about
    // 8.7 s: about 13 s.
    assert!((10.0..20.0).contains(&secs), "{text}");
}

/// `runner check` takes exec's command line as CI runs it: the flags are
/// checked as exec checks them and said in the plan.
#[test]
fn check_accepts_execs_flags_and_refuses_what_exec_would() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "gate", NOOP_GATE);
    let o = runner()
        .current_dir(tmp.path())
        .args([
            "check",
            spec.to_str().unwrap(),
            "--gate-required",
            "--bisect",
        ])
        .args(["--retry-inconclusive", "--out", "perf-gate", "--quiet"])
        .args(["--shard", "1/2", "--set", "design.forks=4"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    for line in [
        "--gate-required: the file has a [gate]",
        "--bisect: exit 0 pass (good), 1 regression (bad), 125",
        "--retry-inconclusive: an inconclusive verdict runs once more",
        "of the plan's 6 jobs",
        "shard       1/2: ",
        "output      exec writes perf-gate/ (--out) once the run completes; a report already there moves to perf-gate.old/",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
    // Where exec writes is said once, the way --out sets it.
    assert_eq!(text.matches("exec writes").count(), 1, "{text}");
    assert!(!text.contains("reports/"), "{text}");
    assert!(!tmp.path().join("perf-gate").exists());
    let ungated = write_spec(
        tmp.path(),
        "plain",
        &NOOP_GATE.replace("[gate]\nmax_slowdown = \"2us\"\n", ""),
    );
    let o = runner()
        .current_dir(tmp.path())
        .args(["check", ungated.to_str().unwrap(), "--gate-required"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("--gate-required asks for one"),
        "{}",
        stderr(&o)
    );
    let o = runner()
        .current_dir(tmp.path())
        .args(["check", ungated.to_str().unwrap(), "--bisect"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("--bisect needs a [gate]"),
        "{}",
        stderr(&o)
    );
    // Exec's own flag for a run in progress is not check's.
    let o = runner()
        .current_dir(tmp.path())
        .args(["check", spec.to_str().unwrap(), "--resume", "x.partial"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 2);
}
