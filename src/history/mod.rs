//! `runner history reports/NAME [--since REV] [--out DIR]`: a report
//! folder over its committed versions (docs/guide/history.md).
//!
//! Every commit of the folder's first-parent history that changed its
//! run.json or pairs.csv is a version ([`git`]); each is read from git's
//! objects, checked by its digests like `runner report` checks a folder,
//! and analysed again ([`version`]); a version that fails is named and
//! skipped, never used. Consecutive versions are compared by the rule of
//! [`changes`]. The output, `history.md` and two trend plots, goes to
//! `--out` (default: `history-NAME` beside the folder), through the file
//! guard, to be committed like a report.

mod changes;
mod code;
mod error;
mod git;
mod markdown;
mod plots;
mod version;
mod version_error;

use error::HistoryError;
use runner_core::error::Result;
use std::path::{Path, PathBuf};

pub(crate) use changes::{Rule, Step};
pub(crate) use git::{Commit, Start};
pub(crate) use version::Version;

/// What a commit of the folder holds, as the history reads it.
#[derive(Debug, Clone)]
pub(crate) enum Entry {
    /// A run, checked and analysed, and how it compares with the version
    /// before it (none for the first).
    Run {
        version: Box<Version>,
        step: Option<Step>,
    },
    /// A version that could not be read or failed its checks: why.
    Skipped(String),
    /// run.json edited around a run already listed (same run id and rows
    /// still check): not a new measurement.
    Same { run_id: String },
    /// A run listed earlier as version `of`, committed again (a report
    /// folder copied back from an older commit): not a new measurement, so
    /// it is neither compared nor counted among the comparisons, whose
    /// number sets the level every comparison must reach.
    Repeat { run_id: String, of: u32 },
}

/// A commit and what it holds.
#[derive(Debug, Clone)]
pub(crate) struct Dated {
    pub commit: Commit,
    pub entry: Entry,
    /// For a version where a change is marked: the commits since the
    /// version before that touched files outside the reports ([`code`]),
    /// the ones that can have made it. None elsewhere.
    pub code: Option<Vec<Commit>>,
}

/// The whole history of one folder.
#[derive(Debug, Clone)]
pub(crate) struct History {
    /// The folder, relative to the repository's top (`reports/aa`).
    pub folder: String,
    pub since: Option<String>,
    /// Commits that touched the folder but changed neither run.json nor
    /// pairs.csv (a report re-rendered): not versions.
    pub rerendered: usize,
    pub entries: Vec<Dated>,
    /// The level at which changes were marked.
    pub rule: Rule,
    /// The repository is a shallow clone: versions older than its oldest
    /// commit may exist and were not read.
    pub shallow: bool,
    /// The folder's renames, oldest first: (its name before, its name
    /// after, the commit that renamed it). The versions before each were
    /// read from the name it had then.
    pub renames: Vec<(String, String, Commit)>,
    /// How the folder's line starts, when its first commit may be a rename
    /// git did not pair.
    pub start: Option<Start>,
}

impl History {
    /// The versions that were read, numbered from 1 in commit order.
    pub(crate) fn runs(&self) -> impl Iterator<Item = (u32, &Dated, &Version, Option<&Step>)> {
        self.entries
            .iter()
            .filter_map(|d| match &d.entry {
                Entry::Run { version, step } => Some((d, version.as_ref(), step.as_ref())),
                _ => None,
            })
            .zip(1u32..)
            .map(|((d, v, s), n)| (n, d, v, s))
    }
}

/// What `runner history` wrote and prints.
pub(crate) struct Outcome {
    pub summary: String,
}

/// The default output folder: `history-NAME` beside the report folder.
fn default_out(dir: &Path) -> PathBuf {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    runner_folder::output::parent_or_dot(dir).join(format!("history-{name}"))
}

/// `--out` must not be the report folder or inside it: runner writes
/// nothing into a run's folder but the run's own files.
fn check_out(dir: &Path, out: &Path) -> Result<(), HistoryError> {
    let (Ok(d), Ok(o)) = (
        runner_folder::output::target::absolute(dir),
        runner_folder::output::target::absolute(out),
    ) else {
        return Ok(());
    };
    if o.starts_with(&d) {
        return Err(HistoryError::OutInside {
            out: out.to_path_buf(),
            dir: dir.to_path_buf(),
            default: default_out(dir),
        });
    }
    Ok(())
}

/// Reads every version of the folder (see the module doc).
pub(crate) fn read(dir: &Path, since: Option<&str>) -> Result<History, HistoryError> {
    if std::fs::metadata(dir).is_ok_and(|m| !m.is_dir()) {
        return Err(HistoryError::IsAFile {
            dir: dir.to_path_buf(),
        });
    }
    let repo = git::Repo::of(dir)?;
    let (commits, start) = repo.commits(since)?;
    let renames = renames(&commits);
    if commits.is_empty() {
        return Err(no_versions(dir, since, repo.top));
    }
    let mut walk = Walk::new(repo.files()?);
    for commit in commits {
        walk.commit(commit)?;
    }
    let Walk {
        mut entries,
        rerendered,
        last,
        ..
    } = walk;
    // The rule's level depends on how many comparisons the whole history
    // makes, so changes are marked once every version is read.
    let rule = mark_changes(&mut entries, last.as_ref().map_or(0.95, |v| v.confidence));
    attach_code(&mut entries, &repo);
    Ok(History {
        shallow: repo.is_shallow()?,
        folder: repo.folder,
        since: since.map(String::from),
        rerendered,
        entries,
        rule,
        renames,
        start,
    })
}

/// Versions before a rename were read under the old name: the page says so.
fn renames(commits: &[Commit]) -> Vec<(String, String, Commit)> {
    commits
        .windows(2)
        .filter(|w| w[0].folder != w[1].folder)
        .map(|w| (w[0].folder.clone(), w[1].folder.clone(), w[1].clone()))
        .collect()
}

/// Nothing to read is the user's mistake; the error says if `--since` cut it.
fn no_versions(dir: &Path, since: Option<&str>, top: PathBuf) -> HistoryError {
    match since {
        None => HistoryError::NeverCommitted {
            dir: dir.to_path_buf(),
            top,
        },
        Some(rev) => HistoryError::NoneSince {
            dir: dir.to_path_buf(),
            rev: rev.to_string(),
            top,
        },
    }
}

/// Each commit is judged against the ones before it: this carries them along.
struct Walk {
    files: git::Files,
    entries: Vec<Dated>,
    /// Commits that changed neither file the history reads.
    rerendered: usize,
    /// The blobs of run.json and pairs.csv at the commit before.
    last_blobs: Option<(Option<String>, Option<String>)>,
    /// The last version listed as a run: the next run is compared with it.
    last: Option<Version>,
    /// Every run listed so far: its files' blobs, its run id and its version
    /// number. A run committed again is known by its blobs without reading
    /// it (a history of many copies of two runs reads two).
    listed: Vec<((String, String), String, u32)>,
}

impl Walk {
    /// Nothing is listed yet, so the first commit is read whatever it holds.
    fn new(files: git::Files) -> Walk {
        Walk {
            files,
            entries: Vec::new(),
            rerendered: 0,
            last_blobs: None,
            last: None,
            listed: Vec::new(),
        }
    }

    /// A commit that changed neither run.json nor pairs.csv holds no version.
    fn commit(&mut self, commit: Commit) -> Result<(), HistoryError> {
        let blobs = (
            self.files.blob(&commit, runner_folder::FILE)?,
            self.files.blob(&commit, "pairs.csv")?,
        );
        if self.last_blobs.as_ref() == Some(&blobs) {
            self.rerendered += 1;
            return Ok(());
        }
        self.last_blobs = Some(blobs.clone());
        let entry = match blobs {
            (None, _) => Entry::Skipped(
                "no run.json at this commit (the folder was removed, or holds no finished run)"
                    .into(),
            ),
            (Some(_), None) => Entry::Skipped("no pairs.csv at this commit".into()),
            (Some(r), Some(p)) => self.run((r, p))?,
        };
        self.entries.push(Dated {
            commit,
            entry,
            code: None,
        });
        Ok(())
    }

    /// Known blobs skip the read: a copy of a listed run can only be that run.
    fn run(&mut self, key: (String, String)) -> Result<Entry, HistoryError> {
        if let Some((_, run_id, of)) = self.listed.iter().find(|(k, _, _)| *k == key) {
            return Ok(Entry::Repeat {
                run_id: run_id.clone(),
                of: *of,
            });
        }
        let run = self.files.read(&key.0)?;
        let pairs = self.files.read(&key.1)?;
        Ok(match version::read(&run, &pairs) {
            Err(why) => Entry::Skipped(why.to_string()),
            Ok(v) => self.version(key, v),
        })
    }

    /// Only a new measurement is compared; a run already listed is named.
    fn version(&mut self, key: (String, String), v: Version) -> Entry {
        if self.last.as_ref().is_some_and(|l| l.run_id == v.run_id) {
            return Entry::Same { run_id: v.run_id };
        }
        if let Some((_, _, of)) = self.listed.iter().find(|(_, id, _)| *id == v.run_id) {
            return Entry::Repeat {
                run_id: v.run_id,
                of: *of,
            };
        }
        self.listed
            .push((key, v.run_id.clone(), self.listed.len() as u32 + 1));
        let step = self.last.as_ref().map(|l| changes::step(l, &v));
        self.last = Some(v.clone());
        Entry::Run {
            version: Box::new(v),
            step,
        }
    }
}

/// The rule's level depends on the whole history's comparisons: mark at once.
fn mark_changes(entries: &mut [Dated], confidence: f64) -> Rule {
    let mut steps: Vec<&mut Step> = entries
        .iter_mut()
        .filter_map(|d| match &mut d.entry {
            Entry::Run { step: Some(s), .. } => Some(s),
            _ => None,
        })
        .collect();
    changes::mark(&mut steps, confidence)
}

/// Code commits since the version before are the ones that can have made it.
fn attach_code(entries: &mut [Dated], repo: &git::Repo) {
    let reports = code::reports_of(&repo.folder).to_string();
    let mut before: Option<String> = None;
    for d in entries {
        let Entry::Run { step, .. } = &d.entry else {
            continue;
        };
        let marked = step
            .as_ref()
            .is_some_and(|s| s.cells.iter().any(|c| c.marked));
        if let (true, Some(b)) = (marked, &before) {
            d.code = Some(code::between(&repo.top, &reports, b, &d.commit.hash));
        }
        before = Some(d.commit.hash.clone());
    }
}

/// `runner history`: read, render, write.
pub(crate) fn history(dir: &Path, since: Option<&str>, out: Option<&Path>) -> Result<Outcome> {
    let out = out.map_or_else(|| default_out(dir), Path::to_path_buf);
    check_out(dir, &out)?;
    let h = read(dir, since)?;
    let text = markdown::render(&h);
    let svgs = plots::render(&h)?;
    let mut files: Vec<(PathBuf, &[u8])> = vec![(out.join("history.md"), text.as_bytes())];
    files.extend(
        svgs.iter()
            .map(|(name, svg)| (out.join(name), svg.as_bytes())),
    );
    if std::fs::symlink_metadata(&out).is_ok_and(|m| !m.is_dir()) {
        return Err(HistoryError::OutNotAFolder { out }.into());
    }
    std::fs::create_dir_all(&out)
        .map_err(|e| runner_folder::output::io_err("create the folder", &out, e))?;
    // Every file checked before the first is written: a refusal changes nothing.
    runner_folder::output::guard::write_all(&files)?;
    let written = out.join("history.md");
    Ok(Outcome {
        summary: format!(
            "{}\nhistory: {}\n",
            markdown::summary_text(&h),
            written.display()
        ),
    })
}
