//! Faults on the real binary: crashed, hung and garbled workers, Ctrl-C,
//! two execs on one folder, unwritable and full disks, broken templates, a
//! changed spec on resume. Each must keep every finished fork, exit with the
//! documented code, and say in one sentence what happened and what to do.
//! Workers fail on purpose through the `RUNNER_FAULT` hook (src/exec/fault.rs).

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Output};
use std::time::{Duration, Instant};

type Key = (String, String, String, String, String);

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `runner exec SPEC --out DIR --quiet EXTRA`, with RUNNER_FAULT when given.
fn exec(tmp: &Path, spec: &Path, out: &str, fault: Option<&str>, extra: &[&str]) -> Output {
    let mut cmd = runner();
    cmd.current_dir(tmp)
        .arg("exec")
        .arg(spec)
        .args(["--out", out, "--quiet"])
        .args(extra);
    match fault {
        Some(f) => cmd.env("RUNNER_FAULT", f),
        None => cmd.env_remove("RUNNER_FAULT"),
    };
    cmd.output().unwrap()
}

/// The resume command the parent printed, as arguments after `runner`.
fn printed_resume(err: &str) -> Vec<String> {
    let line = err
        .lines()
        .find(|l| l.contains("--resume"))
        .unwrap_or_else(|| panic!("no resume command in: {err}"));
    let at = line
        .find("runner exec")
        .expect("command starts with runner exec");
    line[at..]
        .split_whitespace()
        .skip(1)
        .map(String::from)
        .collect()
}

/// Runs the printed resume command from `tmp` and expects success.
fn run_printed_resume(tmp: &Path, err: &str) -> Output {
    let o = runner()
        .current_dir(tmp)
        .env_remove("RUNNER_FAULT")
        .args(printed_resume(err))
        .output()
        .unwrap();
    assert!(o.status.success(), "resume failed: {}", stderr(&o));
    o
}

/// (cell, fork) in the order the run executes them.
fn job_order(run_json: &Path) -> Vec<(u64, u64)> {
    read_json(run_json)["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| (j["cell"].as_u64().unwrap(), j["fork"].as_u64().unwrap()))
        .collect()
}

/// Finished forks in a partial folder, sorted.
fn kept_forks(partial: &Path) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = std::fs::read_dir(partial.join("forks"))
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().unwrap();
            let stem = name.strip_suffix(".json")?;
            let (c, f) = stem.strip_prefix('c')?.split_once("-f")?;
            Some((c.parse().unwrap(), f.parse().unwrap()))
        })
        .collect();
    v.sort();
    v
}

/// Every kept fork's CSV holds whole records only, exactly `rows` of them.
fn assert_whole_records(partial: &Path, rows: usize) {
    for (c, f) in kept_forks(partial) {
        let text = std::fs::read_to_string(partial.join(format!("forks/c{c}-f{f}.csv"))).unwrap();
        assert!(text.ends_with('\n'), "c{c}-f{f}.csv ends mid-line");
        assert_eq!(text.lines().count(), rows, "c{c}-f{f}.csv");
        for line in text.lines() {
            assert_eq!(line.split(',').count(), 11, "half a record: {line:?}");
        }
    }
}

fn keys(dir: &Path) -> Vec<Key> {
    let (h, rows) = csv_rows(&dir.join("pairs.csv"));
    let i = ["cell", "fork", "phase", "pair", "first"].map(|c| col(&h, c));
    rows.iter()
        .map(|r| {
            (
                r[i[0]].clone(),
                r[i[1]].clone(),
                r[i[2]].clone(),
                r[i[3]].clone(),
                r[i[4]].clone(),
            )
        })
        .collect()
}

/// A resumed run equals an uninterrupted one except for timings.
fn assert_same_run(resumed: &Path, reference: &Path) {
    assert_eq!(keys(resumed), keys(reference));
    let (a, b) = (
        read_json(&resumed.join("run.json")),
        read_json(&reference.join("run.json")),
    );
    assert_eq!(a["jobs"], b["jobs"]);
    assert_eq!(a["seeds"], b["seeds"]);
    let sums = |j: &serde_json::Value| -> Vec<String> {
        j["forks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| format!("{} {}", f["checksum_baseline"], f["checksum_treatment"]))
            .collect()
    };
    assert_eq!(sums(&a), sums(&b));
}

/// 2 cells x 2 forks of 5 + 40 pairs.
const ROWS_PER_FORK: usize = 45;

#[test]
fn crashed_hung_or_garbled_workers_keep_finished_forks_and_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "small", SMALL_AA);
    let o = exec(t, &spec, "reference", None, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let reference = t.join("reference");
    let order = job_order(&reference.join("run.json"));
    // The third job fails, so the first two are kept.
    let (c, f) = order[2];
    let mut before: Vec<_> = order[..2].to_vec();
    before.sort();

    let cases: [(&str, &[&str], &[&str]); 5] = [
        (
            "panic@cell={c},fork={f},pair=10",
            &[],
            &["the worker exited with code 101", "injected fault"],
        ),
        (
            "exit=3@cell={c},fork={f},pair=10",
            &[],
            &[
                "the worker exited with code 3",
                "worker stderr (last lines):\n  injected fault (RUNNER_FAULT): exit 3",
            ],
        ),
        (
            "sigkill@cell={c},fork={f}",
            &[],
            &["the worker was killed by signal 9 (SIGKILL)"],
        ),
        (
            "garbage@cell={c},fork={f},pair=10",
            &[],
            &["the worker printed a malformed record on line"],
        ),
        (
            "hang@cell={c},fork={f},pair=10",
            &["--set", "design.fork_timeout_s=1"],
            &["after the fork timeout of 1 s (design.fork_timeout_s) and was killed"],
        ),
    ];
    for (i, (fault, extra, says)) in cases.iter().enumerate() {
        let fault = fault
            .replace("{c}", &c.to_string())
            .replace("{f}", &f.to_string());
        let out = format!("out{i}");
        let o = exec(t, &spec, &out, Some(&fault), extra);
        let err = stderr(&o);
        eprintln!("--- {fault}\n{err}");
        assert_eq!(o.status.code(), Some(1), "{fault}: {err}");
        let seed = read_json(&t.join(format!("{out}.partial/run.json")))["jobs"][2]["seed"]
            .as_u64()
            .unwrap();
        assert!(
            err.starts_with(&format!(
                "error: cell {c} fork {f} (job seed {seed}) failed: "
            )),
            "{fault}: {err}"
        );
        for s in *says {
            assert!(err.contains(s), "{fault}: expected {s:?} in {err}");
        }
        if !fault.starts_with("panic") {
            assert!(!err.contains("panicked"), "{err}");
        }
        assert!(
            err.contains("2 of 4 forks finished and are kept in"),
            "{err}"
        );
        let partial = t.join(format!("{out}.partial"));
        assert_eq!(kept_forks(&partial), before, "{fault}");
        assert_whole_records(&partial, ROWS_PER_FORK);
        assert!(!partial.join("lock").exists(), "lock released");
        assert!(!t.join(&out).exists());

        run_printed_resume(t, &err);
        assert!(!partial.exists());
        assert_same_run(&t.join(&out), &reference);
    }
}

/// Starts `runner exec` in its own process group (so a test can signal the
/// group, as a terminal's Ctrl-C does).
fn spawn_exec(tmp: &Path, spec: &Path, out: &str, fault: &str, db_url: Option<&str>) -> Child {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("runner"));
    match db_url {
        Some(u) => cmd.env("RUNNER_DATABASE_URL", u),
        None => cmd.env_remove("RUNNER_DATABASE_URL"),
    };
    cmd.current_dir(tmp)
        .env("RUNNER_FAULT", fault)
        .arg("exec")
        .arg(spec)
        .args(["--out", out, "--quiet"])
        .process_group(0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

fn wait_for(what: &str, timeout: Duration, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for `child`, killing it (and failing) after `timeout`.
fn wait_output(mut child: Child, timeout: Duration) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > timeout {
            let _ = child.kill();
            panic!("runner did not exit within {timeout:?} of the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// The worker process of a running exec (its only child).
fn worker_pid(parent: u32) -> Option<i32> {
    let text = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children")).ok()?;
    text.split_whitespace().next()?.parse().ok()
}

fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s.split_whitespace().nth(2) == Some("Z"),
    }
}

/// Ctrl-C while the third job's worker runs: to the whole process group (a
/// terminal) and to the parent alone (`kill -INT`). Either way the worker
/// stops, the finished forks stay whole, the half fork is not counted, the
/// lock goes, and the printed command finishes the run.
#[test]
fn ctrl_c_keeps_finished_forks_and_the_run_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "small", SMALL_AA);
    let o = exec(t, &spec, "reference", None, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let reference = t.join("reference");
    let order = job_order(&reference.join("run.json"));
    let (c, f) = order[2];
    let mut before: Vec<_> = order[..2].to_vec();
    before.sort();

    for (out, to_group) in [("group", true), ("parent", false)] {
        // The worker hangs after 10 measured pairs: a fork in progress.
        let child = spawn_exec(
            t,
            &spec,
            out,
            &format!("hang@cell={c},fork={f},pair=10"),
            None,
        );
        let partial = t.join(format!("{out}.partial"));
        let tmp_csv = partial.join(format!("forks/c{c}-f{f}.csv.tmp"));
        wait_for("two finished forks", Duration::from_secs(60), || {
            partial.join("forks").is_dir() && kept_forks(&partial).len() == 2 && tmp_csv.exists()
        });
        std::thread::sleep(Duration::from_millis(300));
        let parent = child.id();
        let worker = worker_pid(parent).expect("a worker runs");
        let target = if to_group {
            -(parent as i32)
        } else {
            parent as i32
        };
        assert_eq!(unsafe { libc::kill(target, libc::SIGINT) }, 0);
        let o = wait_output(child, Duration::from_secs(20));
        let err = stderr(&o);
        eprintln!("--- SIGINT to {out}\n{err}");
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.starts_with("error: interrupted"), "{err}");
        assert!(err.contains(&format!("cell {c} fork {f}")), "{err}");
        assert!(err.contains("2 of 4 forks finished"), "{err}");
        assert_eq!(
            err.lines().count(),
            2,
            "one sentence plus what to do: {err}"
        );
        wait_for("the worker to stop", Duration::from_secs(5), || {
            gone(worker)
        });
        assert_eq!(kept_forks(&partial), before);
        assert_whole_records(&partial, ROWS_PER_FORK);
        assert!(!tmp_csv.exists(), "the unfinished fork is discarded");
        assert!(!partial.join("lock").exists(), "lock released");

        run_printed_resume(t, &err);
        assert_same_run(&t.join(out), &reference);
    }
}

#[test]
fn a_second_exec_on_the_same_folder_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "small", SMALL_AA);
    let first = spawn_exec(t, &spec, "out", "hang", None);
    let partial = t.join("out.partial");
    wait_for("the first exec's lock", Duration::from_secs(30), || {
        partial.join("lock").exists() && partial.join("run.json").exists()
    });
    let second = exec(t, &spec, "out", None, &[]);
    let resume = exec(t, &spec, "out", None, &["--resume", "out.partial"]);
    unsafe { libc::kill(first.id() as i32, libc::SIGINT) };
    let o = wait_output(first, Duration::from_secs(20));
    assert_eq!(o.status.code(), Some(1));
    for o in [second, resume] {
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains("out.partial is in use by another runner exec (pid"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // The refused execs did not disturb the first one's folder.
    assert!(partial.join("run.json").is_file());
    assert!(!partial.join("lock").exists());
}

#[test]
fn an_output_folder_under_a_file_is_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "small", SMALL_AA);
    std::fs::write(t.join("file"), "not a folder").unwrap();
    let o = exec(t, &spec, "file/out", None, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("file/out.partial"), "{err}");
    assert!(err.to_lowercase().contains("not a directory"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(
        std::fs::read_to_string(t.join("file")).unwrap(),
        "not a folder"
    );
}

/// A 64 KiB tmpfs fills during the second fork: exit 1, the disk named, the
/// first fork kept.
#[test]
fn a_disk_that_fills_mid_run_fails_the_run_with_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let disk = t.join("disk");
    std::fs::create_dir(&disk).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&disk)
        .output();
    if !matches!(&mounted, Ok(o) if o.status.success()) {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: cannot mount a small tmpfs here (not root or no CAP_SYS_ADMIN), so the full-disk case is not tested"
        );
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(disk.clone());
    let spec = write_spec(t, "small", SMALL_AA);
    // Each fork writes about 35 KB of records.
    let o = exec(
        t,
        &spec,
        "disk/out",
        None,
        &[
            "--set",
            "grid.delay_us=[0]",
            "--set",
            "design.forks=3",
            "--set",
            "design.pairs=600",
        ],
    );
    let err = stderr(&o);
    eprintln!("{err}");
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(err.contains("--resume disk/out.partial"), "{err}");
    assert!(!kept_forks(&disk.join("out.partial")).is_empty());
    assert_whole_records(&disk.join("out.partial"), 605);
}

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.file_name().into_string().unwrap(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn broken_templates_are_exit_2_and_leave_the_report_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "small", SMALL_AA);
    assert!(exec(t, &spec, "out", None, &[]).status.success());
    let out = t.join("out");
    let before = snapshot(&out);
    std::fs::write(t.join("syntax.j2"), "# {{ spec.title }}\n{% if %}\n").unwrap();
    std::fs::write(
        t.join("undefined.j2"),
        "# {{ spec.title }}\n{{ no_such.thing }}\n",
    )
    .unwrap();

    // runner report --template
    for (name, says) in [
        ("syntax.j2", "syntax.j2:2: template error"),
        ("undefined.j2", "undefined.j2:2: template error"),
    ] {
        let o = runner()
            .current_dir(t)
            .args(["report", "out", "--template", name])
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(says), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(snapshot(&out), before, "{name} changed the report folder");
    }

    // A spec whose report.template does not parse fails before any fork.
    let with = |template: &str| format!("{SMALL_AA}\n[report]\ntemplate = \"{template}\"\n");
    let bad = write_spec(t, "bad", &with("syntax.j2"));
    let o = exec(t, &bad, "out", None, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("syntax.j2:2: template error"), "{err}");
    assert!(!t.join("out.partial").exists());
    assert_eq!(snapshot(&out), before);

    // One that fails only when rendered: the run's data is kept, the old
    // report untouched, and once the template is fixed the resume renders.
    let late = write_spec(t, "late", &with("undefined.j2"));
    let o = exec(t, &late, "out", None, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("undefined.j2:2: template error"), "{err}");
    assert!(
        err.contains("every fork finished and is kept in out.partial"),
        "{err}"
    );
    assert_eq!(snapshot(&out), before);
    std::fs::write(t.join("undefined.j2"), "# {{ spec.title }}\nfixed\n").unwrap();
    run_printed_resume(t, &err);
    assert_eq!(
        std::fs::read_to_string(out.join("report.md")).unwrap(),
        "# Small A/A\nfixed"
    );
}

#[test]
fn resuming_with_a_changed_spec_is_refused_naming_the_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "small", SMALL_AA);
    let o = exec(t, &spec, "out", Some("exit=3@pair=1"), &[]);
    assert_eq!(o.status.code(), Some(1));
    let o = exec(
        t,
        &spec,
        "out",
        None,
        &[
            "--resume",
            "out.partial",
            "--set",
            "design.pairs=41",
            "--set",
            "analysis.resamples=300",
        ],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("analysis.resamples, design.pairs"), "{err}");
    assert!(
        err.contains("the spec changed since this run was started"),
        "{err}"
    );
    assert!(t.join("out.partial/run.json").is_file());
    assert!(!t.join("out.partial/lock").exists());
}

const PG_SPEC: &str = r#"
name = "pg"
title = "PostgreSQL faults"
seed = 5
[workload]
plans = 4
months = 12
[database]
backend = "postgres"
url = "postgres://bench:bench@127.0.0.1:1/bench"
[strategies.rb]
kind = "tx-rollback"
[design]
baseline = "rb"
treatment = "rb"
forks = 3
warmup_pairs = 5
pairs = 40
schedule = "sequential"
[analysis]
resamples = 200
"#;

/// Nothing listens on port 1: the run fails before creating anything.
#[test]
fn a_database_that_is_down_before_the_run_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "pg", PG_SPEC);
    let o = exec(t, &spec, "out", None, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("error: cannot connect to PostgreSQL at 127.0.0.1:1 database \"bench\": "),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!t.join("out.partial").exists() && !t.join("out").exists());
}

fn pg_url() -> Option<String> {
    use std::io::Write;
    match std::env::var("RUNNER_DATABASE_URL") {
        Ok(u) if !u.trim().is_empty() => Some(u),
        _ if std::env::var("RUNNER_REQUIRE_POSTGRES").as_deref() == Ok("1") => {
            panic!("RUNNER_REQUIRE_POSTGRES=1 but RUNNER_DATABASE_URL is not set")
        }
        _ => {
            let _ = writeln!(std::io::stderr(), "SKIPPED: RUNNER_DATABASE_URL not set");
            None
        }
    }
}

/// The server drops the second fork's connection (pg_terminate_backend)
/// while that worker pauses: the fork fails naming the database error, the
/// first fork is kept, the run's schema is dropped, and resume finishes.
#[test]
fn a_database_connection_killed_mid_run_fails_the_fork_and_resumes() {
    let Some(url) = pg_url() else { return };
    use runner::db::postgres::connect;
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "pg", PG_SPEC);
    let child = spawn_exec(
        t,
        &spec,
        "out",
        "pause=3000@cell=0,fork=1,pair=5",
        Some(&url),
    );
    let partial = t.join("out.partial");
    wait_for("the first fork", Duration::from_secs(60), || {
        partial.join("forks").is_dir() && kept_forks(&partial) == [(0, 0)]
    });
    let run_id = read_json(&partial.join("run.json"))["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    let schema = format!("runner_{run_id}");
    let app = format!("runner worker {schema}");
    let (mut c, _) = connect(&url).unwrap();
    // By now the second worker sits in its pause, and the first one's
    // connection is long closed.
    std::thread::sleep(Duration::from_millis(700));
    let mut killed = 0;
    wait_for("the worker's connection", Duration::from_secs(10), || {
        std::thread::sleep(Duration::from_millis(200));
        let row = c
            .query_one(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1",
                &[&app],
            )
            .unwrap();
        killed = row.get::<_, i64>(0);
        killed > 0
    });
    let o = wait_output(child, Duration::from_secs(30));
    let err = stderr(&o);
    eprintln!("{err}");
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.starts_with("error: cell 0 fork 1 (job seed "), "{err}");
    assert!(err.contains("PostgreSQL"), "{err}");
    assert!(err.contains("--resume out.partial"), "{err}");
    assert_eq!(kept_forks(&partial), [(0, 0)]);
    let exists: i64 = c
        .query_one(
            "SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1",
            &[&schema],
        )
        .unwrap()
        .get(0);
    assert_eq!(exists, 0, "schema {schema} dropped");

    let jobs_before = read_json(&partial.join("run.json"))["jobs"].clone();
    let o = runner()
        .current_dir(t)
        .env("RUNNER_DATABASE_URL", &url)
        .args(printed_resume(&err))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let run = read_json(&t.join("out/run.json"));
    assert_eq!(run["jobs"], jobs_before);
    assert_eq!(run["forks"].as_array().unwrap().len(), 3);
    let exists: i64 = c
        .query_one(
            "SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1",
            &[&schema],
        )
        .unwrap()
        .get(0);
    assert_eq!(exists, 0, "schema {schema} dropped after the resumed run");
}
