//! Why runner refuses to write, replace or lock something, or could not:
//! a kind per refusal of the output folder's rules (`guard`, `target`,
//! `lock`, `promote`) and one for a failing system call. Each `Display` is
//! the sentence the user sees; the path it names comes first or right
//! after the flag.

use super::RECORD;
use runner_core::error::{Coded, Failure};
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// A file or folder operation failed; [`Coded`] tells a full disk from
    /// a wrong path by the cause.
    #[error("cannot {what} {}: {}", .path.display(), io_said(.cause))]
    Io {
        /// What was being done, as a verb phrase (`write`, `create the
        /// output folder`).
        what: String,
        path: PathBuf,
        #[source]
        cause: std::io::Error,
    },
    /// `--out` is `.`, `..` or `/`: nothing runner could create and replace.
    #[error("{flag} {} does not name a folder runner can create and replace (such as reports/NAME); the current folder, `..` and `/` cannot be an output folder", .out.display())]
    NotAFolderName { flag: String, out: PathBuf },
    /// Replacing it would remove the folder runner was started in.
    #[error("{flag} {} is the current folder or one of its parents, which runner cannot replace; choose a folder below it, such as reports/NAME", .out.display())]
    CurrentFolder { flag: String, out: PathBuf },
    /// A parent of `--out` is a file, so the folder cannot be made.
    #[error("cannot create the output folder {}: {} is a file, not a directory", .out.display(), .file.display())]
    UnderAFile { out: PathBuf, file: PathBuf },
    /// The report at `--out` would be moved to `old`, where something that
    /// is not runner's is (`why`, a clause such as "is a file").
    #[error("{flag} {} holds an earlier report, which a new run moves to {}, but {} {why}; move it away or choose another {flag}", .out.display(), .old.display(), .old.display())]
    OldNotRunners {
        flag: String,
        out: PathBuf,
        old: PathBuf,
        why: String,
    },
    /// What is at `--out` is not a report folder runner wrote.
    #[error("{flag} {} {why}; runner only replaces a report folder it wrote (never a file, a link or what it points to), so choose another {flag} or move it away", .out.display())]
    OutNotRunners {
        flag: String,
        out: PathBuf,
        why: String,
    },
    /// `report DIR --out FILE` names a file of the folder's other than its
    /// report.md.
    #[error("--out {} is inside the report folder {}{REPORT_OUT}", .out.display(), .dir.display())]
    ReportOutInside { out: PathBuf, dir: PathBuf },
    /// `report --out` names a symbolic link, which runner never writes
    /// through.
    #[error("--out {} is a symbolic link{REPORT_OUT}", .out.display())]
    ReportOutLink { out: PathBuf },
    /// A folder's record of the files runner wrote is there but unusable;
    /// `record` is its path.
    #[error("{} {why}; runner keeps there the list of files it wrote and cannot tell which are its own without it; move it away", .record.display())]
    Record {
        record: PathBuf,
        #[source]
        why: RecordError,
    },
    /// A file runner did not write, or changed since (`why`, a clause such
    /// as "is a symbolic link (to x)"), where runner would write.
    #[error("{} {why}; runner never replaces a file it did not write (only those its record {} lists, unchanged since), so move it away or choose another path", .path.display(), .path.with_file_name(RECORD).display())]
    NotRunners { path: PathBuf, why: String },
    /// A report folder to be removed whose entries cannot be judged.
    #[error("{} {why}, so runner left it alone", .dir.display())]
    Unjudged {
        dir: PathBuf,
        #[source]
        why: EntriesError,
    },
    /// A report folder to be removed that holds files runner did not
    /// write (`names`, sorted).
    #[error("{} holds files runner did not write ({}), so runner left it alone", .dir.display(), .names.join(", "))]
    ForeignFiles { dir: PathBuf, names: Vec<String> },
    /// Another exec holds the folder's lock (`holder`: what its lock file
    /// says, `lock`: that file).
    #[error("{} is in use by another runner exec ({holder}, see {}); wait for it to finish or stop it", .dir.display(), .lock.display())]
    Locked {
        dir: PathBuf,
        holder: String,
        lock: PathBuf,
    },
    /// The lock file was replaced under runner every time it took it.
    #[error("cannot lock {}: its lock file keeps being replaced", .dir.display())]
    LockReplaced { dir: PathBuf },
    /// The finished folder cannot take its place, because of what is at
    /// `path` (`why`, a clause); it stays whole where it is.
    #[error("{} {why}, so runner left it alone; the finished run is complete in {} (rename it yourself, or read it there)", .path.display(), .partial.display())]
    NotPromoted {
        partial: PathBuf,
        path: PathBuf,
        why: String,
    },
    /// An earlier `DIR.old` of runner's could not be removed to make room
    /// for the report it replaces.
    #[error("{} could not be removed ({cause}), so runner left it alone; the finished run is complete in {} (rename it yourself, or read it there)", .old.display(), .partial.display())]
    OldNotRemoved {
        partial: PathBuf,
        old: PathBuf,
        #[source]
        cause: Box<OutputError>,
    },
}

/// What follows every refusal of `report --out`.
const REPORT_OUT: &str =
    "; runner writes inside a report folder only its report.md (and its plots beside it)";

/// An I/O error's text without tempfile's ` at path "<its temporary
/// file>"`: the path that matters is the one runner meant, which the
/// sentence names.
fn io_said(e: &std::io::Error) -> String {
    let text = e.to_string();
    text.split(" at path \"")
        .next()
        .unwrap_or_default()
        .to_string()
}

impl Coded for OutputError {
    /// A full disk or a failing device is the run failing (exit 1,
    /// resumable once there is room); anything else (not a directory,
    /// read-only, no permission, a file that is not runner's, a folder in
    /// use) means the path given is wrong (exit 2), as does an earlier
    /// report that could not be removed, whatever stopped it.
    fn failure(&self) -> Failure {
        use std::io::ErrorKind::{FileTooLarge, QuotaExceeded, StorageFull};
        match self {
            OutputError::Io { cause, .. }
                if matches!(cause.kind(), StorageFull | QuotaExceeded | FileTooLarge)
                    || cause.raw_os_error() == Some(libc::EIO) =>
            {
                Failure::RunFailed
            }
            _ => Failure::BadInput,
        }
    }
}

/// Why a folder's record of the files runner wrote cannot be used: the
/// clause that follows its path in a message.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("cannot be read ({0})")]
    Unreadable(#[source] std::io::Error),
    #[error("is not a regular file")]
    NotAFile,
    #[error("is not runner's record of the files it wrote ({0})")]
    NotRunners(#[source] serde_json::Error),
}

/// Why the entries of a folder cannot be judged: the clause that follows
/// the folder's path in a message.
#[derive(Debug, thiserror::Error)]
pub enum EntriesError {
    #[error("{RECORD} {0}")]
    Record(#[source] RecordError),
    #[error("cannot be read ({0})")]
    Unreadable(#[source] std::io::Error),
}

#[cfg(test)]
mod tests {
    use crate::output::io_err;
    use runner_core::error::RunnerError;
    use std::io::{Error, ErrorKind};

    fn io(cause: Error) -> RunnerError {
        io_err("write", std::path::Path::new("r/report.md"), cause).into()
    }

    #[test]
    fn a_full_disk_fails_the_run_and_a_wrong_path_is_bad_input() {
        for kind in [
            ErrorKind::StorageFull,
            ErrorKind::QuotaExceeded,
            ErrorKind::FileTooLarge,
        ] {
            assert_eq!(io(Error::from(kind)).exit_code(), 1, "{kind:?}");
        }
        assert_eq!(io(Error::from_raw_os_error(libc::EIO)).exit_code(), 1);
        for kind in [ErrorKind::NotFound, ErrorKind::PermissionDenied] {
            assert_eq!(io(Error::from(kind)).exit_code(), 2, "{kind:?}");
        }
    }

    #[test]
    fn an_io_error_names_runners_path_not_the_temporary_files() {
        let e = io(Error::other(
            "No space left on device at path \"r/.runner-write-x1\"",
        ));
        assert_eq!(
            e.to_string(),
            "cannot write r/report.md: No space left on device"
        );
        // The cause stays reachable, whole.
        assert!(std::error::Error::source(&e).is_some());
    }
}
