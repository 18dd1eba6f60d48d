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
fn separate_cores_on_one_allowed_cpu_is_refused() {
    if std::process::Command::new("taskset")
        .arg("-V")
        .output()
        .is_err()
    {
        eprintln!("SKIPPED: taskset not found");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let spec = spec(tmp.path(), "placement = \"separate-cores\"", "");
    let o = std::process::Command::new("taskset")
        .current_dir(tmp.path())
        .args(["-c", "0"])
        .arg(assert_cmd::cargo::cargo_bin("runner"))
        .args(["exec", spec.to_str().unwrap(), "--quiet"])
        .output()
        .unwrap();
    assert_refused(&o, &["design.placement", "needs two CPUs"]);
}

#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn same_core_on_postgres_pins_the_backend_to_the_workers_cpu() {
    let Some(url) = pg_url() else { return };
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

/// A spec of two arms that each wait `wait_s` per run, `pairs` pairs in
/// one fork, placed `placement`.
fn waiting(
    dir: &std::path::Path,
    name: &str,
    run: &str,
    pairs: u32,
    placement: &str,
) -> std::path::PathBuf {
    write_spec(
        dir,
        name,
        &format!(
            r#"
seed = 9
{run}
[design]
baseline = "a"
treatment = "a"
forks = 1
warmup_pairs = 0
pairs = {pairs}
placement = "{placement}"
[analysis]
resamples = 200
"#
        ),
    )
}

/// Waits until the run `child` started has claimed its CPU: a lock file in
/// `runtime`'s lock folder names it (read, never locked here, which would
/// take the CPU from the runner for that moment).
fn wait_for_a_claim(runtime: &std::path::Path, child: &mut std::process::Child) {
    let locks = runner_os::placement::lock::lock_dir(Some(runtime));
    let me = format!("runner pid {}\n", child.id());
    let claimed = || {
        std::fs::read_dir(&locks).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| std::fs::read_to_string(e.path()).is_ok_and(|t| t == me))
        })
    };
    let start = std::time::Instant::now();
    while !claimed() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the first runner ended before it held a CPU"
        );
        assert!(start.elapsed().as_secs() < 60, "no CPU claimed in 60 s");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The worker's planned CPU of every fork of a run, and its record.
fn planned(out: &std::path::Path) -> Vec<(Option<u64>, serde_json::Value)> {
    forks(out)
        .into_iter()
        .map(|f| {
            (
                f["placement"]["planned"]["worker"].as_u64(),
                f["placement"].clone(),
            )
        })
        .collect()
}

/// Two runs at once, the second started while the first measures: B's
/// `started_at` falls before A's `finished_at`.
fn overlapped(a: &std::path::Path, b: &std::path::Path) {
    let (ra, rb) = (
        read_json(&a.join("run.json")),
        read_json(&b.join("run.json")),
    );
    let (a_end, b_start) = (
        ra["finished_at"].as_str().unwrap(),
        rb["started_at"].as_str().unwrap(),
    );
    assert!(
        b_start <= a_end,
        "the runs did not overlap: B started {b_start}, A ended {a_end}"
    );
}

/// Two runners started at once on one machine, both `same-core` (the
/// default): each parent locks the CPU it pins, so the second takes
/// another CPU, or, with one allowed, runs unpinned and says why.
#[test]
fn two_runners_at_once_pin_to_different_cpus_or_say_why_not() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let runtime = t.join("runtime");
    std::fs::create_dir(&runtime).unwrap();
    let arms = "[strategies.a]\nkind = \"command\"\nargv = [\"sleep\", \"0.1\"]";
    let long = waiting(t, "long", arms, 10, "same-core");
    let short = waiting(t, "short", arms, 2, "same-core");
    let mut a = runner_std()
        .current_dir(t)
        .stdout(std::process::Stdio::null())
        .env("XDG_RUNTIME_DIR", &runtime)
        .args(["exec", long.to_str().unwrap(), "--quiet", "--out", "a"])
        .spawn()
        .unwrap();
    wait_for_a_claim(&runtime, &mut a);
    let b = runner()
        .current_dir(t)
        .env("XDG_RUNTIME_DIR", &runtime)
        .args(["exec", short.to_str().unwrap(), "--out", "b"])
        .output()
        .unwrap();
    assert!(a.wait().unwrap().success());
    assert!(b.status.success(), "{}", err_of(&b));
    overlapped(&t.join("a"), &t.join("b"));
    let (pa, pb) = (planned(&t.join("a")), planned(&t.join("b")));
    let cpu_a = pa[0].0.expect("the first runner pinned");
    assert!(
        pa.iter()
            .all(|(c, p)| *c == Some(cpu_a) && p["contention"].is_null()),
        "{pa:?}"
    );
    if runner_os::placement::pin::allowed_cpus().len() >= 2 {
        for (c, p) in &pb {
            assert!(
                c.is_some() && *c != Some(cpu_a),
                "B on A's CPU {cpu_a}: {p}"
            );
            assert_eq!(p["worker_pinned"], true, "{p}");
        }
    } else {
        for (c, p) in &pb {
            assert_eq!(*c, None, "{p}");
            let note = p["contention"].as_str().unwrap();
            assert!(note.contains("held by another runner"), "{note}");
        }
    }
}

/// Every CPU held by another runner: the run says so on stderr, runs
/// unpinned, and records and reports why, per fork.
#[test]
fn every_cpu_taken_runs_unpinned_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let runtime = t.join("runtime");
    std::fs::create_dir(&runtime).unwrap();
    // This test holds every CPU's lock, as other runners would.
    let allowed = runner_os::placement::pin::allowed_cpus();
    let mut others = runner_os::placement::lock::CpuLocks::new(
        runner_os::placement::lock::lock_dir(Some(&runtime)),
    );
    for &cpu in &allowed {
        let p = runner_os::placement::Placement::Cpus {
            worker: cpu,
            backend: None,
        };
        assert_eq!(others.claim(p, &allowed).unwrap().note, None);
    }
    let arms = "[strategies.a]\nkind = \"command\"\nargv = [\"true\"]";
    let spec = waiting(t, "crowded", arms, 3, "same-core");
    let o = runner()
        .current_dir(t)
        .env("XDG_RUNTIME_DIR", &runtime)
        .args(["exec", spec.to_str().unwrap(), "--out", "out"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err_of(&o));
    let me = format!("runner pid {}", std::process::id());
    let err = err_of(&o);
    let said = err
        .lines()
        .find(|l| l.starts_with("note: placement \"same-core\": every CPU runner may use here"))
        .unwrap_or_else(|| panic!("said on stderr: {err}"));
    assert!(
        said.contains(&me) && said.ends_with("so the fork runs unpinned"),
        "{said}"
    );
    for (cpu, p) in planned(&t.join("out")) {
        assert_eq!(cpu, None, "{p}");
        assert_eq!(p["worker_pinned"], false, "{p}");
        assert!(p["contention"].as_str().unwrap().contains(&me), "{p}");
    }
    let report = std::fs::read_to_string(t.join("out/report.md")).unwrap();
    assert!(
        report.contains(
            "- **Warning, placement:** same-core: in 1 of 1 forks, every CPU runner may use here"
        ),
        "{report}"
    );
}

/// Two runs of PostgreSQL arms at once: each worker and its backend pinned
/// together (same-core), and the two runs on different CPUs.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn two_postgres_runs_at_once_pin_workers_and_backends_to_different_cpus() {
    let Some(url) = pg_url() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let runtime = t.join("runtime");
    std::fs::create_dir(&runtime).unwrap();
    let arms = "[database]\nbackend = \"postgres\"\n[strategies.a]\nkind = \"sql\"\nrun = \"SELECT pg_sleep(0.05)\"";
    let long = waiting(t, "long", arms, 20, "same-core");
    let short = waiting(t, "short", arms, 3, "same-core");
    let mut a = runner_std()
        .current_dir(t)
        .stdout(std::process::Stdio::null())
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("RUNNER_DATABASE_URL", &url)
        .args(["exec", long.to_str().unwrap(), "--quiet", "--out", "a"])
        .spawn()
        .unwrap();
    wait_for_a_claim(&runtime, &mut a);
    let b = runner()
        .current_dir(t)
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("RUNNER_DATABASE_URL", &url)
        .args(["exec", short.to_str().unwrap(), "--quiet", "--out", "b"])
        .output()
        .unwrap();
    assert!(a.wait().unwrap().success());
    assert!(b.status.success(), "{}", err_of(&b));
    overlapped(&t.join("a"), &t.join("b"));
    let two = runner_os::placement::pin::allowed_cpus().len() >= 2;
    let mut used = Vec::new();
    for out in ["a", "b"] {
        for (cpu, p) in planned(&t.join(out)) {
            if !two && out == "b" {
                assert_eq!(cpu, None, "{p}");
                assert!(
                    p["contention"]
                        .as_str()
                        .unwrap()
                        .contains("held by another runner"),
                    "{p}"
                );
                continue;
            }
            let backends = p["database"]["backends"].as_array().unwrap();
            assert!(!backends.is_empty(), "{p}");
            // The tests run as root here, so pinning the backend is permitted.
            assert!(backends.iter().all(|b| b["pinned"] == true), "{p}");
            assert_eq!(p["planned"]["backend"].as_u64(), cpu, "{p}");
            let seen: Vec<u64> = p["backend_cpus"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["cpu"].as_u64().unwrap())
                .collect();
            assert_eq!(
                seen,
                vec![cpu.unwrap()],
                "the backend ran where pinned: {p}"
            );
            used.push(cpu.expect("pinned"));
        }
    }
    used.dedup();
    if two {
        assert_eq!(used.len(), 2, "each run on a CPU of its own: {used:?}");
    }
}
