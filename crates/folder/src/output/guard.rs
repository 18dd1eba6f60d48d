//! The one guard every file runner writes goes through (docs/safety.md,
//! "Your files: what runner writes, and what it never touches"): runner
//! never replaces, moves or removes a file it did not write, because a
//! report folder sits in a user's work tree beside files that are theirs.
//!
//! The record: every folder runner writes a file into holds
//! `.runner-files.json`, the names of the files runner wrote there and the
//! SHA-256 of what it wrote. A path may be written when
//!
//! - nothing is there (the new file is created without replacing anything
//!   that appears meanwhile), or
//! - a regular file is there that the record lists with its current
//!   SHA-256 (runner wrote it and nobody changed it since), or
//! - a regular file is there that already holds exactly the new bytes
//!   (writing it changes nothing; older runners kept no record).
//!
//! Anything else is refused, exit 2, naming the path: a symbolic link
//! (neither it nor its target), a device, a FIFO, a socket, a folder, a
//! file the record does not list, or one changed since runner wrote it.
//!
//! A report folder written before the record existed (the committed ones
//! under `reports/`) has a finished run.json of runner's but no record: in
//! it, the regular files with the fixed names runner writes
//! ([`runner_names`]) count as runner's, and nothing by pattern (a user's
//! `logo.svg` never does). The first write into such a folder records them.
//!
//! A crash cannot leave a file runner wrote looking foreign: the new hash is
//! recorded as pending before the file is renamed into place, and the
//! pending entry becomes the file's entry after; either hash is accepted.
//! Two runners writing into one folder at once may lose each other's entry,
//! which makes the file foreign (refused later), never the reverse.

use super::{io_err, lock, parent_or_dot, sync_dir, DATA_FILES};
use super::{EntriesError, OutputError, RecordError};
use runner_core::error::Result;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The record's name, where callers have always found it.
pub use super::RECORD;

const NOTE: &str = "The files runner wrote in this folder and the SHA-256 of what it wrote; runner replaces, moves or removes only these (see docs/safety.md).";

#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    #[serde(default)]
    note: String,
    /// Name -> SHA-256 of the bytes runner wrote.
    files: BTreeMap<String, String>,
    /// A write in progress: name -> SHA-256 of the bytes being written.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pending: BTreeMap<String, String>,
}

impl Record {
    fn lists(&self, name: &str, sha256: &str) -> bool {
        self.files.get(name).map(String::as_str) == Some(sha256)
            || self.pending.get(name).map(String::as_str) == Some(sha256)
    }

    fn knows(&self, name: &str) -> bool {
        self.files.contains_key(name) || self.pending.contains_key(name)
    }
}

/// The names runner wrote into a report folder before it kept a record:
/// its data files and a study's plots (the only plots runner drew then).
/// Only these count as runner's in a folder without a record; every later
/// plot is written where the record lists what runner wrote.
pub(crate) fn runner_names() -> impl Iterator<Item = &'static str> {
    DATA_FILES
        .iter()
        .copied()
        .chain(super::STUDY_PLOTS.iter().copied())
}

/// A finished (or, with `finished = false`, any) run.json of runner's,
/// told apart loosely: older runners wrote fewer keys; readers check the
/// rest.
pub fn runner_run_json(path: &Path, finished: bool) -> bool {
    if !fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let Ok(text) = fs::read_to_string(path) else {
        return false;
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
        return false;
    };
    v["run_id"].is_string()
        && v["spec"]["sha256"].is_string()
        && v["seeds"]["master"].is_u64()
        && (!finished || v["finished_at"].is_string())
}

/// The record of `dir`: `None` when there is none, an error when something
/// else is at its name or it is not runner's record.
fn read_record(dir: &Path) -> std::result::Result<Option<Record>, RecordError> {
    let path = dir.join(RECORD);
    match fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(RecordError::Unreadable(e)),
        Ok(m) if !m.is_file() => return Err(RecordError::NotAFile),
        Ok(_) => {}
    }
    let text = fs::read_to_string(&path).map_err(RecordError::Unreadable)?;
    serde_json::from_str(&text)
        .map(Some)
        .map_err(RecordError::NotRunners)
}

fn record_error(dir: &Path, why: RecordError) -> OutputError {
    OutputError::Record {
        record: dir.join(RECORD),
        why,
    }
}

fn sha256_of(path: &Path) -> Option<String> {
    use sha2::{Digest, Sha256};
    let mut file = fs::File::open(path).ok()?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).ok()?;
    Some(super::hex(&hasher.finalize()))
}

/// Who wrote what is at a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    Missing,
    Runner,
    /// Not runner's, with why (a sentence part: "is a symbolic link").
    Foreign(String),
}

/// Judges `dir/name` against `record` (`None`: a folder without one, where
/// `legacy` says whether it is a report folder runner wrote).
fn judge(dir: &Path, name: &str, record: Option<&Record>, legacy: bool) -> Owner {
    let path = dir.join(name);
    let meta = match fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Owner::Missing,
        Err(e) => return Owner::Foreign(format!("cannot be read ({e})")),
        Ok(m) => m,
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        let to = fs::read_link(&path)
            .map(|t| t.display().to_string())
            .unwrap_or_default();
        return Owner::Foreign(format!("is a symbolic link (to {to})"));
    }
    if kind.is_dir() {
        return Owner::Foreign("is a folder".into());
    }
    if !kind.is_file() {
        return Owner::Foreign("is not a regular file (a device, FIFO or socket)".into());
    }
    match record {
        Some(r) if r.knows(name) => match sha256_of(&path) {
            Some(h) if r.lists(name, &h) => Owner::Runner,
            _ => Owner::Foreign("was changed since runner wrote it".into()),
        },
        Some(_) => Owner::Foreign("is not a file runner wrote".into()),
        None if legacy && runner_names().any(|n| n == name) => Owner::Runner,
        None => Owner::Foreign("is not a file runner wrote".into()),
    }
}

fn split(path: &Path) -> (PathBuf, String) {
    let dir = parent_or_dot(path).to_path_buf();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    (dir, name)
}

/// Who wrote what is at `path`.
pub fn owner(path: &Path) -> Result<Owner> {
    let (dir, name) = split(path);
    let record = read_record(&dir).map_err(|why| record_error(&dir, why))?;
    Ok(owner_in(&dir, &name, record.as_ref()))
}

/// Who wrote `dir/name`, given `dir`'s record as read.
fn owner_in(dir: &Path, name: &str, record: Option<&Record>) -> Owner {
    if name == RECORD {
        return Owner::Foreign("is the name of runner's own record".into());
    }
    let legacy = record.is_none() && runner_run_json(&dir.join("run.json"), false);
    judge(dir, name, record, legacy)
}

/// The entries of `dir` that are not runner's, each as `name` or
/// `name (why)`; `Err` when its record cannot be read. Runner's own are
/// the files its record lists unchanged (without a record: the fixed names
/// of a report folder), the record itself and the lock a killed exec left.
pub(crate) fn foreign_entries(dir: &Path) -> std::result::Result<Vec<String>, EntriesError> {
    let record = read_record(dir).map_err(EntriesError::Record)?;
    let legacy = record.is_none();
    let entries = fs::read_dir(dir).map_err(EntriesError::Unreadable)?;
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_file && (name == RECORD || name == lock::FILE) {
            continue;
        }
        match judge(dir, &name, record.as_ref(), legacy) {
            Owner::Runner | Owner::Missing => {}
            Owner::Foreign(why) if why == "was changed since runner wrote it" => {
                out.push(format!("{name}, changed since runner wrote it"))
            }
            Owner::Foreign(_) => out.push(name),
        }
    }
    out.sort();
    Ok(out)
}

fn refused(path: &Path, why: &str) -> OutputError {
    OutputError::NotRunners {
        path: path.to_path_buf(),
        why: why.to_string(),
    }
}

/// Whether `bytes` may be written to `path` (see the module doc); `Ok`
/// says whether something is there.
pub(crate) fn check(path: &Path, bytes: &[u8]) -> Result<Owner> {
    Ok(allowed(path, owner(path)?, bytes)?)
}

/// [`check`] once the owner of `path` is known.
fn allowed(path: &Path, owner: Owner, bytes: &[u8]) -> std::result::Result<Owner, OutputError> {
    match owner {
        Owner::Foreign(why) => {
            let same = fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
                && fs::read(path).is_ok_and(|b| b == bytes);
            if same {
                Ok(Owner::Runner)
            } else {
                Err(refused(path, &why))
            }
        }
        o => Ok(o),
    }
}

fn write_record(dir: &Path, record: &Record) -> std::result::Result<(), OutputError> {
    let mut text = serde_json::to_string_pretty(record).expect("the record serializes");
    text.push('\n');
    super::atomic::write_atomic(&dir.join(RECORD), text.as_bytes())
}

/// The record of `dir` to update: `existing` (the one there), or a new
/// one (in a report folder of an older runner, listing the files it wrote).
fn record_for_update(dir: &Path, existing: Option<Record>) -> Record {
    if let Some(mut r) = existing {
        r.note = NOTE.into();
        return r;
    }
    let mut r = Record {
        note: NOTE.into(),
        ..Default::default()
    };
    if runner_run_json(&dir.join("run.json"), false) {
        for name in runner_names() {
            let path = dir.join(name);
            if fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
                if let Some(h) = sha256_of(&path) {
                    r.files.insert(name.to_string(), h);
                }
            }
        }
    }
    r
}

/// Writes `bytes` to `path` whole (temp file, fsync, rename), if the guard
/// allows it (see the module doc), and records it.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    write_all(&[(path.to_path_buf(), bytes)])
}

/// [`write`] of several files at once: every file, in every folder, is
/// checked before the first is written, so a refusal changes nothing.
/// Then per folder: the record (read once, for the checks) gets every new
/// hash as pending, the files are written, and the pending entries become
/// the files' entries. The record is written twice per folder, not twice
/// per file: a report's half-dozen files take a third of the synced
/// writes. A file that cannot be written stops the rest; those written
/// before it are recorded, and its new hash stays pending.
pub fn write_all(files: &[(PathBuf, &[u8])]) -> Result<()> {
    // Folder by folder, in the order the folders first appear.
    let mut folders: Vec<PathBuf> = Vec::new();
    for (path, _) in files {
        let dir = split(path).0;
        if !folders.contains(&dir) {
            folders.push(dir);
        }
    }
    let mut plans = Vec::with_capacity(folders.len());
    for dir in folders {
        let existing = read_record(&dir).map_err(|why| record_error(&dir, why))?;
        let mut planned = Vec::new();
        for (path, bytes) in files {
            let (in_dir, name) = split(path);
            if in_dir != dir {
                continue;
            }
            let bytes = *bytes;
            let before = allowed(path, owner_in(&dir, &name, existing.as_ref()), bytes)?;
            planned.push((name, path, bytes, before, super::sha256_bytes(bytes)));
        }
        plans.push((dir, existing, planned));
    }
    for (dir, existing, planned) in plans {
        let mut record = record_for_update(&dir, existing);
        for (name, _, _, _, sha) in &planned {
            record.pending.insert(name.clone(), sha.clone());
        }
        write_record(&dir, &record)?;
        let mut failed = None;
        for (name, path, bytes, before, sha) in planned {
            if let Err(e) = write_file(path, bytes, before == Owner::Missing) {
                failed = Some(match e.kind() {
                    std::io::ErrorKind::AlreadyExists => {
                        refused(path, "appeared while runner was writing it")
                    }
                    _ => io_err("write", path, e),
                });
                break;
            }
            record.pending.remove(&name);
            record.files.insert(name, sha);
        }
        write_record(&dir, &record)?;
        if let Some(e) = failed {
            return Err(e.into());
        }
    }
    Ok(())
}

/// Removes `path` if runner wrote it and nobody changed it since (as
/// [`write`] would replace it), and drops it from the record; a file that
/// is not runner's stays, and `Ok(false)` says so. A record entry whose file
/// is gone is dropped too.
pub fn remove_own(path: &Path) -> Result<bool> {
    let (dir, name) = split(path);
    let existing = read_record(&dir).map_err(|why| record_error(&dir, why))?;
    let owner = owner_in(&dir, &name, existing.as_ref());
    if matches!(owner, Owner::Foreign(_)) {
        return Ok(false);
    }
    let listed = existing.as_ref().is_some_and(|r| r.knows(&name));
    if owner == Owner::Runner {
        match fs::remove_file(path) {
            Ok(()) => sync_dir(&dir),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err("remove", path, e).into()),
        }
    }
    if listed || owner == Owner::Runner {
        let mut record = record_for_update(&dir, existing);
        record.files.remove(&name);
        record.pending.remove(&name);
        write_record(&dir, &record)?;
    }
    Ok(owner == Owner::Runner)
}

/// [`write`] for a file too large to hold whole (an import's pairs.csv):
/// `fill` writes its bytes, which are hashed as they pass. Only a path
/// that is missing or runner's may be written this way (a user's file
/// could only be kept by comparing it with bytes not yet made).
pub fn write_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    use sha2::{Digest, Sha256};
    struct Hashing<'a> {
        file: &'a mut dyn Write,
        hasher: Sha256,
    }
    impl Write for Hashing<'_> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let n = self.file.write(buf)?;
            self.hasher.update(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            self.file.flush()
        }
    }
    let (dir, name) = split(path);
    let existing = read_record(&dir).map_err(|why| record_error(&dir, why))?;
    let before = owner_in(&dir, &name, existing.as_ref());
    if let Owner::Foreign(why) = &before {
        return Err(refused(path, why).into());
    }
    let parent = parent_or_dot(path);
    let filled = (|| {
        let mut tmp = tempfile::Builder::new()
            .prefix(".runner-write-")
            .permissions(fs::Permissions::from_mode(0o666))
            .tempfile_in(parent)?;
        let mut hashing = Hashing {
            file: tmp.as_file_mut(),
            hasher: Sha256::new(),
        };
        fill(&mut hashing)?;
        let sha = super::hex(&hashing.hasher.finalize());
        tmp.as_file().sync_all()?;
        Ok((tmp, sha))
    })();
    let (tmp, sha) = filled.map_err(|e: std::io::Error| io_err("write", path, e))?;
    // As in `write`: the hash is pending before the file is in place.
    let mut record = record_for_update(&dir, existing);
    record.pending.insert(name.clone(), sha.clone());
    write_record(&dir, &record)?;
    let placed = if before == Owner::Missing {
        tmp.persist_noclobber(path).map_err(|e| e.error)
    } else {
        tmp.persist(path).map_err(|e| e.error)
    };
    placed.map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => refused(path, "appeared while runner was writing it"),
        _ => io_err("write", path, e),
    })?;
    sync_dir(parent);
    record.pending.remove(&name);
    record.files.insert(name, sha);
    Ok(write_record(&dir, &record)?)
}

fn write_file(path: &Path, bytes: &[u8], create: bool) -> std::io::Result<()> {
    let dir = parent_or_dot(path);
    let mut tmp = tempfile::Builder::new()
        .prefix(".runner-write-")
        .permissions(fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    if create {
        tmp.persist_noclobber(path).map_err(|e| e.error)?;
    } else {
        tmp.persist(path).map_err(|e| e.error)?;
    }
    sync_dir(dir);
    Ok(())
}

/// Appends `text` to `path` (creating it if missing): only to a regular
/// file, never through a symbolic link, never blocking on a FIFO. An append
/// replaces nothing, so no record is needed.
pub fn append(path: &Path, text: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = fs::OpenOptions::new()
        .append(true)
        .create(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => {
                std::io::Error::other("it is a symbolic link, which runner does not write through")
            }
            Some(libc::ENXIO) => {
                std::io::Error::other("it is a FIFO or device, not a regular file")
            }
            _ => e,
        })?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other(
            "it is not a regular file (a device, FIFO or socket), which runner does not write to",
        ));
    }
    file.write_all(text)
}

/// Removes a report folder runner wrote: first checks that every entry is
/// runner's, then removes exactly those, then the (now empty) folder; if
/// anything else appeared meanwhile, the folder stays.
pub(crate) fn remove_folder(dir: &Path) -> std::result::Result<(), OutputError> {
    let foreign = foreign_entries(dir).map_err(|why| OutputError::Unjudged {
        dir: dir.to_path_buf(),
        why,
    })?;
    if !foreign.is_empty() {
        return Err(OutputError::ForeignFiles {
            dir: dir.to_path_buf(),
            names: foreign,
        });
    }
    let entries = fs::read_dir(dir).map_err(|e| io_err("read", dir, e))?;
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != RECORD)
        .collect();
    names.sort();
    // The record goes last, so a folder half removed is still judged by it.
    names.push(RECORD.to_string());
    for name in names {
        match fs::remove_file(dir.join(&name)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err("remove", &dir.join(name), e)),
        }
    }
    fs::remove_dir(dir).map_err(|e| io_err("remove", dir, e))?;
    sync_dir(parent_or_dot(dir));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::output::tests::runner_folder;

    #[test]
    fn writes_new_files_and_replaces_only_its_own() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("out.md");
        write(&f, b"one").unwrap();
        write(&f, b"two").unwrap();
        assert_eq!(fs::read(&f).unwrap(), b"two");
        // Changed by hand: no longer runner's.
        fs::write(&f, b"mine").unwrap();
        let e = write(&f, b"three").unwrap_err().to_string();
        assert!(e.contains("was changed since runner wrote it"), "{e}");
        assert_eq!(fs::read(&f).unwrap(), b"mine");
        // A user's file beside it is not listed.
        let user = tmp.path().join("imp.txt");
        fs::write(&user, b"important").unwrap();
        let e = write(&user, b"x").unwrap_err().to_string();
        assert!(e.contains("is not a file runner wrote"), "{e}");
        assert_eq!(fs::read(&user).unwrap(), b"important");
        // The same bytes change nothing and are allowed.
        write(&user, b"important").unwrap();
        // No temp file is left behind.
        let mut names: Vec<String> = fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, [RECORD, "imp.txt", "out.md"]);
    }

    /// Several files at once: every file, in every folder, checked before
    /// the first is written, then written and recorded as one by one would
    /// be.
    #[test]
    fn files_written_together_are_checked_first_and_recorded() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        fs::create_dir_all(&a).unwrap();
        fs::create_dir_all(&b).unwrap();
        write(&a.join("report.md"), b"old").unwrap();
        let files: Vec<(PathBuf, &[u8])> = vec![
            (a.join("report.md"), b"new"),
            (b.join("plot.svg"), b"<svg/>"),
            (a.join("analysis.json"), b"{}"),
        ];
        write_all(&files).unwrap();
        for (path, bytes) in &files {
            assert_eq!(fs::read(path).unwrap(), *bytes);
            assert_eq!(owner(path).unwrap(), Owner::Runner);
        }
        let r = read_record(&a).unwrap().unwrap();
        assert!(r.pending.is_empty());
        let names: Vec<&str> = r.files.keys().map(String::as_str).collect();
        assert_eq!(names, ["analysis.json", "report.md"]);
        let count = |dir: &Path| fs::read_dir(dir).unwrap().count();
        assert_eq!((count(&a), count(&b)), (3, 2));
        // A file of the user's among them: refused, and nothing of that
        // folder written, the files before it included.
        fs::write(a.join("notes.md"), b"mine").unwrap();
        let record = fs::read(a.join(RECORD)).unwrap();
        let e = write_all(&[
            (a.join("report.md"), b"newer".as_slice()),
            (a.join("notes.md"), b"x".as_slice()),
        ])
        .unwrap_err()
        .to_string();
        assert!(e.contains("is not a file runner wrote"), "{e}");
        assert_eq!(fs::read(a.join("report.md")).unwrap(), b"new");
        assert_eq!(fs::read(a.join("notes.md")).unwrap(), b"mine");
        assert_eq!(fs::read(a.join(RECORD)).unwrap(), record);
        // Refused in a later folder: the earlier folder is not written
        // either.
        fs::write(b.join("mine.svg"), b"mine").unwrap();
        let e = write_all(&[
            (a.join("report.md"), b"newer".as_slice()),
            (b.join("mine.svg"), b"x".as_slice()),
        ])
        .unwrap_err()
        .to_string();
        assert!(e.contains("is not a file runner wrote"), "{e}");
        assert_eq!(fs::read(a.join("report.md")).unwrap(), b"new");
        assert_eq!(fs::read(a.join(RECORD)).unwrap(), record);
    }

    #[test]
    fn removes_only_its_own_unchanged_files() {
        let tmp = tempfile::tempdir().unwrap();
        let own = tmp.path().join("forest.svg");
        write(&own, b"<svg/>").unwrap();
        assert!(remove_own(&own).unwrap());
        assert!(!own.exists());
        let record = fs::read_to_string(tmp.path().join(RECORD)).unwrap();
        assert!(!record.contains("forest.svg"), "{record}");
        // Changed by hand, or never runner's: left where it is.
        let changed = tmp.path().join("medians.svg");
        write(&changed, b"<svg/>").unwrap();
        fs::write(&changed, b"mine").unwrap();
        assert!(!remove_own(&changed).unwrap());
        assert_eq!(fs::read(&changed).unwrap(), b"mine");
        let user = tmp.path().join("detection.svg");
        fs::write(&user, b"theirs").unwrap();
        assert!(!remove_own(&user).unwrap());
        assert_eq!(fs::read(&user).unwrap(), b"theirs");
        // Nothing there: nothing to do.
        assert!(!remove_own(&tmp.path().join("effect.svg")).unwrap());
    }

    #[test]
    fn never_writes_through_a_link_or_onto_a_device() {
        let tmp = tempfile::tempdir().unwrap();
        let user = tmp.path().join("imp.txt");
        fs::write(&user, b"important").unwrap();
        let link = tmp.path().join("link.md");
        std::os::unix::fs::symlink(&user, &link).unwrap();
        let e = write(&link, b"x").unwrap_err().to_string();
        assert!(e.contains("is a symbolic link"), "{e}");
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(&user).unwrap(), b"important");
        let e = write(Path::new("/dev/null"), b"x").unwrap_err().to_string();
        assert!(e.contains("is not a regular file"), "{e}");
        let e = append(Path::new("/dev/null"), b"x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let e = append(&link, b"x").unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        append(&tmp.path().join("summary.md"), b"a").unwrap();
        append(&tmp.path().join("summary.md"), b"b").unwrap();
        assert_eq!(fs::read(tmp.path().join("summary.md")).unwrap(), b"ab");
    }

    #[test]
    fn an_older_report_folder_is_runners_by_fixed_names_only() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("r");
        runner_folder(&dir);
        fs::write(dir.join("logo.svg"), "<svg>mine</svg>").unwrap();
        assert_eq!(foreign_entries(&dir).unwrap(), ["logo.svg"]);
        assert_eq!(owner(&dir.join("forest.svg")).unwrap(), Owner::Runner);
        // The first write records the folder's own files, not the logo.
        write(&dir.join("report.md"), b"# new").unwrap();
        let r = read_record(&dir).unwrap().unwrap();
        let names: Vec<&str> = r.files.keys().map(String::as_str).collect();
        assert_eq!(names, ["forest.svg", "report.md", "run.json"]);
        assert_eq!(foreign_entries(&dir).unwrap(), ["logo.svg"]);
        assert!(remove_folder(&dir).is_err());
        assert!(dir.join("logo.svg").is_file() && dir.join("report.md").is_file());
        fs::remove_file(dir.join("logo.svg")).unwrap();
        remove_folder(&dir).unwrap();
        assert!(!dir.exists());
    }

    #[test]
    fn a_pending_write_stays_runners_after_a_crash() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("a.json");
        write(&f, b"old").unwrap();
        // As if runner died after recording the new hash, before the rename.
        let mut r = read_record(tmp.path()).unwrap().unwrap();
        r.pending
            .insert("a.json".into(), crate::output::sha256_bytes(b"new"));
        write_record(tmp.path(), &r).unwrap();
        assert_eq!(owner(&f).unwrap(), Owner::Runner);
        fs::write(&f, b"new").unwrap();
        assert_eq!(owner(&f).unwrap(), Owner::Runner);
        write(&f, b"newer").unwrap();
        let r = read_record(tmp.path()).unwrap().unwrap();
        assert!(r.pending.is_empty());
    }
}
