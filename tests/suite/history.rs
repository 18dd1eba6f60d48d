//! `runner history` and `git bisect run runner exec --bisect` on a real
//! git repository: a small script measured against a fixed copy of its
//! first version under a `[gate]`, its report committed at every step,
//! and one commit that makes the script about twice as slow.
//!
//! Margins: the script waits (`sleep`), so a machine busy with other
//! builds moves its time little (a busy loop's time moves with every
//! other process on the CPU); the slow commit doubles the wait, about
//! 1.8x with the shell's and sleep's start, against a 25 % gate without a
//! self-check; the history compares 8 forks with 8, where one fork out of
//! place still leaves a change marked. The spec's confidence is 99 %, so
//! the history's level is 1 % over its seven steps: a step where nothing
//! changed is marked only when its eight forks all but separate from the
//! eight before (a 5 % level let a run on a busy machine through now and
//! then), while the doubled wait separates them completely.

use crate::common;
use common::*;
use std::path::Path;
use std::process::Command;

const SPEC: &str = r#"
name = "script"
title = "The script against its first version"
seed = 32
[strategies.first]
kind = "command"
argv = ["sh", "first.sh"]
compare_output = false
[strategies.work]
kind = "command"
argv = ["sh", "work.sh"]
compare_output = false
[design]
baseline = "first"
treatment = "work"
forks = 8
warmup_pairs = 1
pairs = 8
[analysis]
resamples = 200
confidence = 0.99
[gate]
max_slowdown = "25%"
self_check = false
"#;

fn script(wait_s: &str, note: &str) -> String {
    format!("# {note}\nsleep {wait_s}\n")
}

/// git in `dir`, with no user or system configuration and a fixed author,
/// and none of the variables that would point runner elsewhere.
fn git(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com");
    for var in [
        "RUNNER_DATABASE_URL",
        "SLURM_ARRAY_TASK_ID",
        "JOB_COMPLETION_INDEX",
        "RUNNER_HOSTNAME",
        "RUNNER_FAULT",
    ] {
        c.env_remove(var);
    }
    c
}

fn git_ok(dir: &Path, args: &[&str]) -> String {
    let o = git(dir).args(args).output().unwrap();
    assert!(o.status.success(), "git {args:?}: {}", err_of(&o));
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

/// Runs the spec at the current commit into the throwaway repository's
/// report folder and commits everything with `subject`; returns the short
/// hash.
fn measure_and_commit(dir: &Path, subject: &str) -> String {
    let o = run_in(dir, &["exec", "bench.toml", "--quiet"]);
    // The gate's verdict is the exit code (0, 3 or 4); the report is
    // written either way.
    assert!(
        matches!(o.status.code(), Some(0 | 3 | 4)),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        err_of(&o)
    );
    git_ok(dir, &["add", "-A"]);
    git_ok(dir, &["commit", "-q", "-m", subject]);
    git_ok(dir, &["rev-parse", "--short", "HEAD"])
}

/// The bullets of history.md's Summary.
fn summary(md: &str) -> Vec<String> {
    md.split("## Summary\n\n")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("- "))
        .map(String::from)
        .collect()
}

#[test]
fn history_names_the_slow_commit_and_git_bisect_finds_it() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    git_ok(&repo, &["init", "-q"]);
    std::fs::write(repo.join("bench.toml"), SPEC).unwrap();
    std::fs::write(repo.join("first.sh"), script("0.01", "version 1")).unwrap();
    std::fs::write(repo.join("work.sh"), script("0.01", "version 1")).unwrap();
    std::fs::write(repo.join("README"), "steps\n").unwrap();
    let mut commits = vec![measure_and_commit(&repo, "version 1 and its report")];
    let slow_step = 5;
    for step in 2..=8 {
        let subject = if step == slow_step {
            std::fs::write(repo.join("work.sh"), script("0.02", "twice the wait")).unwrap();
            format!("step {step}: twice the wait")
        } else if step % 2 == 0 {
            std::fs::write(repo.join("README"), format!("steps up to {step}\n")).unwrap();
            format!("step {step}: README")
        } else {
            let work = std::fs::read_to_string(repo.join("work.sh")).unwrap();
            std::fs::write(repo.join("work.sh"), format!("{work}# step {step}\n")).unwrap();
            format!("step {step}: a comment")
        };
        commits.push(measure_and_commit(&repo, &subject));
    }
    let slow = &commits[slow_step - 1];
    // Each report names the code it measured: the last one ran on step 7's
    // commit with README changed, and says so plainly.
    let report = std::fs::read_to_string(repo.join("reports/script/report.md")).unwrap();
    let code = report
        .lines()
        .find(|l| l.starts_with("- Code: "))
        .unwrap_or_else(|| panic!("{report}"));
    assert!(
        code.contains(&format!(
            "the measured repository at commit `{}",
            commits[6]
        )) && code.contains("**dirty**"),
        "{code}"
    );
    // Every run replaced the report before it; what it replaced is kept
    // where git ignores it, so `git add -A` committed none of them.
    assert!(repo.join("reports/script.old/report.md").is_file());
    let tracked = git_ok(&repo, &["ls-files", "reports"]);
    assert!(!tracked.contains("script.old"), "{tracked}");

    let o = run_in(&repo, &["history", "reports/script"]);
    assert_eq!(o.status.code(), Some(0), "{}", err_of(&o));
    let md = std::fs::read_to_string(repo.join("reports/history-script/history.md")).unwrap();
    let changes = summary(&md);
    assert_eq!(changes.len(), 1, "exactly one change: {changes:#?}\n{md}");
    assert!(changes[0].contains(&format!("`{slow}`")), "{changes:?}");
    assert!(changes[0].contains("**slower**"), "{changes:?}");
    assert_eq!(md.matches("| change: ").count(), 1, "{md}");
    // The commits that can have made it, ready for git bisect: since the
    // version before, the ones that touched files outside reports/ (the
    // slow step's own, which changed work.sh with its report).
    let before = &commits[slow_step - 2];
    assert!(
        md.contains(&format!(
            "Code commits since `{before}` (files outside the reports), any of which can have made it; `git bisect start {slow} {before}` walks them:\n    - `{slow}` "
        )),
        "{md}"
    );
    assert!(md.contains("step 5: twice the wait"), "{md}");
    for svg in ["effect.svg", "medians.svg"] {
        let text = std::fs::read_to_string(repo.join("reports/history-script").join(svg)).unwrap();
        assert!(text.starts_with("<svg"), "{svg}");
    }
    // The terminal says the same.
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert!(stdout.contains(&format!("`{slow}`")), "{stdout}");
    // --since: the version current at step 3, and every later one.
    let o = run_in(
        &repo,
        &[
            "history",
            "reports/script",
            "--since",
            &commits[2],
            "--out",
            "../since",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err_of(&o));
    let md = std::fs::read_to_string(tmp.path().join("since/history.md")).unwrap();
    assert!(md.starts_with("# History of `reports/script`"), "{md}");
    assert!(md.contains("6 hold a run that passed its checks"), "{md}");
    assert!(!md.contains(&format!("`{}`", commits[1])), "{md}");
    assert_eq!(summary(&md).len(), 1, "{md}");

    // A tampered version is named and skipped; the change stays where it was.
    let pairs = repo.join("reports/script/pairs.csv");
    let text = std::fs::read_to_string(&pairs).unwrap();
    let at = text.find("\n0,0,measure,0,").unwrap() + 1;
    let line_end = at + text[at..].find('\n').unwrap();
    let mut fields: Vec<String> = text[at..line_end].split(',').map(String::from).collect();
    fields[5] = (fields[5].parse::<u64>().unwrap() + 1).to_string();
    std::fs::write(
        &pairs,
        format!("{}{}{}", &text[..at], fields.join(","), &text[line_end..]),
    )
    .unwrap();
    git_ok(&repo, &["commit", "-q", "-am", "step 9: an edited row"]);
    let tampered = git_ok(&repo, &["rev-parse", "--short", "HEAD"]);
    let o = run_in(&repo, &["history", "reports/script"]);
    assert_eq!(o.status.code(), Some(0), "{}", err_of(&o));
    let md = std::fs::read_to_string(repo.join("reports/history-script/history.md")).unwrap();
    let skipped = md.split("## Skipped versions").nth(1).expect(&md);
    assert!(skipped.contains(&format!("`{tampered}`")), "{skipped}");
    assert!(skipped.contains("SHA-256"), "{skipped}");
    assert_eq!(summary(&md).len(), 1, "{md}");
    git_ok(&repo, &["reset", "-q", "--hard", "HEAD~1"]);

    // git bisect run: each step measures into a folder of its own outside
    // the repository, so the working tree stays clean for the next checkout.
    let bisect_out = tmp.path().join("bisect");
    git_ok(&repo, &["bisect", "start", "HEAD", &commits[0]]);
    let runner = assert_cmd::cargo::cargo_bin("runner");
    let o = git(&repo)
        .args(["bisect", "run", "sh", "-c"])
        .arg(format!(
            "'{}' exec bench.toml --bisect --quiet --out '{}'/$(git rev-parse --short HEAD)",
            runner.display(),
            bisect_out.display()
        ))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{said}\n{}", err_of(&o));
    let first_bad = said
        .lines()
        .find(|l| l.ends_with("is the first bad commit"))
        .unwrap_or_else(|| panic!("{said}"));
    let full = git_ok(&repo, &["rev-parse", slow]);
    assert!(first_bad.starts_with(&full), "{first_bad} is not {slow}");
}

/// The guide's bisect example (docs/guide/gate.md) is this test's spec, so
/// what it promises is what the test above shows; and it compares exit
/// statuses only, since a commit that changes what the code prints would
/// otherwise make every later step a skip.
#[test]
fn the_guides_bisect_example_is_the_one_tested_and_compares_no_output() {
    let guide =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guide/gate.md"))
            .unwrap();
    let section = guide
        .split("## Find the commit with `git bisect`")
        .nth(1)
        .unwrap();
    let example = section
        .split("```toml\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the section's toml block");
    let example: toml::Table = toml::from_str(example).unwrap();
    let tested: toml::Table = toml::from_str(SPEC).unwrap();
    fn within(a: &toml::Table, b: &toml::Table, at: &str) {
        for (k, v) in a {
            let there = b
                .get(k)
                .unwrap_or_else(|| panic!("{at}{k} is not in the test's spec"));
            match (v, there) {
                (toml::Value::Table(x), toml::Value::Table(y)) => {
                    within(x, y, &format!("{at}{k}."))
                }
                _ => assert_eq!(v, there, "{at}{k}"),
            }
        }
    }
    within(&example, &tested, "");
    for (name, s) in example["strategies"].as_table().unwrap() {
        assert_eq!(
            s.get("compare_output").and_then(toml::Value::as_bool),
            Some(false),
            "strategies.{name}"
        );
    }
    assert!(section.contains("exits 125 (skip)"), "the guide says why");
}

/// Exit 2, one line on stderr naming what is wrong.
fn refused(o: &std::process::Output, fragments: &[&str]) {
    assert_refused(o, fragments);
    assert_eq!(err_of(o).trim_end().lines().count(), 1, "{}", err_of(o));
}

#[test]
fn bad_input_is_one_sentence_and_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = tmp.path().join("plain");
    std::fs::create_dir_all(plain.join("reports/x")).unwrap();
    let o = run_in(&plain, &["history", "reports/x"]);
    refused(&o, &["reports/x", "not in a git repository"]);

    let repo = tmp.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    git_ok(&repo, &["init", "-q"]);
    // Nothing committed yet, then a commit without the folder.
    let o = run_in(&repo, &["history", "reports/x"]);
    refused(&o, &["reports/x", "never committed"]);
    std::fs::write(repo.join("README"), "x\n").unwrap();
    git_ok(&repo, &["add", "-A"]);
    git_ok(&repo, &["commit", "-q", "-m", "first"]);
    let o = run_in(&repo, &["history", "reports/x"]);
    refused(&o, &["reports/x", "never committed"]);
    let o = run_in(
        &repo,
        &["history", plain.join("reports/x").to_str().unwrap()],
    );
    refused(&o, &["outside the repository"]);
    let o = run_in(&repo, &["history", "reports", "--since", "no-such-rev"]);
    refused(&o, &["--since no-such-rev", "not a commit"]);
    let o = run_in(&repo, &["history", "reports/x", "--out", "reports/x/h"]);
    refused(&o, &["inside the report folder"]);
    let o = run_in(&repo, &["history", "README"]);
    refused(&o, &["README is a file"]);
}

/// Six committed runs of 3 forks each, the treatment twice as slow from
/// version 4 on (a move no load of a shared machine hides at 3 forks of 4
/// pairs, whose interval of the ratio is Student's t on 2 degrees of
/// freedom): 3 and 3 forks cannot reach the level of 5
/// comparisons (1 in 10 at best), so nothing is marked, and the summary
/// says so and names version 4's move instead of "no version differs".
/// The same repository then re-commits an older run (a repeat, not
/// counted) and is cloned shallow (said, with the remedy).
#[test]
fn a_history_too_small_to_mark_names_the_move_repeats_and_a_shallow_clone() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    git_ok(&repo, &["init", "-q"]);
    let spec = SPEC
        .replace("forks = 8", "forks = 3")
        .replace("pairs = 8", "pairs = 4")
        .replace("confidence = 0.99\n", "")
        .replace("[gate]\nmax_slowdown = \"25%\"\nself_check = false\n", "");
    std::fs::write(repo.join("bench.toml"), spec).unwrap();
    std::fs::write(repo.join("first.sh"), script("0.02", "version 1")).unwrap();
    std::fs::write(repo.join("work.sh"), script("0.02", "version 1")).unwrap();
    let mut commits = Vec::new();
    for step in 1..=6 {
        if step == 4 {
            std::fs::write(repo.join("work.sh"), script("0.04", "twice the wait")).unwrap();
        } else {
            std::fs::write(repo.join("notes"), format!("step {step}\n")).unwrap();
        }
        commits.push(measure_and_commit(&repo, &format!("step {step}")));
    }
    let o = run_in(&repo, &["history", "reports/script"]);
    assert_eq!(o.status.code(), Some(0), "{}", err_of(&o));
    let md = std::fs::read_to_string(repo.join("reports/history-script/history.md")).unwrap();
    let items = summary(&md);
    let v4 = items
        .iter()
        .find(|l| l.starts_with(&format!("- Version 4, `{}`", commits[3])))
        .unwrap_or_else(|| panic!("version 4 is named: {items:#?}"));
    assert!(v4.contains("moved from") && v4.contains("slower"), "{v4}");
    assert!(v4.contains("3 forks a version cannot reach"), "{v4}");
    assert!(v4.contains("5 would"), "{v4}");
    assert!(!md.contains("No version differs"), "{md}");
    assert!(
        items
            .iter()
            .any(|l| l.contains("Every one of the 5 comparisons had too few forks")),
        "{items:#?}"
    );
    assert!(md.contains("6 versions compared; 5 comparisons"), "{md}");
    assert!(
        md.contains("| too few forks to mark this move (3 and 3): the speed ratio ×"),
        "{md}"
    );
    assert!(!md.contains("shallow"), "{md}");
    // The summary opens the file; the method is folded below it.
    assert!(md.find("## Summary") < md.find("<details>"), "{md}");
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert!(
        stdout.contains(&format!("Version 4, `{}`", commits[3])),
        "{stdout}"
    );

    // Version 2's folder committed again: a repeat, neither compared nor
    // counted (still 5 comparisons).
    git_ok(&repo, &["checkout", &commits[1], "--", "reports/script"]);
    git_ok(
        &repo,
        &["commit", "-q", "-m", "step 7: version 2's report again"],
    );
    let repeat = git_ok(&repo, &["rev-parse", "--short", "HEAD"]);
    let o = run_in(&repo, &["history", "reports/script"]);
    assert_eq!(o.status.code(), Some(0), "{}", err_of(&o));
    let md = std::fs::read_to_string(repo.join("reports/history-script/history.md")).unwrap();
    let items = summary(&md);
    assert!(
        items
            .iter()
            .any(|l| l.contains(&format!("`{repeat}`"))
                && l.contains("version 2's run again: a repeat")),
        "{items:#?}"
    );
    assert!(md.contains("6 versions compared; 5 comparisons"), "{md}");

    // A shallow clone holds two commits: the history says what it read
    // and how to read the rest.
    let clone = tmp.path().join("clone");
    let url = format!("file://{}", repo.display());
    let o = git(tmp.path())
        .args(["clone", "-q", "--depth", "2", &url])
        .arg(&clone)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err_of(&o));
    let o = run_in(&clone, &["history", "reports/script"]);
    assert_eq!(o.status.code(), Some(0), "{}", err_of(&o));
    let stdout = String::from_utf8(o.stdout).unwrap();
    let md = std::fs::read_to_string(clone.join("reports/history-script/history.md")).unwrap();
    for text in [&stdout, &md] {
        assert!(
            text.contains("shallow clone: 2 versions were read"),
            "{text}"
        );
        assert!(text.contains("`git fetch --unshallow`"), "{text}");
        assert!(text.contains("`fetch-depth: 0`"), "{text}");
    }
}

/// A report folder renamed with `git mv` keeps its history: the versions
/// before the rename are read from the old name, and the summary says so.
/// A folder whose first commit adds it while removing another folder's
/// run.json that git does not pair as a rename (moved and rewritten) says
/// where its history starts and which folder holds the rest.
#[test]
fn history_follows_a_renamed_folder_or_says_where_it_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    git_ok(&repo, &["init", "-q"]);
    std::fs::write(repo.join(".gitignore"), "*.old/\n*.partial/\n").unwrap();
    std::fs::write(repo.join("small.toml"), SMALL_AA).unwrap();
    let measure = |out: &str, seed: u32, subject: &str| {
        let seed = format!("seed={seed}");
        let o = run_in(
            &repo,
            &[
                "exec",
                "small.toml",
                "--quiet",
                "--out",
                out,
                "--set",
                &seed,
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{}", err_of(&o));
        git_ok(&repo, &["add", "-A"]);
        git_ok(&repo, &["commit", "-q", "-m", subject]);
    };
    measure("reports/old", 1, "first");
    measure("reports/old", 2, "second");
    git_ok(&repo, &["mv", "reports/old", "reports/new"]);
    git_ok(&repo, &["commit", "-q", "-m", "rename the report"]);
    let renamed = git_ok(&repo, &["rev-parse", "--short", "HEAD"]);
    measure("reports/new", 3, "third");

    let o = run_in(&repo, &["history", "reports/new"]);
    assert_eq!(o.status.code(), Some(0), "{}", err_of(&o));
    let md = std::fs::read_to_string(repo.join("reports/history-new/history.md")).unwrap();
    assert!(md.contains("3 versions compared"), "{md}");
    let note = summary(&md)
        .into_iter()
        .find(|l| l.contains("renamed it"))
        .unwrap_or_else(|| panic!("the rename is said: {md}"));
    assert!(
        note.contains(&format!("`reports/old` until `{renamed}`"))
            && note.contains("`reports/new`"),
        "{note}"
    );
    // --since before the rename reads from the old name too.
    let o = run_in(
        &repo,
        &["history", "reports/new", "--since", "HEAD~2", "--out", "h2"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err_of(&o));
    let md = std::fs::read_to_string(repo.join("h2/history.md")).unwrap();
    assert!(md.contains("2 versions compared"), "{md}");

    // Moved and rewritten in one commit: no rename for git to pair.
    std::fs::write(repo.join("reports/new/run.json"), "{}\n").unwrap();
    git_ok(&repo, &["commit", "-q", "-am", "a run.json no run"]);
    git_ok(&repo, &["rm", "-q", "-r", "reports/new"]);
    measure("reports/newer", 4, "a new folder");
    let start = git_ok(&repo, &["rev-parse", "--short", "HEAD"]);
    let o = run_in(&repo, &["history", "reports/newer"]);
    assert_eq!(o.status.code(), Some(0), "{}", err_of(&o));
    let md = std::fs::read_to_string(repo.join("reports/history-newer/history.md")).unwrap();
    assert!(md.contains("1 version compared"), "{md}");
    let note = md
        .lines()
        .find(|l| l.starts_with("- This history starts at"))
        .unwrap_or_else(|| panic!("where it starts is said: {md}"));
    assert!(
        note.contains(&format!("`{start}`"))
            && note.contains("removed `reports/new`")
            && note.contains("`runner history reports/new`"),
        "{note}"
    );
}
