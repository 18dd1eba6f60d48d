//! The version of the files a run folder holds (`run.json`,
//! `analysis.json`): `format_version`, the first key of each.
//!
//! Every reader of either file goes through [`parse`]: a file written by a
//! newer runner is refused in one sentence that says to upgrade, instead
//! of failing on a key it does not know or, worse, reading a key whose
//! meaning changed; a file of an older version is brought up to
//! [`FORMAT_VERSION`] by [`migrate`], on its JSON, before it is
//! deserialized. So the structs and every reader see only the current
//! shape: no `#[serde(default)]` stands in for a key an older runner did
//! not write, and no reader branches on an older shape.
//!
//! A file written before the key existed is version 0; the step to 1
//! ([`v0`]) adds the key and every key runners of that time could leave
//! out, with the value that reading it always gave. The step from 1 to 2
//! ([`v1`], run.json only) adds the user's code, not recorded then, and
//! the counts of a fork's pairs a spec left out, which runners of that
//! time filled with fixed defaults. The next change of shape bumps the
//! file's version and adds its step to [`migrate`].

mod v0;
mod v1;

use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::Path;

/// The format of run.json this runner writes and the newest it reads.
pub(crate) const FORMAT_VERSION: u32 = 2;

/// The same for analysis.json, whose shape did not change with run.json's
/// version 2.
pub(crate) const ANALYSIS_FORMAT_VERSION: u32 = 1;

/// The key, first in every versioned file.
pub(crate) const KEY: &str = "format_version";

/// Why a file's format cannot be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FormatError {
    #[error("{path} has format_version {found}, written by a newer runner; this runner reads format_version 0 to {newest}: upgrade runner to read it")]
    Newer {
        path: String,
        found: u64,
        newest: u32,
    },
    #[error("{path}: format_version must be a whole number from 0 to {newest}, got {found}")]
    NotAVersion {
        path: String,
        found: String,
        newest: u32,
    },
    /// An older file holds a value its step cannot bring up (the sentence
    /// names the key).
    #[error("{path}: {why}")]
    Older {
        path: String,
        #[source]
        why: StepError,
    },
}

/// Why a version step cannot bring an older file's value up: the clause
/// after the file's path, naming the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StepError {
    #[error("command_line holds {0}, not an argument (text)")]
    WordNotText(String),
    #[error("command_line is {0}, not a list of arguments")]
    ArgvNotAList(String),
    /// The argv is not a runner command line; `why` is the command line
    /// parser's own sentence.
    #[error("command_line `{line}` is not a runner exec, merge or analyze command line ({why})")]
    ArgvNotACommand { line: String, why: String },
}

/// Why a versioned file cannot be read: its version, or its JSON (serde
/// names the key, and for a current file the line).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadError {
    #[error(transparent)]
    Format(#[from] FormatError),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// Which file, and what its older shapes need from the layers above.
#[derive(Clone, Copy)]
pub(crate) enum Kind<'a> {
    /// run.json. `argv` parses the raw argv a version 0 file may hold as
    /// `command_line` into the JSON of an `invocation` (the command line's
    /// definitions are `run_folder::invocation`, above this layer); its
    /// error is a sentence naming the argv.
    Run {
        argv: &'a dyn Fn(&[String]) -> Result<Value, StepError>,
    },
    /// analysis.json.
    Analysis,
}

impl Kind<'_> {
    /// The version of this file this runner writes.
    pub(crate) fn current(&self) -> u32 {
        match self {
            Kind::Run { .. } => FORMAT_VERSION,
            Kind::Analysis => ANALYSIS_FORMAT_VERSION,
        }
    }
}

/// The version `file` (the parsed JSON of `path`) says it has: 0 without
/// the key.
pub(crate) fn version_of(path: &Path, file: &Value, kind: &Kind) -> Result<u64, FormatError> {
    match file.get(KEY) {
        None => Ok(0),
        Some(v) => v.as_u64().ok_or_else(|| FormatError::NotAVersion {
            path: path.display().to_string(),
            found: v.to_string(),
            newest: kind.current(),
        }),
    }
}

/// Whether this runner can read `file`: its version is at most the one
/// it writes.
pub(crate) fn readable(path: &Path, file: &Value, kind: &Kind) -> Result<(), FormatError> {
    let found = version_of(path, file, kind)?;
    if found > u64::from(kind.current()) {
        return Err(FormatError::Newer {
            path: path.display().to_string(),
            found,
            newest: kind.current(),
        });
    }
    Ok(())
}

/// `file` brought up to the current version, one version step at a time,
/// after [`readable`] accepted it.
pub(crate) fn migrate(path: &Path, mut file: Value, kind: Kind) -> Result<Value, FormatError> {
    readable(path, &file, &kind)?;
    let from = version_of(path, &file, &kind)?;
    let Value::Object(map) = &mut file else {
        // Not an object: serde says so, naming the file's shape.
        return Ok(file);
    };
    if from == 0 {
        match kind {
            Kind::Run { argv } => v0::run(map, argv),
            Kind::Analysis => {
                v0::analysis(map);
                Ok(())
            }
        }
        .map_err(|why| FormatError::Older {
            path: path.display().to_string(),
            why,
        })?;
        map.insert(KEY.into(), 1.into());
    }
    if from <= 1 && matches!(kind, Kind::Run { .. }) {
        v1::run(map);
        map.insert(KEY.into(), 2.into());
    }
    Ok(file)
}

/// Reads `bytes` (the file at `path`) as `T`: refused if newer, migrated
/// if older. A current file is deserialized from its bytes, so serde's
/// error names the line; an older one from its migrated JSON.
pub(crate) fn parse<T: DeserializeOwned>(
    path: &Path,
    bytes: &[u8],
    kind: Kind,
) -> Result<T, ReadError> {
    let file: Value = serde_json::from_slice(bytes)?;
    if version_of(path, &file, &kind)? == u64::from(kind.current()) {
        return Ok(serde_json::from_slice(bytes)?);
    }
    Ok(serde_json::from_value(migrate(path, file, kind)?)?)
}

/// A fork's record in `DIR.partial/forks/` (not versioned: the run.json it
/// belongs to is) brought to the current shape; a no-op on a current one.
pub(crate) fn fork_record(record: &mut Value) {
    if let Value::Object(map) = record {
        v0::fork(map);
    }
}

#[cfg(test)]
mod tests;
