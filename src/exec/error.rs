//! How `runner exec` fails on its own account, apart from what the spec,
//! the folder, the report or a fork's worker say: a refusal before the
//! first fork (flags that contradict the file, a resume that is not the
//! run it continues, a tool the design needs and the machine lacks) is
//! bad input; what stops a run once it goes (the database guard, the
//! forks' tables, the stopping rule, a signal) fails the run. Each kind
//! carries what its sentence names, and an underlying error stays its
//! `source`.

use crate::shard::ShardError;
use runner_analysis::AnalysisError;
use runner_core::error::{Coded, Failure};
use runner_db::preflight::{PreflightError, PRIVILEGES_DOC};
use runner_db::DbError;
use runner_folder::FolderError;
use runner_os::environment::counters::VALGRIND_PACKAGE;
use runner_os::interrupt::Interrupted;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub(crate) enum ExecError {
    /// The run's private temporary folder (`runner_os::temp`) could not be
    /// made: nothing of the run can start without it.
    #[error("cannot make runner's private temporary folder in {}: {source}", .dir.display())]
    NoTemp {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The shard flags or the scheduler's variables do not give this exec
    /// a share of the plan (or the folder resumed is another shard).
    #[error("{0}")]
    Shard(#[source] ShardError),
    /// The assembly refused the new run's record: what the file asks for
    /// cannot be recorded as a run.
    #[error("the run's record would not be valid: {0}")]
    Record(#[source] FolderError),
    /// `--resume P --out O` where one folder is inside the other, so the
    /// finished run could not be renamed from one to the other.
    #[error(
        "--out {} and --resume {} are inside one another; the finished run is renamed from one to the other",
        .out.display(),
        .resume.display()
    )]
    ResumeNested { out: PathBuf, resume: PathBuf },
    /// `--resume P --out O` across file systems: the finished run is put
    /// in place by a rename, which cannot cross one.
    #[error(
        "--out {} is on another file system than --resume {}; the finished run is renamed into place, so put them side by side (e.g. --out {})",
        .out.display(),
        .resume.display(),
        .beside.display()
    )]
    ResumeOtherFileSystem {
        out: PathBuf,
        resume: PathBuf,
        /// The output folder beside the partial one.
        beside: PathBuf,
    },
    /// `--resume` of a folder whose name says no output folder, and no
    /// `--out` to name one.
    #[error("{} does not end in .partial; pass --out DIR", .dir.display())]
    NotPartial { dir: PathBuf },
    /// `--bisect` needs a gate's verdict to tell git good from bad.
    #[error(
        "{}: --bisect needs a [gate] in the experiment file (e.g. max_slowdown = \"25%\"), whose verdict tells `git bisect run` good from bad",
        .spec.display()
    )]
    BisectUngated { spec: PathBuf },
    /// `--gate-required` on a file without a gate, which has no verdict.
    #[error(
        "{} has no [gate] table, and --gate-required asks for one: a file without a gate has no verdict to pass; add [gate] with max_slowdown, or run without --gate-required",
        .spec.display()
    )]
    GateRequired { spec: PathBuf },
    /// A shard of a file that leaves a fork's pairs to the trial runs:
    /// each shard would choose its own, and merge joins one design only.
    #[error(
        "{}: a shard (--shard {index}/{count}) needs design.warmup_pairs and design.pairs in the file: left out, each shard would choose its own from its own trial runs, and merge joins only forks of one design; set both (`runner check` prints what it would choose)",
        .spec.display()
    )]
    ShardChoosesRuns {
        spec: PathBuf,
        index: u32,
        count: u32,
    },
    /// A shard of a sequential design, whose stops need every fork of a
    /// cell, which no shard has.
    #[error(
        "{} has [design.stop], whose cells stop once their own forks so far say so, which shards running apart cannot know; run it whole (without --shard {index}/{count} and without SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX set), or fix the forks with design.forks and no [design.stop]",
        .spec.display()
    )]
    ShardSequential {
        spec: PathBuf,
        index: u32,
        count: u32,
    },
    /// A design that counts instructions on a machine without valgrind,
    /// which counts them.
    #[error(
        "{}: design.measure counts instructions, which runner does with valgrind, and valgrind is not on PATH; install it (Debian and Ubuntu: `apt-get install {}`), or measure time alone",
        .spec.display(),
        VALGRIND_PACKAGE
    )]
    NoValgrind { spec: PathBuf },
    /// A resume with another spec than the run started with: its forks
    /// would not be one experiment's.
    #[error(
        "the spec changed since this run was started ({} differ); resume with the original spec and --set flags, or start a new run",
        .keys.join(", ")
    )]
    SpecChanged { keys: Vec<String> },
    /// A resume on another database than the run started on: one cell
    /// would hold forks of two systems.
    #[error(
        "this run started on {started} but would resume on {now}; set RUNNER_DATABASE_URL (or unset it) as it was when the run started"
    )]
    OtherDatabase { started: String, now: String },
    /// The `[database]` table (or RUNNER_DATABASE_URL) names no database
    /// runner can use.
    #[error("{0}")]
    Resolve(#[source] DbError),
    /// A PostgreSQL run without a URL to reach it.
    #[error(
        "database.backend is \"postgres\" but no URL is set; set database.url or RUNNER_DATABASE_URL"
    )]
    NoUrl,
    /// The database could not be prepared for the run (its description
    /// read, its schema made).
    #[error("{0}")]
    Database(#[source] DbError),
    /// The catalog's pre-flight said the experiment cannot run as written
    /// (`Refused`), or could not open the file it names.
    #[error("{0}")]
    Preflight(#[source] PreflightError),
    /// The server could not answer the pre-flight's questions about the
    /// catalog, before anything ran.
    #[error(
        "{}",
        with_privileges(format!("before anything ran, reading the database's catalog failed: {source}"))
    )]
    Catalog {
        #[source]
        source: DbError,
    },
    /// The fingerprint around the forks could not be taken: the run
    /// cannot say that the database held.
    #[error("the database guard: {0}")]
    Guard(#[source] DbError),
    /// The parent's connection that makes the `tx-rollback` tables a fork
    /// ahead failed.
    #[error("the forks' tables: {0}")]
    Tables(#[source] DbError),
    /// A sequential design's rule could not be looked at over the forks
    /// kept so far.
    #[error("the stopping rule: {0}")]
    StoppingRule(#[source] AnalysisError),
    /// The gate's self-check cells could not be sized from the first
    /// phase's rows (`runner_analysis::gate::sizing`'s error, which that
    /// crate does not name outside it).
    #[error("{0}")]
    GateSizing(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A fork's rows, checked as every reader checks a stored fork, are
    /// not what its job asked for.
    #[error("the worker's rows: {0}")]
    Rows(#[source] FolderError),
    /// The trial runs before the first fork found that the arms' outputs
    /// differ: every fork would stop at it.
    #[error("exec's trial run, before any fork, found that {0}")]
    TrialsDisagree(String),
    /// A trial run outlasted the fork timeout: every fork would.
    #[error("before any fork, {0}")]
    TrialTimedOut(String),
    /// A signal stopped the run between forks.
    #[error("{0}")]
    Interrupted(Interrupted),
    /// A signal stopped the run while it waited on `during` (the database
    /// being prepared, the analysis).
    #[error("{signal} {during}")]
    InterruptedWhile {
        signal: Interrupted,
        during: &'static str,
    },
}

impl Coded for ExecError {
    fn failure(&self) -> Failure {
        use ExecError as E;
        match self {
            E::Shard(_)
            | E::Record(_)
            | E::ResumeNested { .. }
            | E::ResumeOtherFileSystem { .. }
            | E::NotPartial { .. }
            | E::BisectUngated { .. }
            | E::GateRequired { .. }
            | E::ShardChoosesRuns { .. }
            | E::ShardSequential { .. }
            | E::NoValgrind { .. }
            | E::SpecChanged { .. }
            | E::OtherDatabase { .. }
            | E::Resolve(_)
            | E::NoUrl
            | E::Preflight(PreflightError::Refused(_)) => Failure::BadInput,
            E::TrialsDisagree(_) => Failure::ArmsDisagree,
            E::NoTemp { .. }
            | E::Database(_)
            | E::Preflight(_)
            | E::Catalog { .. }
            | E::Guard(_)
            | E::Tables(_)
            | E::StoppingRule(_)
            | E::GateSizing(_)
            | E::Rows(_)
            | E::TrialTimedOut(_)
            | E::Interrupted(_)
            | E::InterruptedWhile { .. } => Failure::RunFailed,
        }
    }
}

/// A message with the privileges guide added when the server refused
/// for want of one.
pub(crate) fn with_privileges(message: String) -> String {
    if message.contains("permission denied") || message.contains("must be owner") {
        format!("{message}\nthe privileges each feature needs are in {PRIVILEGES_DOC}")
    } else {
        message
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use runner_core::error::RunnerError;
    use std::error::Error;

    fn denied() -> DbError {
        DbError::Postgres {
            context: "catalog",
            message: "permission denied for table t".into(),
        }
    }

    #[test]
    fn each_kind_keeps_its_sentence_its_code_and_its_cause() {
        let e = RunnerError::from(ExecError::Catalog { source: denied() });
        assert_eq!(
            e.to_string(),
            format!("before anything ran, reading the database's catalog failed: PostgreSQL catalog: permission denied for table t\nthe privileges each feature needs are in {PRIVILEGES_DOC}")
        );
        assert_eq!(e.failure(), Failure::RunFailed);
        assert_eq!(
            e.source().unwrap().to_string(),
            "PostgreSQL catalog: permission denied for table t"
        );
        let guard = RunnerError::from(ExecError::Guard(denied()));
        assert_eq!(
            guard.to_string(),
            "the database guard: PostgreSQL catalog: permission denied for table t"
        );
        let refused = ExecError::Preflight(PreflightError::Refused("no such table".into()));
        assert_eq!(refused.failure(), Failure::BadInput);
        assert_eq!(refused.to_string(), "no such table");
        let unreadable = ExecError::Preflight(PreflightError::Unreadable {
            file: "a.db".into(),
            message: "gone".into(),
        });
        assert_eq!(unreadable.failure(), Failure::RunFailed);
        assert_eq!(
            ExecError::TrialsDisagree("the rows differ".into()).failure(),
            Failure::ArmsDisagree
        );
        assert_eq!(
            ExecError::SpecChanged {
                keys: vec!["a".into(), "b".into()]
            }
            .to_string(),
            "the spec changed since this run was started (a, b differ); resume with the original spec and --set flags, or start a new run"
        );
        assert_eq!(
            ExecError::InterruptedWhile {
                signal: Interrupted,
                during: "during the analysis"
            }
            .to_string(),
            format!("{Interrupted} during the analysis")
        );
    }
}
