//! One lock per CPU, so that runners on one machine pin to different CPUs.
//!
//! A CPU pinned by two runners at once is shared by both their workers (and
//! their database backends): each run then measures the other's load, and
//! the default placement, which takes the highest allowed CPU, would put
//! every runner on the same one. So the parent of a run takes an exclusive
//! `flock(2)` on `cpu-N.lock` in the runtime folder for every CPU a
//! placement pins, before the first fork, and holds it until it exits; the
//! kernel drops it however the process ends (`kill -9` too), so nothing is
//! ever stale. A placement named by its kind (`same-core`,
//! `separate-cores`) takes the highest CPUs no other runner holds, the ones
//! it already holds first, so its forks stay where they began. When too
//! few are free it runs unpinned rather than wait behind a run of unknown
//! length, and says so (on stderr and in each fork's record); explicit CPU
//! numbers (`cpus:W,B`) are pinned as asked, with a note when another
//! runner holds one too.
//!
//! The runtime folder is `$XDG_RUNTIME_DIR/runner` (the user's own folder
//! for such files), else `runner-cpus-UID` in the system's temporary folder;
//! either is made mode 0700 and used only when it is a real folder of this
//! user that nobody else may enter, so runners of one user see each
//! other's locks and another user can plant nothing there. A lock file is
//! never removed: removing one that another runner has just opened would
//! let two runners lock two different files of one name.

use super::pin::cpu_list;
use super::{Cpus, Placement, Unplaceable};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Where a fork pins, as the parent decided it holding the CPUs' locks,
/// and what the worker records about other runners.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    pub cpus: Cpus,
    /// Why the fork runs unpinned although its placement pins, or that a
    /// CPU it pins is held by another runner too; none when neither.
    pub note: Option<String>,
}

/// The runtime folder for `xdg_runtime_dir` (`$XDG_RUNTIME_DIR`, when set).
pub fn lock_dir(xdg_runtime_dir: Option<&Path>) -> PathBuf {
    match xdg_runtime_dir.filter(|d| d.is_absolute()) {
        Some(d) => d.join("runner"),
        None => std::env::temp_dir().join(format!("runner-cpus-{}", own_uid())),
    }
}

fn own_uid() -> u32 {
    rustix::process::getuid().as_raw()
}

/// Makes `dir` (mode 0700) unless it is there, and checks that it is a real
/// folder of this user that no one else may enter.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(dir)?;
    let why = if !meta.file_type().is_dir() {
        "it is not a folder"
    } else if meta.uid() != own_uid() {
        "another user owns it"
    } else if meta.permissions().mode() & 0o077 != 0 {
        "others may enter it (mode is not 0700)"
    } else {
        return Ok(());
    };
    Err(std::io::Error::other(why))
}

/// The CPUs one process holds, each by its lock file, until it drops them
/// or exits.
#[derive(Debug)]
pub struct CpuLocks {
    dir: PathBuf,
    held: BTreeMap<u32, File>,
}

/// What became of one try for a CPU's lock.
enum Took {
    Held,
    /// Another process holds it; what its file says about it.
    Taken(String),
    /// The file could not be opened or locked at all.
    Failed(std::io::Error),
}

impl CpuLocks {
    pub fn new(dir: PathBuf) -> CpuLocks {
        CpuLocks {
            dir,
            held: BTreeMap::new(),
        }
    }

    fn path(&self, cpu: u32) -> PathBuf {
        self.dir.join(format!("cpu-{cpu}.lock"))
    }

    /// Takes `cpu`'s lock unless this process holds it already.
    fn take(&mut self, cpu: u32) -> Took {
        if self.held.contains_key(&cpu) {
            return Took::Held;
        }
        if let Err(e) = private_dir(&self.dir) {
            return Took::Failed(e);
        }
        let opened = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(self.path(cpu));
        let mut file = match opened {
            Ok(f) => f,
            Err(e) => return Took::Failed(e),
        };
        match file.try_lock() {
            Ok(()) => {
                // Who holds it, for another runner's message.
                let _ = file.set_len(0);
                let _ = file.rewind();
                let _ = writeln!(file, "runner pid {}", std::process::id());
                self.held.insert(cpu, file);
                Took::Held
            }
            Err(TryLockError::WouldBlock) => {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                let text = text.trim();
                Took::Taken(if text.is_empty() {
                    "another runner".into()
                } else {
                    text.to_string()
                })
            }
            Err(TryLockError::Error(e)) => Took::Failed(e),
        }
    }

    /// Lets go of `cpu` (one taken for a placement that could not be made).
    fn release(&mut self, cpu: u32) {
        self.held.remove(&cpu);
    }

    /// Where `placement` pins on this machine (`allowed`: the CPUs runner
    /// may use), with the CPUs it pins locked for this process (module doc).
    pub fn claim(&mut self, placement: Placement, allowed: &[u32]) -> Result<Claim, Unplaceable> {
        // Impossible anywhere on this machine: said as before.
        let asked = placement.cpus(allowed)?;
        let need = match placement {
            Placement::None => return Ok(Claim::default()),
            Placement::SameCore => 1,
            Placement::SeparateCores => 2,
            Placement::Cpus { .. } => return Ok(self.explicit(placement, asked)),
        };
        // Those already held first, then the rest, each from the highest.
        let mut order: Vec<u32> = allowed.iter().rev().copied().collect();
        order.sort_by_key(|c| !self.held.contains_key(c));
        let mut got: Vec<u32> = Vec::new();
        let mut newly: Vec<u32> = Vec::new();
        let mut taken: Vec<(u32, String)> = Vec::new();
        for cpu in order {
            if got.len() == need {
                break;
            }
            let before = self.held.contains_key(&cpu);
            match self.take(cpu) {
                Took::Held => {
                    got.push(cpu);
                    if !before {
                        newly.push(cpu);
                    }
                }
                Took::Taken(who) => taken.push((cpu, who)),
                Took::Failed(e) => {
                    // Nothing can be known of other runners: pinned as
                    // before there were locks, and said.
                    return Ok(Claim {
                        cpus: asked,
                        note: Some(format!(
                            "CPUs could not be locked in {} ({e}), so other runners' CPUs were not known",
                            self.dir.display()
                        )),
                    });
                }
            }
        }
        if got.len() == need {
            got.sort_unstable();
            return Ok(Claim {
                cpus: placement.cpus(&got)?,
                note: None,
            });
        }
        for cpu in newly {
            self.release(cpu);
        }
        let holders: Vec<String> = taken
            .iter()
            .map(|(c, who)| format!("CPU {c} by {who}"))
            .collect();
        let list = cpu_list(allowed);
        let holders = holders.join(", ");
        Ok(Claim {
            cpus: Cpus::default(),
            note: Some(if taken.len() == allowed.len() {
                format!("every CPU runner may use here ({list}) is held by another runner ({holders}), so the fork runs unpinned")
            } else {
                format!(
                    "{placement} needs {need} CPUs no other runner holds, and {} of the {} runner may use here ({list}) are held ({holders}), so the fork runs unpinned",
                    taken.len(),
                    allowed.len()
                )
            }),
        })
    }

    /// Explicit CPUs, pinned as asked; locked where free, and a note for
    /// each another runner holds.
    fn explicit(&mut self, placement: Placement, asked: Cpus) -> Claim {
        let mut shared = Vec::new();
        let mut cpus: Vec<u32> = asked.worker.into_iter().chain(asked.backend).collect();
        cpus.dedup();
        for cpu in cpus {
            match self.take(cpu) {
                Took::Held => {}
                Took::Taken(who) => shared.push(format!("CPU {cpu} is held by {who} too")),
                Took::Failed(e) => shared.push(format!(
                    "CPU {cpu} could not be locked in {} ({e})",
                    self.dir.display()
                )),
            }
        }
        Claim {
            cpus: asked,
            note: (!shared.is_empty())
                .then(|| format!("{}; \"{placement}\" pins there as asked", shared.join(", "))),
        }
    }
}

/// The locks this process holds, for its lifetime: the first caller's
/// folder is the process's.
static PROCESS: Mutex<Option<CpuLocks>> = Mutex::new(None);

/// [`CpuLocks::claim`] on this process's locks, in `dir` (see [`lock_dir`]).
pub fn claim(dir: &Path, placement: Placement, allowed: &[u32]) -> Result<Claim, Unplaceable> {
    let mut locks = PROCESS.lock().unwrap_or_else(|p| p.into_inner());
    locks
        .get_or_insert_with(|| CpuLocks::new(dir.to_path_buf()))
        .claim(placement, allowed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tries `claimed` until it holds, for up to 5 s: a process another
    /// test of this binary spawns holds a copy of every descriptor from
    /// its fork to its exec, a lock's too, so a freed CPU may take a
    /// moment to show as free.
    fn until_freed(mut claimed: impl FnMut() -> bool) {
        for _ in 0..500 {
            if claimed() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    fn locks(dir: &Path) -> CpuLocks {
        CpuLocks::new(dir.join("runner"))
    }

    #[test]
    fn two_runners_take_different_cpus_and_a_third_runs_unpinned() {
        let tmp = tempfile::tempdir().unwrap();
        let (mut a, mut b, mut c) = (locks(tmp.path()), locks(tmp.path()), locks(tmp.path()));
        let two = [0, 1];
        let ca = a.claim(Placement::SameCore, &two).unwrap();
        assert_eq!(
            ca.cpus,
            Cpus {
                worker: Some(1),
                backend: Some(1)
            }
        );
        assert_eq!(ca.note, None);
        let cb = b.claim(Placement::SameCore, &two).unwrap();
        assert_eq!(
            cb.cpus,
            Cpus {
                worker: Some(0),
                backend: Some(0)
            }
        );
        let cc = c.claim(Placement::SameCore, &two).unwrap();
        assert_eq!(cc.cpus, Cpus::default());
        let note = cc.note.unwrap();
        assert!(
            note.starts_with("every CPU runner may use here (0-1) is held by another runner (CPU 1 by runner pid ")
                && note.ends_with("so the fork runs unpinned"),
            "{note}"
        );
        // Each lock file names its holder.
        let said = std::fs::read_to_string(tmp.path().join("runner/cpu-1.lock")).unwrap();
        assert_eq!(said, format!("runner pid {}\n", std::process::id()));
        // A runner keeps its CPU for every later fork, even once a higher
        // one is free.
        drop(a);
        assert_eq!(
            b.claim(Placement::SameCore, &two).unwrap().cpus.worker,
            Some(0)
        );
        // Its lock goes with it: a later runner takes the CPU. A process
        // that another test of this binary spawns holds a copy of every
        // descriptor from its fork to its exec, the lock's too, so the
        // freed CPU may take a moment to show as free.
        // (A runner keeps what it took, so each try is a new one.)
        drop((b, c));
        let mut worker = None;
        until_freed(|| {
            worker = locks(tmp.path())
                .claim(Placement::SameCore, &two)
                .unwrap()
                .cpus
                .worker;
            worker == Some(1)
        });
        assert_eq!(worker, Some(1));
    }

    #[test]
    fn separate_cores_needs_two_free_and_takes_none_without_them() {
        let tmp = tempfile::tempdir().unwrap();
        let three = [0, 1, 2];
        let mut a = locks(tmp.path());
        a.claim(Placement::SameCore, &three).unwrap();
        let mut b = locks(tmp.path());
        let cb = b.claim(Placement::SeparateCores, &three).unwrap();
        assert_eq!(
            cb.cpus,
            Cpus {
                worker: Some(1),
                backend: Some(0)
            }
        );
        let mut c = locks(tmp.path());
        let cc = c.claim(Placement::SameCore, &three).unwrap();
        assert_eq!(cc.cpus, Cpus::default());
        assert!(cc
            .note
            .unwrap()
            .starts_with("every CPU runner may use here (0-2) is held"));
        // One of three free: separate-cores cannot, and holds nothing after.
        // (A process another test of this binary spawns holds a copy of
        // b's locks from its fork to its exec, so a freed CPU may take a
        // moment to show as free: c, which holds nothing yet, tries again.)
        drop(b);
        until_freed(|| {
            c.claim(Placement::SameCore, &three)
                .unwrap()
                .cpus
                .worker
                .is_some()
        });
        assert_eq!(c.held.len(), 1, "c took one of the freed CPUs");
        let mut d = locks(tmp.path());
        let cd = d.claim(Placement::SeparateCores, &three).unwrap();
        assert_eq!(cd.cpus, Cpus::default());
        let note = cd.note.unwrap();
        assert!(
            note.starts_with("separate-cores needs 2 CPUs no other runner holds, and 2 of the 3 runner may use here (0-2) are held (CPU 2 by runner pid "),
            "{note}"
        );
        assert!(d.held.is_empty());
    }

    #[test]
    fn explicit_cpus_pin_as_asked_and_say_who_else_holds_them() {
        let tmp = tempfile::tempdir().unwrap();
        let (mut a, mut b) = (locks(tmp.path()), locks(tmp.path()));
        a.claim(Placement::SameCore, &[0, 1]).unwrap();
        let p = Placement::parse("cpus:1,0").unwrap();
        let cb = b.claim(p, &[0, 1]).unwrap();
        assert_eq!(
            cb.cpus,
            Cpus {
                worker: Some(1),
                backend: Some(0)
            }
        );
        let note = cb.note.unwrap();
        assert!(
            note.starts_with("CPU 1 is held by runner pid ")
                && note.ends_with("\"cpus:1,0\" pins there as asked"),
            "{note}"
        );
        assert!(b.held.contains_key(&0));
        assert_eq!(b.claim(Placement::None, &[0, 1]).unwrap(), Claim::default());
        // What no placement could make on this machine is an error still.
        assert!(b.claim(Placement::SeparateCores, &[3]).is_err());
    }

    #[test]
    fn a_folder_others_may_enter_or_a_planted_link_is_not_used() {
        let tmp = tempfile::tempdir().unwrap();
        let open = tmp.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let claim = CpuLocks::new(open)
            .claim(Placement::SameCore, &[0, 1])
            .unwrap();
        // Pinned as before there were locks, and said.
        assert_eq!(claim.cpus.worker, Some(1));
        assert!(claim.note.unwrap().contains("mode is not 0700"));
        let dir = tmp.path().join("runner");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let target = tmp.path().join("target");
        std::fs::write(&target, "keep\n").unwrap();
        std::os::unix::fs::symlink(&target, dir.join("cpu-1.lock")).unwrap();
        let claim = CpuLocks::new(dir).claim(Placement::SameCore, &[1]).unwrap();
        assert!(claim.note.unwrap().contains("could not be locked"));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
    }

    #[test]
    fn the_folder_is_the_users_runtime_folder_or_one_of_its_own_in_tmp() {
        assert_eq!(
            lock_dir(Some(Path::new("/run/user/7"))),
            Path::new("/run/user/7/runner")
        );
        let own = lock_dir(None);
        assert_eq!(
            own,
            std::env::temp_dir().join(format!("runner-cpus-{}", own_uid()))
        );
        // A relative value is no runtime folder.
        assert_eq!(lock_dir(Some(Path::new("rel"))), own);
    }
}
