//! runner's temporary files: one private folder per `exec` or `check`,
//! and nothing at a predictable name.
//!
//! A shared folder such as /tmp belongs to every user of the machine, so a
//! name another user can guess is a name they can plant first: a symbolic
//! link there makes a write land on their chosen target, and a folder
//! there would be emptied by a removal. So the parent makes one folder
//! with a random name, mode 0700 and O_EXCL semantics (`tempfile`), writes
//! into it a record that says runner made it and which process did, and
//! hands its path to its workers. Everything a worker needs on disk goes
//! inside it: each arm's `{scratch}` folder (random names again), and a
//! command's stderr goes to an unnamed file (`tempfile::tempfile_in`) that
//! no path reaches and that disappears with its last descriptor.
//!
//! The parent removes the folder when it returns, whatever the outcome
//! (success, a failure, a timeout, Ctrl-C or SIGTERM, which runner turns
//! into a return). Only `kill -9` of the parent leaves it, so each new
//! parent first sweeps what such a parent left: a folder is removed only
//! when it is a real folder owned by this user, mode 0700, whose record
//! names runner and a process that is gone. A folder of another program
//! whose name happens to start the same way has no record and is never
//! touched.

use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The start of every private folder's name.
pub const PREFIX: &str = "runner-";
/// The record inside each private folder.
const RECORD: &str = ".runner-temp";
/// The record's first line.
const MADE_BY: &str = "made by runner for one exec or check";

/// The folder the workers of this parent put their files in, from their job.
static ROOT: OnceLock<PathBuf> = OnceLock::new();

/// A private folder for one command's run; removed, with everything in it,
/// when dropped.
#[derive(Debug)]
pub struct RunTemp {
    dir: tempfile::TempDir,
}

impl RunTemp {
    /// Sweeps what a killed runner left in the system's temporary folder,
    /// then makes this run's folder there.
    pub fn create() -> std::io::Result<RunTemp> {
        let base = std::env::temp_dir();
        sweep(&base);
        RunTemp::create_in(&base)
    }

    /// [`RunTemp::create`] in `base`, without the sweep.
    pub fn create_in(base: &Path) -> std::io::Result<RunTemp> {
        // tempfile makes the folder with mkdir(2) at a random name, which
        // fails rather than follow or reuse anything already there; the
        // mode is asked for (mkdir's default would follow the umask).
        let dir = private().prefix(PREFIX).tempdir_in(base)?;
        let mut record = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(dir.path().join(RECORD))?;
        let me = std::process::id();
        writeln!(
            record,
            "{MADE_BY}\npid {me}\nstarted {}",
            start_time(me).unwrap_or_default()
        )?;
        Ok(RunTemp { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Makes this the folder of the process and of the workers it starts
    /// ([`set_root`]); the first one set stays.
    pub fn use_for_process(&self) {
        set_root(self.path().to_path_buf());
    }
}

/// Where this process puts temporary folders: the parent's private folder
/// (a worker's is set from its job), else the system's temporary folder
/// (a strategy built in a test).
pub fn root() -> PathBuf {
    ROOT.get().cloned().unwrap_or_else(std::env::temp_dir)
}

/// Sets [`root`] for the rest of the process: the parent's own folder, or
/// in a worker the one its job names.
pub fn set_root(dir: PathBuf) {
    let _ = ROOT.set(dir);
}

/// The private folder set by [`set_root`], to hand to a worker.
pub fn private_root() -> Option<PathBuf> {
    ROOT.get().cloned()
}

/// A private folder for one strategy instance, inside [`root`].
pub fn scratch() -> std::io::Result<tempfile::TempDir> {
    private().prefix("runner-scratch-").tempdir_in(root())
}

/// A private folder for one counted run's output: valgrind writes a file
/// per process of the run's tree into it (named by pid), which the worker
/// reads and sums; removed with its `TempDir`.
pub fn count_outputs() -> std::io::Result<tempfile::TempDir> {
    private().prefix("runner-counts-").tempdir_in(root())
}

/// A builder of folders only their owner can enter (mode 0700).
fn private<'a>() -> tempfile::Builder<'a, 'a> {
    let mut b = tempfile::Builder::new();
    b.permissions(std::fs::Permissions::from_mode(0o700));
    b
}

/// An unnamed file inside [`root`]: nothing can reach it by a path, and it
/// is gone with its last descriptor, however the process ends.
pub fn unnamed_file() -> std::io::Result<std::fs::File> {
    tempfile::tempfile_in(root())
}

/// The kernel's start time of `pid` (ticks since boot): with the pid, it
/// tells a live process from a later one that reuses the number.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields start after
    // the last ')'; starttime is field 22, the 20th after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// This process's effective user: the owner the kernel gives /proc/self.
fn own_uid() -> Option<u32> {
    std::fs::metadata("/proc/self").ok().map(|m| m.uid())
}

/// What a folder's record says made it: (pid, start time).
fn read_record(dir: &Path) -> Option<(u32, u64)> {
    let path = dir.join(RECORD);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.file_type().is_file() || meta.len() > 4096 {
        return None;
    }
    let text = std::fs::read_to_string(&path).ok()?;
    let mut lines = text.lines();
    if lines.next()? != MADE_BY {
        return None;
    }
    let pid = lines.next()?.strip_prefix("pid ")?.parse().ok()?;
    let started = lines.next()?.strip_prefix("started ")?.parse().ok()?;
    Some((pid, started))
}

/// Whether `dir` is a private folder that a runner made and whose runner
/// is gone: a real folder (not a link), this user's, mode 0700, with a
/// record naming a process that no longer runs.
fn abandoned(dir: &Path) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return false;
    };
    if !meta.file_type().is_dir()
        || Some(meta.uid()) != own_uid()
        || meta.permissions().mode() & 0o777 != 0o700
    {
        return false;
    }
    let Some((pid, started)) = read_record(dir) else {
        return false;
    };
    pid != std::process::id() && start_time(pid) != Some(started)
}

/// Removes, in `base`, every folder a killed runner left (see
/// [`abandoned`]); returns how many. Anything else is left as it is.
pub fn sweep(base: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(base) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        if !name.to_string_lossy().starts_with(PREFIX) {
            continue;
        }
        let path = e.path();
        // remove_dir_all never follows a link inside the folder.
        if abandoned(&path) && std::fs::remove_dir_all(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_folder_is_private_recorded_and_removed_on_drop() {
        let base = tempfile::tempdir().unwrap();
        let t = RunTemp::create_in(base.path()).unwrap();
        let path = t.path().to_path_buf();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o700);
        assert!(path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(PREFIX));
        assert_eq!(
            read_record(&path),
            Some((std::process::id(), start_time(std::process::id()).unwrap()))
        );
        let scratch = private().prefix("x").tempdir_in(&path).unwrap();
        let mode = std::fs::metadata(scratch.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        // Ours and alive: never swept.
        assert_eq!(sweep(base.path()), 0);
        assert!(path.exists());
        drop(t);
        assert!(!path.exists());
    }

    #[test]
    fn the_sweep_removes_only_what_a_gone_runner_recorded() {
        let base = tempfile::tempdir().unwrap();
        let b = base.path();
        let make = |name: &str, record: Option<&str>, mode: u32| {
            let d = b.join(name);
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("keep"), "user data").unwrap();
            if let Some(r) = record {
                std::fs::write(d.join(RECORD), r).unwrap();
            }
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(mode)).unwrap();
            d
        };
        // pid 0 never runs a user process: a gone runner's record.
        let gone = format!("{MADE_BY}\npid 0\nstarted 1\n");
        let left = make("runner-left", Some(&gone), 0o700);
        let no_record = make("runner-pg.x", None, 0o700);
        let other_words = make("runner-other", Some("something else\npid 0\n"), 0o700);
        let open_mode = make("runner-open", Some(&gone), 0o755);
        let not_ours_by_name = make("mine-left", Some(&gone), 0o700);
        // A live process's folder: this test's own pid with its start time.
        let me = std::process::id();
        let live = make(
            "runner-live",
            Some(&format!(
                "{MADE_BY}\npid {me}\nstarted {}\n",
                start_time(me).unwrap()
            )),
            0o700,
        );
        // A link named like a folder runner makes, to a folder with a record.
        std::os::unix::fs::symlink(&left, b.join("runner-link")).unwrap();
        assert_eq!(sweep(b), 1);
        assert!(!left.exists());
        for kept in [no_record, other_words, open_mode, not_ours_by_name, live] {
            assert_eq!(
                std::fs::read_to_string(kept.join("keep")).unwrap(),
                "user data",
                "{}",
                kept.display()
            );
        }
        assert!(std::fs::symlink_metadata(b.join("runner-link")).is_ok());
    }

    #[test]
    fn an_unnamed_file_has_no_name_in_its_folder() {
        let base = tempfile::tempdir().unwrap();
        let before: Vec<_> = std::fs::read_dir(base.path()).unwrap().collect();
        let f = tempfile::tempfile_in(base.path()).unwrap();
        let after: Vec<_> = std::fs::read_dir(base.path()).unwrap().collect();
        assert_eq!(before.len(), after.len());
        drop(f);
    }
}
