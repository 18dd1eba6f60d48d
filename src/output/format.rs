//! The version of the files a run folder holds (`run.json`,
//! `analysis.json`): `format_version`, the first key of each.
//!
//! A reader asks [`readable`] before it parses a file: a folder written by
//! a newer runner is refused in one sentence that says to upgrade, instead
//! of failing on a key it does not know or, worse, reading a key whose
//! meaning changed. A file written before the key existed is version 0;
//! version 1 differs from it only by the key, so [`migrate`] brings a
//! version 0 file up by adding it. The next change of shape bumps
//! [`FORMAT_VERSION`] and adds its step to [`migrate`], so there is one
//! place that reads an older shape instead of branches in every reader.

use serde_json::Value;
use std::path::Path;

/// The format this runner writes and the newest it reads.
pub(crate) const FORMAT_VERSION: u32 = 1;

/// The key, first in every versioned file.
pub(crate) const KEY: &str = "format_version";

/// Why a file's format cannot be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FormatError {
    #[error("{path} has format_version {found}, written by a newer runner; this runner reads format_version 0 to {FORMAT_VERSION}: upgrade runner to read it")]
    Newer { path: String, found: u64 },
    #[error(
        "{path}: format_version must be a whole number from 0 to {FORMAT_VERSION}, got {found}"
    )]
    NotAVersion { path: String, found: String },
}

/// The version `file` (the parsed JSON of `path`) says it has: 0 without
/// the key.
pub(crate) fn version_of(path: &Path, file: &Value) -> Result<u64, FormatError> {
    match file.get(KEY) {
        None => Ok(0),
        Some(v) => v.as_u64().ok_or_else(|| FormatError::NotAVersion {
            path: path.display().to_string(),
            found: v.to_string(),
        }),
    }
}

/// Whether this runner can read `file`: its version is at most
/// [`FORMAT_VERSION`].
pub(crate) fn readable(path: &Path, file: &Value) -> Result<(), FormatError> {
    let found = version_of(path, file)?;
    if found > u64::from(FORMAT_VERSION) {
        return Err(FormatError::Newer {
            path: path.display().to_string(),
            found,
        });
    }
    Ok(())
}

/// `file` brought up to [`FORMAT_VERSION`], one version step at a time,
/// after [`readable`] accepted it.
pub(crate) fn migrate(path: &Path, mut file: Value) -> Result<Value, FormatError> {
    readable(path, &file)?;
    // 0 -> 1: the key itself; nothing else changed shape.
    if version_of(path, &file)? == 0 {
        if let Value::Object(map) = &mut file {
            map.insert(KEY.into(), FORMAT_VERSION.into());
        }
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn older_files_are_migrated_and_newer_ones_refused() {
        let p = Path::new("dir/run.json");
        let old = json!({"run_id": "x"});
        assert_eq!(version_of(p, &old), Ok(0));
        let up = migrate(p, old).unwrap();
        assert_eq!(up[KEY], 1);
        assert_eq!(up["run_id"], "x");
        let now = json!({"format_version": 1, "run_id": "x"});
        assert_eq!(migrate(p, now.clone()).unwrap(), now);
        let newer = json!({"format_version": 2});
        assert_eq!(
            migrate(p, newer).unwrap_err().to_string(),
            "dir/run.json has format_version 2, written by a newer runner; this runner reads format_version 0 to 1: upgrade runner to read it"
        );
        let bad = json!({"format_version": "one"});
        assert_eq!(
            readable(p, &bad).unwrap_err().to_string(),
            "dir/run.json: format_version must be a whole number from 0 to 1, got \"one\""
        );
    }
}
