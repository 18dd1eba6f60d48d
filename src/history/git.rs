//! A report folder's committed versions, read from git's object store
//! through the git command line: `git log` lists the commits that touched
//! the folder, and one `git cat-file --batch` process hands over the
//! blobs, one version at a time, so memory holds one version's files and
//! nothing is checked out.
//!
//! The commits are the folder's first-parent history: the line of the
//! branch as it was built, where a side branch's report arrives with the
//! commit that merged it. Pathspecs are literal (`--literal-pathspecs`),
//! so a folder named with `*` or `:` means just that folder.
//!
//! A folder that was renamed is followed, as `git log --follow` follows a
//! file (which it does for one file only, not a folder): where the
//! folder's oldest commit adds its run.json, git's rename detection on
//! that commit says whether the run.json came from another folder, and if
//! so that folder's commits before it are read too, each version from the
//! folder it was in then. Where git pairs no rename but the same commit
//! removed another folder's run.json (moved and edited at once), the
//! history says where it starts and which folder to read for the rest.

use super::error::{GitRefused, HistoryError};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// A commit, as the history shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Commit {
    pub hash: String,
    pub short: String,
    /// Committer date, `YYYY-MM-DD HH:MM` in the committer's time zone.
    pub date: String,
    pub subject: String,
    /// The report folder at this commit, relative to the repository's top
    /// (with `/`): the one asked for, or the name it had before a rename.
    pub folder: String,
}

/// How the folder's line of commits begins, when that is worth a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Start {
    /// Its first commit adds its run.json and removes `removed`'s (a
    /// folder's run.json that git did not pair as a rename): perhaps the
    /// folder before a rename made together with an edit.
    BesideRemoval { commit: Commit, removed: String },
}

/// Where a folder's oldest commit got its run.json.
enum Origin {
    /// Added there, or changed in place.
    Added,
    /// Renamed from this folder.
    Renamed(String),
    /// Added there while another folder's run.json was removed.
    BesideRemoval(String),
}

/// The repository a report folder is in.
pub(super) struct Repo {
    pub top: PathBuf,
    /// The folder, relative to `top`, with `/` separators.
    pub folder: String,
}

fn git(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.arg("-C").arg(dir).arg("--literal-pathspecs");
    // The user's pager, colours and translations stay out of what is parsed.
    c.env("GIT_PAGER", "cat")
        .env("LC_ALL", "C")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE");
    c
}

/// What a step of reading the history ends with.
type Result<T, E = HistoryError> = std::result::Result<T, E>;

/// Runs git and returns its stdout, or what it said when it refused (the
/// outer error: git could not be run at all).
fn output(cmd: &mut Command) -> Result<std::result::Result<String, GitRefused>> {
    let out = cmd.output().map_err(HistoryError::NoGit)?;
    if out.status.success() {
        Ok(Ok(String::from_utf8_lossy(&out.stdout).into_owned()))
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err.lines().next().unwrap_or("").trim();
        Ok(Err(GitRefused(
            first.strip_prefix("fatal: ").unwrap_or(first).to_string(),
        )))
    }
}

/// The top folder of the repository holding `dir`, if any.
fn top_of(dir: &Path) -> Result<Option<PathBuf>> {
    Ok(output(git(dir).args(["rev-parse", "--show-toplevel"]))?
        .ok()
        .map(|t| PathBuf::from(t.trim_end_matches('\n'))))
}

impl Repo {
    /// The repository that holds `folder` (which may no longer exist in
    /// the working tree): one sentence and exit 2 when there is none, or
    /// when the folder lies outside the repository of the current folder.
    pub(super) fn of(folder: &Path) -> Result<Repo> {
        let abs = runner_folder::output::target::absolute(folder).map_err(|source| {
            HistoryError::Unresolvable {
                folder: folder.to_path_buf(),
                source,
            }
        })?;
        let existing = abs
            .ancestors()
            .find(|a| a.is_dir())
            .unwrap_or(Path::new("/"));
        let top = match top_of(existing)? {
            Some(t) => t,
            None => {
                let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
                return Err(match top_of(&cwd)? {
                    Some(top) => HistoryError::OutsideCurrentRepository {
                        folder: folder.to_path_buf(),
                        top,
                    },
                    None => HistoryError::NotInRepository {
                        folder: folder.to_path_buf(),
                    },
                });
            }
        };
        let top = std::fs::canonicalize(&top).unwrap_or(top);
        let Ok(rel) = abs.strip_prefix(&top) else {
            return Err(HistoryError::OutsideRepository {
                folder: folder.to_path_buf(),
                top,
            });
        };
        let parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.is_empty() {
            return Err(HistoryError::RepositoryTop {
                folder: folder.to_path_buf(),
            });
        }
        let rel = parts.join("/");
        if rel.contains('\n') {
            return Err(HistoryError::LineBreak {
                folder: folder.to_path_buf(),
            });
        }
        Ok(Repo { top, folder: rel })
    }

    /// The commit `rev` names, or a sentence saying it names none.
    fn resolve(&self, rev: &str) -> Result<String> {
        let spec = format!("{rev}^{{commit}}");
        match output(git(&self.top).args([
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &spec,
        ]))? {
            Ok(hash) if !hash.trim().is_empty() => Ok(hash.trim().to_string()),
            _ => Err(HistoryError::NotACommit {
                rev: rev.to_string(),
                top: self.top.clone(),
            }),
        }
    }

    /// The first-parent commits of `range` that touched `folder`, oldest
    /// first.
    fn log(&self, range: &[&str], folder: &str) -> Result<Vec<Commit>> {
        let mut cmd = git(&self.top);
        cmd.args([
            "log",
            "--first-parent",
            "--reverse",
            "--no-show-signature",
            "--format=%H%x00%h%x00%cI%x00%s",
        ])
        .args(range)
        .arg("--")
        .arg(folder);
        let text = output(&mut cmd)?.map_err(|refused| HistoryError::GitFailed {
            command: "log",
            refused,
        })?;
        Ok(text
            .lines()
            .filter_map(|line| {
                let mut f = line.splitn(4, '\0');
                let (hash, short, date, subject) = (f.next()?, f.next()?, f.next()?, f.next()?);
                Some(Commit {
                    hash: hash.into(),
                    short: short.into(),
                    date: date.get(..16).unwrap_or(date).replace('T', " "),
                    subject: subject.into(),
                    folder: folder.into(),
                })
            })
            .collect())
    }

    /// The commits that changed the folder, oldest first, across its
    /// renames (module doc); with `since`, the one whose version was
    /// current at `since` and every later one. Also how the line starts,
    /// when a removal beside its first commit may be an unpaired rename.
    pub(super) fn commits(&self, since: Option<&str>) -> Result<(Vec<Commit>, Option<Start>)> {
        // An empty repository has no HEAD: nothing was ever committed.
        let head =
            output(git(&self.top).args(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]))?;
        if head.is_err() {
            return Ok((Vec::new(), None));
        }
        let mut segments: Vec<Vec<Commit>> = Vec::new();
        let mut folder = self.folder.clone();
        let mut tip = "HEAD".to_string();
        let mut start = None;
        loop {
            let segment = self.log(&[&tip], &folder)?;
            let Some(first) = segment.first().cloned() else {
                break;
            };
            segments.push(segment);
            match self.origin(&first)? {
                Origin::Renamed(old) if segments.len() < 64 => {
                    tip = format!("{}^1", first.hash);
                    folder = old;
                }
                Origin::BesideRemoval(removed) => {
                    start = Some(Start::BesideRemoval {
                        commit: first,
                        removed,
                    });
                    break;
                }
                _ => break,
            }
        }
        let mut all: Vec<Commit> = segments.into_iter().rev().flatten().collect();
        if let Some(rev) = since {
            let base = self.resolve(rev)?;
            // The commits after `since`, and the last one before: the
            // version current at `since`.
            let list = output(git(&self.top).args(["rev-list", &format!("{base}..HEAD")]))?
                .map_err(|refused| HistoryError::GitFailed {
                    command: "rev-list",
                    refused,
                })?;
            let after: std::collections::HashSet<&str> = list.lines().collect();
            let first = all
                .iter()
                .rposition(|c| !after.contains(c.hash.as_str()))
                .unwrap_or(0);
            all.drain(..first);
        }
        Ok((all, start))
    }

    /// Where the run.json that `commit` put in its folder came from: git's
    /// rename detection on the commit against its first parent.
    fn origin(&self, commit: &Commit) -> Result<Origin> {
        let parent = format!("{}^1", commit.hash);
        let has_parent = output(git(&self.top).args([
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{parent}^{{commit}}"),
        ]))?
        .is_ok();
        if !has_parent {
            return Ok(Origin::Added);
        }
        let text = output(git(&self.top).args([
            "diff-tree",
            "-r",
            "-M",
            "-z",
            "--name-status",
            &parent,
            &commit.hash,
        ]))?
        .map_err(|refused| HistoryError::GitFailed {
            command: "diff-tree",
            refused,
        })?;
        let run_json = format!("{}/{}", commit.folder, runner_folder::FILE);
        let folder_of = |path: &str| {
            path.strip_suffix(runner_folder::FILE)
                .and_then(|p| p.strip_suffix('/'))
                .map(String::from)
        };
        let mut fields = text.split('\0').filter(|f| !f.is_empty());
        let (mut added, mut removed) = (false, None);
        while let Some(status) = fields.next() {
            let paired = status.starts_with('R') || status.starts_with('C');
            let from = fields.next().unwrap_or_default();
            let to = if paired {
                fields.next().unwrap_or_default()
            } else {
                from
            };
            match status.chars().next() {
                Some('R') if to == run_json => {
                    // A name with a line break cannot be asked of git's
                    // batch interface: the line stops there.
                    let usable = |o: &String| *o != commit.folder && !o.contains('\n');
                    if let Some(old) = folder_of(from).filter(usable) {
                        return Ok(Origin::Renamed(old));
                    }
                }
                Some('A') if to == run_json => added = true,
                Some('D') if removed.is_none() => removed = folder_of(from),
                _ => {}
            }
        }
        Ok(match (added, removed) {
            (true, Some(r)) => Origin::BesideRemoval(r),
            _ => Origin::Added,
        })
    }

    /// Whether the repository is a shallow clone (CI's default checkout
    /// fetches one commit): older versions of the folder may exist that
    /// this clone does not hold. A git too old to answer is taken as not
    /// shallow (it prints the option back instead of `true`).
    pub(super) fn is_shallow(&self) -> Result<bool> {
        Ok(
            output(git(&self.top).args(["rev-parse", "--is-shallow-repository"]))?
                .is_ok_and(|s| s.trim() == "true"),
        )
    }

    /// Readers of the folder's files at any commit.
    pub(super) fn files(&self) -> Result<Files> {
        Ok(Files {
            check: Cat::start(&self.top, "--batch-check")?,
            batch: Cat::start(&self.top, "--batch")?,
        })
    }
}

/// One `git cat-file` process, asked one object at a time (git flushes
/// after each object unless told to buffer).
struct Cat {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Cat {
    fn start(top: &Path, mode: &str) -> Result<Cat> {
        let mut child = git(top)
            .args(["cat-file", mode])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(HistoryError::NoGit)?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        Ok(Cat {
            child,
            stdin: Some(stdin),
            stdout,
        })
    }

    /// Asks for `name` and reads git's header line, split in words.
    fn ask(&mut self, name: &str) -> Result<Vec<String>> {
        let stdin = self.stdin.as_mut().expect("open until drop");
        writeln!(stdin, "{name}").map_err(HistoryError::CatFileBroken)?;
        stdin.flush().map_err(HistoryError::CatFileBroken)?;
        let mut header = String::new();
        if self
            .stdout
            .read_line(&mut header)
            .map_err(HistoryError::CatFileBroken)?
            == 0
        {
            return Err(HistoryError::CatFileStopped);
        }
        Ok(header.split_whitespace().map(String::from).collect())
    }

    fn body(&mut self, size: u64) -> Result<Vec<u8>> {
        let mut bytes = Vec::with_capacity(size as usize);
        (&mut self.stdout)
            .take(size)
            .read_to_end(&mut bytes)
            .map_err(HistoryError::CatFileBroken)?;
        let mut newline = [0u8; 1];
        self.stdout
            .read_exact(&mut newline)
            .map_err(HistoryError::CatFileBroken)?;
        if bytes.len() as u64 != size {
            return Err(HistoryError::CatFileShort);
        }
        Ok(bytes)
    }
}

impl Drop for Cat {
    fn drop(&mut self) {
        // Closing stdin ends git cat-file; it is reaped here.
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// The folder's files at any commit: which blob a file is (cheap, to skip
/// a commit that changed nothing the history reads), and its bytes.
pub(super) struct Files {
    check: Cat,
    batch: Cat,
}

impl Files {
    /// The blob id of `name` in the folder at `commit`; none when the
    /// commit has no such file (or something else than a file there).
    pub(super) fn blob(&mut self, commit: &Commit, name: &str) -> Result<Option<String>> {
        let words = self
            .check
            .ask(&format!("{}:{}/{name}", commit.hash, commit.folder))?;
        Ok(match words.as_slice() {
            [oid, kind, _] if kind == "blob" => Some(oid.clone()),
            _ => None,
        })
    }

    /// The bytes of blob `oid`.
    pub(super) fn read(&mut self, oid: &str) -> Result<Vec<u8>> {
        let words = self.batch.ask(oid)?;
        match words.as_slice() {
            [_, kind, size] if kind == "blob" => {
                let size = match size.parse() {
                    Ok(size) => size,
                    Err(source) => return Err(HistoryError::CatFileSize { words, source }),
                };
                self.batch.body(size)
            }
            _ => Err(HistoryError::NoBlob {
                oid: oid.to_string(),
                answer: words.join(" "),
            }),
        }
    }
}
