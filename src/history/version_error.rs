//! Why a committed version of a run cannot join the history: its files
//! are not a finished run's, or its analysis failed. The kind says which
//! file; the folder checker's error stays the `source`. The `Display` is
//! the sentence the history lists beside the skipped commit.

use runner_folder::FolderError;

#[derive(Debug, thiserror::Error)]
pub(super) enum VersionError {
    /// Not JSON of run.json's shape, or of a newer runner's format (the
    /// sentence names the file).
    #[error(transparent)]
    Read(FolderError),
    #[error("run.json: {0}")]
    Record(#[source] FolderError),
    #[error("run.json holds a run in progress (no finish time)")]
    InProgress,
    #[error("pairs.csv: {0}")]
    Pairs(#[source] FolderError),
    #[error(transparent)]
    Analysis(#[from] runner_analysis::AnalysisError),
}
