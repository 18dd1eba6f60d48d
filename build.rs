//! Records the compiler version and git commit, which run.json reports so a
//! result can be traced to the exact binary that produced it; and sets the
//! cfgs that switch the tests needing something this machine may lack, so
//! without it they are *ignored* and `cargo test`'s own summary counts them
//! ("N ignored") instead of passing them silently (the registry of needs is
//! tests/suite/skips.rs, the helpers tests/common/needs.rs):
//!
//! - `runner_postgres` when RUNNER_DATABASE_URL names a server, and
//!   `runner_postgres_superuser` when RUNNER_DATABASE_SUPERUSER_URL too
//!   names a role on it;
//! - `runner_slurm` when SLURM_CONF names a Slurm cluster (`.ci/slurm.sh`);
//! - `runner_kubernetes_validate` when Python's `kubernetes_validate`
//!   module (PyPI `kubernetes-validate`, the Job schemas) can be imported;
//! - `runner_taskset` when `taskset -c 0` runs a program;
//! - `runner_proc_tasks` when /proc lists this process's threads;
//! - `runner_tmpfs` when this process may mount a small tmpfs (root with
//!   CAP_SYS_ADMIN), which the full-disk tests do;
//! - `runner_git` when the sources are a git checkout, whose HEAD holds the
//!   committed reports;
//! - `runner_valgrind` when `valgrind --version` runs: it counts
//!   instructions (`design.measure`).
//!
//! RUNNER_REQUIRE_POSTGRES=1, RUNNER_REQUIRE_SLURM=1,
//! RUNNER_REQUIRE_KUBERNETES_VALIDATE=1 and RUNNER_REQUIRE_VALGRIND=1 (set by
//! `.ci/run`) switch theirs on
//! whatever was found, so a service CI should have fails instead of
//! skipping.
use std::process::Command;

fn output(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = output(&rustc, &["--version"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=RUNNER_RUSTC_VERSION={version}");
    let commit = output("git", &["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = output("git", &["status", "--porcelain", "--untracked-files=no"])
        .map(|s| !s.is_empty())
        .unwrap_or(false);
    let commit = if dirty {
        format!("{commit}-dirty")
    } else {
        commit
    };
    println!("cargo:rustc-env=RUNNER_GIT_COMMIT={commit}");
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/index");

    need("runner_git", !commit.starts_with("unknown"));

    let required = |var: &str| {
        println!("cargo:rerun-if-env-changed={var}");
        std::env::var(var).as_deref() == Ok("1")
    };
    let named = |var: &str| {
        println!("cargo:rerun-if-env-changed={var}");
        std::env::var(var).is_ok_and(|v| !v.trim().is_empty())
    };
    let postgres = required("RUNNER_REQUIRE_POSTGRES");
    need("runner_postgres", postgres || named("RUNNER_DATABASE_URL"));
    // Its tests use both servers' roles.
    need(
        "runner_postgres_superuser",
        postgres || named("RUNNER_DATABASE_URL") && named("RUNNER_DATABASE_SUPERUSER_URL"),
    );
    need(
        "runner_slurm",
        required("RUNNER_REQUIRE_SLURM") || named("SLURM_CONF"),
    );
    need(
        "runner_kubernetes_validate",
        required("RUNNER_REQUIRE_KUBERNETES_VALIDATE")
            || output("python3", &["-c", "import kubernetes_validate"]).is_some(),
    );
    need(
        "runner_taskset",
        output("taskset", &["-c", "0", "true"]).is_some(),
    );
    need(
        "runner_proc_tasks",
        std::path::Path::new("/proc/self/task").is_dir(),
    );
    need("runner_tmpfs", may_mount());
    need(
        "runner_valgrind",
        required("RUNNER_REQUIRE_VALGRIND") || output("valgrind", &["--version"]).is_some(),
    );
}

/// Declares the cfg `name`, and sets it when `found`.
fn need(name: &str, found: bool) {
    println!("cargo:rustc-check-cfg=cfg({name})");
    if found {
        println!("cargo:rustc-cfg={name}");
    }
}

/// Whether this process may mount a filesystem: CAP_SYS_ADMIN (bit 21) in
/// its effective capabilities, and a `mount` program. Read, not tried: a
/// build mounts nothing.
fn may_mount() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let admin = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|caps| u64::from_str_radix(caps.trim(), 16).ok())
        .is_some_and(|caps| caps & (1 << 21) != 0);
    admin && output("mount", &["--version"]).is_some()
}
