//! Signals, dead parents, locks, closed streams and silent servers on the
//! real binary. Timing enters
//! only as generous upper bounds on a wait that would otherwise last
//! minutes (or forever).

use crate::common;
use common::faults::*;
use common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A spec whose analysis takes seconds in a debug build (6000 resamples of
/// 2 x 6000 pairs), while measuring it takes a moment.
const SLOW_ANALYSIS: &[&str] = &[
    "--set",
    "design.pairs=6000",
    "--set",
    "grid.delay_us=[0]",
    "--set",
    "analysis.resamples=6000",
];

fn kill(pid: u32, sig: i32) {
    assert!(common::leftovers::send_signal(pid as i32, sig));
}

/// Whether process `pid` catches signal `sig` (its handler is installed).
fn catches(pid: u32, sig: i32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (sig - 1)) != 0)
}

fn spawn_runner(t: &Path, args: &[&str], fault: Option<&str>) -> std::process::Child {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("runner"));
    cmd.current_dir(t)
        .env_remove("RUNNER_DATABASE_URL")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match fault {
        Some(f) => cmd.env("RUNNER_FAULT", f),
        None => cmd.env_remove("RUNNER_FAULT"),
    };
    cmd.spawn().unwrap()
}

/// Ctrl-C after the forks (before: ignored for minutes while the
/// analysis grew past 600 MB). exec stops at once, exit 1, every fork kept
/// in a folder the printed command finishes.
#[test]
fn a_signal_during_the_analysis_stops_exec_and_keeps_a_resumable_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    write_spec(t, "small", SMALL_AA);
    let mut args = vec!["exec", "small.toml", "--quiet", "--out", "out"];
    args.extend_from_slice(SLOW_ANALYSIS);
    let child = spawn_runner(t, &args, None);
    let partial = t.join("out.partial");
    // pairs.csv is assembled right before the analysis starts.
    wait_for("the analysis to start", Duration::from_secs(120), || {
        partial.join("pairs.csv").exists()
    });
    std::thread::sleep(Duration::from_millis(200));
    let signalled = Instant::now();
    kill(child.id(), libc::SIGINT);
    let o = wait_output(child, Duration::from_secs(60));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("error: interrupted (Ctrl-C or a termination signal) during the analysis"),
        "{err}"
    );
    assert!(
        err.contains("every fork finished and is kept in out.partial"),
        "{err}"
    );
    eprintln!("answered in {:?}", signalled.elapsed());
    assert_eq!(kept_forks(&partial), [(0, 0), (0, 1)]);
    assert!(read_json(&partial.join("run.json"))["finished_at"].is_null());
    assert!(!partial.join("lock").exists() && !t.join("out").exists());
    run_printed_resume(t, &err);
    assert!(t.join("out/report.md").is_file());
}

/// The same for `runner report`: SIGTERM while it analyses stops it, exit 1,
/// and the folder is exactly as it was.
#[test]
fn a_signal_during_report_leaves_the_folder_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "small", SMALL_AA);
    let out = exec_ok(t, &spec, "fin", SLOW_ANALYSIS);
    std::fs::remove_file(out.join("report.md")).unwrap();
    let before = tree(&out);
    let child = spawn_runner(t, &["report", "fin"], None);
    // Once runner catches SIGTERM it is reading or analysing, which takes
    // seconds in a debug build.
    wait_for("the signal handler", Duration::from_secs(30), || {
        catches(child.id(), libc::SIGTERM)
    });
    std::thread::sleep(Duration::from_millis(100));
    kill(child.id(), libc::SIGTERM);
    let o = wait_output(child, Duration::from_secs(60));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("interrupted (Ctrl-C or a termination signal) while reading and analysing fin; nothing was written"),
        "{err}"
    );
    assert_eq!(tree(&out), before);
}

/// `kill -9` of the parent takes its worker along at
/// once (before: it measured on for ~40 s); the lock it leaves, even naming
/// a live pid, is free; of several resumes started at once exactly one
/// runs (before: two in 4 of 12 tries, tearing a fork file).
#[test]
fn a_killed_parent_takes_its_worker_along_and_one_resume_wins() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "small", SMALL_AA);
    let child = spawn_exec(t, &spec, "out", "hang@pair=3", None);
    let partial = t.join("out.partial");
    let mut worker = None;
    wait_for("a worker", Duration::from_secs(30), || {
        worker = worker_pid(child.id());
        worker.is_some()
    });
    let worker = worker.unwrap();
    kill(child.id(), libc::SIGKILL);
    // Margins a loaded machine cannot break: a killed process that is in
    // the middle of a write to a busy disk ends only when the write does.
    let _ = wait_output(child, Duration::from_secs(60));
    wait_for(
        "the worker to die with its parent",
        Duration::from_secs(60),
        || gone(worker),
    );
    // The lock file stays behind; make it name a live process (pid 1).
    assert!(partial.join("lock").exists());
    std::fs::write(partial.join("lock"), "pid 1 since 2026-01-01T00:00:00Z\n").unwrap();

    // Six resumes at once; each fork pauses 1 s, so the winner holds the
    // folder while the others start.
    let resumes: Vec<_> = (0..6)
        .map(|_| {
            spawn_runner(
                t,
                &[
                    "exec",
                    "small.toml",
                    "--quiet",
                    "--out",
                    "out",
                    "--resume",
                    "out.partial",
                ],
                Some("pause=1000"),
            )
        })
        .collect();
    let outputs: Vec<_> = resumes
        .into_iter()
        .map(|c| wait_output(c, Duration::from_secs(120)))
        .collect();
    let won = outputs.iter().filter(|o| o.status.success()).count();
    assert_eq!(won, 1, "exactly one resume ran");
    for o in outputs.iter().filter(|o| !o.status.success()) {
        let err = stderr(o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains("out.partial is in use by another runner exec (pid ")
                || err.contains("cannot resume out.partial"),
            "{err}"
        );
    }
    // Whole, and every fork once.
    let o = run_in(t, &["report", "out"]);
    assert!(o.status.success(), "{}", err_of(&o));
    assert_eq!(
        read_json(&t.join("out/run.json"))["forks"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
}

/// A closed stdout or stderr (`| head -1`) never panics and never
/// stops a run.
#[test]
fn closed_streams_never_abort_a_run_or_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    write_spec(t, "small", SMALL_AA);
    let closed = || {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        writer
    };
    let run = |args: &[&str], fault: Option<&str>| {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("runner"));
        cmd.current_dir(t)
            .env_remove("RUNNER_DATABASE_URL")
            .args(args)
            .stdout(closed())
            .stderr(closed());
        match fault {
            Some(f) => cmd.env("RUNNER_FAULT", f),
            None => cmd.env_remove("RUNNER_FAULT"),
        };
        cmd.status().unwrap()
    };
    assert_eq!(run(&["check", "small.toml"], None).code(), Some(0));
    // Progress lines on a closed stderr, the summary on a closed stdout.
    assert_eq!(
        run(&["exec", "small.toml", "--out", "a"], None).code(),
        Some(0)
    );
    assert!(t.join("a/report.md").is_file());
    assert_eq!(run(&["report", "a"], None).code(), Some(0));
    assert_eq!(run(&["env"], None).code(), Some(0));
    // A failing run still says exit 1 (its message is lost, not its code).
    assert_eq!(
        run(
            &["exec", "small.toml", "--out", "b"],
            Some("exit=3@cell=1,fork=1")
        )
        .code(),
        Some(1)
    );
    assert_eq!(run(&["check", "missing.toml"], None).code(), Some(2));
}

/// A server that accepts TCP and never says a word.
fn silent_server() -> (std::net::SocketAddr, std::sync::mpsc::Sender<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    let (stop, stopped) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        while stopped.try_recv().is_err() {
            if let Ok((s, _)) = listener.accept() {
                held.push(s);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    (addr, stop)
}

const PG_SPEC: &str = r#"
seed = 5
[workload]
plans = 4
months = 12
[database]
backend = "postgres"
[strategies.rb]
kind = "tx-rollback"
[design]
baseline = "rb"
treatment = "rb"
forks = 1
pairs = 10
"#;

/// A server that accepts and never answers (before: exec hung for
/// good) times out after connect_timeout; and Ctrl-C ends the wait at once.
/// Nothing is left behind either way.
#[test]
fn a_server_that_never_answers_times_out_and_a_signal_ends_the_wait() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "pg", PG_SPEC);
    let (addr, _stop) = silent_server();
    let url = |timeout: u32| format!("postgres://bench@{addr}/bench?connect_timeout={timeout}");

    let o = runner()
        .current_dir(t)
        .env("RUNNER_DATABASE_URL", url(1))
        .args(["exec", "pg.toml", "--quiet", "--out", "out"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "cannot connect to PostgreSQL at {addr} database \"bench\""
        )),
        "{err}"
    );
    assert!(
        err.contains("did not complete the connection within 1 s"),
        "{err}"
    );
    assert!(!t.join("out.partial").exists() && !t.join("out").exists());

    // Ten minutes of patience, cut short by Ctrl-C.
    let child = spawn_exec(t, &spec, "out", "", Some(&url(600)));
    wait_for("the signal handler", Duration::from_secs(30), || {
        catches(child.id(), libc::SIGINT)
    });
    std::thread::sleep(Duration::from_millis(300));
    kill(child.id(), libc::SIGINT);
    let o = wait_output(child, Duration::from_secs(30));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with(
            "error: interrupted (Ctrl-C or a termination signal) while preparing the database"
        ),
        "{err}"
    );
    assert!(!t.join("out.partial").exists() && !t.join("out").exists());
}
