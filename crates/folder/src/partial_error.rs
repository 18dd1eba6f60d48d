//! Why a run's `DIR.partial/` cannot be created or resumed: a kind per
//! refusal, each saying what to do instead. Nothing here is a failed run:
//! the folder given (or one that is in the way) is the user's to finish,
//! wait for, or delete, so every kind is bad input (exit 2).

use crate::FolderError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum PartialError {
    /// Another exec holds the folder (`holder`: what its lock file says).
    #[error("{} is in use by another runner exec ({holder}); wait for it to finish or stop it", .dir.display())]
    InUse { dir: PathBuf, holder: String },
    /// A new run's folder is already there, from a run that stopped.
    #[error("{} already exists from an earlier run; finish it with --resume {} or delete it", .dir.display(), .dir.display())]
    Exists { dir: PathBuf },
    /// The folder to resume cannot be looked at.
    #[error("cannot resume {}: {cause}", .dir.display())]
    Unreadable {
        dir: PathBuf,
        #[source]
        cause: std::io::Error,
    },
    /// A link is not followed: the folder resumed is the one locked.
    #[error("cannot resume {}: it is a symbolic link; pass the folder itself", .dir.display())]
    Symlink { dir: PathBuf },
    #[error("cannot resume {}: it is not a folder", .dir.display())]
    NotAFolder { dir: PathBuf },
    #[error("{} is not a partial run folder (it has no run.json)", .dir.display())]
    NoRunJson { dir: PathBuf },
    /// The run in it finished (`at`): it is rendered, not resumed.
    #[error("{} holds a run that finished at {at}, so there is nothing to resume; only a .partial folder of an unfinished run can be resumed (render a finished one with `runner report {}`)", .dir.display(), .dir.display())]
    Finished { dir: PathBuf, at: String },
    /// A fork's record (`record`) cannot be trusted; deleting it and its
    /// rows runs that fork again.
    #[error("{}: {why}; delete {} and its .csv to run that fork again, then resume", .record.display(), .record.display())]
    Damaged {
        record: PathBuf,
        #[source]
        why: ForkDamage,
    },
    /// A fork's rows (`csv`) disagree with its record (`record`).
    #[error("{error}; delete {} and {} to run that fork again, then resume", .csv.display(), .record.display())]
    Rows {
        csv: PathBuf,
        record: PathBuf,
        #[source]
        error: FolderError,
    },
}

impl runner_core::error::Coded for PartialError {
    fn failure(&self) -> runner_core::error::Failure {
        runner_core::error::Failure::BadInput
    }
}

/// What is wrong with a fork's record in `DIR.partial/forks/`: the clause
/// after its path.
#[derive(Debug, thiserror::Error)]
pub enum ForkDamage {
    #[error("not a valid fork record: {0}")]
    NotARecord(#[source] serde_json::Error),
    /// The record is of another fork than its file's name says.
    #[error("it records cell {cell} fork {fork}, not the fork its name says")]
    OtherFork { cell: u32, fork: u32 },
    #[error("it is not one of the run's jobs")]
    NotAJob,
    #[error("cannot read its rows: {0}")]
    RowsUnread(#[source] std::io::Error),
}
