//! The regression gate on the real binary: verdicts and exit codes, the
//! self-check's shares, gate.json, `$GITHUB_STEP_SUMMARY`, a percentage
//! threshold sized in a second phase (and resumed there).
//!
//! Margins: the thresholds are far from what the arms do (a 2 µs gate on
//! `noop`, whose pairs differ by tens of ns; 1 µs and 4 µs injected against
//! it), so a loaded machine cannot move a verdict. A gate whose self-check
//! is to bound its error rates needs 29 forks per cell (at the default
//! `max_false_block` of 10 %); `noop` forks are quick.

mod common;
use common::faults::{exec, printed_resume, stderr};
use common::*;
use runner::plan::self_check::power_delay_ns;
use runner::spec::MaxSlowdown;
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
fn an_aa_gate_passes_states_its_false_alarms_and_appends_the_step_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "gate", NOOP_GATE);
    let summary = tmp.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let o = runner()
        .current_dir(tmp.path())
        .env("GITHUB_STEP_SUMMARY", &summary)
        .args(["exec", spec.to_str().unwrap(), "--out", "out", "--quiet"])
        .args(["--set", "design.forks=30"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert!(
        stdout.starts_with("gate: PASS (exit 0). Passed"),
        "{stdout}"
    );
    let g = read_json(&tmp.path().join("out/gate.json"));
    assert_eq!(g["verdict"], "pass");
    assert_eq!(g["exit_code"], 0);
    // All three rates, each of 30 forks, within what is allowed.
    assert_eq!(g["false_positive_forks"][1], 30);
    assert_eq!(g["false_block_forks"][1], 30);
    assert_eq!(g["power_forks"], serde_json::json!([30, 30]));
    for key in ["false_positive_upper_bound", "false_block_upper_bound"] {
        assert!(g[key].as_f64().unwrap() <= 0.1, "{key}: {g}");
    }
    assert!(g["power_lower_bound"].as_f64().unwrap() >= 0.8, "{g}");
    assert!(g["forks_needed"].is_null());
    assert_eq!(g["threshold_ns"], 2000.0);
    // The self-check cells ran: 4 cells x 30 forks.
    let run = read_json(&tmp.path().join("out/run.json"));
    let roles: Vec<&str> = run["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["role"].as_str().unwrap_or("experiment"))
        .collect();
    assert_eq!(
        roles,
        ["experiment", "gate-null", "gate-power", "gate-within"]
    );
    assert_eq!(run["cells"][2]["delay_ns"], 4000);
    assert_eq!(run["cells"][3]["delay_ns"], 1000);
    assert_eq!(run["jobs"].as_array().unwrap().len(), 120);
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
    for row in ["false alarm", "false block", "power"] {
        assert!(text.contains(&format!("| {row}")), "{row}: {text}");
    }
    let report = std::fs::read_to_string(tmp.path().join("out/report.md")).unwrap();
    assert!(report.contains("## Gate: PASS"), "{report}");
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
    assert!(stdout.starts_with("gate: REGRESSION (exit 3)."), "{stdout}");
    let g = read_json(&tmp.path().join("out/gate.json"));
    assert_eq!(g["verdict"], "regression");
    assert_eq!(g["self_check"], false);
    assert!(g["false_positive_share"].is_null() && g["power"].is_null());
    let est = g["estimate_ns"].as_f64().unwrap();
    assert!(est > 2000.0 && g["ci_ns"][0].as_f64().unwrap() > 0.0, "{g}");
    // The run is complete: the folder is in place, not left partial.
    assert!(tmp.path().join("out/report.md").is_file());
    assert!(!tmp.path().join("out.partial").exists());
}

/// Two forks per cell: the self-check can only bound its error rates at
/// 77.6 %, so the gate is inconclusive whatever the interval says, and it
/// names the forks that would do.
#[test]
fn a_two_fork_gate_is_inconclusive_naming_the_forks_that_would_do() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "gate", NOOP_GATE);
    let o = exec(tmp.path(), &spec, "out", None, &["--set", "design.forks=2"]);
    assert_eq!(code(&o), 4, "{}", stderr(&o));
    let g = read_json(&tmp.path().join("out/gate.json"));
    assert_eq!(g["verdict"], "inconclusive");
    assert_eq!(g["reason"], "error-rate-unbounded");
    assert_eq!(g["forks_needed"], 29);
    let bound = g["false_block_upper_bound"].as_f64().unwrap();
    assert!((bound - 0.7764).abs() < 1e-3, "{g}");
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert!(
        stdout.starts_with("gate: INCONCLUSIVE (exit 4)."),
        "{stdout}"
    );
    assert!(
        stdout.contains("at least 29 forks per cell (`--set design.forks=29`)"),
        "{stdout}"
    );
    // check says so before anything runs.
    let o = runner()
        .current_dir(tmp.path())
        .args(["check", spec.to_str().unwrap(), "--set", "design.forks=2"])
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("--set design.forks=29"), "{text}");
}

/// A power that no number of forks can show (`min_power = 1`: a lower
/// bound is below 1 however many forks catch it) turns every pass into an
/// inconclusive one: a pass that could not have failed is not a pass.
#[test]
fn a_pass_without_the_power_asked_for_is_exit_4() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "gate", NOOP_GATE);
    let o = exec(
        tmp.path(),
        &spec,
        "out",
        None,
        &["--set", "design.forks=30", "--set", "gate.min_power=1.0"],
    );
    assert_eq!(code(&o), 4, "{}", stderr(&o));
    let g = read_json(&tmp.path().join("out/gate.json"));
    assert_eq!(g["reason"], "low-power");
    assert_eq!(g["power_forks"], serde_json::json!([30, 30]));
    assert!(g["power_lower_bound"].as_f64().unwrap() < 1.0);
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert!(
        stdout.contains("a pass that could not have failed"),
        "{stdout}"
    );
}

/// A percentage threshold's verdict says the slowdown in % of the
/// baseline's median too.
#[test]
fn a_percentage_verdict_states_the_percentage() {
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
    assert!(
        stdout.contains(" slower than `noop` per run, above the 10% allowed"),
        "{stdout}"
    );
    let pct = stdout
        .split(" µs (+")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("a % after the slowdown: {stdout}"));
    assert!((30.0..50.0).contains(&pct), "{stdout}");
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
    let o = exec(
        tmp.path(),
        &spec,
        "out",
        None,
        &["--set", "design.forks=30"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let g = read_json(&tmp.path().join("out/gate.json"));
    let mut have: Vec<String> = g.as_object().unwrap().keys().cloned().collect();
    let mut documented = documented_keys();
    have.sort();
    documented.sort();
    assert_eq!(have, documented);
    for k in ["master", "schedule", "deciding", "self_check"] {
        assert!(g["seeds"].get(k).is_some(), "seeds.{k}");
    }
    // 30 self-check forks at d = 0, 30 at 2x and 30 at 0.5x, each with its
    // stream's seed.
    assert_eq!(g["seeds"]["self_check"].as_array().unwrap().len(), 90);
}

/// A percentage: the 2x cell is sized from the first phase and runs last;
/// a fork of it that fails leaves a partial folder whose run.json has the
/// sizing, and the printed resume finishes it.
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
    // Cells: 0 experiment, 1 the d = 0 check, 2 the 2x check, 3 the 0.5x.
    let o = exec(tmp.path(), &spec, "out", Some("exit=9@cell=2,fork=1"), &[]);
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
    assert_eq!(run["cells"][2]["delay_ns"].as_u64().unwrap(), delay);
    let half = run["cells"][3]["delay_ns"].as_u64().unwrap();
    assert_eq!(half, runner::plan::self_check::within_delay_ns(threshold));
    // The 2x and 0.5x jobs come after every first-phase job.
    let mut cells: Vec<u64> = run["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["cell"].as_u64().unwrap())
        .collect();
    cells[6..].sort_unstable();
    assert_eq!(cells[6..], [2, 2, 2, 3, 3, 3], "{cells:?}");
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
    assert_eq!(g["power_forks"][1], 3);
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
        ("gate.statistic=\"mean\"", "gate.statistic must be one of"),
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
    assert!(workflow.contains("runner exec base/perf/gate.toml --gate-required --out perf-gate"));
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

/// A percentage of a slow baseline (1000 % of a 60 ms spin) would size a
/// 2x cell of 1.2 s; the run caps it at 1 s, and `check` says so and
/// counts those cells (and the 0.5x ones) in its estimate.
#[test]
fn check_counts_a_percentage_gates_capped_2x_cells() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "cap", include_str!("fixtures/capped_gate.toml"));
    let o = runner()
        .current_dir(tmp.path())
        .args(["check", spec.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("injected (capped at 1 s"), "{text}");
    let estimate = text
        .lines()
        .find_map(|l| l.strip_prefix("estimate    about "))
        .expect("an estimate line");
    let secs = match estimate.split_whitespace().collect::<Vec<_>>()[..] {
        [n, "s", ..] => n.parse::<f64>().unwrap(),
        [n, "min", ..] => n.parse::<f64>().unwrap() * 60.0,
        _ => panic!("{estimate}"),
    };
    // 2 forks x 12 pairs x (2 x 60 ms + 2 x 1 s) for the 2x cell, x (2 x
    // 60 ms + 2 x 300 ms) for the 0.5x cell, plus the d = 0 cells: about
    // 74 s.
    assert!((65.0..90.0).contains(&secs), "{text}");
}
