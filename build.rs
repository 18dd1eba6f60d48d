//! Records the compiler version and git commit, which run.json reports so a
//! result can be traced to the exact binary that produced it; and sets the
//! cfgs that switch the tests needing an outside service, so without it
//! they are *ignored* and `cargo test`'s own summary counts them ("N
//! ignored") instead of passing them silently:
//!
//! - `runner_postgres` when RUNNER_DATABASE_URL names a server;
//! - `runner_slurm` when SLURM_CONF names a Slurm cluster (`.ci/slurm.sh`);
//! - `runner_kubernetes_validate` when Python's `kubernetes_validate`
//!   module (PyPI `kubernetes-validate`, the Job schemas) can be imported,
//!   or RUNNER_REQUIRE_KUBERNETES_VALIDATE=1 says it must be (`.ci/run`).
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

    println!("cargo:rustc-check-cfg=cfg(runner_postgres)");
    println!("cargo:rerun-if-env-changed=RUNNER_DATABASE_URL");
    let url = std::env::var("RUNNER_DATABASE_URL").unwrap_or_default();
    if !url.trim().is_empty() {
        println!("cargo:rustc-cfg=runner_postgres");
    }

    println!("cargo:rustc-check-cfg=cfg(runner_slurm)");
    println!("cargo:rerun-if-env-changed=SLURM_CONF");
    if std::env::var("SLURM_CONF").is_ok_and(|c| !c.trim().is_empty()) {
        println!("cargo:rustc-cfg=runner_slurm");
    }

    println!("cargo:rustc-check-cfg=cfg(runner_kubernetes_validate)");
    println!("cargo:rerun-if-env-changed=RUNNER_REQUIRE_KUBERNETES_VALIDATE");
    let required = std::env::var("RUNNER_REQUIRE_KUBERNETES_VALIDATE").as_deref() == Ok("1");
    if required || output("python3", &["-c", "import kubernetes_validate"]).is_some() {
        println!("cargo:rustc-cfg=runner_kubernetes_validate");
    }
}
