//! The committed report folders, as git's HEAD holds them.
//!
//! The working tree's `reports/` is not what is committed once a run has
//! rewritten a folder: the README's first command rewrites `reports/aa`,
//! `experiments/validity.toml` rewrites `reports/validity`. A test of the
//! committed reports reads them through here, so a run made since the
//! last commit changes nothing it checks; a test that needs any real run
//! reads `tests/fixtures/folders/` instead.

use super::needs::git;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The report folders HEAD holds (those with a run.json), by name.
fn at_head() -> BTreeSet<String> {
    let files = git(&["ls-tree", "-r", "--name-only", "HEAD", "--", "reports"]);
    String::from_utf8(files)
        .unwrap()
        .lines()
        .filter_map(|f| f.strip_prefix("reports/")?.strip_suffix("/run.json"))
        .filter(|name| !name.contains('/'))
        .map(str::to_string)
        .collect()
}

/// The committed report folders in the working tree, sorted: every folder
/// HEAD holds whose data (run.json and pairs.csv) the working tree holds
/// unchanged. Its rendered files may differ (a report re-rendered since,
/// and not yet committed, is checked as it will be committed). A folder
/// whose data a run has rewritten since is not the committed one: it is
/// left out, and named on stderr as skipped, with the command that
/// restores it.
///
/// Attribute: `#[cfg_attr(not(runner_git), ignore = "SKIPPED: not a git checkout")]`.
pub fn reports() -> Vec<PathBuf> {
    let changed = git(&["diff", "--name-only", "HEAD", "--", "reports"]);
    let changed: BTreeSet<String> = String::from_utf8(changed)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let mut out = Vec::new();
    for name in at_head() {
        let data = ["run.json", "pairs.csv"].map(|f| format!("reports/{name}/{f}"));
        if data.iter().any(|f| changed.contains(f)) {
            // Straight to the process's stderr: libtest captures eprintln!.
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED: reports/{name}: its data is not the committed data (a run since the last commit rewrote it; `git checkout HEAD -- reports/{name}` restores it)"
            );
            continue;
        }
        out.push(root().join("reports").join(name));
    }
    out
}

/// HEAD's `reports/` written out under `into` (`into/reports/...`), as a
/// fresh clone has it, whatever the working tree holds.
///
/// Attribute: as [`reports`]'.
pub fn extract_reports(into: &Path) {
    let tar = into.join("reports.tar");
    git(&[
        "archive",
        "--format=tar",
        "-o",
        tar.to_str().unwrap(),
        "HEAD",
        "reports",
    ]);
    let status = std::process::Command::new("tar")
        .arg("-xf")
        .arg(&tar)
        .arg("-C")
        .arg(into)
        .status()
        .unwrap();
    assert!(status.success(), "tar -xf {}", tar.display());
    std::fs::remove_file(&tar).unwrap();
}
