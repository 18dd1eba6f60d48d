//! The versions of the files a run folder holds: `run.json`,
//! `analysis.json` and, while it runs, each fork's record in
//! `DIR.partial/forks/`. Each starts with `format_version`, and each has a
//! version of its own, so a change to one file's shape leaves the others'
//! versions alone.
//!
//! Every reader of these files goes through [`parse`]: a file written by a
//! newer runner is refused in one sentence that says to upgrade, instead
//! of failing on a key it does not know or, worse, reading a key whose
//! meaning changed; a file of an older version is brought up to the
//! current one by [`migrate`], on its JSON, before it is deserialized. So
//! the structs and every reader see only the current shape: no
//! `#[serde(default)]` stands in for a key an older runner did not write,
//! and no reader branches on an older shape.
//!
//! Each file has one table of steps (`run::STEPS`, `analysis::STEPS`,
//! `fork::STEPS`): row `n` brings version `n` to `n + 1`, and the file's
//! version is the number of rows. A row fills each key its version's
//! runners left out with the value that version read it as, written as a
//! literal, so a default changed later cannot change what an old file
//! means. A row also names the keys its new version introduced: an older
//! file cannot hold one, so a file that does was relabelled as older, and
//! is refused rather than filled with old defaults.
//!
//! A new key every file will have: add a row at the end of its file's
//! table (the step, and the key in `introduced`), with a test in
//! `tests.rs` of the literal it fills.

mod analysis;
mod fork;
mod json;
mod run;

use json::Object;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::path::Path;

/// run.json's version: the one this runner writes, the newest it reads.
pub(crate) const RUN_VERSION: u32 = run::STEPS.len() as u32;

/// analysis.json's version: the one this runner writes, the newest it reads.
pub const ANALYSIS_VERSION: u32 = analysis::STEPS.len() as u32;

/// A fork record's version: the one this runner writes, the newest it reads.
pub(crate) const FORK_VERSION: u32 = fork::STEPS.len() as u32;

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
    /// The file says it is older than a key it holds: it was relabelled,
    /// and filling it as the older version would change what it says.
    #[error("{path} says format_version {found} but holds `{key}`, which runners write only from format_version {since} on: a file relabelled as older is not read")]
    Relabelled {
        path: String,
        found: u64,
        key: &'static str,
        since: u32,
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

impl runner_core::error::Coded for FormatError {
    /// A file this runner cannot read as its version says is the folder
    /// given being wrong for this runner (exit 2): upgrading runner, or
    /// rendering the folder anew, is the user's to do.
    fn failure(&self) -> runner_core::error::Failure {
        runner_core::error::Failure::BadInput
    }
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
    /// An analysis.json whose numbers a later runner computes otherwise:
    /// it is derived from the folder's data, so it is made again rather
    /// than reshaped.
    #[error("it holds an older runner's analysis, whose intervals over the forks and effect this runner computes otherwise; `runner report` on its folder writes it anew from run.json and pairs.csv")]
    Recomputed,
}

/// Why a versioned file cannot be read: its version, or its JSON (serde
/// names the key, and for a current file the line).
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Format(#[from] FormatError),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// What run.json's steps need from the layers above: the parser of the raw
/// argv a version 0 file may hold as `command_line`, into the JSON of an
/// `invocation` (the command line's definitions are
/// `run_folder::invocation`, above this layer); its error is a sentence
/// naming the argv.
pub(crate) type Argv = fn(&[String]) -> Result<Value, StepError>;

/// One row of a file's table of steps: what brings a file of version
/// `from` to `from + 1`. `A` is what the step needs from the layers above.
pub(crate) struct Step<A> {
    from: u32,
    /// The keys version `from + 1` introduced, as paths (`a.b`, `list[].c`):
    /// no runner of version `from` or older wrote them.
    introduced: &'static [&'static str],
    /// Adds what version `from + 1` holds and version `from` left out,
    /// each as a literal of version `from`.
    apply: fn(&mut Object, &A) -> Result<(), StepError>,
}

/// Which file, and what its older shapes need from the layers above.
#[derive(Clone, Copy)]
pub enum Kind {
    /// run.json.
    Run { argv: Argv },
    /// analysis.json.
    Analysis,
    /// A fork's record in `DIR.partial/forks/`.
    Fork,
}

impl Kind {
    /// The version this runner writes of the file, the newest it reads.
    pub(crate) fn newest(self) -> u32 {
        match self {
            Kind::Run { .. } => RUN_VERSION,
            Kind::Analysis => ANALYSIS_VERSION,
            Kind::Fork => FORK_VERSION,
        }
    }
}

/// The version `file` (the parsed JSON of `path`) says it has: 0 without
/// the key. `newest` is named when the key is not a version at all.
fn version_of(path: &Path, file: &Value, newest: u32) -> Result<u64, FormatError> {
    match file.get(KEY) {
        None => Ok(0),
        Some(v) => v.as_u64().ok_or_else(|| FormatError::NotAVersion {
            path: path.display().to_string(),
            found: v.to_string(),
            newest,
        }),
    }
}

/// `file` brought up to its kind's current version, one row of its table
/// at a time. A newer file is refused, and so is an older one that holds a
/// key a later version introduced.
pub(crate) fn migrate(path: &Path, file: Value, kind: Kind) -> Result<Value, FormatError> {
    match kind {
        Kind::Run { argv } => up(path, file, run::STEPS, &argv),
        Kind::Analysis => up(path, file, analysis::STEPS, &()),
        Kind::Fork => up(path, file, fork::STEPS, &()),
    }
}

/// [`migrate`] over one file's table.
fn up<A>(path: &Path, mut file: Value, steps: &[Step<A>], arg: &A) -> Result<Value, FormatError> {
    let shown = || path.display().to_string();
    let newest = steps.len() as u32;
    let found = version_of(path, &file, newest)?;
    let Some(pending) = usize::try_from(found).ok().and_then(|n| steps.get(n..)) else {
        return Err(FormatError::Newer {
            path: shown(),
            found,
            newest,
        });
    };
    for step in pending {
        if let Some(key) = step.introduced.iter().find(|k| json::holds(&file, k)) {
            return Err(FormatError::Relabelled {
                path: shown(),
                found,
                key,
                since: step.from + 1,
            });
        }
    }
    let Value::Object(map) = &mut file else {
        // Not an object: serde says so, naming the file's shape.
        return Ok(file);
    };
    for step in pending {
        (step.apply)(map, arg).map_err(|why| FormatError::Older { path: shown(), why })?;
        map.insert(KEY.into(), (step.from + 1).into());
    }
    Ok(file)
}

/// Reads `bytes` (the file at `path`) as `T`: refused if newer, migrated
/// if older. A current file is deserialized from its bytes, so serde's
/// error names the line; an older one from its migrated JSON.
pub fn parse<T: DeserializeOwned>(path: &Path, bytes: &[u8], kind: Kind) -> Result<T, ReadError> {
    let file: Value = serde_json::from_slice(bytes)?;
    if version_of(path, &file, kind.newest())? == u64::from(kind.newest()) {
        return Ok(serde_json::from_slice(bytes)?);
    }
    Ok(serde_json::from_value(migrate(path, file, kind)?)?)
}

/// `record` as a file of `kind`, with `format_version` first: for a record
/// whose struct does not hold the key itself (a fork's).
pub(crate) fn versioned<T: Serialize>(kind: Kind, record: &T) -> impl Serialize + '_ {
    #[derive(Serialize)]
    struct Versioned<'a, T> {
        format_version: u32,
        #[serde(flatten)]
        record: &'a T,
    }
    Versioned {
        format_version: kind.newest(),
        record,
    }
}

#[cfg(test)]
mod tests;
