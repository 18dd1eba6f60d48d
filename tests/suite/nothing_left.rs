//! Nothing left behind, nothing followed: runner's temporary files are
//! private and gone after every exit, `check`'s trial runs are contained
//! as exec's forks are, a password is never shown, an edited run.json is
//! refused and its text cannot change a report's structure, and numeric
//! flags are bounded. Each test reproduces a way an earlier runner harmed
//! a user (docs/safety.md names the mechanism behind each).

use crate::common;
use common::leftovers::*;
use common::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// Two command arms (slots b and t) that each write to stderr and use a
/// scratch folder: every kind of temporary file runner makes.
const SCRATCH: &str = r#"
name = "scratch"
seed = 5
[strategies.a]
kind = "command"
argv = ["sh", "-c", "echo to-stderr >&2; touch {scratch}/f"]
[strategies.b]
kind = "command"
argv = ["sh", "-c", "echo to-stderr >&2; touch {scratch}/g"]
[design]
baseline = "a"
treatment = "b"
forks = 2
warmup_pairs = 1
pairs = 3
[analysis]
resamples = 200
"#;

/// A command that runs until it is killed; `MARK` finds its processes
/// (and the one it detaches with `setsid`).
fn endless(mark: &str, timeout: &str) -> String {
    format!(
        r#"
name = "endless"
seed = 5
[strategies.a]
kind = "command"
argv = ["sh", "-c", "setsid sleep {mark} & sleep {mark}"]
[design]
baseline = "a"
treatment = "a"
forks = 1
warmup_pairs = 0
pairs = 2
{timeout}
[analysis]
resamples = 200
"#
    )
}

/// The pids the kernel hands out next, wrapping at pid_max.
fn next_pids(n: u32) -> Vec<u32> {
    let read = |p: &str| -> u32 {
        std::fs::read_to_string(p)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(32768)
    };
    let (last, max) = (
        read("/proc/sys/kernel/ns_last_pid"),
        read("/proc/sys/kernel/pid_max"),
    );
    (1..=n)
        .map(|i| {
            let p = last + i;
            if p >= max {
                300 + (p - max)
            } else {
                p
            }
        })
        .collect()
}

/// An earlier runner wrote a command's stderr to `$TMPDIR/runner-<pid>-<slot>.stderr`
/// (create + truncate, following links) and emptied `$TMPDIR/runner-<pid>-<slot>/`
/// before using it as scratch: a link planted there had its target
/// overwritten, a folder its contents deleted.
#[test]
fn planted_links_and_folders_in_tmpdir_keep_their_contents() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let tmpdir = private_tmpdir(t);
    let victim = t.join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    for pid in next_pids(4000) {
        for slot in ["b", "t", "trial"] {
            let _ = std::os::unix::fs::symlink(
                &victim,
                tmpdir.join(format!("runner-{pid}-{slot}.stderr")),
            );
            let dir = tmpdir.join(format!("runner-{pid}-{slot}"));
            if std::fs::create_dir(&dir).is_ok() {
                std::fs::write(dir.join("mine"), "user data").unwrap();
            }
        }
    }
    let planted = tree(&tmpdir);
    let spec = write_spec(t, "scratch", SCRATCH);
    let s = spec.to_str().unwrap();
    for args in [vec!["check", s], vec!["exec", s, "--out", "out"]] {
        let o = run_with_tmpdir(t, &tmpdir, &args);
        assert!(o.status.success(), "{args:?}: {}", err_of(&o));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(
            tree(&tmpdir) == planted,
            "{args:?} changed the planted files"
        );
    }
}

/// An earlier runner left its stderr file (mode 0644, the command's
/// stderr in it) and its scratch folder in TMPDIR when it was stopped.
#[test]
fn nothing_is_left_in_tmpdir_after_exec_check_ctrl_c_and_sigterm() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let tmpdir = private_tmpdir(t);
    let spec = write_spec(t, "scratch", SCRATCH);
    let s = spec.to_str().unwrap();
    let failing = write_spec(
        t,
        "failing",
        &SCRATCH.replace("touch {scratch}/g", "touch {scratch}/g; exit 3"),
    );
    let f = failing.to_str().unwrap();
    for (args, ok) in [
        (vec!["check", s], true),
        (vec!["exec", s, "--out", "ok"], true),
        (vec!["exec", f, "--out", "failed"], false),
    ] {
        let o = run_with_tmpdir(t, &tmpdir, &args);
        assert_eq!(o.status.success(), ok, "{args:?}: {}", err_of(&o));
        assert_eq!(runner_entries(&tmpdir), Vec::<String>::new(), "{args:?}");
    }
    for (i, (command, signal)) in [
        ("exec", libc::SIGINT),
        ("exec", libc::SIGTERM),
        ("check", libc::SIGINT),
        ("check", libc::SIGTERM),
    ]
    .into_iter()
    .enumerate()
    {
        let mark = format!("1000.{}{i}", std::process::id());
        let spec = write_spec(t, &format!("endless{i}"), &endless(&mark, ""));
        let out = format!("stopped{i}");
        let mut args = vec![command, spec.to_str().unwrap()];
        if command == "exec" {
            args.extend(["--out", out.as_str(), "--quiet"]);
        }
        let child = spawn_with_tmpdir(t, &tmpdir, &args);
        wait_until("the command to run", Duration::from_secs(60), || {
            !processes_with(&mark).is_empty()
        });
        // While it runs, its private folder is there, mode 0700.
        let entries = runner_entries(&tmpdir);
        assert_eq!(entries.len(), 1, "{entries:?}");
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(tmpdir.join(&entries[0]))
                .unwrap()
                .permissions(),
        );
        assert_eq!(mode & 0o777, 0o700);
        let (o, _) = signal_and_wait(child, signal, Duration::from_secs(30));
        assert_eq!(o.status.code(), Some(1), "{command}: {}", err_of(&o));
        assert!(err_of(&o).contains("interrupted"), "{}", err_of(&o));
        assert_eq!(runner_entries(&tmpdir), Vec::<String>::new(), "{command}");
        assert_eq!(processes_with(&mark), Vec::<u32>::new(), "{command}");
    }
}

/// `kill -9` of runner leaves its private folder; the next exec or check
/// removes it, and only folders whose record says a runner that is gone
/// made them.
#[test]
fn a_folder_kill_9_left_is_swept_and_nothing_else() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let tmpdir = private_tmpdir(t);
    // Another program's folder with the same prefix, without a record.
    let foreign = tmpdir.join("runner-pg.keep");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("data"), "theirs").unwrap();
    let mark = format!("1000.{}9", std::process::id());
    let spec = write_spec(t, "endless", &endless(&mark, ""));
    let child = spawn_with_tmpdir(t, &tmpdir, &["check", spec.to_str().unwrap()]);
    wait_until("the command to run", Duration::from_secs(60), || {
        !processes_with(&mark).is_empty()
    });
    let left: Vec<String> = runner_entries(&tmpdir)
        .into_iter()
        .filter(|n| n != "runner-pg.keep")
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
    let (_, _) = signal_and_wait(child, libc::SIGKILL, Duration::from_secs(30));
    // Nobody was left to sweep the commands; the test does.
    for pid in processes_with(&mark) {
        common::leftovers::send_signal(pid as i32, libc::SIGKILL);
    }
    assert!(tmpdir.join(&left[0]).is_dir(), "kill -9 leaves the folder");
    let quick = write_spec(t, "scratch", SCRATCH);
    let o = run_with_tmpdir(t, &tmpdir, &["check", quick.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err_of(&o));
    assert!(!tmpdir.join(&left[0]).exists(), "swept by the next run");
    assert_eq!(
        std::fs::read_to_string(foreign.join("data")).unwrap(),
        "theirs"
    );
    assert_eq!(runner_entries(&tmpdir), ["runner-pg.keep"]);
}

/// An earlier `check` ran its trials in its own process: a command that
/// never ends hung it forever, and what a trial detached outlived it.
#[test]
fn check_of_an_endless_command_ends_at_the_fork_timeout_leaving_no_process() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let mark = format!("1000.{}7", std::process::id());
    let spec = write_spec(t, "endless", &endless(&mark, "fork_timeout_s = 2"));
    let started = Instant::now();
    let o = run_in(t, &["check", spec.to_str().unwrap()]);
    let took = started.elapsed();
    // check is a pre-flight: a trial that would time out exec's first fork
    // fails check too (exit 1), after the plan, naming the cause.
    let out = err_of(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("was still running after the fork timeout of 2 s (design.fork_timeout_s) and was killed"),
        "{out}"
    );
    // Well under a minute on a loaded machine; the earlier check never ended.
    assert!(took < Duration::from_secs(60), "{took:?}");
    assert_eq!(processes_with(&mark), Vec::<u32>::new());

    // On SQLite, an endless recursive query is bounded the same way.
    let sql = write_spec(
        t,
        "recursive",
        r#"
[strategies.q]
kind = "sql"
run = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r"
[design]
baseline = "q"
treatment = "q"
fork_timeout_s = 2
"#,
    );
    let o = run_in(t, &["check", sql.to_str().unwrap()]);
    let out = err_of(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("was still running after the fork timeout of 2 s"),
        "{out}"
    );
}

/// What a trial's command detaches (`setsid`) is killed with the trial and
/// counted, as exec counts it per fork.
#[test]
fn check_reports_and_kills_what_a_trial_left_running() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let mark = format!("1000.{}8", std::process::id());
    let spec = write_spec(
        t,
        "detach",
        &format!(
            r#"
[strategies.a]
kind = "command"
argv = ["sh", "-c", "setsid sleep {mark} &"]
[design]
baseline = "a"
treatment = "a"
"#
        ),
    );
    let o = run_in(t, &["check", spec.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", err_of(&o));
    let warning = out
        .lines()
        .find(|l| l.starts_with("warning "))
        .unwrap_or_else(|| panic!("no warning: {out}"));
    assert!(
        warning.contains("process(es) running after their runs ended; runner killed them"),
        "{warning}"
    );
    assert_eq!(processes_with(&mark), Vec::<u32>::new());
}

/// A password with an unencoded `@` was printed from the `@` on, by
/// `check` and in exec's connection error.
#[test]
fn no_byte_of_a_password_with_an_at_is_printed() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let url = "postgres://u:abc@def@127.0.0.1:1/db";
    let sql = r#"
[strategies.q]
kind = "sql"
run = "SELECT 1"
[design]
baseline = "q"
treatment = "q"
"#;
    let in_file = write_spec(t, "in_file", &format!("[database]\nurl = \"{url}\"\n{sql}"));
    let plain = write_spec(t, "plain", sql);
    let set = format!("database.url={url}");
    let runs: Vec<(Vec<&str>, Option<&str>)> = vec![
        (vec!["check", in_file.to_str().unwrap()], None),
        (vec!["exec", in_file.to_str().unwrap(), "--out", "o1"], None),
        (vec!["check", plain.to_str().unwrap()], Some(url)),
        (
            vec!["exec", plain.to_str().unwrap(), "--out", "o2"],
            Some(url),
        ),
        (
            vec![
                "exec",
                plain.to_str().unwrap(),
                "--out",
                "o3",
                "--set",
                &set,
            ],
            None,
        ),
    ];
    for (args, env) in runs {
        let mut cmd = runner();
        cmd.current_dir(t).args(&args);
        if let Some(u) = env {
            cmd.env("RUNNER_DATABASE_URL", u);
        }
        let o = cmd.output().unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(o.status.code(), Some(2), "{args:?}: {all}");
        assert!(
            all.contains("percent-encode the password"),
            "{args:?}: {all}"
        );
        for secret in ["abc", "def"] {
            assert!(!all.contains(secret), "{args:?} printed {secret:?}: {all}");
        }
    }
}

/// A small run to edit: the recorded invocation has a `--set`.
fn finished(t: &Path) -> std::path::PathBuf {
    let spec = write_spec(t, "small", SMALL_AA);
    exec_ok(t, &spec, "r", &["--set", "design.pairs=30"])
}

fn report_of(dir: &Path) -> std::process::Output {
    runner().arg("report").arg(dir).output().unwrap()
}

/// An edited `invocation` closed the Reproduce fence and added a heading,
/// an image and a link; an edited `set` showed flags the run never had; an
/// edited clock resolution changed the verdicts. Each is refused now.
#[test]
fn an_edited_invocation_or_clock_resolution_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let out = finished(t);
    let injected =
        "small.toml\n```\n# Injected\n<img src=x onerror=alert(1)>\n[link](https://example.com)";
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "spec",
            Box::new(move |r| r["invocation"]["spec"] = injected.into()),
            "invocation.spec is",
        ),
        (
            "set",
            Box::new(|r| {
                r["invocation"]["set"]
                    .as_array_mut()
                    .unwrap()
                    .push("design.forks=50".into())
            }),
            "invocation.set has `--set design.forks=50`, which the recorded spec does not reflect",
        ),
        (
            "out",
            Box::new(|r| r["invocation"]["out"] = "x\n# Injected".into()),
            "record_sha256 differs",
        ),
        (
            "clock",
            Box::new(|r| r["environment"]["clock"]["resolution_ns"] = 121_000.into()),
            "record_sha256 differs",
        ),
        (
            "clock above 1 ms",
            Box::new(|r| r["environment"]["clock"]["resolution_ns"] = 2_000_000.into()),
            "above 1000000 ns (1 ms)",
        ),
        (
            "clock without the digest",
            Box::new(|r| {
                r["environment"]["clock"]["resolution_ns"] = 121_000.into();
                r.as_object_mut().unwrap().remove("record_sha256");
            }),
            "a clock that coarse could not have timed it",
        ),
    ];
    for (name, edit, says) in cases {
        let copy = t.join(format!("edited-{}", name.replace(' ', "-")));
        copy_tree(&out, &copy);
        edit_json(&copy.join("run.json"), |r| edit(r));
        let before = std::fs::read(copy.join("report.md")).unwrap();
        let o = report_of(&copy);
        assert_refused(&o, &[says]);
        assert_eq!(std::fs::read(copy.join("report.md")).unwrap(), before);
    }
}

/// Text an edit can still put in front of the report (both copies of the
/// spec path changed, without the digest; the machine's names) cannot
/// change its structure.
#[test]
fn recorded_text_cannot_close_a_fence_or_add_html() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let out = finished(t);
    let injected = "small.toml\n```\n# Injected\n<img src=x onerror=alert(1)>";
    edit_json(&out.join("run.json"), |r| {
        r["invocation"]["spec"] = injected.into();
        r["spec"]["path"] = injected.into();
        r["environment"]["cpu_model"] = "CPU\n## Also injected <script>x()</script> `".into();
        r.as_object_mut().unwrap().remove("record_sha256");
    });
    let o = report_of(&out);
    assert!(o.status.success(), "{}", err_of(&o));
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    for line in report.lines() {
        assert!(!line.starts_with("# Injected"), "{line}");
        assert!(!line.starts_with("## Also injected"), "{line}");
    }
    // Outside the Reproduce block (where a tag is text), no tag.
    let start = report.find("```sh\n").unwrap();
    let end = start + 6 + report[start + 6..].find("\n```\n").unwrap();
    let outside = format!("{}{}", &report[..start], &report[end..]);
    assert!(
        !outside.contains("<img") && !outside.contains("<script"),
        "{outside}"
    );
    assert!(outside.contains("&lt;script>"), "{outside}");
    // The Reproduce command is one line in its fenced block.
    let block: Vec<&str> = report
        .split("```sh\n")
        .nth(1)
        .unwrap()
        .lines()
        .take_while(|l| !l.starts_with("```"))
        .collect();
    assert_eq!(block.len(), 1, "{block:?}");
    assert!(
        block[0].contains(r"$'small.toml\n```\n# Injected"),
        "{block:?}"
    );
}

/// `analyze --clock-resolution-ns` took 2^64 - 1 and reported a median of
/// "470192155 s" for data within ±50 ns. Every numeric flag is bounded.
#[test]
fn the_clock_resolution_flag_is_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let csv = t.join("pairs.csv");
    let mut rows = String::from("delay_ns,fork,pair,first,baseline_ns,treatment_ns\n");
    for i in 0..40 {
        let first = if i % 3 == 0 { "baseline" } else { "treatment" };
        rows.push_str(&format!(
            "0,{},{},{first},{},{}\n",
            i % 2,
            i / 2,
            1000 + i % 7,
            1000 + i % 5
        ));
    }
    std::fs::write(&csv, rows).unwrap();
    for bad in ["18446744073709551615", "1000001"] {
        let o = run_in(
            t,
            &[
                "analyze",
                "pairs.csv",
                "--out",
                "a",
                "--clock-resolution-ns",
                bad,
            ],
        );
        assert_refused(
            &o,
            &["--clock-resolution-ns must be from 0 to 1000000 (1 ms", bad],
        );
        assert!(!t.join("a").exists());
    }
    let o = run_in(
        t,
        &[
            "analyze",
            "pairs.csv",
            "--out",
            "a",
            "--clock-resolution-ns",
            "20",
            "--seed",
            "1",
        ],
    );
    assert!(o.status.success(), "{}", err_of(&o));
    // The recorded value is checked too.
    edit_json(&t.join("a/run.json"), |r| {
        r["invocation"]["clock_resolution_ns"] = 18_446_744_073_709_551_615u64.into();
        r.as_object_mut().unwrap().remove("record_sha256");
    });
    assert_refused(
        &report_of(&t.join("a")),
        &["invocation.clock_resolution_ns is"],
    );
}
