//! A finished `DIR.partial` takes the place of `DIR`, only once it is whole.
//!
//! - `DIR` missing (or an empty folder): the partial folder is renamed to it.
//! - `DIR` a report runner wrote: it is moved to `DIR.old` (replacing an
//!   earlier `DIR.old` only if that too is a report of runner's, by removing
//!   exactly the files runner wrote there, `guard::remove_folder`), then the
//!   partial folder is renamed to `DIR`. If that second rename fails, the
//!   previous report is moved back. `DIR.old` gets a `.gitignore` of its
//!   own that ignores everything in it: a report folder usually sits in
//!   the user's repository, where a workflow that commits every report
//!   would otherwise commit the replaced one too.
//! - Anything else at `DIR` or `DIR.old` was refused before the run
//!   (`target::check_out`) and is checked again here, since it may have
//!   appeared during the run: runner never deletes or renames what it did
//!   not write.
//!
//! Every rename refuses to replace what is there (renameat2 NOREPLACE), so a
//! folder that appears between the check and the rename is not lost either.

use super::target::{existing, old_path, Existing};
use super::{io_err, parent_or_dot, sync_dir, OutputError};
use std::fs;
use std::path::Path;

/// `rename(2)` that fails with `AlreadyExists` instead of replacing `to`
/// (plain rename silently replaces an empty folder). On a file system
/// without RENAME_NOREPLACE it checks first, then renames.
pub(crate) fn rename_noreplace(from: &Path, to: &Path) -> std::io::Result<()> {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    match renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE) {
        Ok(()) => Ok(()),
        Err(e) if e == rustix::io::Errno::INVAL || e == rustix::io::Errno::NOSYS => {
            if fs::symlink_metadata(to).is_ok() {
                return Err(std::io::ErrorKind::AlreadyExists.into());
            }
            fs::rename(from, to)
        }
        Err(e) if e == rustix::io::Errno::EXIST || e == rustix::io::Errno::NOTEMPTY => {
            Err(std::io::ErrorKind::AlreadyExists.into())
        }
        Err(e) => Err(e.into()),
    }
}

fn refused(partial: &Path, path: &Path, why: &str) -> OutputError {
    OutputError::NotPromoted {
        partial: partial.to_path_buf(),
        path: path.to_path_buf(),
        why: why.to_string(),
    }
}

/// What `DIR.old/.gitignore` holds: everything in the folder, itself too.
pub(crate) const IGNORE_ALL: &[u8] =
    b"# runner: the report a newer run replaced, kept out of git\n*\n";

/// Puts the finished folder `partial` in place of `final_dir`; the folder
/// the report it replaced went to, if there was one.
pub(crate) fn promote(
    partial: &Path,
    final_dir: &Path,
) -> Result<Option<std::path::PathBuf>, OutputError> {
    let into_place = |what: &str| -> Result<(), OutputError> {
        rename_noreplace(partial, final_dir).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => {
                refused(partial, final_dir, "appeared while runner was finishing")
            }
            _ => io_err(what, partial, e),
        })
    };
    match existing(final_dir) {
        Existing::Missing => into_place("rename")?,
        Existing::EmptyFolder => {
            fs::remove_dir(final_dir).map_err(|e| io_err("replace", final_dir, e))?;
            into_place("rename")?;
        }
        Existing::RunnerReport => {
            let old = old_path(final_dir);
            match existing(&old) {
                Existing::Missing => {}
                Existing::EmptyFolder => {
                    fs::remove_dir(&old).map_err(|e| io_err("replace", &old, e))?
                }
                Existing::RunnerReport => {
                    super::guard::remove_folder(&old).map_err(|e| OutputError::OldNotRemoved {
                        partial: partial.to_path_buf(),
                        old: old.clone(),
                        cause: Box::new(e),
                    })?
                }
                Existing::Foreign(why) => return Err(refused(partial, &old, &why)),
            }
            rename_noreplace(final_dir, &old).map_err(|e| io_err("move aside", final_dir, e))?;
            if let Err(e) = into_place("rename") {
                // Put the previous report back where it was.
                let _ = rename_noreplace(&old, final_dir);
                return Err(e);
            }
            // Best effort: the new report is in place whatever happens here.
            let _ = super::guard::write(&old.join(".gitignore"), IGNORE_ALL);
            sync_dir(parent_or_dot(final_dir));
            return Ok(Some(old));
        }
        Existing::Foreign(why) => return Err(refused(partial, final_dir, &why)),
    }
    sync_dir(parent_or_dot(final_dir));
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn report(dir: &Path, marker: &str) {
        fs::create_dir_all(dir).unwrap();
        fs::write(
            dir.join("run.json"),
            format!(r#"{{"run_id": "{marker}", "spec": {{"sha256": "ab"}}, "seeds": {{"master": 1}}, "finished_at": "t"}}"#),
        )
        .unwrap();
        fs::write(dir.join("report.md"), marker).unwrap();
    }

    fn read(dir: &Path) -> String {
        fs::read_to_string(dir.join("report.md")).unwrap()
    }

    fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let partial = tmp.path().join("out.partial");
        report(&partial, "new");
        (tmp, out, partial)
    }

    #[test]
    fn into_a_missing_or_empty_folder() {
        let (_tmp, out, partial) = setup();
        promote(&partial, &out).unwrap();
        assert_eq!(read(&out), "new");
        assert!(!partial.exists());

        let (_tmp, out, partial) = setup();
        fs::create_dir(&out).unwrap();
        promote(&partial, &out).unwrap();
        assert_eq!(read(&out), "new");
    }

    #[test]
    fn a_previous_report_moves_to_out_old_replacing_an_older_one() {
        let (_tmp, out, partial) = setup();
        report(&out, "previous");
        report(&old_path(&out), "older");
        assert_eq!(promote(&partial, &out).unwrap(), Some(old_path(&out)));
        assert_eq!(read(&out), "new");
        assert_eq!(read(&old_path(&out)), "previous");
        // git ignores the replaced report, and the next run still may
        // replace it (the ignore file is runner's).
        assert_eq!(
            fs::read(old_path(&out).join(".gitignore")).unwrap(),
            IGNORE_ALL
        );
        assert_eq!(existing(&old_path(&out)), Existing::RunnerReport);
    }

    #[test]
    fn never_replaces_what_runner_did_not_write() {
        // A user's file in the report folder, appeared during the run.
        let (_tmp, out, partial) = setup();
        report(&out, "previous");
        fs::write(out.join("notes.txt"), "mine").unwrap();
        let e = promote(&partial, &out).unwrap_err().to_string();
        assert!(
            e.contains("notes.txt") && e.contains("left it alone"),
            "{e}"
        );
        assert_eq!(read(&out), "previous");
        assert_eq!(fs::read_to_string(out.join("notes.txt")).unwrap(), "mine");
        assert_eq!(read(&partial), "new");

        // A user's folder at out.old.
        let (_tmp, out, partial) = setup();
        report(&out, "previous");
        fs::create_dir(old_path(&out)).unwrap();
        fs::write(old_path(&out).join("i.txt"), "y").unwrap();
        assert!(promote(&partial, &out).is_err());
        assert_eq!(
            fs::read_to_string(old_path(&out).join("i.txt")).unwrap(),
            "y"
        );
        assert_eq!(read(&out), "previous");

        // A symbolic link at out: neither it nor its target is touched.
        let (tmp, out, partial) = setup();
        let target = tmp.path().join("target");
        report(&target, "target");
        std::os::unix::fs::symlink(&target, &out).unwrap();
        assert!(promote(&partial, &out).is_err());
        assert!(fs::symlink_metadata(&out).unwrap().file_type().is_symlink());
        assert_eq!(read(&target), "target");
    }

    #[test]
    fn rename_noreplace_does_not_replace_an_empty_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        fs::create_dir(&a).unwrap();
        fs::create_dir(&b).unwrap();
        let e = rename_noreplace(&a, &b).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        assert!(a.exists());
    }
}
