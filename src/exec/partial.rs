//! The folder a run lives in until it is complete: `DIR.partial/`.
//!
//! Layout: `run.json` (rewritten via temp file + rename), `lock` (the pid of
//! the exec that owns it), and per finished fork `forks/c<cell>-f<fork>.csv`
//! plus `forks/c<cell>-f<fork>.json`. A fork counts as finished only when its
//! `.json` exists, and that is written last, after the `.csv` was renamed into
//! place, so a crash at any moment leaves either a whole fork or none.

use crate::error::{bad_input, run_failed, Result, RunnerError};
use crate::record::PairRecord;
use crate::run_info::{ForkRecord, RunInfo};
use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// `reports/aa` -> `reports/aa.partial`.
pub fn partial_path(final_dir: &Path) -> PathBuf {
    let mut name = final_dir.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    final_dir.with_file_name(name)
}

/// `reports/aa.partial` -> `reports/aa`.
pub fn final_path(partial: &Path) -> Option<PathBuf> {
    let name = partial.file_name()?.to_str()?;
    let stem = name.strip_suffix(".partial")?;
    Some(partial.with_file_name(stem))
}

/// A full disk or a failing device is the run failing (exit 1, resumable
/// once there is room); anything else (not a directory, read-only, no
/// permission) means the folder given is wrong (exit 2).
fn io_err(what: &str, path: &Path, e: std::io::Error) -> RunnerError {
    let msg = format!("cannot {what} {}: {e}", path.display());
    match e.raw_os_error() {
        Some(libc::ENOSPC | libc::EDQUOT | libc::EIO | libc::EFBIG) => run_failed(msg),
        _ => bad_input(msg),
    }
}

/// An open, locked partial folder. The lock is released on drop.
pub struct Partial {
    pub dir: PathBuf,
    lock: PathBuf,
}

impl Partial {
    /// Creates `dir` for a new run; refuses if it already exists. The
    /// folder itself is made with create-new semantics, so of two execs
    /// started at once exactly one gets it.
    pub fn create(dir: &Path) -> Result<Partial> {
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            if parent.exists() && !parent.is_dir() {
                return Err(bad_input(format!(
                    "cannot create the output folder {}: {} is a file, not a directory",
                    dir.display(),
                    parent.display()
                )));
            }
            fs::create_dir_all(parent).map_err(|e| io_err("create", parent, e))?;
        }
        match fs::create_dir(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                if let Some(pid) = live_owner(&dir.join("lock")) {
                    return Err(in_use(dir, pid));
                }
                return Err(bad_input(format!(
                    "{} already exists from an earlier run; finish it with --resume {} or delete it",
                    dir.display(),
                    dir.display()
                )));
            }
            Err(e) => return Err(io_err("create", dir, e)),
        }
        let created = fs::create_dir(dir.join("forks"))
            .map_err(|e| io_err("create", dir, e))
            .and_then(|()| Partial::lock(dir));
        if created.is_err() {
            let _ = fs::remove_dir_all(dir);
        }
        created
    }

    /// Deletes the folder of a run that never started a fork.
    pub fn remove(self) {
        let _ = fs::remove_dir_all(&self.dir);
    }

    /// Opens an existing partial folder to resume it.
    pub fn open(dir: &Path) -> Result<Partial> {
        if !dir.join("run.json").is_file() {
            return Err(bad_input(format!(
                "{} is not a partial run folder (it has no run.json)",
                dir.display()
            )));
        }
        fs::create_dir_all(dir.join("forks")).map_err(|e| io_err("create", dir, e))?;
        Partial::lock(dir)
    }

    /// Takes `dir/lock` with create-new semantics; a lock whose process is
    /// gone (killed run) is taken over.
    fn lock(dir: &Path) -> Result<Partial> {
        let lock = dir.join("lock");
        for _ in 0..2 {
            match OpenOptions::new().write(true).create_new(true).open(&lock) {
                Ok(mut f) => {
                    let _ = writeln!(f, "{}", std::process::id());
                    return Ok(Partial {
                        dir: dir.to_path_buf(),
                        lock,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if let Some(pid) = live_owner(&lock) {
                        return Err(in_use(dir, pid));
                    }
                    let _ = fs::remove_file(&lock);
                }
                Err(e) => return Err(io_err("lock", dir, e)),
            }
        }
        Err(bad_input(format!("cannot lock {}", dir.display())))
    }

    pub fn write_run_info(&self, info: &RunInfo) -> Result<()> {
        write_atomic(&self.dir.join("run.json"), info.to_json().as_bytes())
    }

    pub fn read_run_info(&self) -> Result<RunInfo> {
        RunInfo::read(&self.dir.join("run.json")).map_err(|e| bad_input(format!("{e:#}")))
    }

    fn fork_stem(&self, cell: u32, fork: u32) -> PathBuf {
        self.dir.join("forks").join(format!("c{cell}-f{fork}"))
    }

    /// The finished forks, sorted by (cell, fork).
    pub fn finished_forks(&self) -> Result<Vec<ForkRecord>> {
        let forks = self.dir.join("forks");
        let mut out = Vec::new();
        let entries = fs::read_dir(&forks).map_err(|e| io_err("read", &forks, e))?;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "json") {
                let text = fs::read_to_string(&path).map_err(|e| io_err("read", &path, e))?;
                let rec: ForkRecord = serde_json::from_str(&text)
                    .map_err(|e| bad_input(format!("{} is damaged: {e}", path.display())))?;
                out.push(rec);
            }
        }
        out.sort_by_key(|r| (r.summary.cell, r.summary.fork));
        Ok(out)
    }

    /// Starts the CSV of a fork in progress (a temp file until committed).
    pub fn fork_writer(&self, cell: u32, fork: u32) -> Result<ForkWriter> {
        let tmp = self.fork_stem(cell, fork).with_extension("csv.tmp");
        let file = File::create(&tmp).map_err(|e| io_err("create", &tmp, e))?;
        Ok(ForkWriter {
            tmp,
            out: BufWriter::new(file),
        })
    }

    /// Makes a fork finished: CSV into place, then its record.
    pub fn commit_fork(&self, writer: ForkWriter, record: &ForkRecord) -> Result<()> {
        let stem = self.fork_stem(record.summary.cell, record.summary.fork);
        let ForkWriter { tmp, mut out } = writer;
        let synced = out
            .flush()
            .map_err(|e| io_err("write", &tmp, e))
            .and_then(|()| {
                out.get_ref()
                    .sync_all()
                    .map_err(|e| io_err("sync", &tmp, e))
            });
        if let Err(e) = synced {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
        let csv = stem.with_extension("csv");
        fs::rename(&tmp, &csv).map_err(|e| io_err("rename", &tmp, e))?;
        let json = serde_json::to_string_pretty(record).expect("fork record serializes");
        write_atomic(&stem.with_extension("json"), json.as_bytes())
    }

    /// Concatenates the finished forks into `pairs.csv`, in (cell, fork) order.
    pub fn assemble_pairs(&self, forks: &[ForkRecord]) -> Result<()> {
        let usage = forks.iter().any(|f| f.summary.resource_usage);
        let mut text = crate::record::csv_header(usage);
        text.push('\n');
        for f in forks {
            let path = self
                .fork_stem(f.summary.cell, f.summary.fork)
                .with_extension("csv");
            let part = fs::read_to_string(&path).map_err(|e| io_err("read", &path, e))?;
            text.push_str(&part);
        }
        write_atomic(&self.dir.join("pairs.csv"), text.as_bytes())
    }

    /// Removes the per-fork files and the lock once `pairs.csv` holds them all.
    pub fn finish(self) -> Result<PathBuf> {
        let forks = self.dir.join("forks");
        fs::remove_dir_all(&forks).map_err(|e| io_err("remove", &forks, e))?;
        Ok(self.dir.clone())
    }
}

/// The pid in a lock file, if that process still runs.
fn live_owner(lock: &Path) -> Option<i32> {
    let pid: i32 = fs::read_to_string(lock).ok()?.trim().parse().ok()?;
    (pid > 0 && unsafe { libc::kill(pid, 0) } == 0).then_some(pid)
}

fn in_use(dir: &Path, pid: i32) -> RunnerError {
    bad_input(format!(
        "{} is in use by another runner exec (pid {pid}, see {}/lock); wait for it to finish or stop it",
        dir.display(),
        dir.display()
    ))
}

impl Drop for Partial {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.lock);
    }
}

/// Records of a fork in progress, appended as whole lines.
pub struct ForkWriter {
    tmp: PathBuf,
    out: BufWriter<File>,
}

impl ForkWriter {
    pub fn push(&mut self, r: &PairRecord) -> Result<()> {
        writeln!(self.out, "{}", r.to_csv_line()).map_err(|e| io_err("write", &self.tmp, e))
    }

    pub fn discard(self) {
        let _ = fs::remove_file(&self.tmp);
    }
}

/// Writes via a temp file and rename, so a reader never sees half a file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp-write");
    if let Err(e) = fs::write(&tmp, bytes) {
        let _ = fs::remove_file(&tmp);
        return Err(io_err("write", path, e));
    }
    fs::rename(&tmp, path).map_err(|e| io_err("rename", &tmp, e))
}

/// Puts a finished partial folder in place of `final_dir`, replacing an
/// earlier report only after the new one is whole.
pub fn promote(partial: &Path, final_dir: &Path) -> Result<()> {
    let mut old = None;
    if final_dir.exists() {
        let mut name = final_dir.file_name().unwrap_or_default().to_os_string();
        name.push(".old");
        let o = final_dir.with_file_name(name);
        let _ = fs::remove_dir_all(&o);
        fs::rename(final_dir, &o).map_err(|e| io_err("move aside", final_dir, e))?;
        old = Some(o);
    }
    fs::rename(partial, final_dir).map_err(|e| io_err("rename", partial, e))?;
    if let Some(o) = old {
        let _ = fs::remove_dir_all(o);
    }
    Ok(())
}
