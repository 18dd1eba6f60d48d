//! Comments and docs point only at what the repository holds. A reader who
//! follows a cited path, a Markdown link or a quoted section must land
//! somewhere, and a reason must be written where it applies rather than
//! behind a number that leads outside the repository (a tracker's issue, a
//! numbered finding, a contract that is not committed).
//!
//! Checked: every `.rs` comment, every `.md`, `.j2` and `.toml` file and
//! every script (`.py`, `.sh`, and `.ci/run`) under the folders below, plus
//! README.md and reports/README.md (a committed report's own `report.md` is
//! generated and is checked by re-rendering).

use regex::Regex;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const FOLDERS: [&str; 7] = [
    "src",
    "tests",
    "docs",
    "templates",
    "benches",
    "experiments",
    ".ci",
];
const FILES: [&str; 2] = ["README.md", "reports/README.md"];
/// Files checked by their extension; `.ci/run`, a script without one, by
/// its name.
const EXTENSIONS: [&str; 6] = ["rs", "md", "j2", "toml", "py", "sh"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            // Snapshots are rendered output, compared byte for byte elsewhere.
            if name != "snapshots" {
                walk(&p, out);
            }
        } else if EXTENSIONS
            .iter()
            .any(|x| p.extension().is_some_and(|e| e == *x))
            || p.ends_with(".ci/run")
        {
            out.push(p);
        }
    }
}

fn checked_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for f in FOLDERS {
        walk(&root().join(f), &mut out);
    }
    out.extend(FILES.iter().map(|f| root().join(f)));
    out.sort();
    out
}

/// The prose of a file, one entry per line (1-based line, text): a Rust
/// file's comments, a TOML file's comments, a Markdown or template file
/// outside its fenced code blocks, a script whole (its comments and a
/// Python docstring are most of what a reader follows in it).
fn prose(path: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let ext = path
        .extension()
        .map_or_else(|| "sh".to_string(), |e| e.to_string_lossy().into_owned());
    let mut out = Vec::new();
    let mut fenced = false;
    for (i, line) in text.lines().enumerate() {
        let kept = match ext.as_str() {
            "rs" => line.find("//").map(|at| {
                line[at..]
                    .trim_start_matches('/')
                    .trim_start_matches('!')
                    .to_string()
            }),
            "toml" => line.find('#').map(|at| line[at + 1..].to_string()),
            "py" | "sh" => Some(line.to_string()),
            _ => {
                if line.trim_start().starts_with("```") {
                    fenced = !fenced;
                    None
                } else if fenced {
                    None
                } else {
                    Some(line.to_string())
                }
            }
        };
        if let Some(k) = kept {
            out.push((i + 1, k));
        }
    }
    out
}

/// The prose joined into one string (lines separated by a space), with the
/// line each byte came from, so a citation broken over two comment lines
/// is still one citation.
fn joined(lines: &[(usize, String)]) -> (String, Vec<(usize, usize)>) {
    let mut text = String::new();
    let mut starts = Vec::new();
    for (n, l) in lines {
        starts.push((text.len(), *n));
        text.push_str(l.trim());
        text.push(' ');
    }
    (text, starts)
}

fn line_at(starts: &[(usize, usize)], at: usize) -> usize {
    let i = starts.partition_point(|(s, _)| *s <= at);
    starts[i.saturating_sub(1)].1
}

fn shown(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// GitHub's anchor of a heading: lower case, punctuation other than `-`
/// and `_` dropped, spaces as `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The headings of a Markdown file as written (without `#`s and backticks).
fn headings(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.push(line.trim_start_matches('#').trim().replace('`', ""));
        }
    }
    out
}

/// What a quoted section can name: a heading, or a paragraph that opens
/// with a bold title (`**Ties and the clock's steps.** The clock ...`).
fn sections(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut out = headings(path);
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("**") {
            if let Some((title, _)) = rest.split_once("**") {
                out.push(title.trim_end_matches('.').replace('`', ""));
            }
        }
    }
    out
}

/// Names the docs use for a user's own files and folders (`reports/monday`,
/// `experiments/mine.toml`, a run in progress `reports/aa.partial`): examples
/// of what a user makes, not citations.
fn is_example(path: &str) -> bool {
    let last = path.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    let stem = last.split('.').next().unwrap_or("");
    // The folders and files `runner ab` writes in the guide's examples.
    let ab = ["gzip-1-c-vs-gzip-2-c", "tool-change", "gzip-ab"];
    ["mine", "monday", "tuesday", "aa-monday"].contains(&stem)
        || ab.contains(&stem)
        || last.ends_with(".partial")
        || last.ends_with(".old")
}

fn anchors(path: &Path) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut out = BTreeSet::new();
    for h in headings(path) {
        let base = slug(&h);
        let mut s = base.clone();
        let mut n = 0;
        while !seen.insert(s.clone()) {
            n += 1;
            s = format!("{base}-{n}");
        }
        out.insert(s);
    }
    out
}

/// Words that stand for something outside the repository.
fn outside_citations() -> Vec<(Regex, &'static str)> {
    [
        (r"(?i)\bissues?\s+#?\d+", "an issue number"),
        (r"(?i)\bitems?\s+\d+", "a numbered item"),
        (r"(?i)\bred[ -]team", "a red-team finding"),
        (
            r"(?i)\.\./shared|shared/[d]esign",
            "the workspace's shared folder",
        ),
        (
            r"(?i)\bdesign\s+section|section\s+\d+\s+of\s+the\s+design",
            "a numbered section of the design",
        ),
        (r"(?i)\(round\s+\d+\)", "a round of the contract"),
    ]
    .into_iter()
    .map(|(r, what)| (Regex::new(r).unwrap(), what))
    .collect()
}

/// Every problem found, one line each.
fn problems() -> Vec<String> {
    let path_re = Regex::new(
        r"(?:^|[\s(`'\[])((?:\.\./)*(?:src|tests|docs|templates|benches|examples|experiments|reports)/[A-Za-z0-9_./-]*)",
    )
    .unwrap();
    let link_re = Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let code_span_re = Regex::new(r"`[^`]*`").unwrap();
    let section_re = Regex::new(r#"\b((?:[A-Za-z0-9_./-]+\.md)|README),\s+"([^"]+)""#).unwrap();
    let forbidden = outside_citations();
    let mut out = Vec::new();
    for file in checked_files() {
        let dir = file.parent().unwrap().to_path_buf();
        let is_markdown = file.extension().is_some_and(|e| e == "md" || e == "j2");
        let lines = prose(&file);
        let (text, starts) = joined(&lines);
        let at = |i: usize| format!("{}:{}", shown(&file), line_at(&starts, i));
        for (re, what) in &forbidden {
            for m in re.find_iter(&text) {
                out.push(format!(
                    "{}: cites {what} ({:?}): say the reason in place",
                    at(m.start()),
                    m.as_str()
                ));
            }
        }
        for c in path_re.captures_iter(&text) {
            let m = c.get(1).unwrap();
            let cited = m.as_str().trim_end_matches(['.', ',', ':', ';']);
            // A pattern or a placeholder (`reports/NAME`, `reports/<name>/`),
            // not a path.
            let next = text[m.end()..].chars().next().unwrap_or(' ');
            if matches!(next, '<' | '{' | '*' | '$')
                || cited
                    .split('/')
                    .map(|s| s.split('.').next().unwrap_or(s))
                    .any(|s| s.len() > 1 && s.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
                || cited.ends_with('-')
                || is_example(cited)
            {
                continue;
            }
            if !root().join(cited).exists() && !dir.join(cited).exists() {
                out.push(format!(
                    "{}: cites {cited}, which does not exist",
                    at(m.start())
                ));
            }
        }
        if is_markdown {
            // A link inside a code span is an example of Markdown, not a link.
            let text = code_span_re.replace_all(&text, |c: &regex::Captures| {
                " ".repeat(c.get(0).unwrap().len())
            });
            // A template's links are relative to the report it renders: a
            // study's plots are in reports/aa, a comparison's in an A/B
            // report, a stopping path in a sequential one, the ratio
            // against clients in a clients sweep, the counts' ratios in a
            // run that counts.
            let template = file.extension().is_some_and(|e| e == "j2");
            let dir = if template {
                root().join("reports/aa")
            } else {
                dir.clone()
            };
            for c in link_re.captures_iter(&text) {
                let m = c.get(1).unwrap();
                let target = m.as_str();
                if target.contains("://") || target.starts_with("mailto:") || target.contains("{{")
                {
                    continue;
                }
                let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
                let resolved = if path.is_empty() {
                    file.clone()
                } else if template && !dir.join(path).exists() {
                    // A comparison's plots in an A/B report, a sequential
                    // run's stopping path in a stopped one, the ratio
                    // against clients in a sweep of them, the counts'
                    // ratios in a run that counts instructions.
                    [
                        "reports/gzip-levels",
                        "reports/stop-gzip",
                        "reports/contention-postgres",
                        "reports/instructions",
                    ]
                    .iter()
                    .map(|r| root().join(r).join(path))
                    .find(|p| p.exists())
                    .unwrap_or_else(|| root().join("reports/gzip-levels").join(path))
                } else {
                    dir.join(path)
                };
                if !resolved.exists() {
                    out.push(format!(
                        "{}: links to {target}, which does not exist",
                        at(m.start())
                    ));
                } else if !anchor.is_empty()
                    && resolved.extension().is_some_and(|e| e == "md")
                    && !anchors(&resolved).contains(anchor)
                {
                    out.push(format!(
                        "{}: links to {target}, but {} has no such heading",
                        at(m.start()),
                        shown(&resolved)
                    ));
                }
            }
        }
        for c in section_re.captures_iter(&text) {
            let doc = c.get(1).unwrap().as_str();
            let title = c.get(2).unwrap().as_str();
            let target = if doc == "README" {
                root().join("README.md")
            } else if root().join(doc).exists() {
                root().join(doc)
            } else {
                dir.join(doc)
            };
            let want = title.split_whitespace().collect::<Vec<_>>().join(" ");
            if !sections(&target)
                .iter()
                .any(|h| h.eq_ignore_ascii_case(&want))
            {
                out.push(format!(
                    "{}: cites the section \"{want}\" of {doc}, which has no such heading",
                    at(c.get(0).unwrap().start())
                ));
            }
        }
    }
    out
}

#[test]
fn citations_and_links_resolve_inside_the_repository() {
    let found = problems();
    assert!(
        found.is_empty(),
        "{} citation(s) that lead nowhere:\n  {}",
        found.len(),
        found.join("\n  ")
    );
}

/// The checks themselves catch what they are for (a test that could never
/// fail would prove nothing).
#[test]
fn the_checks_catch_a_dead_citation() {
    assert_eq!(
        slug("What runner promises about your `database`"),
        "what-runner-promises-about-your-database"
    );
    assert_eq!(slug("Order, carry-over & ties"), "order-carry-over--ties");
    let forbidden = outside_citations();
    for text in [
        // Split so that a grep of the repository for these words finds
        // only what this test would also find.
        concat!("(issue", " 20)"),
        "Item 11: a column",
        concat!("the red", " team"),
        concat!("see ../shared/", "design.md"),
        concat!("Design", " section 4"),
    ] {
        assert!(
            forbidden.iter().any(|(re, _)| re.is_match(text)),
            "{text:?} not caught"
        );
    }
    assert!(!forbidden
        .iter()
        .any(|(re, _)| re.is_match("the items of a list, 11 of them")));
    let readme = headings(&root().join("README.md"));
    assert!(
        readme.iter().any(|h| h == "A minimal experiment"),
        "{readme:?}"
    );
    // Scripts are read whole: a Python docstring and a shell comment are
    // prose a reader follows as much as a Rust comment.
    let files = checked_files();
    for script in ["benches/numpy_report.py", "benches/scale.sh", ".ci/run"] {
        assert!(files.contains(&root().join(script)), "{script} not checked");
    }
    let docstring = prose(&root().join("benches/numpy_report.py"));
    assert!(
        docstring
            .iter()
            .any(|(_, l)| l.contains("--minimal computes")),
        "{docstring:?}"
    );
}
