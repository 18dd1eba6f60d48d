//! The output folder: the one module that creates, locks, checks and puts
//! in place what runner writes to disk (docs/guide/output-folder.md). Every
//! writer goes through it; what a run's folder holds (run.json,
//! `DIR.partial/forks/`, the digests) is `run_folder`'s, which writes it
//! through here.
//!
//! - [`guard`]: every file runner writes anywhere (a report folder, compare's
//!   and report's `--out`, gate.json, `$GITHUB_STEP_SUMMARY`) goes through
//!   it: it never replaces a file it did not write, and each folder records
//!   the files runner wrote there (`.runner-files.json`).
//! - [`atomic`]: every file is written whole or not at all (temp file, fsync,
//!   rename, fsync of the folder); used directly only inside a `.partial`
//!   folder runner itself created and holds locked.
//! - [`lock`]: one exec per run folder, by `flock(2)` on `DIR/lock`, which the
//!   kernel releases when its owner dies, so a killed run never leaves a lock
//!   that blocks the next one.
//! - [`target`]: what may be written where, checked before anything runs: an
//!   `--out` that is not runner's is refused, never replaced.
//! - [`promote`]: the finished folder takes the place of `DIR` only once whole.

/// The plots a report links to, by the kind of experiment
/// (`report::plots::Kind` renders them): named here, with the other files
/// runner writes, so the output folder knows its own files without asking
/// the report. A study (an A/A design, or injected delays) has these.
pub const STUDY_PLOTS: [&str; 3] = ["detection.svg", "forest.svg", "medians.svg"];
/// The plots of a plain comparison (two or more versions, no delay
/// beyond 0).
pub const COMPARISON_PLOTS: [&str; 2] = ["effect.svg", "distributions.svg"];
/// A sequential run's stopping path (`[design.stop]`), beside either
/// kind's plots.
pub const STOP_PLOT: &str = "stop.svg";
/// A comparison swept over concurrent clients (`[grid] clients`): its
/// speed ratio against the number of clients.
pub const CLIENTS_PLOT: &str = "clients.svg";
/// A run that counts instructions (`design.measure`): each fork's
/// instructions ratio, beside either kind's plots.
pub const INSTRUCTIONS_PLOT: &str = "instructions.svg";

pub(crate) mod atomic;
mod error;
pub mod format;
pub mod guard;
pub(crate) mod lock;
pub(crate) mod promote;
pub mod target;

pub(crate) use atomic::write_atomic;
pub use error::{EntriesError, OutputError, RecordError};

use std::path::Path;

/// The record of the files runner wrote, in each folder it writes into
/// (`guard`): named here, with runner's other files, so that the
/// refusals that name it (`error`) need nothing of `guard`.
pub const RECORD: &str = ".runner-files.json";

/// The files runner writes into a finished report folder (besides the
/// plots, [`STUDY_PLOTS`] or [`COMPARISON_PLOTS`]; `gate.json` only for a run
/// with a gate). A folder's `.runner-files.json` says which of them runner
/// wrote there ([`guard`]); these names count only in an older folder
/// without that record.
pub(crate) const DATA_FILES: [&str; 5] = [
    "report.md",
    "pairs.csv",
    "run.json",
    "analysis.json",
    "gate.json",
];

/// `e` while doing `what` to `path`: a full disk or a failing device is
/// the run failing (exit 1), anything else a wrong path (exit 2)
/// ([`OutputError`]'s `Coded`).
pub fn io_err(what: &str, path: &Path, e: std::io::Error) -> OutputError {
    OutputError::Io {
        what: what.to_string(),
        path: path.to_path_buf(),
        cause: e,
    }
}

/// The folder that holds `path`, `.` for a bare file name.
pub fn parent_or_dot(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// fsync of a folder, so a rename in it survives a power cut. Best effort:
/// some file systems refuse to sync a directory, and the rename has happened.
pub(crate) fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Hex SHA-256 of a text.
pub fn sha256_hex(text: &str) -> String {
    sha256_bytes(text.as_bytes())
}

/// Hex SHA-256 of bytes.
pub fn sha256_bytes(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex(&Sha256::digest(bytes))
}

pub use runner_core::hex::hex;

#[cfg(test)]
pub(crate) mod tests {
    use std::fs;
    use std::path::Path;

    /// A folder as runner leaves it: a finished run.json, a report, a plot.
    pub(crate) fn runner_folder(dir: &Path) {
        fs::create_dir_all(dir).unwrap();
        fs::write(
            dir.join("run.json"),
            r#"{"run_id": "x", "spec": {"sha256": "ab"}, "seeds": {"master": 1}, "finished_at": "t"}"#,
        )
        .unwrap();
        fs::write(dir.join("report.md"), "# r").unwrap();
        fs::write(dir.join("forest.svg"), "<svg/>").unwrap();
    }
}
