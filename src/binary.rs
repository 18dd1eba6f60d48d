//! Which binary made a run: recorded in run.json beside the machine.

/// This binary as run.json records it: the compiler and the commit come
/// from build.rs, so a result can be traced to the binary that made it.
pub const BINARY: runner_os::environment::Binary = runner_os::environment::Binary {
    rustc: env!("RUNNER_RUSTC_VERSION"),
    version: env!("CARGO_PKG_VERSION"),
    git_commit: env!("RUNNER_GIT_COMMIT"),
};
