//! Helpers for the fault tests: run, interrupt and resume the real binary,
//! and inspect what a failed run kept in DIR.partial/.

use super::*;
use std::path::Path;
use std::process::{Child, Output};
use std::time::{Duration, Instant};

pub type Key = (String, String, String, String, String);

/// The one stderr-as-text helper, under the name these tests use.
pub use super::err_of as stderr;

/// `runner exec SPEC --out DIR --quiet EXTRA`, with RUNNER_FAULT when given.
/// However the run ends, no worker it started is alive after it (the next
/// fork's worker, which waits for its go while a fork is stored, included).
pub fn exec(tmp: &Path, spec: &Path, out: &str, fault: Option<&str>, extra: &[&str]) -> Output {
    let mut cmd = runner_std();
    cmd.current_dir(tmp)
        .arg("exec")
        .arg(spec)
        .args(["--out", out, "--quiet"])
        .args(extra);
    match fault {
        Some(f) => cmd.env("RUNNER_FAULT", f),
        None => cmd.env_remove("RUNNER_FAULT"),
    };
    let child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    let left = workers_of(pid);
    assert!(
        left.is_empty(),
        "workers of runner {pid} still alive: {left:?}"
    );
    o
}

/// Live processes started as workers by the runner with pid `parent` (the
/// parent gives each its pid in `RUNNER_PARENT_PID`).
pub fn workers_of(parent: u32) -> Vec<u32> {
    let needle = format!("RUNNER_PARENT_PID={parent}");
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            environ.split(|&b| b == 0).any(|v| v == needle.as_bytes())
        })
        .collect()
}

/// The resume command the parent printed, as arguments after `runner`.
pub fn printed_resume(err: &str) -> Vec<String> {
    let line = err
        .lines()
        .find(|l| l.contains("runner exec") && l.contains("--resume"))
        .unwrap_or_else(|| panic!("no resume command in: {err}"));
    let at = line
        .find("runner exec")
        .expect("command starts with runner exec");
    // The command is quoted for a POSIX shell; split it as one would.
    shlex::split(&line[at..])
        .expect("a shell-quoted command")
        .into_iter()
        .skip(1)
        .collect()
}

/// Runs the printed resume command from `tmp` and expects success.
pub fn run_printed_resume(tmp: &Path, err: &str) -> Output {
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
pub fn job_order(run_json: &Path) -> Vec<(u64, u64)> {
    read_json(run_json)["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| (j["cell"].as_u64().unwrap(), j["fork"].as_u64().unwrap()))
        .collect()
}

/// Finished forks in a partial folder, sorted.
pub fn kept_forks(partial: &Path) -> Vec<(u64, u64)> {
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
pub fn assert_whole_records(partial: &Path, rows: usize) {
    for (c, f) in kept_forks(partial) {
        let text = std::fs::read_to_string(partial.join(format!("forks/c{c}-f{f}.csv"))).unwrap();
        assert!(text.ends_with('\n'), "c{c}-f{f}.csv ends mid-line");
        assert_eq!(text.lines().count(), rows, "c{c}-f{f}.csv");
        for line in text.lines() {
            assert_eq!(line.split(',').count(), 11, "half a record: {line:?}");
        }
    }
}

pub fn keys(dir: &Path) -> Vec<Key> {
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
pub fn assert_same_run(resumed: &Path, reference: &Path) {
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

/// Starts `runner exec` in its own process group (so a test can signal the
/// group, as a terminal's Ctrl-C does).
pub fn spawn_exec(tmp: &Path, spec: &Path, out: &str, fault: &str, db_url: Option<&str>) -> Child {
    use std::os::unix::process::CommandExt;
    let mut cmd = runner_std();
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

pub fn wait_for(what: &str, timeout: Duration, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for `child`, killing it (and failing) after `timeout`.
pub fn wait_output(mut child: Child, timeout: Duration) -> Output {
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

/// A worker process of a running exec.
pub fn worker_pid(parent: u32) -> Option<i32> {
    // A worker by its `RUNNER_PARENT_PID`, not as the parent's first child:
    // the parent starts other children before its first fork (git, to
    // record the measured code; the trial runs' commands).
    workers_of(parent).into_iter().next().map(|p| p as i32)
}

pub fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s.split_whitespace().nth(2) == Some("Z"),
    }
}

pub fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
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

/// An uninterrupted run of SMALL_AA into `reference`, the job that runs
/// third (the one a fault test breaks) and the two jobs before it (sorted),
/// which a failed run must keep.
pub fn reference_run(t: &Path, spec: &Path) -> (std::path::PathBuf, (u64, u64), Vec<(u64, u64)>) {
    let o = exec(t, spec, "reference", None, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let reference = t.join("reference");
    let order = job_order(&reference.join("run.json"));
    let mut before: Vec<_> = order[..2].to_vec();
    before.sort();
    (reference, order[2], before)
}
