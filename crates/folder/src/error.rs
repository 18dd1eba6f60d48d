//! Why a run folder's record cannot be trusted. The kind says which part
//! failed (the file itself, the recorded spec, the plan, the record's
//! keys, the rows), and an underlying error stays reachable as the
//! `source`. The `Display` is the one sentence the user sees, without the
//! folder's file name where the caller adds it ([`FolderError::InFile`]).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    /// run.json was written by a newer runner (`output::format`).
    #[error(transparent)]
    Format(#[from] crate::output::format::FormatError),
    /// run.json could not be read at all.
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// run.json is not JSON of run.json's shape; serde names the key and line.
    #[error("{} is not a valid run.json: {source}", .path.display())]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// The recorded spec.toml no longer validates as a spec.
    #[error("the recorded spec.toml is not a valid spec: {0}")]
    Spec(#[source] runner_spec::SpecError),
    /// A recorded gate sizing or stopping point the spec does not allow.
    #[error(transparent)]
    Plan(#[from] runner_plan::PlanMismatch),
    /// A key of run.json disagrees with what the spec, the seeds or the
    /// rest of the record give: the record was edited (the sentence names
    /// the key and what it should be).
    #[error("{0}")]
    Edited(String),
    /// pairs.csv's rows disagree with run.json's record of them (the
    /// sentence names the fork and row).
    #[error("{0}")]
    Rows(String),
    /// A row of a fork's file is not a row at all (`name` says where the
    /// rows are; `row` counts from 1).
    #[error("{name}, row {row}: {error}")]
    Row {
        name: String,
        row: usize,
        #[source]
        error: runner_core::record::RowError,
    },
    /// One of the above, found in the file at `path` (run.json, pairs.csv),
    /// which the sentence names first.
    #[error("{}: {error}", .path.display())]
    InFile {
        path: PathBuf,
        #[source]
        error: Box<FolderError>,
    },
}

impl runner_core::error::Coded for FolderError {
    /// A record that cannot be trusted is the folder given being wrong
    /// (exit 2): nothing is re-run or repaired on a guess.
    fn failure(&self) -> runner_core::error::Failure {
        runner_core::error::Failure::BadInput
    }
}

/// A `--shard` value that is not `I/N` with 1 <= I <= N; clap prints it
/// after its own "invalid value" prefix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "expected I/N with 1 <= I <= N, e.g. `--shard 1/4` for the first of 4 shards, got `{text}`"
)]
pub struct ShardFlagError {
    pub text: String,
}

/// A recorded argv that the command line's own definitions refuse. The
/// `Display` is clap's first line without its `error: ` prefix, so it
/// fits in one sentence of a run.json error; clap's whole error stays the
/// source.
#[derive(Debug, thiserror::Error)]
#[error("{}", first_line(.0))]
pub struct ArgvError(#[source] pub clap::Error);

fn first_line(e: &clap::Error) -> String {
    let text = e.to_string();
    let first = text.lines().next().unwrap_or_default();
    first.strip_prefix("error: ").unwrap_or(first).to_string()
}
