//! The registry of what a test may need that a machine lacks, and the rule
//! that goes with it: a test that cannot run where it is says so in
//! `cargo test`'s summary, as ignored ("SKIPPED: why"), never as passed.
//!
//! Every need is a row of [`NEEDS`]: the helper a test calls
//! (`tests/common/needs.rs`, `tests/common/committed.rs`), the cfg build.rs
//! sets when the machine has it, and the attribute that cfg switches.
//! Checked here: every test that calls a helper carries its attribute,
//! build.rs sets every cfg, and no test function returns early, the way a
//! test used to skip itself and count as passed. A helper gives the test
//! what it needs or fails it, so no early return is ever needed.

use std::path::{Path, PathBuf};

/// (the helper a test calls, the cfg build.rs sets, the attribute the
/// test must carry).
const NEEDS: [(&str, &str, &str); 10] = [
    (
        "pg_url()",
        "runner_postgres",
        "#[cfg_attr(not(runner_postgres), ignore = \"SKIPPED: RUNNER_DATABASE_URL not set\")]",
    ),
    (
        "pg_superuser_url()",
        "runner_postgres_superuser",
        "#[cfg_attr(not(runner_postgres_superuser), ignore = \"SKIPPED: RUNNER_DATABASE_SUPERUSER_URL not set\")]",
    ),
    (
        "slurm_conf()",
        "runner_slurm",
        "#[cfg_attr(not(runner_slurm), ignore = \"SKIPPED: SLURM_CONF not set\")]",
    ),
    (
        "kubernetes_validate()",
        "runner_kubernetes_validate",
        "#[cfg_attr(not(runner_kubernetes_validate), ignore = \"SKIPPED: kubernetes-validate not installed\")]",
    ),
    (
        "taskset_cpu_0()",
        "runner_taskset",
        "#[cfg_attr(not(runner_taskset), ignore = \"SKIPPED: taskset cannot pin to CPU 0\")]",
    ),
    (
        "proc_tasks()",
        "runner_proc_tasks",
        "#[cfg_attr(not(runner_proc_tasks), ignore = \"SKIPPED: /proc/self/task not readable\")]",
    ),
    (
        "small_tmpfs(",
        "runner_tmpfs",
        "#[cfg_attr(not(runner_tmpfs), ignore = \"SKIPPED: cannot mount a tmpfs (needs root with CAP_SYS_ADMIN)\")]",
    ),
    (
        "valgrind()",
        "runner_valgrind",
        "#[cfg_attr(not(runner_valgrind), ignore = \"SKIPPED: valgrind not installed (apt-get install valgrind)\")]",
    ),
    (
        "committed::reports()",
        "runner_git",
        "#[cfg_attr(not(runner_git), ignore = \"SKIPPED: not a git checkout\")]",
    ),
    (
        "committed::extract_reports(",
        "runner_git",
        "#[cfg_attr(not(runner_git), ignore = \"SKIPPED: not a git checkout\")]",
    ),
];

/// (a cfg, a cfg it implies): build.rs sets the first only with the
/// second, so a test carrying the first's attribute needs no other.
const IMPLIES: [(&str, &str); 1] = [("runner_postgres_superuser", "runner_postgres")];

/// Helpers of a test (not `#[test]` functions) that call a need's helper
/// themselves, each with what it needs: a test calling one needs that too.
const CALLERS: [(&str, &str); 2] = [
    // tests/pool.rs: the threads of this process, while the analysis runs.
    ("tasks()", "proc_tasks()"),
    // tests/suite/instructions.rs: cachegrind's count, by hand.
    ("by_hand(", "valgrind()"),
];

/// `text` with the inside of every comment, string and character literal
/// blanked to spaces, byte for byte, so braces and words found in what is
/// left are code.
fn code_only(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |from: usize, to: usize, out: &mut Vec<u8>| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let ident = |i: usize| i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |n| i + n);
                blank(i, end, &mut out);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
                blank(i, end, &mut out);
                i = end;
            }
            b'r' if (!ident(i) || b[i - 1] == b'b' && !ident(i - 1))
                && matches!(b.get(i + 1), Some(b'"' | b'#')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let start = i + 2 + hashes;
                let end = text[start..]
                    .find(&close)
                    .map_or(b.len(), |n| start + n + close.len());
                blank(start, end - close.len(), &mut out);
                i = end;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                blank(i + 1, j, &mut out);
                i = j + 1;
            }
            b'\'' => {
                // A character literal ('x', '\n', '{'), or a lifetime.
                let end = if b.get(i + 1) == Some(&b'\\') {
                    b[i + 2..]
                        .iter()
                        .position(|&c| c == b'\'')
                        .map(|n| i + 2 + n)
                } else {
                    let len = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                    (b.get(i + 1 + len) == Some(&b'\'')).then_some(i + 1 + len)
                };
                match end {
                    Some(end) => {
                        blank(i + 1, end, &mut out);
                        i = end + 1;
                    }
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    out
}

/// One `#[test]` function: its file, name, attributes and body (raw, and
/// as [`code_only`]).
struct TestFn {
    file: String,
    name: String,
    attrs: String,
    body: String,
    code: String,
}

/// Every `#[test]` function of `text` (the file `file`).
fn test_fns(file: &str, text: &str) -> Vec<TestFn> {
    let code = code_only(text);
    let code = String::from_utf8_lossy(&code).into_owned();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("#[test]").map(|n| from + n) {
        from = at + "#[test]".len();
        let Some(fn_at) = code[from..].find("fn ").map(|n| from + n) else {
            break;
        };
        let name_at = fn_at + "fn ".len();
        let name_end = code[name_at..]
            .find('(')
            .map_or(code.len(), |n| name_at + n);
        let Some(open) = code[name_end..].find('{').map(|n| name_end + n) else {
            break;
        };
        let mut depth = 0;
        let mut close = code.len();
        for (i, c) in code[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push(TestFn {
            file: file.to_string(),
            name: text[name_at..name_end].trim().to_string(),
            attrs: text[at..fn_at].to_string(),
            body: text[open..close].to_string(),
            code: code[open..close].to_string(),
        });
        from = close;
    }
    out
}

/// Every `.rs` file under `dir`, at any depth.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every test function under the folders `dirs` of the workspace, named
/// by file.
fn tests_in(dirs: &[&str]) -> Vec<TestFn> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        rust_files(&root.join(dir), &mut files);
    }
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = path.strip_prefix(root).unwrap().display().to_string();
        out.extend(test_fns(&file, &text));
    }
    out
}

/// Whether `code` (a body as [`code_only`]) holds a bare `return`: the
/// statement of a unit function, that is, of the test itself.
fn returns_early(code: &str) -> bool {
    code.match_indices("return").any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + "return".len()..].trim_start().chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_') && matches!(after, Some(';' | '}'))
    })
}

#[test]
fn every_test_that_needs_something_is_ignored_without_it() {
    let tests = tests_in(&["tests"]);
    assert!(tests.len() > 200, "found only {} tests", tests.len());
    let bare = |s: &str| s.split_whitespace().collect::<String>();
    let mut missing = Vec::new();
    for (helper, cfg, attribute) in NEEDS {
        // The attributes that switch this need off: its own, and those of
        // needs that imply it.
        let enough: Vec<&str> = NEEDS
            .iter()
            .filter(|(_, other, _)| other == &cfg || IMPLIES.contains(&(other, cfg)))
            .map(|(_, _, a)| *a)
            .collect();
        let through: Vec<&str> = CALLERS
            .iter()
            .filter(|(_, needs)| *needs == helper)
            .map(|(caller, _)| *caller)
            .collect();
        let calling: Vec<&TestFn> = tests
            .iter()
            .filter(|t| {
                let calls =
                    |h: &str| t.code.contains(&h[..h.find('(').unwrap()]) && t.body.contains(h);
                calls(helper) || through.iter().any(|c| calls(c))
            })
            .collect();
        let least = if helper == "pg_url()" { 9 } else { 1 };
        assert!(calling.len() >= least, "{helper}: found {}", calling.len());
        // Compared without whitespace: rustfmt may wrap a long attribute.
        for t in calling {
            if !enough.iter().any(|a| bare(&t.attrs).contains(&bare(a))) {
                missing.push(format!(
                    "{}: {} calls {helper}: {attribute}",
                    t.file, t.name
                ));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "these tests would fail, not skip, where their need is missing; add the need's attribute (tests/suite/skips.rs, NEEDS): {missing:#?}"
    );
}

/// A test that skips itself by returning early counts as passed: none
/// does, in the integration tests or in any crate's unit tests, and none
/// prints SKIPPED itself (only the helpers say why a part is passed over).
#[test]
fn no_test_returns_early_or_says_skipped_itself() {
    let all = tests_in(&["tests", "src", "crates"]);
    assert!(all.len() > 700, "found only {} tests", all.len());
    let early: Vec<String> = all
        .iter()
        .filter(|t| returns_early(&t.code))
        .map(|t| format!("{}: {}", t.file, t.name))
        .collect();
    assert!(
        early.is_empty(),
        "these tests return early, and would count as passed without running; call the need's helper (tests/common/needs.rs) and carry its attribute instead: {early:#?}"
    );
    for t in &all {
        assert!(
            !t.body.contains(concat!("SKIP", "PED")),
            "{}: {} says itself that it skips; a need's helper and attribute say it (tests/suite/skips.rs)",
            t.file,
            t.name
        );
    }
    // The scan sees an early return, and not a word or a string like one.
    let sample = concat!(
        "#[test]\nfn a() {\n    if x {\n        ret",
        "urn;\n    }\n}\n",
        "#[test]\nfn b() {\n    let Some(u) = f() else { ret",
        "urn };\n}\n",
        "#[test]\nfn c() {\n    let s = \"ret",
        "urn;\"; // ret",
        "urn;\n    let n = |x| ret",
        "urn x + 1;\n    let r = r#\"}\"#;\n    no_return();\n}\n",
        "#[test]\nfn d() {\n    let b = br\"\\\";\n    if b.is_empty() { ret",
        "urn; }\n}\n",
    );
    let early: Vec<(String, bool)> = test_fns("sample", sample)
        .iter()
        .map(|t| (t.name.clone(), returns_early(&t.code)))
        .collect();
    assert_eq!(
        early,
        [
            ("a".into(), true),
            ("b".into(), true),
            ("c".into(), false),
            ("d".into(), true)
        ]
    );
}

/// Each need's cfg is declared and set by build.rs.
#[test]
fn build_rs_sets_every_cfg_of_the_registry() {
    let build =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("build.rs")).unwrap();
    for (helper, cfg, attribute) in NEEDS {
        assert!(
            attribute.contains(&format!("not({cfg})")),
            "{helper}: {attribute}"
        );
        assert!(
            build.contains(&format!("\"{cfg}\"")),
            "build.rs does not set {cfg}"
        );
    }
}

/// The cfgs follow their variables: set here exactly when this build saw
/// them, or saw CI require them.
#[test]
fn the_cfgs_follow_their_variables() {
    let set = |v: Option<&str>| v.is_some_and(|u| !u.trim().is_empty());
    let postgres = option_env!("RUNNER_REQUIRE_POSTGRES") == Some("1");
    assert_eq!(
        cfg!(runner_postgres),
        postgres || set(option_env!("RUNNER_DATABASE_URL"))
    );
    assert_eq!(
        cfg!(runner_postgres_superuser),
        postgres
            || set(option_env!("RUNNER_DATABASE_URL"))
                && set(option_env!("RUNNER_DATABASE_SUPERUSER_URL"))
    );
    assert_eq!(
        cfg!(runner_slurm),
        option_env!("RUNNER_REQUIRE_SLURM") == Some("1") || set(option_env!("SLURM_CONF"))
    );
}
