//! One owner per run folder: an exclusive `flock(2)` on `DIR/lock` (std's
//! `File::try_lock`). The kernel drops the lock when its owner exits, however
//! it exits, so a lock left behind by `kill -9` is simply free: no pid is
//! trusted, and a reused pid can never keep a folder locked. The file holds
//! the owner's pid and start time only to say who has it.
//!
//! Taking the lock: open (create) the file, `try_lock`, then check that the
//! path still names the inode locked; an owner that was just releasing it
//! unlinks the file first, and a lock on an unlinked inode guards nothing,
//! so that case retries. Releasing: unlink (if the path is still ours), then
//! close.

use super::{io_err, OutputError};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

pub(crate) const FILE: &str = "lock";

/// A held lock on a folder; released on drop.
#[derive(Debug)]
pub(crate) struct FolderLock {
    file: File,
    path: PathBuf,
}

/// Who holds a lock, as its file says. An owner that has just taken it
/// writes its line a moment later, so an empty file is read again briefly.
fn holder(path: &Path) -> String {
    for _ in 0..20 {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if !text.trim().is_empty() {
            return text.trim().to_string();
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    "another process".to_string()
}

fn same_inode(file: &File, path: &Path) -> bool {
    match (file.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

impl FolderLock {
    /// Locks `dir`, or says which runner exec holds it (exit 2).
    pub(crate) fn acquire(dir: &Path) -> Result<FolderLock, OutputError> {
        let path = dir.join(FILE);
        for _ in 0..20 {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(|e| io_err("lock", dir, e))?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    return Err(OutputError::Locked {
                        dir: dir.to_path_buf(),
                        holder: holder(&path),
                        lock: path,
                    })
                }
                Err(TryLockError::Error(e)) => return Err(io_err("lock", dir, e)),
            }
            if !same_inode(&file, &path) {
                continue;
            }
            let mut lock = FolderLock { file, path };
            lock.record_owner();
            return Ok(lock);
        }
        Err(OutputError::LockReplaced {
            dir: dir.to_path_buf(),
        })
    }

    /// Writes `pid P since T` (best effort: the lock holds without it).
    fn record_owner(&mut self) {
        let since = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let text = format!("pid {} since {since}\n", std::process::id());
        let _ = self.file.set_len(0);
        let _ = (&self.file).write_all(text.as_bytes());
        let _ = self.file.sync_all();
    }

    /// The folder was renamed while locked (the lock stays on the inode).
    pub(crate) fn moved_to(&mut self, dir: &Path) {
        self.path = dir.join(FILE);
    }
}

impl Drop for FolderLock {
    fn drop(&mut self) {
        if same_inode(&self.file, &self.path) {
            let _ = std::fs::remove_file(&self.path);
        }
        // Closing the file releases the flock.
    }
}

/// Whether some process holds the lock of `dir` right now (without taking it).
pub(crate) fn is_held(dir: &Path) -> Option<String> {
    let path = dir.join(FILE);
    let file = File::open(&path).ok()?;
    match file.try_lock_shared() {
        Err(TryLockError::WouldBlock) => Some(holder(&path)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_naming_the_owner_and_free_after_release() {
        let tmp = tempfile::tempdir().unwrap();
        let first = FolderLock::acquire(tmp.path()).unwrap();
        // flock is per open file, so a second open in this process conflicts.
        let e = FolderLock::acquire(tmp.path()).unwrap_err().to_string();
        assert!(e.contains("is in use by another runner exec"), "{e}");
        assert!(e.contains(&format!("pid {}", std::process::id())), "{e}");
        assert!(is_held(tmp.path()).is_some());
        drop(first);
        assert!(!tmp.path().join(FILE).exists(), "released lock removed");
        assert!(is_held(tmp.path()).is_none());
        let again = FolderLock::acquire(tmp.path()).unwrap();
        drop(again);
    }

    /// A lock file left by a killed owner, naming a live pid (pid 1 here),
    /// is free: nothing holds the flock.
    #[test]
    fn a_left_over_lock_file_naming_a_live_pid_is_taken_over() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join(FILE), "pid 1 since 2020-01-01T00:00:00Z\n").unwrap();
        let lock = FolderLock::acquire(tmp.path()).unwrap();
        let text = std::fs::read_to_string(&lock.path).unwrap();
        assert!(
            text.starts_with(&format!("pid {} since", std::process::id())),
            "{text}"
        );
    }

    /// An owner that releases unlinks the file; a waiter that had it open
    /// must not believe it owns the folder through the unlinked inode.
    #[test]
    fn a_lock_on_an_unlinked_file_is_not_taken_as_the_folder_lock() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(FILE);
        let stale = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        stale.try_lock().unwrap();
        assert!(!same_inode(&stale, &path));
        // acquire() makes a fresh file and locks that one.
        let lock = FolderLock::acquire(tmp.path()).unwrap();
        assert!(same_inode(&lock.file, &path));
    }

    #[test]
    fn moving_a_locked_folder_keeps_the_lock() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a");
        let b = tmp.path().join("b");
        std::fs::create_dir(&a).unwrap();
        let mut lock = FolderLock::acquire(&a).unwrap();
        std::fs::rename(&a, &b).unwrap();
        lock.moved_to(&b);
        assert!(FolderLock::acquire(&b).is_err());
        drop(lock);
        assert!(!b.join(FILE).exists());
    }
}
