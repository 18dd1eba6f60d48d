//! Commands that leave nothing behind (docs/safety.md, "Your commands:
//! nothing outlives its run"): values reach `shell` quoted, `timeout_s` holds in
//! every phase, no process a command starts outlives its run (nor a
//! Ctrl-C, nor a killed worker), and output is compared in bounded memory.
//! Each test looks at the file system or at /proc before and after, not
//! only at the exit code. Time enters only as generous upper bounds on
//! waits that would otherwise last minutes.

use crate::common;
use common::faults::{exec, stderr, wait_for, wait_output};
use common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn spec(dir: &Path, name: &str, body: &str) -> std::path::PathBuf {
    let text = format!("name = \"{name}\"\nseed = 5\n{body}\n[analysis]\nresamples = 200\n");
    write_spec(dir, name, &text)
}

/// A `sleep` argument no other process on the machine has: a number of
/// seconds (so `sleep` accepts it) that names this test and this process.
fn marker(test: u32) -> String {
    format!("{}.{}{:03}", 900 + test, std::process::id(), test)
}

/// Processes whose argv holds `marker` as one argument.
fn with_marker(marker: &str) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let Ok(raw) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
                return false;
            };
            let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            });
            !zombie && raw.split(|&b| b == 0).any(|a| a == marker.as_bytes())
        })
        .collect()
}

/// Kills what a failed assertion would otherwise leave on the machine.
struct Cleanup(String);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for pid in with_marker(&self.0) {
            common::leftovers::send_signal(pid, libc::SIGKILL);
        }
    }
}

fn run_json_forks(out: &Path) -> Vec<serde_json::Value> {
    read_json(&out.join("run.json"))["forks"]
        .as_array()
        .expect("run.json has forks")
        .clone()
}

/// A swept value is one word in `shell`, whatever it holds; an
/// env value is not a shell and stays raw; `{scratch}` under a TMPDIR
/// with a space still works.
#[test]
fn values_substituted_into_shell_are_quoted() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let tmpdir = t.join("my tmp");
    std::fs::create_dir(&tmpdir).unwrap();
    let log = t.join("log");
    let body = format!(
        r#"
[strategies.echo]
kind = "command"
shell = "echo {{x}} >> {log}; printf '%s\n' \"$V\" >> {log}; echo ok > {{scratch}}/f; cat {{scratch}}/f"
env = {{ V = "env {{x}}" }}
[design]
baseline = "echo"
treatment = "echo"
forks = 1
warmup_pairs = 0
pairs = 2
[grid]
x = ["a; touch pwn", "b$(touch pwn2)", "c`touch pwn3`", "d 'e' \"f\""]
"#,
        log = log.display()
    );
    spec(t, "quoting", &body);
    let before: Vec<_> = tree(t).into_keys().collect();
    let o = runner()
        .current_dir(t)
        .env("TMPDIR", &tmpdir)
        .args(["exec", "quoting.toml", "--quiet", "--out", "out"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    for pwn in ["pwn", "pwn2", "pwn3"] {
        assert!(!t.join(pwn).exists(), "{pwn} was created");
        assert!(!tmpdir.join(pwn).exists(), "{pwn} was created");
    }
    let text = std::fs::read_to_string(&log).unwrap();
    for value in [
        "a; touch pwn",
        "b$(touch pwn2)",
        "c`touch pwn3`",
        "d 'e' \"f\"",
    ] {
        assert!(
            text.lines().any(|l| l == value),
            "{value:?} not echoed literally in:\n{text}"
        );
        let env = format!("env {value}");
        assert!(
            text.lines().any(|l| l == env),
            "{env:?} not raw in:\n{text}"
        );
    }
    // Nothing appeared but the log, the output folder and TMPDIR's
    // (empty again: scratch directories are removed).
    let after: Vec<_> = tree(t).into_keys().collect();
    let new: Vec<_> = after
        .iter()
        .filter(|p| !before.contains(p))
        .filter(|p| !p.starts_with("out"))
        .collect();
    assert_eq!(new, [Path::new("log")], "{after:?}");
    assert_eq!(std::fs::read_dir(&tmpdir).unwrap().count(), 0);
}

/// The user's own quotes around a placeholder would undo runner's (the
/// value's quote closes them): refused before anything runs, with the
/// place and the two ways that work.
#[test]
fn a_placeholder_inside_quotes_in_shell_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    for (n, shell) in [
        ("single", "echo '{x}' > got"),
        ("double", "echo \"{x}\" > got"),
        ("heredoc", "cat > got <<EOF\n{x}\nEOF"),
    ] {
        let body = format!(
            "[strategies.s]\nkind = \"command\"\nshell = {shell:?}\n[design]\nbaseline = \"s\"\ntreatment = \"s\"\n[grid]\nx = [\"a'; touch pwn; '\", \"$(touch pwn2)\"]\n"
        );
        spec(t, n, &body);
        let before = tree(t);
        let o = run_in(t, &["exec", &format!("{n}.toml"), "--out", "out"]);
        assert_refused(
            &o,
            &[
                &format!("{n}.toml:"),
                "strategies.s.shell has the placeholder {x} inside",
                "write it bare (echo {x})",
                "env = { V = \"{x}\" }",
            ],
        );
        assert_eq!(tree(t), before, "{n}: something was written or run");
    }
}

/// `timeout_s` holds in every phase (before: a `sleep 1000` in the
/// checks ran until fork_timeout_s, 30 minutes). Each phase ends in well
/// under a minute, names itself, and leaves no `sleep` behind.
#[test]
fn timeout_s_holds_in_every_phase() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let m = marker(1);
    let _cleanup = Cleanup(m.clone());
    // The timed phase: the first 4 runs (the checks) are quick, the 5th
    // (the first timed run) hangs.
    let timed = format!(
        "n=$(cat count 2>/dev/null || echo 0); echo $((n+1)) > count; if [ $n -ge 4 ]; then exec sleep {m}; fi"
    );
    let cases: [(&str, String, &str); 5] = [
        (
            "setup",
            format!("setup = [\"sleep\", \"{m}\"]\nargv = [\"true\"]"),
            "setup command `sleep",
        ),
        (
            "prepare",
            format!("prepare = [\"sleep\", \"{m}\"]\nargv = [\"true\"]"),
            "prepare command `sleep",
        ),
        (
            "check",
            format!("argv = [\"sleep\", \"{m}\"]"),
            "a run of the agreement check before timing",
        ),
        (
            "timed",
            format!("shell = {timed:?}"),
            "a timed run of command",
        ),
        (
            "teardown",
            format!("teardown = [\"sleep\", \"{m}\"]\nargv = [\"true\"]"),
            "teardown command `sleep",
        ),
    ];
    for (phase, keys, expected) in cases {
        let _ = std::fs::remove_file(t.join("count"));
        let body = format!(
            "[strategies.s]\nkind = \"command\"\ntimeout_s = 2\n{keys}\n[design]\nbaseline = \"s\"\ntreatment = \"s\"\nforks = 1\nwarmup_pairs = 0\npairs = 2\n"
        );
        let s = spec(t, phase, &body);
        let started = Instant::now();
        let o = exec(t, &s, &format!("out-{phase}"), None, &[]);
        let took = started.elapsed();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{phase}: {err}");
        assert!(took < Duration::from_secs(60), "{phase}: took {took:?}");
        assert!(
            err.contains(expected),
            "{phase}: expected {expected:?} in {err}"
        );
        assert!(err.contains("timeout_s = 2 s"), "{phase}: {err}");
        assert!(with_marker(&m).is_empty(), "{phase}: a sleep survived");
    }
}

/// A command that backgrounds a process, or double-forks one into
/// a session of its own, leaves nothing after the run; the run says how
/// many it killed, in run.json and on the terminal.
#[test]
fn processes_a_run_leaves_are_killed_counted_and_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let (m1, m2) = (marker(2), marker(3));
    let _c1 = Cleanup(m1.clone());
    let _c2 = Cleanup(m2.clone());
    let body = format!(
        r#"
[strategies.bg]
kind = "command"
shell = "sleep {m1} >/dev/null 2>&1 & echo hi"
[strategies.escaped]
kind = "command"
shell = "setsid sh -c 'sleep {m2} & :' >/dev/null 2>&1 & echo hi"
[design]
baseline = "bg"
treatment = "escaped"
forks = 2
warmup_pairs = 1
pairs = 3
"#
    );
    let s = spec(t, "leaky", &body);
    assert!(with_marker(&m1).is_empty() && with_marker(&m2).is_empty());
    let o = exec(t, &s, "out", None, &[]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(with_marker(&m1).is_empty(), "a backgrounded sleep survived");
    assert!(with_marker(&m2).is_empty(), "a setsid sleep survived");
    // Per fork: 2 runs per arm in the checks, 4 timed runs per arm; each
    // left at least its sleep (an escaping one may be caught mid-way, as
    // its `setsid` or `sh` and its sleep).
    let forks = run_json_forks(&t.join("out"));
    assert_eq!(forks.len(), 2);
    for f in &forks {
        let left = f["left_processes"]
            .as_u64()
            .expect("left_processes recorded");
        assert!((12..=36).contains(&left), "left_processes = {left}");
    }
    assert!(
        err.contains("process(es) started by the commands were still running after their run ended; runner killed them"),
        "{err}"
    );
    let report = std::fs::read_to_string(t.join("out/report.md")).unwrap();
    assert!(report.contains("- Your machine: every command ran in a process group of its own"));
    assert!(
        report.contains("- **Warning, commands:** the commands left ")
            && report.contains("running after their runs, in 2 of 2 forks"),
        "the report names the processes left behind"
    );
    // A clean command records nothing.
    let clean = spec(
        t,
        "clean",
        "[strategies.e]\nkind = \"command\"\nshell = \"echo hi\"\n[design]\nbaseline = \"e\"\ntreatment = \"e\"\nforks = 1\nwarmup_pairs = 0\npairs = 2\n",
    );
    let o = exec(t, &clean, "out-clean", None, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("still running"), "{}", stderr(&o));
    assert!(run_json_forks(&t.join("out-clean"))[0]
        .get("left_processes")
        .is_none());
    let report = std::fs::read_to_string(t.join("out-clean/report.md")).unwrap();
    assert!(!report.contains("Warning, commands"));
}

/// `runner exec` in a process group of its own, so a test can signal the
/// whole group as a terminal's Ctrl-C does.
fn spawn_exec(t: &Path, spec: &str, out: &str) -> std::process::Child {
    use std::os::unix::process::CommandExt;
    Command::new(assert_cmd::cargo::cargo_bin("runner"))
        .process_group(0)
        .current_dir(t)
        .env_remove("RUNNER_DATABASE_URL")
        .env_remove("RUNNER_FAULT")
        .args(["exec", spec, "--quiet", "--out", out])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// SIGINT or SIGTERM to runner alone (its worker is killed by the
/// parent, so it cannot clean up), or SIGINT to runner's process group (a
/// terminal's Ctrl-C: the worker dies of it; the command, in a group of
/// its own, does not get it) while a command and its child run: neither
/// survives. And a worker killed at fork_timeout_s leaves none.
#[test]
fn no_command_process_survives_a_signal_or_a_killed_worker() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    for (n, how) in [
        (4, "sigint"),
        (5, "sigterm"),
        (6, "fork-timeout"),
        (7, "ctrl-c"),
    ] {
        let m = marker(n);
        let _cleanup = Cleanup(m.clone());
        let timeout = if how == "fork-timeout" {
            "fork_timeout_s = 3\n"
        } else {
            ""
        };
        let body = format!(
            "[strategies.s]\nkind = \"command\"\nshell = \"sleep {m} & sleep {m}; wait\"\n[design]\nbaseline = \"s\"\ntreatment = \"s\"\nforks = 1\nwarmup_pairs = 0\npairs = 2\n{timeout}"
        );
        spec(t, how, &body);
        let child = spawn_exec(t, &format!("{how}.toml"), &format!("out-{how}"));
        let pid = child.id() as i32;
        wait_for("the command's sleeps", Duration::from_secs(60), || {
            with_marker(&m).len() == 2
        });
        match how {
            "sigint" => common::leftovers::send_signal(pid, libc::SIGINT),
            "sigterm" => common::leftovers::send_signal(pid, libc::SIGTERM),
            "ctrl-c" => common::leftovers::send_signal(-pid, libc::SIGINT),
            _ => false,
        };
        let o = wait_output(child, Duration::from_secs(120));
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{how}: {err}");
        if how == "fork-timeout" {
            assert!(err.contains("design.fork_timeout_s"), "{err}");
            assert!(err.contains("were still running and were killed"), "{err}");
        } else {
            assert!(err.contains("interrupted"), "{how}: {err}");
        }
        wait_for("the sleeps to be gone", Duration::from_secs(5), || {
            with_marker(&m).is_empty()
        });
    }
}

/// A command printing 300 MB is compared as it streams (before: the
/// four outputs of the checks were held, 1.2 GB here, 12.3 GB for 3000M).
/// The peak RSS of runner and of its worker stays far below one output.
/// Each is its process's `VmHWM`, read from /proc while it runs: a
/// process's `ru_maxrss` keeps the high-water mark of the process that
/// spawned it (this test binary, hundreds of MiB when the whole suite
/// runs in it), while `VmHWM` starts again with the program exec loads.
#[test]
#[cfg_attr(
    not(runner_proc_tasks),
    ignore = "SKIPPED: /proc/self/task not readable"
)]
fn a_large_output_is_compared_in_bounded_memory() {
    common::needs::proc_tasks();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let s = spec(
        t,
        "big",
        "[strategies.z]\nkind = \"command\"\nargv = [\"head\", \"-c\", \"300M\", \"/dev/zero\"]\n[design]\nbaseline = \"z\"\ntreatment = \"z\"\nforks = 1\nwarmup_pairs = 0\npairs = 2\n",
    );
    let mut child = runner_std()
        .current_dir(t)
        .arg("exec")
        .arg(&s)
        .args(["--out", "out", "--quiet"])
        .env_remove("RUNNER_FAULT")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr_pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut err = String::new();
        std::io::Read::read_to_string(&mut stderr_pipe, &mut err).unwrap();
        err
    });
    let hwm_kib = |pid: u32| -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    let (pid, mut peak_kib, mut workers_seen) = (child.id(), 0u64, 0usize);
    let status = loop {
        let workers = common::faults::workers_of(pid);
        workers_seen = workers_seen.max(workers.len());
        for p in std::iter::once(pid).chain(workers) {
            peak_kib = peak_kib.max(hwm_kib(p));
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let err = reader.join().unwrap();
    assert!(status.success(), "{err}");
    assert!(workers_seen > 0, "the worker was seen while it ran");
    let forks = run_json_forks(&t.join("out"));
    assert_eq!(forks[0]["checks"]["arms_agree"], true);
    let peak_mib = peak_kib / 1024;
    assert!(
        peak_mib < 200,
        "peak RSS {peak_mib} MiB for a 300 MiB output"
    );

    // Two long outputs that differ only at their end: the message gives the
    // lengths and hashes, as nothing past the kept head can be shown.
    let s = spec(
        t,
        "differ",
        "[strategies.a]\nkind = \"command\"\nargv = [\"head\", \"-c\", \"1M\", \"/dev/zero\"]\n[strategies.b]\nkind = \"command\"\nshell = \"head -c 1M /dev/zero; echo\"\n[design]\nbaseline = \"a\"\ntreatment = \"b\"\nforks = 1\nwarmup_pairs = 0\npairs = 2\n",
    );
    let o = exec(t, &s, "out-differ", None, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("stdout differs (1048576 vs 1048577 bytes) after the first 65536 bytes, which agree (SHA-256 "),
        "{err}"
    );
    assert!(!t.join("out-differ").exists());
}
