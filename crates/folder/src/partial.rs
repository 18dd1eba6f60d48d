//! The folder a run lives in until it is complete: `DIR.partial/`.
//!
//! Contents: `run.json`, `lock` (see [`crate::output::lock`]), and per finished fork
//! `forks/c<cell>-f<fork>.csv` (its rows) plus `forks/c<cell>-f<fork>.json`
//! (its record, with the rows' count and SHA-256). A fork counts as finished
//! only when its `.json` exists, and that is written last, after the `.csv`
//! was synced and renamed into place, so a crash at any moment leaves either
//! a whole fork or none. Only files named exactly so are read; anything else
//! in `forks/` is ignored. The files of the finished folder (run.json,
//! pairs.csv, the report's) go through `guard`, which records them in
//! `.runner-files.json`; the per-fork files are runner's by construction
//! (the folder is its own, locked) and removed before it is promoted.
//!
//! The folder is valid from its first appearance: it is built (run.json,
//! `forks/`, the lock held) in a temporary folder beside it and renamed into
//! place without replacing anything, so no crash or full disk can leave a
//! `DIR.partial` that neither a new exec nor `--resume` accepts.

use super::digest::{check_fork, RowDigest};
use super::{file_stem, CheckReport, ForkRecord, ForkSummary, RunInfo};
use crate::output::lock::{self, FolderLock};
use crate::output::promote::rename_noreplace;
use crate::output::{io_err, parent_or_dot, sync_dir, write_atomic};
pub use crate::partial_error::{ForkDamage, PartialError};
use runner_core::error::Result;
use runner_core::record::PairRecord;
use runner_os::environment::ForkSentinel;
use std::collections::HashSet;
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::os::unix::fs::PermissionsExt;
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
    let stem = name.strip_suffix(".partial").filter(|s| !s.is_empty())?;
    Some(partial.with_file_name(stem))
}

/// What the parent itself saw of a finished fork, recorded beside the
/// worker's summary.
#[derive(Debug, Clone)]
pub struct ParentSaw {
    /// Process start to exit.
    pub wall_ns: u64,
    /// The parent's whole time for the job (`ForkRecord::job_ns`), up to
    /// this call.
    pub job_ns: Option<u64>,
    /// The machine, recorded by shards.
    pub host: Option<String>,
    /// What else the machine did meanwhile; none where /proc is unreadable.
    pub sentinel: Option<ForkSentinel>,
    /// The database outside runner's schemas, before against after.
    pub database_guard: Option<runner_db::fingerprint::GuardRecord>,
}

/// An open, locked partial folder. The lock is released on drop.
#[derive(Debug)]
pub struct Partial {
    pub dir: PathBuf,
    lock: FolderLock,
}

fn exists_error(dir: &Path) -> PartialError {
    let dir = dir.to_path_buf();
    match lock::is_held(&dir) {
        Some(holder) => PartialError::InUse { dir, holder },
        None => PartialError::Exists { dir },
    }
}

impl Partial {
    /// Creates `dir` for a new run holding `info`; refuses, untouched, one
    /// that exists (of two execs started at once, exactly one gets it).
    pub fn create(dir: &Path, info: &RunInfo) -> Result<Partial> {
        let parent = parent_or_dot(dir);
        if fs::symlink_metadata(dir).is_ok() {
            return Err(exists_error(dir).into());
        }
        fs::create_dir_all(parent).map_err(|e| io_err("create the output folder", dir, e))?;
        let name = dir.file_name().unwrap_or_default().to_string_lossy();
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".new")
            .permissions(fs::Permissions::from_mode(0o777))
            .tempdir_in(parent)
            .map_err(|e| io_err("create the output folder", dir, e))?;
        fs::create_dir(tmp.path().join("forks"))
            .map_err(|e| io_err("create the output folder", dir, e))?;
        let mut lock = FolderLock::acquire(tmp.path())?;
        super::write(tmp.path(), info)?;
        match rename_noreplace(tmp.path(), dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                drop(lock);
                return Err(exists_error(dir).into());
            }
            Err(e) => return Err(io_err("create the output folder", dir, e).into()),
        }
        let _ = tmp.keep();
        lock.moved_to(dir);
        sync_dir(parent);
        Ok(Partial {
            dir: dir.to_path_buf(),
            lock,
        })
    }

    /// Opens an existing partial folder to resume it: locked, its run.json
    /// checked, and not finished.
    pub fn open(dir: &Path) -> Result<(Partial, RunInfo)> {
        let not_resumable = match fs::symlink_metadata(dir) {
            Err(cause) => Some(PartialError::Unreadable {
                dir: dir.to_path_buf(),
                cause,
            }),
            Ok(m) if m.file_type().is_symlink() => Some(PartialError::Symlink {
                dir: dir.to_path_buf(),
            }),
            Ok(m) if !m.is_dir() => Some(PartialError::NotAFolder {
                dir: dir.to_path_buf(),
            }),
            Ok(_) => None,
        };
        if let Some(e) = not_resumable {
            return Err(e.into());
        }
        if !dir.join("run.json").is_file() {
            return Err(PartialError::NoRunJson {
                dir: dir.to_path_buf(),
            }
            .into());
        }
        let lock = FolderLock::acquire(dir)?;
        let info = super::read(dir)?;
        if let Some(at) = &info.finished_at {
            return Err(PartialError::Finished {
                dir: dir.to_path_buf(),
                at: at.clone(),
            }
            .into());
        }
        fs::create_dir_all(dir.join("forks")).map_err(|e| io_err("create", dir, e))?;
        let partial = Partial {
            dir: dir.to_path_buf(),
            lock,
        };
        Ok((partial, info))
    }

    /// Deletes the folder of a run that never started a fork (it is ours:
    /// created by this process and locked since).
    pub fn remove(self) {
        let _ = fs::remove_dir_all(&self.dir);
    }

    pub fn write_run_info(&self, info: &RunInfo) -> Result<()> {
        super::write(&self.dir, info)
    }

    fn fork_path(&self, cell: u32, fork: u32, ext: &str) -> PathBuf {
        self.dir
            .join("forks")
            .join(format!("{}.{ext}", file_stem(cell, fork)))
    }

    /// The finished forks, sorted by (cell, fork), each checked against its
    /// digest, the spec and the job list; a fork that fails is bad input
    /// naming its file (nothing is re-run or deleted on a guess).
    pub fn finished_forks(&self, info: &RunInfo) -> Result<Vec<ForkRecord>> {
        Ok(self.kept(info)?.into_iter().map(|(rec, _)| rec).collect())
    }

    /// [`Self::finished_forks`] with each fork's rows, parsed as they were
    /// checked: what a resumed run holds in memory before its first fork.
    pub fn kept(&self, info: &RunInfo) -> Result<Vec<(ForkRecord, Vec<PairRecord>)>> {
        let forks = self.dir.join("forks");
        let jobs: HashSet<(u32, u32)> = info.jobs.iter().map(|j| (j.cell, j.fork)).collect();
        let mut out = Vec::new();
        let entries = fs::read_dir(&forks).map_err(|e| io_err("read", &forks, e))?;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some((cell, fork)) = name.to_str().and_then(parse_record_name) else {
                continue;
            };
            let path = entry.path();
            let damaged = |why: ForkDamage| PartialError::Damaged {
                record: path.clone(),
                why,
            };
            let bytes = fs::read(&path).map_err(|e| io_err("read", &path, e))?;
            // Written by the runner that started the run, perhaps an
            // older one: brought to the current shape like its run.json.
            use crate::output::format::{parse, Kind, ReadError};
            let rec: ForkRecord = match parse(&path, &bytes, Kind::Fork) {
                Ok(rec) => rec,
                Err(ReadError::Format(e)) => return Err(e.into()),
                Err(ReadError::Json(e)) => return Err(damaged(ForkDamage::NotARecord(e)).into()),
            };
            if (rec.summary.cell, rec.summary.fork) != (cell, fork) {
                return Err(damaged(ForkDamage::OtherFork {
                    cell: rec.summary.cell,
                    fork: rec.summary.fork,
                })
                .into());
            }
            if !jobs.contains(&(cell, fork)) {
                return Err(damaged(ForkDamage::NotAJob).into());
            }
            let csv = self.fork_path(cell, fork, "csv");
            let bytes = fs::read(&csv).map_err(|e| damaged(ForkDamage::RowsUnread(e)))?;
            let rows = check_fork(
                &bytes,
                &rec,
                &info.spec.experiment,
                &csv.display().to_string(),
            )
            .map_err(|error| PartialError::Rows {
                csv: csv.clone(),
                record: path.clone(),
                error,
            })?;
            out.push((rec, rows));
        }
        out.sort_by_key(|(r, _)| (r.summary.cell, r.summary.fork));
        Ok(out)
    }

    /// Starts the rows of a fork in progress (a temp file until committed).
    /// `counting`: the run counts instructions, so every row is written
    /// with the count columns ([`ForkSummary::columns`]); else each row in
    /// the columns it has.
    pub fn fork_writer(
        &self,
        cell: u32,
        fork: u32,
        counting: Option<runner_spec::Counting>,
    ) -> Result<ForkWriter> {
        let tmp = self.fork_path(cell, fork, "csv.tmp");
        let file = File::create(&tmp).map_err(|e| io_err("create", &tmp, e))?;
        Ok(ForkWriter {
            tmp,
            out: BufWriter::new(file),
            digest: RowDigest::default(),
            columns: counting.map(|c| runner_core::record::Columns {
                usage: true,
                instructions: true,
                cache: c.cache_sim,
            }),
            line: Vec::new(),
        })
    }

    /// Makes a fork finished: rows synced and into place, then its record.
    pub fn commit_fork(
        &self,
        writer: ForkWriter,
        summary: ForkSummary,
        checks: CheckReport,
        saw: ParentSaw,
    ) -> Result<ForkRecord> {
        let (cell, fork) = (summary.cell, summary.fork);
        let ForkWriter {
            tmp,
            mut out,
            digest,
            ..
        } = writer;
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
            return Err(e.into());
        }
        let (rows, sha256) = digest.finish();
        let record = ForkRecord {
            summary,
            checks,
            wall_ns: saw.wall_ns,
            job_ns: saw.job_ns,
            rows,
            sha256,
            host: saw.host,
            sentinel: saw.sentinel,
            database_guard: saw.database_guard,
        };
        let csv = self.fork_path(cell, fork, "csv");
        fs::rename(&tmp, &csv).map_err(|e| io_err("rename", &tmp, e))?;
        let json = serde_json::to_string_pretty(&crate::output::format::versioned(
            crate::output::format::Kind::Fork,
            &record,
        ))
        .expect("fork record serializes");
        write_atomic(&self.fork_path(cell, fork, "json"), json.as_bytes())?;
        Ok(record)
    }

    /// The finished forks' rows as `pairs.csv` (header, then the forks in
    /// (cell, fork) order), written into the folder; returns its bytes.
    pub fn assemble_pairs(&self, forks: &[ForkRecord]) -> Result<Vec<u8>> {
        let columns = super::digest::run_columns(forks);
        let mut bytes = format!("{}\n", runner_core::record::csv_header(columns)).into_bytes();
        for f in forks {
            let path = self.fork_path(f.summary.cell, f.summary.fork, "csv");
            let part = fs::read(&path).map_err(|e| io_err("read", &path, e))?;
            bytes.extend_from_slice(&part);
        }
        crate::output::guard::write(&self.dir.join("pairs.csv"), &bytes)?;
        Ok(bytes)
    }

    /// Removes the per-fork files once run.json records the finished run
    /// and `pairs.csv` holds every row.
    pub fn drop_fork_files(&self) -> Result<()> {
        let forks = self.dir.join("forks");
        fs::remove_dir_all(&forks).map_err(|e| io_err("remove", &forks, e))?;
        Ok(())
    }

    /// Puts the finished folder in place of `final_dir` (see
    /// [`crate::output::promote`]), then releases the lock; where the
    /// report it replaced went, if there was one.
    pub fn promote(self, final_dir: &Path) -> Result<Option<std::path::PathBuf>> {
        let Partial { dir, mut lock } = self;
        let old = crate::output::promote::promote(&dir, final_dir)?;
        lock.moved_to(final_dir);
        Ok(old)
    }
}

/// `c<cell>-f<fork>.json` -> (cell, fork); any other name is not a record.
fn parse_record_name(name: &str) -> Option<(u32, u32)> {
    let stem = name.strip_suffix(".json")?.strip_prefix('c')?;
    let (c, f) = stem.split_once("-f")?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(c) || !digits(f) {
        return None;
    }
    let (cell, fork) = (c.parse().ok()?, f.parse().ok()?);
    // One spelling per fork: `c01-f0.json` is not `c1-f0.json`.
    (file_stem(cell, fork) == name.strip_suffix(".json")?).then_some((cell, fork))
}

/// Rows of a fork in progress, appended as whole lines and digested.
pub struct ForkWriter {
    tmp: PathBuf,
    out: BufWriter<File>,
    digest: RowDigest,
    /// Every row's columns; none: each row's own.
    columns: Option<runner_core::record::Columns>,
    line: Vec<u8>,
}

impl ForkWriter {
    pub fn push(&mut self, r: &PairRecord) -> Result<()> {
        self.line.clear();
        let columns = self.columns.unwrap_or_else(|| r.columns());
        runner_core::record::write_line(&mut self.line, r, columns);
        self.out
            .write_all(&self.line)
            .map_err(|e| io_err("write", &self.tmp, e))?;
        self.digest.push(&self.line);
        Ok(())
    }

    pub fn discard(self) {
        let _ = fs::remove_file(&self.tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exact_record_names_are_forks() {
        assert_eq!(parse_record_name("c0-f1.json"), Some((0, 1)));
        assert_eq!(parse_record_name("c12-f304.json"), Some((12, 304)));
        for stray in [
            "c0-f1 copy.json",
            "c0-f1.json.bak",
            "c01-f1.json",
            "c0-f1.csv",
            "x0-f1.json",
            "c-f1.json",
            "c0-f.json",
            "c0-f1-f2.json",
        ] {
            assert_eq!(parse_record_name(stray), None, "{stray}");
        }
    }

    #[test]
    fn partial_and_final_paths() {
        assert_eq!(partial_path(Path::new("r/aa")), Path::new("r/aa.partial"));
        assert_eq!(final_path(Path::new("r/aa.partial")), Some("r/aa".into()));
        assert_eq!(final_path(Path::new("r/.partial")), None);
        assert_eq!(final_path(Path::new("r/aa")), None);
    }
}
