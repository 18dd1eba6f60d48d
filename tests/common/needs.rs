//! What a test needs that a machine may lack, and the one way a test
//! that cannot have it is reported: as skipped, never as passed.
//!
//! Each need has a cfg, which build.rs sets when it finds the need while
//! building the tests (or when CI's `RUNNER_REQUIRE_*` variable says it
//! must be there), and a test that needs it carries the attribute that
//! `cfg_attr` switches, e.g.
//! `#[cfg_attr(not(runner_taskset), ignore = "SKIPPED: taskset cannot pin to CPU 0")]`.
//! Without the need, `cargo test` lists the test as ignored, with the
//! reason, and counts it in its summary. With it, the helper here hands
//! the test what it needs, or fails the test: a test that runs was built
//! to run, or was asked for with `--include-ignored`, so a need missing
//! then is a failure, never an early return that would count as passed.
//!
//! The registry, which checks that every test calling a helper here
//! carries the helper's attribute and that no test returns early, is
//! `tests/suite/skips.rs`.

use std::path::{Path, PathBuf};

/// Fails the running test: `what` is missing although the test was built
/// to run with it.
fn missing(what: &str, why: impl std::fmt::Display) -> ! {
    panic!(
        "{what} is needed by this test, which was built to run because build.rs found it (or a RUNNER_REQUIRE_* variable said it must be there), but here it is not: {why}"
    )
}

/// The value of the variable `var`, which the test needs.
fn variable(var: &str) -> String {
    match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => v,
        _ => missing(var, "it is not set"),
    }
}

/// A database of this test's own on the PostgreSQL server named by
/// RUNNER_DATABASE_URL: its URL, with the same role and password.
///
/// Every run on PostgreSQL compares a fingerprint of the whole database
/// outside runner's schemas before and after each fork, and fails when it
/// changed; tests run in parallel, so each works in a database of its own
/// (created here; the role has CREATEDB, see .ci/postgres.sh) and one
/// test's tables never show up in another's fingerprint.
///
/// Attribute: `#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]`.
#[cfg(feature = "postgres")]
pub fn pg_url() -> String {
    super::private_database(&pg_server_url())
}

/// RUNNER_DATABASE_URL as it is (no database of the test's own).
#[cfg(feature = "postgres")]
fn pg_server_url() -> String {
    variable("RUNNER_DATABASE_URL")
}

/// RUNNER_DATABASE_SUPERUSER_URL: a superuser on the same server, for
/// what only a superuser can do past a rollback. Its attribute covers
/// [`pg_url`] too: build.rs sets its cfg only with RUNNER_DATABASE_URL.
///
/// Attribute: `#[cfg_attr(not(runner_postgres_superuser), ignore = "SKIPPED: RUNNER_DATABASE_SUPERUSER_URL not set")]`.
pub fn pg_superuser_url() -> String {
    variable("RUNNER_DATABASE_SUPERUSER_URL")
}

/// A Slurm cluster named by SLURM_CONF (`.ci/slurm.sh` starts one).
///
/// Attribute: `#[cfg_attr(not(runner_slurm), ignore = "SKIPPED: SLURM_CONF not set")]`.
pub fn slurm_conf() -> String {
    variable("SLURM_CONF")
}

/// `python3 -m kubernetes_validate`, from PyPI's `kubernetes-validate`: it
/// holds the Kubernetes JSON schemas, so a manifest is validated offline,
/// without a cluster.
///
/// Attribute: `#[cfg_attr(not(runner_kubernetes_validate), ignore = "SKIPPED: kubernetes-validate not installed")]`.
pub fn kubernetes_validate() -> std::process::Command {
    let found = std::process::Command::new("python3")
        .args(["-c", "import kubernetes_validate"])
        .output();
    match found {
        Ok(o) if o.status.success() => {}
        Ok(o) => missing(
            "Python's kubernetes_validate (pip install kubernetes-validate)",
            String::from_utf8_lossy(&o.stderr).trim().to_string(),
        ),
        Err(e) => missing("python3", e),
    }
    let mut cmd = std::process::Command::new("python3");
    cmd.args(["-m", "kubernetes_validate"]);
    cmd
}

/// `taskset -c 0`, to start a program allowed on CPU 0 alone.
///
/// Attribute: `#[cfg_attr(not(runner_taskset), ignore = "SKIPPED: taskset cannot pin to CPU 0")]`.
pub fn taskset_cpu_0() -> std::process::Command {
    match std::process::Command::new("taskset")
        .args(["-c", "0", "true"])
        .output()
    {
        Ok(o) if o.status.success() => {}
        Ok(o) => missing(
            "taskset -c 0",
            String::from_utf8_lossy(&o.stderr).trim().to_string(),
        ),
        Err(e) => missing("taskset", e),
    }
    let mut cmd = std::process::Command::new("taskset");
    cmd.args(["-c", "0"]);
    cmd
}

/// `/proc/self/task`, which lists this process's threads.
///
/// Attribute: `#[cfg_attr(not(runner_proc_tasks), ignore = "SKIPPED: /proc/self/task not readable")]`.
pub fn proc_tasks() -> PathBuf {
    let dir = PathBuf::from("/proc/self/task");
    if let Err(e) = std::fs::read_dir(&dir) {
        missing("/proc/self/task", e);
    }
    dir
}

/// valgrind, on `PATH`, which counts instructions (`design.measure`):
/// the `valgrind` command, checked to run.
///
/// Attribute: `#[cfg_attr(not(runner_valgrind), ignore = "SKIPPED: valgrind not installed (apt-get install valgrind)")]`.
pub fn valgrind() -> std::process::Command {
    match std::process::Command::new("valgrind")
        .arg("--version")
        .output()
    {
        Ok(o) if o.status.success() => {}
        Ok(o) => missing(
            "valgrind",
            String::from_utf8_lossy(&o.stderr).trim().to_string(),
        ),
        Err(e) => missing("valgrind (apt-get install valgrind)", e),
    }
    std::process::Command::new("valgrind")
}

/// A tmpfs mounted at a folder; unmounted on drop.
pub struct Tmpfs(pub PathBuf);

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// A tmpfs of `size` (e.g. "64k") mounted at `dir`: a disk that fills.
///
/// Attribute: `#[cfg_attr(not(runner_tmpfs), ignore = "SKIPPED: cannot mount a tmpfs (needs root with CAP_SYS_ADMIN)")]`.
pub fn small_tmpfs(dir: &Path, size: &str) -> Tmpfs {
    std::fs::create_dir_all(dir).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(dir)
        .output();
    match mounted {
        Ok(o) if o.status.success() => Tmpfs(dir.to_path_buf()),
        Ok(o) => missing(
            "mounting a tmpfs",
            String::from_utf8_lossy(&o.stderr).trim().to_string(),
        ),
        Err(e) => missing("mount", e),
    }
}

/// Gives a tmpfs [`small_tmpfs`] mounted a new size.
pub fn remount(dir: &Path, size: &str) -> bool {
    std::process::Command::new("mount")
        .args(["-o", &format!("remount,size={size}")])
        .arg(dir)
        .status()
        .is_ok_and(|s| s.success())
}

/// The git checkout the sources are, whose HEAD holds the committed
/// reports: `git -C ROOT ARGS`, which must succeed; its stdout.
///
/// Attribute (through [`super::committed::reports`]): `#[cfg_attr(not(runner_git), ignore = "SKIPPED: not a git checkout")]`.
pub fn git(args: &[&str]) -> Vec<u8> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output();
    match out {
        Ok(o) if o.status.success() => o.stdout,
        Ok(o) => missing(
            "a git checkout of the sources",
            format!(
                "git {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&o.stderr).trim()
            ),
        ),
        Err(e) => missing("git", e),
    }
}
