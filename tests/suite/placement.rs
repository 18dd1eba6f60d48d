//! CPU placement through the real binary: what each fork pinned and the
//! CPUs its runs used are recorded in run.json; a placement this machine
//! cannot make is refused before any fork runs (exit 2).

use crate::common;
use common::*;

fn spec(dir: &std::path::Path, design: &str, grid: &str) -> std::path::PathBuf {
    write_spec(
        dir,
        "pl",
        &format!(
            r#"
seed = 5
[database]
backend = "auto"
[workload]
plans = 4
months = 12
[strategies.r]
kind = "tx-rollback"
[design]
baseline = "r"
treatment = "r"
forks = 2
warmup_pairs = 2
pairs = 20
{design}
[grid]
delay_us = [0, 50]
{grid}
[analysis]
resamples = 200
"#
        ),
    )
}

fn forks(out: &std::path::Path) -> Vec<serde_json::Value> {
    read_json(&out.join("run.json"))["forks"]
        .as_array()
        .unwrap()
        .clone()
}

/// The runs' CPUs, both arms, from a fork's placement record.
fn run_cpus(p: &serde_json::Value) -> Vec<u64> {
    ["baseline", "treatment"]
        .iter()
        .flat_map(|arm| p["cpus"][arm].as_array().unwrap().clone())
        .map(|c| c["cpu"].as_u64().unwrap())
        .collect()
}

#[test]
fn same_core_on_sqlite_pins_the_worker_and_records_every_run_on_it() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = spec(tmp.path(), "placement = \"same-core\"", "");
    let out = tmp.path().join("out");
    runner()
        .current_dir(tmp.path())
        .env_remove("RUNNER_DATABASE_URL")
        .args(["exec", spec.to_str().unwrap(), "--quiet", "--out"])
        .arg(&out)
        .assert()
        .success();
    let forks = forks(&out);
    assert_eq!(forks.len(), 4);
    for f in &forks {
        let p = &f["placement"];
        assert_eq!(p["placement"], "same-core", "{p}");
        assert_eq!(p["worker_pinned"], true, "{p}");
        assert_eq!(p["database"]["kind"], "embedded", "{p}");
        let cpu = p["planned"]["worker"].as_u64().unwrap();
        assert_eq!(
            run_cpus(p),
            vec![cpu, cpu],
            "every run on the pinned CPU: {p}"
        );
        let n: u64 = p["cpus"]["baseline"][0]["n"].as_u64().unwrap();
        assert_eq!(n, 22, "one sample per run (2 warm-up + 20 pairs): {p}");
    }
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("- Placement (where the worker"), "{report}");
    assert!(
        report.contains("same-core: the worker pinned to CPU"),
        "{report}"
    );
}

#[test]
fn placement_swept_in_the_grid_gives_each_cell_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = spec(tmp.path(), "", "placement = [\"none\", \"same-core\"]");
    let out = tmp.path().join("out");
    runner()
        .current_dir(tmp.path())
        .env_remove("RUNNER_DATABASE_URL")
        .args(["exec", spec.to_str().unwrap(), "--quiet", "--out"])
        .arg(&out)
        .assert()
        .success();
    let run = read_json(&out.join("run.json"));
    let cells = run["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4);
    for f in forks(&out) {
        let cell = &cells[f["cell"].as_u64().unwrap() as usize];
        assert_eq!(cell["params"]["placement"], f["placement"]["placement"]);
        let pinned = f["placement"]["worker_pinned"].as_bool().unwrap();
        assert_eq!(pinned, cell["params"]["placement"] == "same-core", "{f}");
    }
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("## Placement"), "{report}");
    assert!(report.contains("| same-core |"), "{report}");
}

#[test]
fn a_cpu_that_does_not_exist_is_refused_with_its_position() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = spec(tmp.path(), "placement = \"cpus:999\"", "");
    for args in [vec!["check"], vec!["exec", "--quiet"]] {
        let mut args = args;
        args.push(spec.to_str().unwrap());
        let o = run_in(tmp.path(), &args);
        assert_refused(
            &o,
            &[
                "pl.toml:",
                "design.placement",
                "CPU 999 is not one runner may use here",
            ],
        );
    }
    assert!(!tmp.path().join("reports").exists(), "nothing ran");
    // From --set, and as a grid value.
    let spec = spec_plain(tmp.path());
    let o = check_setting(tmp.path(), &spec, "design.placement=cpus:0,999");
    assert_refused(&o, &["design.placement", "CPU 999"]);
    let o = check_setting(tmp.path(), &spec, "grid.placement=[\"none\",\"cpus:999\"]");
    assert_refused(&o, &["grid.placement[1]", "CPU 999"]);
    let o = check_setting(tmp.path(), &spec, "design.placement=\"on-core\"");
    assert_refused(&o, &["design.placement", "same-core"]);
}

/// `runner check SPEC --set SETTING`.
fn check_setting(
    dir: &std::path::Path,
    spec: &std::path::Path,
    setting: &str,
) -> std::process::Output {
    run_in(dir, &["check", spec.to_str().unwrap(), "--set", setting])
}

fn spec_plain(dir: &std::path::Path) -> std::path::PathBuf {
    spec(dir, "", "")
}

/// With one CPU allowed (`taskset -c 0`), separate-cores cannot be made.
#[test]
#[cfg_attr(not(runner_taskset), ignore = "SKIPPED: taskset cannot pin to CPU 0")]
fn separate_cores_on_one_allowed_cpu_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = spec(tmp.path(), "placement = \"separate-cores\"", "");
    let o = taskset_cpu_0()
        .current_dir(tmp.path())
        .arg(assert_cmd::cargo::cargo_bin("runner"))
        .args(["exec", spec.to_str().unwrap(), "--quiet"])
        .output()
        .unwrap();
    assert_refused(&o, &["design.placement", "needs two CPUs"]);
}

#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn same_core_on_postgres_pins_the_backend_to_the_workers_cpu() {
    let url = pg_url();
    let tmp = tempfile::tempdir().unwrap();
    let spec = spec(
        tmp.path(),
        "",
        "placement = [\"same-core\", \"separate-cores\"]",
    );
    let out = tmp.path().join("out");
    runner()
        .current_dir(tmp.path())
        .env("RUNNER_DATABASE_URL", &url)
        .args(["exec", spec.to_str().unwrap(), "--quiet", "--out"])
        .arg(&out)
        .assert()
        .success();
    for f in forks(&out) {
        let p = &f["placement"];
        let backends = p["database"]["backends"].as_array().unwrap();
        assert_eq!(p["database"]["kind"], "server", "{p}");
        assert_eq!(backends.len(), 1, "{p}");
        // The tests run as root here, so pinning the backend is permitted.
        assert_eq!(backends[0]["pinned"], true, "{p}");
        let (worker, backend) = (&p["planned"]["worker"], &p["planned"]["backend"]);
        match p["placement"].as_str().unwrap() {
            "same-core" => assert_eq!(worker, backend, "{p}"),
            _ => assert_ne!(worker, backend, "{p}"),
        }
        let seen: Vec<u64> = p["backend_cpus"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["cpu"].as_u64().unwrap())
            .collect();
        assert_eq!(seen, vec![backend.as_u64().unwrap()], "{p}");
        let cpu = worker.as_u64().unwrap();
        assert_eq!(run_cpus(p), vec![cpu, cpu], "{p}");
        assert!(p["backend_ticks"].is_u64(), "{p}");
    }
}
