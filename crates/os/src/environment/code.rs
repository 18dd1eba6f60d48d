//! The user's code a run measured: the git repository that holds the
//! experiment file, as it was when the run started. runner's own build is
//! recorded beside it (`Environment::git_commit`), and the two are the same
//! only when runner measures itself.
//!
//! Read through the git command line, as `git describe --dirty` sees a
//! tree: the tree is dirty when a tracked file differs from the commit
//! (staged or not); untracked files are not part of it. What runner writes
//! itself is left out (the report folders under `reports/` and the run's
//! own output folder), so the run before this one, not yet committed,
//! does not make the tree dirty.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What a run knows of the code it measured.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum Code {
    /// Nothing is known: a runner from before this record wrote the file
    /// (the format's migration says so), or runner did not measure the
    /// pairs (`runner analyze`).
    NotRecorded,
    /// No git repository holds the experiment file, or git could not be
    /// asked; `why` in words.
    NoRepository { why: String },
    /// A git repository.
    Git(Repository),
}

/// A git repository as the run found it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Repository {
    /// The commit checked out (`git rev-parse HEAD`); none before the
    /// repository's first commit.
    pub commit: Option<String>,
    /// The branch checked out; none on a detached HEAD.
    pub branch: Option<String>,
    /// A tracked file differs from the commit, outside what runner writes.
    pub dirty: bool,
    /// SHA-256 of those differences (`git diff HEAD --binary`), which tells
    /// two dirty runs of one commit apart; none when clean.
    pub diff_sha256: Option<String>,
}

impl Code {
    /// The commit, branch and state of the repository holding `dir`, with
    /// `leave_out` (paths runner writes, absolute or relative to the
    /// current folder) left out of the dirty state.
    pub fn capture(dir: &Path, leave_out: &[PathBuf]) -> Code {
        match capture(dir, leave_out) {
            Ok(r) => Code::Git(r),
            Err(why) => Code::NoRepository {
                why: why.to_string(),
            },
        }
    }
}

/// Why git could not say what the repository holds: the clause
/// `Code::NoRepository` records.
#[derive(Debug, thiserror::Error)]
enum Unread {
    #[error("git could not be run ({0})")]
    NotRun(std::io::Error),
    /// git's own complaint, its first line without `fatal: `.
    #[error("{0}")]
    Said(String),
    #[error("{path} ({source})")]
    Path {
        path: String,
        source: std::io::Error,
    },
    #[error("git gave no output")]
    NoOutput,
    #[error("reading git's diff ({0})")]
    Read(std::io::Error),
    #[error("git could not be waited for ({0})")]
    Wait(std::io::Error),
}

/// git's complaint on stderr, its first line without `fatal: `.
fn said(stderr: &str) -> Unread {
    let first = stderr.lines().next().unwrap_or("").trim();
    Unread::Said(first.strip_prefix("fatal: ").unwrap_or(first).to_string())
}

fn git(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.arg("-C").arg(dir);
    // The user's pager, colours and translations stay out of what is
    // parsed; the repository is the one that holds `dir`.
    c.env("GIT_PAGER", "cat")
        .env("LC_ALL", "C")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    c
}

/// git's stdout, trimmed, or its complaint in words.
fn text(cmd: &mut Command) -> Result<String, Unread> {
    let out = cmd.output().map_err(Unread::NotRun)?;
    if !out.status.success() {
        return Err(said(&String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn capture(dir: &Path, leave_out: &[PathBuf]) -> Result<Repository, Unread> {
    let dir = std::path::absolute(dir).map_err(|source| Unread::Path {
        path: dir.display().to_string(),
        source,
    })?;
    let top = PathBuf::from(text(git(&dir).args(["rev-parse", "--show-toplevel"]))?);
    let top = top.canonicalize().unwrap_or(top);
    let commit = text(git(&top).args(["rev-parse", "--verify", "-q", "HEAD"])).ok();
    let branch = text(git(&top).args(["symbolic-ref", "--short", "-q", "HEAD"]))
        .ok()
        .filter(|b| !b.is_empty());
    // Pathspecs, relative to the top: everything but what runner writes.
    let mut pathspecs = vec![":(top)".to_string()];
    for p in leave_out {
        let Some(rel) = relative_to(&top, p) else {
            continue;
        };
        if !rel.as_os_str().is_empty() {
            pathspecs.push(format!(":(top,exclude,literal){}", rel.display()));
        }
    }
    let mut diff = git(&top);
    diff.args([
        "diff",
        "--binary",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
    ]);
    match &commit {
        Some(_) => diff.arg("HEAD"),
        // Before the first commit, what is staged is all there is.
        None => diff.arg("--cached"),
    };
    diff.arg("--").args(&pathspecs);
    let (len, sha256) = digest(&mut diff)?;
    Ok(Repository {
        commit,
        branch,
        dirty: len > 0,
        diff_sha256: (len > 0).then_some(sha256),
    })
}

/// `path` relative to `top`, if it is inside it (the path's missing tail
/// kept as it is: the output folder may not exist yet).
fn relative_to(top: &Path, path: &Path) -> Option<PathBuf> {
    let abs = std::path::absolute(path).ok()?;
    let mut existing = abs.as_path();
    let mut tail = Vec::new();
    let real = loop {
        if let Ok(real) = existing.canonicalize() {
            break real;
        }
        tail.push(existing.file_name()?.to_os_string());
        existing = existing.parent()?;
    };
    let mut rel = real.strip_prefix(top).ok()?.to_path_buf();
    rel.extend(tail.iter().rev());
    Some(rel)
}

/// The length and SHA-256 of what `cmd` prints, read as it streams (a
/// diff of binary files may be large).
fn digest(cmd: &mut Command) -> Result<(u64, String), Unread> {
    let mut child = cmd.stdout(Stdio::piped()).spawn().map_err(Unread::NotRun)?;
    let mut out = child.stdout.take().ok_or(Unread::NoOutput)?;
    let mut hash = Sha256::new();
    let mut len = 0u64;
    let mut buf = [0u8; 64 * 1024];
    loop {
        match out.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                hash.update(&buf[..n]);
                len += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Unread::Read(e)),
        }
    }
    let status = child.wait().map_err(Unread::Wait)?;
    if !status.success() {
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        return Err(said(&err));
    }
    let hex: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok((len, hex))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn a_repository_is_named_by_commit_and_branch_and_said_dirty() {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path();
        run(top, &["init", "-q", "-b", "work"]);
        std::fs::create_dir_all(top.join("experiments")).unwrap();
        std::fs::write(top.join("experiments/a.toml"), "x = 1\n").unwrap();
        std::fs::write(top.join("code.c"), "int main;\n").unwrap();
        let none = Code::capture(&top.join("experiments"), &[]);
        assert!(
            matches!(&none, Code::Git(r) if r.commit.is_none() && !r.dirty),
            "{none:?}"
        );
        run(top, &["add", "."]);
        run(top, &["commit", "-q", "-m", "first"]);
        let head = text(git(top).args(["rev-parse", "HEAD"])).unwrap();
        let reports = top.join("reports");
        let clean = Code::capture(&top.join("experiments"), std::slice::from_ref(&reports));
        let Code::Git(r) = &clean else {
            panic!("{clean:?}")
        };
        assert_eq!(r.commit.as_deref(), Some(head.as_str()));
        assert_eq!(r.branch.as_deref(), Some("work"));
        assert!(!r.dirty && r.diff_sha256.is_none());
        // What runner writes does not make the tree dirty; the user's code does.
        std::fs::create_dir_all(&reports).unwrap();
        std::fs::write(reports.join("r.md"), "x").unwrap();
        run(top, &["add", "reports"]);
        run(top, &["commit", "-q", "-m", "report"]);
        std::fs::write(reports.join("r.md"), "y").unwrap();
        let Code::Git(r) = Code::capture(top, std::slice::from_ref(&reports)) else {
            panic!()
        };
        assert!(!r.dirty, "{r:?}");
        std::fs::write(top.join("code.c"), "int main(void);\n").unwrap();
        let Code::Git(a) = Code::capture(top, std::slice::from_ref(&reports)) else {
            panic!()
        };
        assert!(a.dirty);
        std::fs::write(top.join("code.c"), "int main(int);\n").unwrap();
        let Code::Git(b) = Code::capture(top, &[reports]) else {
            panic!()
        };
        assert!(b.dirty && b.diff_sha256 != a.diff_sha256 && b.diff_sha256.is_some());
    }

    #[test]
    fn outside_a_repository_says_why() {
        let tmp = tempfile::tempdir().unwrap();
        let Code::NoRepository { why } = Code::capture(tmp.path(), &[]) else {
            panic!("a temporary folder is in no repository")
        };
        assert!(why.contains("not a git repository"), "{why}");
    }
}
