//! Why `runner history` cannot list a folder's versions at all (unlike a
//! version that fails its checks, which is named and skipped: see
//! `version_error`). Either the folder asked for is not one the history
//! can read, or `--out` cannot take the history (bad input, exit 2), or
//! git, which the history reads every version through, could not be run
//! or stopped making sense (exit 1). The `Display` is the sentence the
//! user sees; git's or the system's error stays the `source`.

use std::path::PathBuf;

/// What git said when it refused: its stderr's first line, without
/// `fatal: `.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct GitRefused(pub String);

#[derive(Debug, thiserror::Error)]
pub(crate) enum HistoryError {
    /// The folder's path cannot be made absolute (the current folder is
    /// gone, or the path is empty).
    #[error("{}: {source}", .folder.display())]
    Unresolvable {
        folder: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The folder is in no repository, but the current folder is in one:
    /// the user most likely meant a folder of that one.
    #[error("{} is outside the repository at {}; runner history reads a report folder committed in this repository, such as reports/NAME", .folder.display(), .top.display())]
    OutsideCurrentRepository { folder: PathBuf, top: PathBuf },
    /// Neither the folder nor the current folder is in a repository.
    #[error("{} is not in a git repository; runner history reads the versions of a report folder that were committed with git", .folder.display())]
    NotInRepository { folder: PathBuf },
    /// git names a repository top that the folder's absolute path does not
    /// start with (a path through a symbolic link git resolved).
    #[error("{} is outside the repository at {}", .folder.display(), .top.display())]
    OutsideRepository { folder: PathBuf, top: PathBuf },
    /// The repository itself was named, not a report folder in it.
    #[error("{} is the repository's top folder, not a report folder; name the folder that holds run.json, such as reports/NAME", .folder.display())]
    RepositoryTop { folder: PathBuf },
    /// git's batch interface reads one name a line, so a line break in the
    /// folder's name cannot be asked for.
    #[error("{:?}: a folder name with a line break cannot be read from git's batch interface; rename the folder", .folder.display())]
    LineBreak { folder: PathBuf },
    /// `--since` names no commit of the repository.
    #[error("--since {rev} is not a commit of the repository at {}; give a revision git knows (a hash, a tag, HEAD~20)", .top.display())]
    NotACommit { rev: String, top: PathBuf },
    /// A file was named where the report folder goes.
    #[error("{} is a file; runner history reads a report folder (the folder that holds run.json, such as reports/NAME)", .dir.display())]
    IsAFile { dir: PathBuf },
    /// No commit of the repository touched the folder: nothing to list.
    #[error("{} was never committed in the repository at {} (no commit touched it); commit the report folder first", .dir.display(), .top.display())]
    NeverCommitted { dir: PathBuf, top: PathBuf },
    /// The folder has commits, but none at or after `--since`.
    #[error("{} has no committed version at or after {rev} in the repository at {}", .dir.display(), .top.display())]
    NoneSince {
        dir: PathBuf,
        rev: String,
        top: PathBuf,
    },
    /// runner writes nothing into a run's folder but the run's own files.
    #[error("--out {} is inside the report folder {}; the history goes beside it (default {})", .out.display(), .dir.display(), .default.display())]
    OutInside {
        out: PathBuf,
        dir: PathBuf,
        default: PathBuf,
    },
    /// `--out` names a file (or a link), where the history's folder goes.
    #[error("--out {} is not a folder", .out.display())]
    OutNotAFolder { out: PathBuf },
    /// git is not installed, or not on PATH.
    #[error("cannot run git ({0}); runner history reads committed reports with the git command line, so install git or put it on PATH")]
    NoGit(#[source] std::io::Error),
    /// A git command the history needs refused (a damaged repository, or
    /// one changed while it was read).
    #[error("git {command} failed: {refused}")]
    GitFailed {
        command: &'static str,
        #[source]
        refused: GitRefused,
    },
    /// The pipe to or from `git cat-file` broke.
    #[error("reading from git cat-file failed: {0}")]
    CatFileBroken(#[source] std::io::Error),
    /// `git cat-file` ended before it answered.
    #[error("git cat-file stopped answering")]
    CatFileStopped,
    /// `git cat-file` ended inside an object's bytes.
    #[error("git cat-file sent less than it announced")]
    CatFileShort,
    /// `git cat-file`'s header gave a size that is not a number.
    #[error("git cat-file answered {words:?}")]
    CatFileSize {
        words: Vec<String>,
        #[source]
        source: std::num::ParseIntError,
    },
    /// A blob listed a moment before is not there (or not a blob).
    #[error("git cat-file has no blob {oid} (it answered {answer:?})")]
    NoBlob { oid: String, answer: String },
}

/// The folder or `--out` is the user's to fix (exit 2); git failing is a
/// failed run (exit 1).
impl runner_core::error::Coded for HistoryError {
    fn failure(&self) -> runner_core::error::Failure {
        use runner_core::error::Failure;
        match self {
            HistoryError::Unresolvable { .. }
            | HistoryError::OutsideCurrentRepository { .. }
            | HistoryError::NotInRepository { .. }
            | HistoryError::OutsideRepository { .. }
            | HistoryError::RepositoryTop { .. }
            | HistoryError::LineBreak { .. }
            | HistoryError::NotACommit { .. }
            | HistoryError::IsAFile { .. }
            | HistoryError::NeverCommitted { .. }
            | HistoryError::NoneSince { .. }
            | HistoryError::OutInside { .. }
            | HistoryError::OutNotAFolder { .. } => Failure::BadInput,
            HistoryError::NoGit(_)
            | HistoryError::GitFailed { .. }
            | HistoryError::CatFileBroken(_)
            | HistoryError::CatFileStopped
            | HistoryError::CatFileShort
            | HistoryError::CatFileSize { .. }
            | HistoryError::NoBlob { .. } => Failure::RunFailed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use runner_core::error::RunnerError;
    use std::error::Error;
    use std::io::{Error as IoError, ErrorKind};

    /// Each kind's sentence (the one the user read before these were
    /// typed) and its exit code.
    #[test]
    fn each_kind_says_its_sentence_and_exit_code() {
        let p = PathBuf::from;
        let cases: Vec<(HistoryError, &str, i32)> = vec![
            (
                HistoryError::Unresolvable {
                    folder: p("reports/aa"),
                    source: IoError::new(ErrorKind::NotFound, "gone"),
                },
                "reports/aa: gone",
                2,
            ),
            (
                HistoryError::OutsideCurrentRepository {
                    folder: p("/x/aa"),
                    top: p("/repo"),
                },
                "/x/aa is outside the repository at /repo; runner history reads a report folder committed in this repository, such as reports/NAME",
                2,
            ),
            (
                HistoryError::NotInRepository { folder: p("/x/aa") },
                "/x/aa is not in a git repository; runner history reads the versions of a report folder that were committed with git",
                2,
            ),
            (
                HistoryError::OutsideRepository {
                    folder: p("/x/aa"),
                    top: p("/repo"),
                },
                "/x/aa is outside the repository at /repo",
                2,
            ),
            (
                HistoryError::RepositoryTop { folder: p(".") },
                ". is the repository's top folder, not a report folder; name the folder that holds run.json, such as reports/NAME",
                2,
            ),
            (
                HistoryError::LineBreak { folder: p("a\nb") },
                "\"a\\nb\": a folder name with a line break cannot be read from git's batch interface; rename the folder",
                2,
            ),
            (
                HistoryError::NotACommit {
                    rev: "v9".into(),
                    top: p("/repo"),
                },
                "--since v9 is not a commit of the repository at /repo; give a revision git knows (a hash, a tag, HEAD~20)",
                2,
            ),
            (
                HistoryError::IsAFile { dir: p("run.json") },
                "run.json is a file; runner history reads a report folder (the folder that holds run.json, such as reports/NAME)",
                2,
            ),
            (
                HistoryError::NeverCommitted {
                    dir: p("reports/aa"),
                    top: p("/repo"),
                },
                "reports/aa was never committed in the repository at /repo (no commit touched it); commit the report folder first",
                2,
            ),
            (
                HistoryError::NoneSince {
                    dir: p("reports/aa"),
                    rev: "v9".into(),
                    top: p("/repo"),
                },
                "reports/aa has no committed version at or after v9 in the repository at /repo",
                2,
            ),
            (
                HistoryError::OutInside {
                    out: p("reports/aa/h"),
                    dir: p("reports/aa"),
                    default: p("reports/history-aa"),
                },
                "--out reports/aa/h is inside the report folder reports/aa; the history goes beside it (default reports/history-aa)",
                2,
            ),
            (
                HistoryError::OutNotAFolder { out: p("h") },
                "--out h is not a folder",
                2,
            ),
            (
                HistoryError::NoGit(IoError::new(ErrorKind::NotFound, "not found")),
                "cannot run git (not found); runner history reads committed reports with the git command line, so install git or put it on PATH",
                1,
            ),
            (
                HistoryError::GitFailed {
                    command: "log",
                    refused: GitRefused("bad object".into()),
                },
                "git log failed: bad object",
                1,
            ),
            (
                HistoryError::CatFileBroken(IoError::new(ErrorKind::BrokenPipe, "broken pipe")),
                "reading from git cat-file failed: broken pipe",
                1,
            ),
            (
                HistoryError::CatFileStopped,
                "git cat-file stopped answering",
                1,
            ),
            (
                HistoryError::CatFileShort,
                "git cat-file sent less than it announced",
                1,
            ),
            (
                HistoryError::CatFileSize {
                    words: vec!["abc".into(), "blob".into(), "x".into()],
                    source: "x".parse::<u64>().unwrap_err(),
                },
                "git cat-file answered [\"abc\", \"blob\", \"x\"]",
                1,
            ),
            (
                HistoryError::NoBlob {
                    oid: "abc".into(),
                    answer: "abc missing".into(),
                },
                "git cat-file has no blob abc (it answered \"abc missing\")",
                1,
            ),
        ];
        for (e, text, code) in cases {
            assert_eq!(e.to_string(), text);
            let e = RunnerError::from(e);
            assert_eq!((e.to_string().as_str(), e.exit_code()), (text, code));
        }
    }

    #[test]
    fn gits_refusal_stays_the_source() {
        let e = RunnerError::from(HistoryError::GitFailed {
            command: "diff-tree",
            refused: GitRefused("bad revision".into()),
        });
        assert_eq!(
            e.source().map(ToString::to_string).as_deref(),
            Some("bad revision")
        );
    }
}
