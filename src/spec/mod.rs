//! The experiment file: raw TOML -> validated [`Experiment`] (design section 1).
//!
//! `load` reads the file, applies `--set` overrides, rejects unknown keys and
//! out-of-range values with file:line:column, and returns types that make
//! wrong states unrepresentable.

pub mod experiment;

pub use experiment::*;

use std::path::{Path, PathBuf};

/// A spec as loaded: the validated experiment plus the exact text it came from.
#[derive(Debug, Clone)]
pub struct LoadedSpec {
    pub path: PathBuf,
    pub experiment: Experiment,
    /// The TOML after `--set` overrides were applied; hashed into run.json.
    pub resolved_toml: String,
}

/// Bad input in an experiment file or a `--set` flag. Always exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct SpecError {
    /// One sentence: `FILE:LINE:COL: key `K`: what is wrong; what would be valid`.
    pub message: String,
}

/// Reads, overrides and validates an experiment file.
pub fn load(path: &Path, overrides: &[String]) -> Result<LoadedSpec, SpecError> {
    let _ = (path, overrides);
    Err(SpecError {
        message: "spec loading is not written yet".into(),
    })
}
