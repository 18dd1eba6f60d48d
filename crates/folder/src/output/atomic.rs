//! Whole files or none: a temp file beside the target, written, fsynced, then
//! renamed over it (tempfile's `persist`), then the folder fsynced. A reader,
//! a crash or a full disk never leaves half a file under the target's name.

use super::{io_err, parent_or_dot, sync_dir, OutputError};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Writes `bytes` to `path` atomically.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    write_atomic_io(path, bytes).map_err(|e| io_err("write", path, e))
}

/// [`write_atomic`] with the bare I/O error, for callers that name the
/// failure themselves.
pub(crate) fn write_atomic_io(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = parent_or_dot(path);
    let mut tmp = tempfile::Builder::new()
        .prefix(".runner-write-")
        // The umask decides, as for any file the user creates (tempfile's
        // own default, 0600, would hide a report from other readers).
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    sync_dir(dir);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_and_leaves_no_temp_file() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("a.txt");
        write_atomic(&f, b"one").unwrap();
        write_atomic(&f, b"two").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().flatten().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn a_missing_folder_is_an_error_naming_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("no/such/a.txt");
        let e = write_atomic(&f, b"x").unwrap_err().to_string();
        assert!(e.contains("no/such/a.txt"), "{e}");
    }
}
