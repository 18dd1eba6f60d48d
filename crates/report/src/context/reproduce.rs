//! The report's "Reproduce" section: everything needed to run the
//! experiment again — the command with every `--set` and `--out`, quoted so
//! it pastes as the same argv; the database; the commit; the placement —
//! and what a repeat does and does not reproduce.

use runner_folder::invocation::Invocation;
use runner_folder::RunInfo;
use serde::Serialize;

#[derive(Debug, Serialize)]
pub struct Reproduce {
    /// The command that reruns this experiment with the same seed and the
    /// same output folder, prefixed with `RUNNER_DATABASE_URL=...` (without
    /// the password) when it ran on PostgreSQL.
    pub command: String,
    /// The database in words: `PostgreSQL 15.18 at postgres://bench@...`
    /// or `embedded SQLite 3.46.0`; none when no strategy used one.
    pub database: Option<String>,
    /// The git commit the binary was built from.
    pub commit: String,
    /// Set when the build had uncommitted changes (`-dirty`).
    pub commit_dirty: bool,
    /// The user's code the run measured and runner's build, in words
    /// ([`code_line`]); none for a run that did not record it (the line
    /// then names runner's build alone, as it always did).
    pub code: Option<String>,
    /// The CPU placement of the run, when the experiment has one.
    pub placement: Option<String>,
    /// What reproduces byte for byte and what depends on the machine.
    pub determinism: String,
}

/// `runner ...` as the user started runner (`cargo run --release -- ...`,
/// `runner ...`), quoted by [`runner_core::shell`].
fn launched(info: &RunInfo, argv: Vec<String>) -> String {
    let prefix = &info.build().launched_as;
    format!(
        "{prefix} {}",
        runner_core::shell::join(&argv.into_iter().skip(1).collect::<Vec<_>>())
    )
}

/// `runner exec SPEC [--out DIR] [--shard I/N] [--set K=V]...`, started as
/// the user started it:
/// the recorded invocation without `--quiet` and `--resume`, the shard the
/// folder records (however it was chosen), and the master seed pinned when
/// the run drew it.
pub fn reproduce_command(info: &RunInfo) -> String {
    if let Some(m) = &info.merged() {
        return merged_command(info, m);
    }
    let mut args = info.exec_args();
    args.resume = None;
    args.quiet = false;
    args.shards = None;
    args.shard = info.shard().as_ref().map(|s| (s.index, s.count));
    if info.seeds().drawn {
        args.set.push(format!("seed={}", info.seeds().master));
    }
    launched(info, Invocation::Exec(args).to_argv())
}

/// `runner analyze FILE [flags] --seed S`: the recorded
/// `runner analyze` command with the master seed pinned.
fn analyze_command(info: &RunInfo) -> String {
    let mut invocation = info.invocation().clone();
    if let Invocation::Analyze(a) = &mut invocation {
        a.seed = Some(info.seeds().master);
        a.quiet = false;
    }
    launched(info, invocation.to_argv())
}

/// A merged run: each shard's command (one line each; on many machines,
/// one per machine or array task), then the merge into the same folder.
fn merged_command(info: &RunInfo, m: &runner_folder::merged::MergedInfo) -> String {
    let mut lines: Vec<String> = m
        .shards
        .iter()
        .map(|s| reproduce_command(&info.as_shard(s)))
        .collect();
    lines.push(launched(info, info.invocation().to_argv()));
    lines.join("\n")
}

/// `the measured repository at commit `1a2b3c4d5e6f` (branch `main`),
/// **dirty**: ...; runner built from commit `...``: the code the run
/// measured, said first (a dirty tree plainly, with the digest of its
/// changes), then runner's own build.
fn code_line(info: &RunInfo, runner: &str, runner_dirty: bool) -> Option<String> {
    use runner_os::environment::Code;
    let runner = format!(
        "runner built from commit `{runner}`{}",
        if runner_dirty {
            " with uncommitted changes"
        } else {
            ""
        }
    );
    let short = |c: &str| c.chars().take(12).collect::<String>();
    let repo = match &info.environment().code {
        Code::NotRecorded => return None,
        Code::NoRepository { why } => {
            return Some(format!(
                "the experiment file is in no git repository runner could read ({}), so no commit names the code that ran; {runner}",
                why
            ))
        }
        Code::Git(r) => r,
    };
    let Some(commit) = &repo.commit else {
        return Some(format!(
            "the measured repository had no commit yet, so none names the code that ran; {runner}"
        ));
    };
    let at = format!("commit `{}`", short(commit));
    let branch = match &repo.branch {
        Some(b) => format!(" (branch `{b}`)"),
        None => " (detached HEAD)".into(),
    };
    let state = match (&repo.diff_sha256, repo.dirty) {
        (Some(d), true) => format!(
            ", **dirty**: tracked files differed from that commit (the SHA-256 of their diff begins `{}`), so the commit alone does not hold the code that ran",
            short(d)
        ),
        (None, true) => ", **dirty**: tracked files differed from that commit".into(),
        (_, false) => ", clean (no tracked file differed from it)".into(),
    };
    Some(format!(
        "the measured repository at {at}{branch}{state}; {runner}"
    ))
}

pub(super) fn build(info: &RunInfo) -> Reproduce {
    if info.imported().is_some() {
        let commit = &info.environment().git_commit;
        let (commit, commit_dirty) = match commit.strip_suffix("-dirty") {
            Some(c) => (c.to_string(), true),
            None => (commit.clone(), false),
        };
        return Reproduce {
            command: analyze_command(info),
            database: None,
            code: code_line(info, &commit, commit_dirty),
            commit,
            commit_dirty,
            placement: None,
            determinism: "The data were imported, so only the analysis can be repeated: the same file and seed give this report, `analysis.json` and the plots byte for byte, and `runner report DIR` renders them identically from `pairs.csv` and `run.json`.".into(),
        };
    }
    let db = super::database_view(info);
    let command = match db.as_ref().and_then(|d| d.url.as_ref()) {
        // Only the value is quoted: a quoted name would not be an assignment.
        Some(url) => format!(
            "{}={} {}",
            runner_core::settings::DATABASE_URL,
            runner_core::shell::join(&[url]),
            reproduce_command(info)
        ),
        None => reproduce_command(info),
    };
    let database = db.map(|d| match &d.url {
        Some(url) => format!(
            "{}; URL {url}{}",
            d.label,
            if d.postgres.as_ref().is_some_and(|p| p.user.is_some()) {
                " (no password is recorded; add yours if the server asks for one)"
            } else {
                " (this run recorded no user or password; add yours)"
            }
        ),
        None => format!(
            "{}, in the worker's memory: nothing to install (leave {} unset)",
            d.label,
            runner_core::settings::DATABASE_URL
        ),
    });
    let commit = &info.environment().git_commit;
    let (commit, commit_dirty) = match commit.strip_suffix("-dirty") {
        Some(c) => (c.to_string(), true),
        None => (commit.clone(), false),
    };
    let exp = &info.spec().experiment;
    // Runs recorded before placement existed ran unpinned, whatever the
    // default reads as now: say nothing for them.
    let recorded = info.forks().iter().any(|f| f.summary.placement.is_some());
    let placement = recorded.then(|| {
        if exp.grid.placement.is_empty() {
            exp.design.placement.to_string()
        } else {
            let swept: Vec<String> = exp.grid.placement.iter().map(|p| p.to_string()).collect();
            format!("swept over {} (one per cell)", swept.join(", "))
        }
    });
    Reproduce {
        command,
        database,
        code: code_line(info, &commit, commit_dirty),
        commit,
        commit_dirty,
        placement,
        determinism: "Timings depend on the machine and its load, so a repeat measures different times. The schedule, the inputs and the analysis of these data reproduce byte for byte: the same seed gives the same job order, inputs and coin flips, and `runner report DIR` renders this report, `analysis.json` and the plots identically from `pairs.csv` and `run.json`.".into(),
    }
}
