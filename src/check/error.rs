//! How `runner check` fails on its own account, apart from what the spec
//! and exec's refusals say: the exec flags it was given that exec would
//! refuse, a database it cannot resolve, arms whose outputs differ in its
//! trial runs (bad input, each), and a signal or a database guard that
//! cannot be taken around the trials (a failed check).

use runner_core::error::{Coded, Failure};
use runner_db::DbError;
use runner_os::interrupt::Interrupted;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub(crate) enum CheckError {
    /// The shard flags or the scheduler's variables give this command no
    /// share of the plan.
    #[error("{0}")]
    Shard(#[source] crate::shard::ShardError),
    /// A shard of a file that leaves a fork's pairs to the trial runs,
    /// which exec refuses.
    #[error(
        "{}: a shard needs design.warmup_pairs and design.pairs in the file (each shard would choose its own from its own trial runs); exec would refuse --shard {index}/{count}",
        .spec.display()
    )]
    ShardChoosesRuns {
        spec: PathBuf,
        index: u32,
        count: u32,
    },
    /// A shard of a sequential design, which exec refuses.
    #[error(
        "{} has [design.stop], which shards cannot run apart; exec would refuse --shard {index}/{count}",
        .spec.display()
    )]
    ShardSequential {
        spec: PathBuf,
        index: u32,
        count: u32,
    },
    /// The `[database]` table (or RUNNER_DATABASE_URL) names no database
    /// runner can use.
    #[error("{0}")]
    Resolve(#[source] DbError),
    /// The trial runs found that the arms' outputs differ: the file's to
    /// fix before any run.
    #[error(
        "check's trial run found that {0}; exec would stop at its first fork for the same reason"
    )]
    TrialsDisagree(String),
    /// A signal stopped the trial runs.
    #[error("{0} during check's trial runs; every process they started was stopped")]
    TrialsInterrupted(Interrupted),
    /// The fingerprint around the trials could not be taken, so `check`
    /// cannot say they left the database as it was.
    #[error("the database guard around check's trial runs: {0}")]
    Guard(#[source] DbError),
}

impl Coded for CheckError {
    fn failure(&self) -> Failure {
        match self {
            CheckError::Shard(_)
            | CheckError::ShardChoosesRuns { .. }
            | CheckError::ShardSequential { .. }
            | CheckError::Resolve(_)
            | CheckError::TrialsDisagree(_) => Failure::BadInput,
            CheckError::TrialsInterrupted(_) | CheckError::Guard(_) => Failure::RunFailed,
        }
    }
}

/// Why the trials could not start: a schema of their own could not be
/// made. Said in the plan as a failed trial, unless a signal was the
/// cause, which stops `check` (exit 1).
#[derive(Debug, thiserror::Error)]
pub(super) enum NoTrialSchema {
    #[error("{0} while making a schema for the trial runs")]
    Interrupted(Interrupted),
    #[error("could not make a schema for the trial runs: {0}")]
    Db(#[source] DbError),
}

impl Coded for NoTrialSchema {
    fn failure(&self) -> Failure {
        Failure::RunFailed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arms_that_differ_are_bad_input_and_a_signal_fails_check() {
        let differ = CheckError::TrialsDisagree("the rows differ".into());
        assert_eq!(differ.failure(), Failure::BadInput);
        assert_eq!(
            differ.to_string(),
            "check's trial run found that the rows differ; exec would stop at its first fork for the same reason"
        );
        assert_eq!(
            CheckError::TrialsInterrupted(Interrupted).failure(),
            Failure::RunFailed
        );
        assert_eq!(
            NoTrialSchema::Interrupted(Interrupted).to_string(),
            format!("{Interrupted} while making a schema for the trial runs")
        );
    }
}
