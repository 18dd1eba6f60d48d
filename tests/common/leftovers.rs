//! Helpers for the "nothing left behind" tests: a private TMPDIR to watch,
//! processes found by a marker in their command line, and signals sent to
//! a runner started in the background.

use super::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

/// Entries of `dir` whose name starts with `runner-` (what runner's
/// temporary files were called), sorted.
pub fn runner_entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("runner-"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// `runner ARGS...` in `dir` with TMPDIR set to `tmpdir`, started in the
/// background with its output piped.
pub fn spawn_with_tmpdir(dir: &Path, tmpdir: &Path, args: &[&str]) -> Child {
    runner_std()
        .current_dir(dir)
        .env("TMPDIR", tmpdir)
        .env_remove("RUNNER_FAULT")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// `runner ARGS...` in `dir` with TMPDIR set to `tmpdir`, to its end.
pub fn run_with_tmpdir(dir: &Path, tmpdir: &Path, args: &[&str]) -> Output {
    spawn_with_tmpdir(dir, tmpdir, args)
        .wait_with_output()
        .unwrap()
}

/// Live processes whose command line contains `marker`.
pub fn processes_with(marker: &str) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            !zombie
                && String::from_utf8_lossy(&cmdline)
                    .replace('\0', " ")
                    .contains(marker)
        })
        .collect()
}

/// Waits until `cond` holds, polling; panics naming `what` after `limit`.
pub fn wait_until(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends signal number `signal` to process `pid`, or to process group
/// `-pid` when `pid` is negative (as kill(2) reads it), through rustix's
/// safe calls; whether it was delivered.
pub fn send_signal(pid: i32, signal: i32) -> bool {
    use rustix::process::{kill_process, kill_process_group, Pid, Signal};
    let (Some(target), Some(sig)) = (Pid::from_raw(pid.abs()), Signal::from_named_raw(signal))
    else {
        return false;
    };
    if pid < 0 {
        kill_process_group(target, sig).is_ok()
    } else {
        kill_process(target, sig).is_ok()
    }
}

/// Sends `signal` to `child` and collects its output; panics if it has
/// not ended within `limit`.
pub fn signal_and_wait(child: Child, signal: i32, limit: Duration) -> (Output, Duration) {
    let pid = child.id() as i32;
    send_signal(pid, signal);
    let sent = Instant::now();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let o = rx
        .recv_timeout(limit)
        .unwrap_or_else(|_| panic!("runner did not end within {limit:?} of signal {signal}"))
        .unwrap();
    (o, sent.elapsed())
}

/// A private temporary folder for a runner's TMPDIR.
pub fn private_tmpdir(under: &Path) -> PathBuf {
    let d = under.join("tmpdir");
    std::fs::create_dir_all(&d).unwrap();
    d
}
