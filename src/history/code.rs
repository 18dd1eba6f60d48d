//! The code between two versions of a report folder: the commits after
//! the one that saved the earlier version, up to and including the one
//! that saved the later, that touched files outside the reports (the
//! report folder's parent, `reports/`, which holds what runner writes).
//! Where the history marks a change, these are the commits that can have
//! made it: what `git bisect` is given.
//!
//! Every commit of the range is listed, not only the first-parent line the
//! history reads its versions from: a change may come from a merged side
//! branch, and `git bisect` walks those too.

use super::git::Commit;
use std::path::Path;
use std::process::{Command, Stdio};

/// The commits after `before` up to `after` that touched files outside
/// `reports` (a folder relative to the repository's top), oldest first;
/// none when git cannot say (the history is read already, so this only
/// adds a list).
pub(super) fn between(top: &Path, reports: &str, before: &str, after: &str) -> Vec<Commit> {
    let out = Command::new("git")
        .arg("-C")
        .arg(top)
        .env("GIT_PAGER", "cat")
        .env("LC_ALL", "C")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .args([
            "log",
            "--reverse",
            "--no-show-signature",
            "--format=%H%x00%h%x00%cI%x00%s",
            &format!("{before}..{after}"),
            "--",
            ":(top)",
            &format!(":(top,exclude,literal){reports}"),
        ])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    let Some(out) = out.ok().filter(|o| o.status.success()) else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let mut f = line.splitn(4, '\0');
            let (hash, short, date, subject) = (f.next()?, f.next()?, f.next()?, f.next()?);
            Some(Commit {
                hash: hash.into(),
                short: short.into(),
                date: date.get(..16).unwrap_or(date).replace('T', " "),
                subject: subject.into(),
                // A commit of the code, not of the report folder.
                folder: String::new(),
            })
        })
        .collect()
}

/// The folder whose changes are the reports' own: the report folder's
/// parent (`reports` for `reports/aa`), or the folder itself at the top.
pub(super) fn reports_of(folder: &str) -> &str {
    match folder.rsplit_once('/') {
        Some((parent, _)) => parent,
        None => folder,
    }
}
