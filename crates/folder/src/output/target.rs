//! What runner may write where, decided before anything runs.
//!
//! `exec --out DIR` replaces DIR only when it is missing, an empty folder,
//! or a report folder runner wrote: a real folder (not a symbolic link)
//! whose run.json is runner's, finished, and whose other entries are files
//! runner wrote, unchanged since: those its `.runner-files.json` lists
//! (`guard`), or, in an older folder without that record, runner's fixed
//! names (report.md, pairs.csv, analysis.json, gate.json and the three
//! plots; never `*.svg` by pattern), plus the lock of an exec that was
//! killed. Anything else at DIR (a file, a
//! link, a folder with a user's notes, `.`, the current folder or one of its
//! parents) is refused, exit 2, before the first fork. The previous report
//! goes to `DIR.old`, which may itself only hold an earlier report of
//! runner's (see `promote`).
//!
//! `report DIR --out FILE` writes inside DIR only `DIR/report.md`, and
//! outside DIR only where `guard` allows it.

use super::{guard, parent_or_dot, OutputError};
use runner_core::error::Result;
use std::fs;
use std::path::{Component, Path, PathBuf};

/// What is at a path an exec would write its folder to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Existing {
    Missing,
    EmptyFolder,
    RunnerReport,
    /// Anything runner must not replace, with the reason (a sentence part:
    /// "is a file", "holds files runner did not write (notes.txt)").
    Foreign(String),
}

/// The report folder a run with `--out out` writes, after `promote`, and
/// where the report it replaces goes.
pub fn old_path(final_dir: &Path) -> PathBuf {
    let mut name = final_dir.file_name().unwrap_or_default().to_os_string();
    name.push(".old");
    final_dir.with_file_name(name)
}

/// Classifies `path` without following a symbolic link.
pub(crate) fn existing(path: &Path) -> Existing {
    let meta = match fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Existing::Missing,
        Err(e) => return Existing::Foreign(format!("cannot be read ({e})")),
        Ok(m) => m,
    };
    if meta.file_type().is_symlink() {
        let to = fs::read_link(path)
            .map(|t| t.display().to_string())
            .unwrap_or_default();
        return Existing::Foreign(format!("is a symbolic link (to {to})"));
    }
    if !meta.is_dir() {
        return Existing::Foreign("is a file, not a folder".into());
    }
    let mut foreign = match guard::foreign_entries(path) {
        Ok(f) => f,
        Err(why) => return Existing::Foreign(why.to_string()),
    };
    let empty = fs::read_dir(path).is_ok_and(|mut e| e.next().is_none());
    if empty {
        return Existing::EmptyFolder;
    }
    if !guard::runner_run_json(&path.join("run.json"), true) {
        return Existing::Foreign(
            "is a folder that runner did not write (it has no finished run.json of runner's)"
                .into(),
        );
    }
    if foreign.is_empty() {
        return Existing::RunnerReport;
    }
    foreign.sort();
    let shown: Vec<&str> = foreign.iter().take(3).map(String::as_str).collect();
    let more = match foreign.len() {
        n if n > 3 => format!(" and {} more", n - 3),
        _ => String::new(),
    };
    Existing::Foreign(format!(
        "holds files runner did not write ({}{more})",
        shown.join(", ")
    ))
}

/// `path` made absolute without resolving its last component: the parent
/// resolved where it exists, so `.`, `..` and links in the parent are seen.
pub fn absolute(path: &Path) -> std::io::Result<PathBuf> {
    let path = std::path::absolute(path)?;
    let mut missing = Vec::new();
    let mut at = path.as_path();
    loop {
        if let Ok(real) = fs::canonicalize(at) {
            let mut out = real;
            for part in missing.iter().rev() {
                out.push(part);
            }
            return Ok(out);
        }
        match (at.file_name(), at.parent()) {
            (Some(name), Some(parent)) => {
                missing.push(name.to_os_string());
                at = parent;
            }
            _ => return Ok(path),
        }
    }
}

/// The checks on `--out DIR` for a run (see the module doc). `what` names
/// the flag for the message.
pub fn check_out(out: &Path, what: &str) -> Result<()> {
    let names_a_folder = matches!(out.components().next_back(), Some(Component::Normal(_)));
    if !names_a_folder {
        return Err(OutputError::NotAFolderName {
            flag: what.to_string(),
            out: out.to_path_buf(),
        }
        .into());
    }
    let real = fs::canonicalize(parent_or_dot(out))
        .map(|p| p.join(out.file_name().unwrap_or_default()))
        .ok();
    if let (Some(real), Ok(cwd)) = (&real, std::env::current_dir()) {
        if cwd.starts_with(real) {
            return Err(OutputError::CurrentFolder {
                flag: what.to_string(),
                out: out.to_path_buf(),
            }
            .into());
        }
    }
    if let Some(file) = out
        .ancestors()
        .skip(1)
        .find(|a| !a.as_os_str().is_empty() && fs::symlink_metadata(a).is_ok())
        .filter(|a| !a.is_dir())
    {
        return Err(OutputError::UnderAFile {
            out: out.to_path_buf(),
            file: file.to_path_buf(),
        }
        .into());
    }
    let old = old_path(out);
    match existing(out) {
        Existing::Missing | Existing::EmptyFolder => Ok(()),
        Existing::RunnerReport => match existing(&old) {
            Existing::Missing | Existing::EmptyFolder | Existing::RunnerReport => Ok(()),
            Existing::Foreign(why) => Err(OutputError::OldNotRunners {
                flag: what.to_string(),
                out: out.to_path_buf(),
                old,
                why,
            }
            .into()),
        },
        Existing::Foreign(why) => Err(OutputError::OutNotRunners {
            flag: what.to_string(),
            out: out.to_path_buf(),
            why,
        }
        .into()),
    }
}

/// `report DIR --out FILE`: FILE may be `DIR/report.md`, or a path outside
/// DIR; never another file inside DIR (its raw data).
pub fn check_report_out(dir: &Path, out: &Path) -> Result<()> {
    let (Ok(dir_abs), Ok(out_abs)) = (absolute(dir), absolute(out)) else {
        return Ok(());
    };
    if out_abs.starts_with(&dir_abs) && out_abs != dir_abs.join("report.md") {
        return Err(OutputError::ReportOutInside {
            out: out.to_path_buf(),
            dir: dir.to_path_buf(),
        }
        .into());
    }
    if fs::symlink_metadata(out).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(OutputError::ReportOutLink {
            out: out.to_path_buf(),
        }
        .into());
    }
    Ok(())
}

/// Files `report --out` would write outside the report folder: each must
/// be one `guard` lets runner write, all checked before the first is
/// written.
pub fn check_new_files(files: &[(PathBuf, &[u8])]) -> Result<()> {
    for (path, bytes) in files {
        guard::check(path, bytes)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::output::tests::runner_folder;

    #[test]
    fn classifies_what_is_at_the_output_path() {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path();
        assert_eq!(existing(&t.join("none")), Existing::Missing);
        fs::create_dir(t.join("empty")).unwrap();
        assert_eq!(existing(&t.join("empty")), Existing::EmptyFolder);
        runner_folder(&t.join("r"));
        assert_eq!(existing(&t.join("r")), Existing::RunnerReport);
        fs::write(t.join("r/notes.txt"), "mine").unwrap();
        assert!(matches!(existing(&t.join("r")), Existing::Foreign(w) if w.contains("notes.txt")));
        fs::write(t.join("f"), "x").unwrap();
        assert!(matches!(existing(&t.join("f")), Existing::Foreign(w) if w.contains("is a file")));
        std::os::unix::fs::symlink(t.join("r"), t.join("link")).unwrap();
        assert!(
            matches!(existing(&t.join("link")), Existing::Foreign(w) if w.contains("symbolic link"))
        );
        fs::create_dir(t.join("user")).unwrap();
        fs::write(t.join("user/report.md"), "mine").unwrap();
        assert!(
            matches!(existing(&t.join("user")), Existing::Foreign(w) if w.contains("did not write"))
        );
        // An unfinished run.json is not a report.
        runner_folder(&t.join("unfinished"));
        fs::write(
            t.join("unfinished/run.json"),
            r#"{"run_id": "x", "spec": {"sha256": "ab"}, "seeds": {"master": 1}, "finished_at": null}"#,
        )
        .unwrap();
        assert!(matches!(
            existing(&t.join("unfinished")),
            Existing::Foreign(_)
        ));
    }

    #[test]
    fn out_must_name_a_folder_below_the_current_one() {
        for out in [".", "..", "/", "a/.."] {
            let e = check_out(Path::new(out), "--out").unwrap_err().to_string();
            assert!(e.contains("does not name a folder"), "{out}: {e}");
        }
        let cwd = std::env::current_dir().unwrap();
        let e = check_out(&cwd, "--out").unwrap_err().to_string();
        assert!(
            e.contains("is the current folder or one of its parents"),
            "{e}"
        );
    }

    #[test]
    fn a_user_folder_at_out_old_blocks_replacing_a_report() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("u");
        runner_folder(&out);
        check_out(&out, "--out").unwrap();
        fs::create_dir(tmp.path().join("u.old")).unwrap();
        fs::write(tmp.path().join("u.old/i.txt"), "y").unwrap();
        let e = check_out(&out, "--out").unwrap_err().to_string();
        assert!(e.contains("u.old"), "{e}");
    }

    #[test]
    fn report_out_inside_the_folder_is_only_report_md() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("r");
        runner_folder(&dir);
        check_report_out(&dir, &dir.join("report.md")).unwrap();
        check_report_out(&dir, &tmp.path().join("elsewhere.md")).unwrap();
        for name in ["pairs.csv", "run.json", "notes.md", "sub/x.md"] {
            assert!(check_report_out(&dir, &dir.join(name)).is_err(), "{name}");
        }
        // Spelled through `..` or `.`, still inside.
        let sneaky = dir.join("../r/./run.json");
        assert!(check_report_out(&dir, &sneaky).is_err());
    }
}
