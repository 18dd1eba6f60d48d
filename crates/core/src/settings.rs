//! Every environment variable runner reads, read once, into one value.
//!
//! A setting that comes from the environment is looked up here and nowhere
//! else, so the list below is the whole list, a process reads each variable
//! once (a worker sees what its parent set when it started), and the
//! crates below runner take what they need as arguments: the analysis's
//! threads (`stats::pool::configure`), the database URL (`db::resolve_with`).
//!
//! | variable | what it sets |
//! |---|---|
//! | `RUNNER_DATABASE_URL` | the PostgreSQL server, over `database.url` |
//! | `RUNNER_THREADS` | the analysis's threads (default: every core) |
//! | `RUNNER_FAULT` | a debug build's fault hook for the tests (ignored by a release build) |
//! | `RUNNER_HOSTNAME` | the host a shard records, over the system's name |
//! | `RUNNER_PARENT_PID` | set by exec for its workers: the parent a worker dies with |
//! | `XDG_RUNTIME_DIR` | the user's runtime folder, where `runner/` holds the CPUs' locks (placement) |
//! | `SLURM_*`, `JOB_COMPLETION_INDEX`, `HOSTNAME` | the shard a scheduler gives this process |
//! | `GITHUB_SERVER_URL`, `GITHUB_REPOSITORY`, `GITHUB_RUN_ID` | the CI run's page, named in a gate's message |
//! | `GITHUB_STEP_SUMMARY` | the file a gate appends its summary to |
//! | `PATH` | where a `command` arm's program is looked for |
//! | `CARGO_PKG_NAME`, `CARGO_MANIFEST_DIR`, `CARGO_BIN_EXE_runner` | whether `cargo run` started runner (the Reproduce line says so) |

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The PostgreSQL server's URL, when set and not blank; it wins over
/// `database.url`, so CI can point any experiment at its own server.
pub const DATABASE_URL: &str = "RUNNER_DATABASE_URL";
pub const THREADS: &str = "RUNNER_THREADS";
pub const FAULT: &str = "RUNNER_FAULT";
pub const HOSTNAME: &str = "RUNNER_HOSTNAME";
pub const PARENT_PID: &str = "RUNNER_PARENT_PID";
pub const STEP_SUMMARY: &str = "GITHUB_STEP_SUMMARY";

/// The variables of a scheduler that say which shard this process is: kept
/// as set, for `shard` to read and record.
const SCHEDULER_PREFIXES: [&str; 1] = ["SLURM"];
const SCHEDULER_NAMES: [&str; 2] = ["JOB_COMPLETION_INDEX", "HOSTNAME"];

/// What the environment says, read once ([`get`]).
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub database_url: Option<String>,
    /// A positive whole number, or none.
    pub threads: Option<usize>,
    /// The fault hook's text when set and not blank; always none in a
    /// release build, which has no hook.
    pub fault: Option<String>,
    pub hostname: Option<String>,
    pub parent_pid: Option<i32>,
    /// The user's runtime folder, when set to an absolute path.
    pub runtime_dir: Option<PathBuf>,
    /// `SERVER/REPO/actions/runs/ID` of the CI run, when all three are set.
    pub ci_run_page: Option<String>,
    pub step_summary: Option<PathBuf>,
    pub path: Option<OsString>,
    /// `cargo run` started this process (not a test's runner started by path).
    pub launched_by_cargo: bool,
    scheduler: BTreeMap<String, String>,
}

impl Settings {
    /// The settings `vars` give (the process environment, for [`get`]).
    pub fn from_vars(vars: impl IntoIterator<Item = (OsString, OsString)>) -> Settings {
        let vars: BTreeMap<String, OsString> = vars
            .into_iter()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v)))
            .collect();
        let text = |k: &str| {
            vars.get(k)
                .and_then(|v| v.to_str())
                .filter(|v| !v.trim().is_empty())
                .map(str::to_owned)
        };
        let ci_run_page = match (
            text("GITHUB_SERVER_URL"),
            text("GITHUB_REPOSITORY"),
            text("GITHUB_RUN_ID"),
        ) {
            (Some(server), Some(repo), Some(run)) => {
                Some(format!("{server}/{repo}/actions/runs/{run}"))
            }
            _ => None,
        };
        let set = |k: &str| vars.get(k).is_some_and(|v| !v.is_empty());
        Settings {
            database_url: text(DATABASE_URL),
            threads: text(THREADS)
                .and_then(|t| t.trim().parse::<usize>().ok())
                .filter(|&t| t > 0),
            fault: if cfg!(debug_assertions) {
                text(FAULT)
            } else {
                None
            },
            hostname: text(HOSTNAME).map(|h| h.trim().to_owned()),
            parent_pid: text(PARENT_PID).and_then(|p| p.parse().ok()),
            runtime_dir: vars
                .get("XDG_RUNTIME_DIR")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute()),
            ci_run_page,
            step_summary: vars
                .get(STEP_SUMMARY)
                .filter(|p| !p.is_empty())
                .map(PathBuf::from),
            path: vars.get("PATH").cloned(),
            launched_by_cargo: text("CARGO_PKG_NAME").as_deref() == Some("runner")
                && set("CARGO_MANIFEST_DIR")
                && !set("CARGO_BIN_EXE_runner"),
            scheduler: vars
                .iter()
                .filter(|(k, _)| {
                    SCHEDULER_PREFIXES.iter().any(|p| k.starts_with(p))
                        || SCHEDULER_NAMES.contains(&k.as_str())
                })
                .filter_map(|(k, v)| Some((k.clone(), v.to_str()?.to_owned())))
                .collect(),
        }
    }

    /// A scheduler's variable (`SLURM_ARRAY_TASK_ID`, `JOB_COMPLETION_INDEX`,
    /// `HOSTNAME`), as set.
    pub fn scheduler(&self, key: &str) -> Option<&str> {
        self.scheduler.get(key).map(String::as_str)
    }
}

/// This process's settings, read from its environment the first time.
pub fn get() -> &'static Settings {
    static SETTINGS: OnceLock<Settings> = OnceLock::new();
    SETTINGS.get_or_init(|| Settings::from_vars(std::env::vars_os()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(vars: &[(&str, &str)]) -> Settings {
        Settings::from_vars(vars.iter().map(|(k, v)| (k.into(), v.into())))
    }

    #[test]
    fn blank_is_unset_and_numbers_must_be_positive() {
        let s = of(&[
            ("RUNNER_DATABASE_URL", "  "),
            ("RUNNER_THREADS", "0"),
            ("RUNNER_HOSTNAME", " node-1 "),
            ("RUNNER_PARENT_PID", "42"),
        ]);
        assert_eq!(s.database_url, None);
        assert_eq!(s.threads, None);
        assert_eq!(s.hostname.as_deref(), Some("node-1"));
        assert_eq!(s.parent_pid, Some(42));
        assert_eq!(of(&[("RUNNER_THREADS", "3")]).threads, Some(3));
    }

    #[test]
    fn the_ci_page_needs_all_three_and_the_scheduler_keeps_its_own() {
        let s = of(&[
            ("GITHUB_SERVER_URL", "https://github.com"),
            ("GITHUB_REPOSITORY", "o/r"),
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("JOB_COMPLETION_INDEX", "1"),
            ("HOME", "/root"),
        ]);
        assert_eq!(s.ci_run_page, None);
        assert_eq!(s.scheduler("SLURM_ARRAY_TASK_ID"), Some("3"));
        assert_eq!(s.scheduler("JOB_COMPLETION_INDEX"), Some("1"));
        assert_eq!(s.scheduler("HOME"), None);
        let s = of(&[
            ("GITHUB_SERVER_URL", "https://github.com"),
            ("GITHUB_REPOSITORY", "o/r"),
            ("GITHUB_RUN_ID", "7"),
        ]);
        assert_eq!(
            s.ci_run_page.as_deref(),
            Some("https://github.com/o/r/actions/runs/7")
        );
    }

    #[test]
    fn cargo_run_is_told_from_a_test_starting_runner_by_path() {
        let run = [("CARGO_PKG_NAME", "runner"), ("CARGO_MANIFEST_DIR", "/src")];
        assert!(of(&run).launched_by_cargo);
        let mut test = run.to_vec();
        test.push(("CARGO_BIN_EXE_runner", "/t/runner"));
        assert!(!of(&test).launched_by_cargo);
    }
}
