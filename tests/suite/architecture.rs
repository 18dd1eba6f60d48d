//! docs/architecture.md is a layering, not a knot, and it is the truth:
//!
//! - each crate depends on exactly the runner crates its table says (the
//!   compiler then keeps every other boundary), and the statistics crate
//!   on no database, plot, template or command-line crate;
//! - inside every crate, no two sibling modules import each other, however
//!   long the circle;
//! - in the runner crate, a top-level module imports only modules in the
//!   rows above its own, and the page names every module.
//!
//! An import is any `crate::…`, `super::…` or `self::…` path outside a
//! comment; a test module (`tests.rs`, `tests/`) counts like any other file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn page() -> String {
    std::fs::read_to_string(root().join("docs/architecture.md")).unwrap()
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// A file's code without its comments, line by line.
fn code(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The crates of the workspace: (package name, source folder, manifest).
fn crates() -> Vec<(String, PathBuf, toml::Table)> {
    let mut out = Vec::new();
    let mut dirs = vec![root().to_path_buf()];
    for e in std::fs::read_dir(root().join("crates")).unwrap().flatten() {
        dirs.push(e.path());
    }
    for dir in dirs {
        let manifest: toml::Table = std::fs::read_to_string(dir.join("Cargo.toml"))
            .unwrap()
            .parse()
            .unwrap();
        let name = manifest["package"]["name"].as_str().unwrap().to_string();
        out.push((name, dir.join("src"), manifest));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The crate table of docs/architecture.md: crate -> the runner crates in
/// its "depends on" cell.
fn crate_table() -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for line in page().lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 6 || !cells[1].starts_with("`runner") {
            continue;
        }
        let name = cells[1].trim_matches('`').to_string();
        let deps: BTreeSet<String> = if cells[3] == "all four" {
            ["runner-stats", "runner-core", "runner-os", "runner-db"]
                .map(String::from)
                .into()
        } else {
            cells[3]
                .split('`')
                .skip(1)
                .step_by(2)
                .map(String::from)
                .collect()
        };
        out.insert(name, deps);
    }
    out
}

#[test]
fn each_crate_depends_on_the_runner_crates_the_page_says_and_no_more() {
    let table = crate_table();
    let all = crates();
    assert!(all.len() >= 4, "a workspace of at least four crates");
    for (name, _, manifest) in &all {
        let deps: BTreeSet<String> = manifest
            .get("dependencies")
            .and_then(|d| d.as_table())
            .map(|d| {
                d.keys()
                    .filter(|k| k.starts_with("runner"))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        let said = table.get(name).unwrap_or_else(|| {
            panic!("docs/architecture.md's crate table has no row for `{name}`")
        });
        assert_eq!(
            &deps, said,
            "`{name}` depends on {deps:?}, the page says {said:?}"
        );
    }
}

#[test]
fn the_statistics_crate_needs_no_database_plot_template_or_command_line() {
    let (_, _, manifest) = crates()
        .into_iter()
        .find(|(n, _, _)| n == "runner-stats")
        .unwrap();
    let deps: Vec<String> = manifest["dependencies"]
        .as_table()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    for banned in [
        "rusqlite",
        "postgres",
        "sqlparser",
        "plotters",
        "minijinja",
        "clap",
        "toml",
        "indicatif",
    ] {
        assert!(
            !deps.iter().any(|d| d == banned || d.starts_with("runner")),
            "runner-stats depends on {deps:?}"
        );
    }
}

/// The type arguments of every `Result<...>` in `code`, each split at its
/// top-level commas and without whitespace.
fn result_arguments(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("Result<") {
        if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let (mut depth, mut args, mut arg) = (0, Vec::new(), String::new());
        for c in code[at + "Result<".len()..].chars() {
            match c {
                '<' | '(' | '[' => depth += 1,
                '>' if depth == 0 => break,
                '>' | ')' | ']' => depth -= 1,
                ',' if depth == 0 => {
                    args.push(std::mem::take(&mut arg));
                    continue;
                }
                _ => {}
            }
            if !c.is_whitespace() {
                arg.push(c);
            }
        }
        args.push(arg);
        out.push(args);
    }
    out
}

/// docs/development.md: errors are types with a source, and no signature
/// returns `Result<_, String>`, in any crate, test or bench.
#[test]
fn no_result_has_a_string_error() {
    let mut found = Vec::new();
    let mut all = Vec::new();
    for dir in ["src", "crates", "tests", "benches", "examples"] {
        files(&root().join(dir), &mut all);
    }
    for path in &all {
        for args in result_arguments(&code(path)) {
            if args
                .get(1)
                .is_some_and(|e| e == "String" || e == "std::string::String")
            {
                found.push(format!(
                    "{}: Result<{}>",
                    path.strip_prefix(root()).unwrap().display(),
                    args.join(", ")
                ));
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
    // The check itself sees one.
    let seen = result_arguments(concat!(
        "fn f() -> Res",
        "ult<(Vec<u8>, String), String> {}"
    ));
    assert_eq!(seen, [["(Vec<u8>,String)", "String"]]);
}

/// Module path (from the crate root) -> its file.
fn modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut paths = Vec::new();
    files(src, &mut paths);
    paths
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            (parts, p)
        })
        .collect()
}

/// The first names of every path that starts with `kind::` in `code`:
/// `crate::a::b` gives `a`, `super::{a, b::c}` gives `a` and `b`.
fn heads(code: &str, kind: &str) -> Vec<String> {
    let word = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = Vec::new();
    let pat = format!("{kind}::");
    for (i, _) in code.match_indices(&pat) {
        let before = code[..i].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let rest = &code[i + pat.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(inner.split(',').map(word).filter(|w| !w.is_empty()));
        } else {
            out.push(word(rest));
        }
    }
    out
}

/// Edges between sibling modules: (parent, child a) -> children b that a
/// (or anything inside a) imports from inside the same parent.
fn sibling_edges(src: &Path) -> BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> {
    let mods = modules(src);
    let mut out: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (m, path) in &mods {
        let text = code(path);
        // What `super` and `self` mean in this file (a `mod.rs` is its
        // folder's module, so the rule is the same for both).
        let this = m.clone();
        let parent = if m.is_empty() {
            Vec::new()
        } else {
            m[..m.len() - 1].to_vec()
        };
        let mut targets = Vec::new();
        for (kind, base) in [("crate", Vec::new()), ("super", parent), ("self", this)] {
            for head in heads(&text, kind) {
                let mut t = base.clone();
                t.push(head);
                targets.push(t);
            }
        }
        for mut t in targets {
            while !t.is_empty() && !mods.contains_key(&t) {
                t.pop();
            }
            if t.is_empty() || &t == m {
                continue;
            }
            let common = m.iter().zip(&t).take_while(|(a, b)| a == b).count();
            if common >= m.len() || common >= t.len() {
                continue; // an ancestor or a descendant: not a sibling
            }
            out.entry(m[..common].to_vec())
                .or_default()
                .entry(m[common].clone())
                .or_default()
                .insert(t[common].clone());
        }
    }
    out
}

/// A circle in `graph`, if there is one.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == n) {
            let mut c = path[i..].to_vec();
            c.push(n.to_string());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for next in graph.get(n).into_iter().flatten() {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_import_circle_inside_any_crate() {
    let mut found = Vec::new();
    for (name, src, _) in crates() {
        for (parent, graph) in sibling_edges(&src) {
            if let Some(c) = circle(&graph) {
                let at = if parent.is_empty() {
                    "the crate root".to_string()
                } else {
                    parent.join("::")
                };
                found.push(format!("{name}, in {at}: {}", c.join(" -> ")));
            }
        }
    }
    assert!(
        found.is_empty(),
        "modules that import each other (move the shared part into a module both can import): {found:?}"
    );
}

#[test]
fn the_circle_check_sees_a_circle() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lib.rs"), "mod a;\nmod b;\nmod c;\n").unwrap();
    std::fs::write(dir.path().join("a.rs"), "use super::b::X;\n").unwrap();
    std::fs::write(dir.path().join("b.rs"), "use crate::{c, d};\n").unwrap();
    std::fs::write(
        dir.path().join("c.rs"),
        "// super::a in a comment\nfn f() { self::g(); crate::a::h(); }\n",
    )
    .unwrap();
    let edges = sibling_edges(dir.path());
    let c = circle(&edges[&Vec::new()]).expect("a -> b -> c -> a");
    assert_eq!(c.len(), 4, "{c:?}");
    std::fs::write(dir.path().join("c.rs"), "// crate::a in a comment\n").unwrap();
    assert_eq!(circle(&sibling_edges(dir.path())[&Vec::new()]), None);
}

/// The runner crate's top-level module -> the top-level modules its files
/// name as `crate::X`.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = root().join("src");
    let mut modules: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for e in std::fs::read_dir(&src).unwrap().flatten() {
        let p = e.path();
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "lib" || name == "main" {
            continue;
        }
        let list = modules.entry(name).or_default();
        if p.is_dir() {
            files(&p, list);
        } else {
            list.push(p);
        }
    }
    let names: BTreeSet<String> = modules.keys().cloned().collect();
    let mut out = BTreeMap::new();
    for (m, paths) in &modules {
        let mut used = BTreeSet::new();
        for p in paths {
            for word in heads(&code(p), "crate") {
                if names.contains(&word) && &word != m {
                    used.insert(word);
                }
            }
        }
        out.insert(m.clone(), used);
    }
    out
}

/// Module -> its layer, from the runner crate's table of
/// docs/architecture.md: a row that starts with a number opens a layer, a
/// row with an empty first cell continues it; every `name` in backticks in
/// the second cell is a module.
fn layers() -> BTreeMap<String, u32> {
    let doc = page();
    let doc = &doc[doc.find("## The runner crate's modules").unwrap()..];
    let mut out = BTreeMap::new();
    let mut layer = None;
    for line in doc.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 || !line.starts_with('|') {
            continue;
        }
        let first = cells[1];
        if let Some(n) = first.split_whitespace().next().and_then(|w| w.parse().ok()) {
            layer = Some(n);
        } else if !first.is_empty() {
            continue;
        }
        let Some(l) = layer else { continue };
        for name in cells[2].split('`').skip(1).step_by(2) {
            out.insert(name.to_string(), l);
        }
    }
    out
}

#[test]
fn a_module_imports_only_modules_of_rows_above_its_own() {
    let layer = layers();
    let mut wrong = Vec::new();
    for (m, uses) in imports() {
        let Some(&mine) = layer.get(&m) else { continue };
        for u in uses {
            if let Some(&theirs) = layer.get(&u) {
                if theirs >= mine {
                    wrong.push(format!("{m} (layer {mine}) imports {u} (layer {theirs})"));
                }
            }
        }
    }
    assert!(
        layer.len() >= 10,
        "docs/architecture.md's table read as {layer:?}"
    );
    assert!(
        wrong.is_empty(),
        "imports against the layering of docs/architecture.md (move the shared part up a layer, or move a module down and update the table): {wrong:?}"
    );
}

/// The page names every top-level module of the runner crate.
#[test]
fn the_architecture_page_names_every_module() {
    let doc = page();
    let layer = layers();
    for m in imports().keys() {
        assert!(
            doc.contains(&format!("`{m}`")) && layer.contains_key(m),
            "docs/architecture.md's table does not name module `{m}`"
        );
    }
}

/// run.json has one owner: `RunInfo`'s fields are private to the folder
/// crate, so no other crate can change a record but through the methods
/// named for what happened, and none can write one but through its writer.
#[test]
fn only_the_folder_crate_touches_the_fields_of_run_json() {
    let lib = code(&root().join("crates/folder/src/lib.rs"));
    let start = lib
        .find("pub struct RunInfo {")
        .expect("RunInfo in runner-folder");
    let body = &lib[start..start + lib[start..].find("\n}").unwrap()];
    let public: Vec<&str> = body
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("pub ") && l.contains(':'))
        .collect();
    assert!(
        public.is_empty(),
        "RunInfo's fields must be private to runner-folder: {public:?}"
    );
    assert!(
        body.lines().filter(|l| l.contains("pub(crate) ")).count() >= 10,
        "RunInfo's fields read as {body}"
    );
}

/// What the analysis needs from run.json is read in one place below the
/// commands and the report: `runner_analysis::run`. exec, compare and
/// history never reach into the report for it.
#[test]
fn the_analysis_inputs_live_below_the_commands_and_the_report() {
    let run = code(&root().join("crates/analysis/src/run.rs"));
    for f in [
        "pub fn input(",
        "pub fn gate(",
        "pub fn stop(",
        "pub fn analyse(",
    ] {
        assert!(run.contains(f), "runner_analysis::run lacks {f}");
    }
    let mut reach = Vec::new();
    for dir in ["src/exec", "src/compare", "src/history"] {
        let mut all = Vec::new();
        files(&root().join(dir), &mut all);
        for p in all {
            if code(&p).contains("runner_report::context") {
                reach.push(p.strip_prefix(root()).unwrap().display().to_string());
            }
        }
    }
    assert!(
        reach.is_empty(),
        "reaching into the report's context: {reach:?}"
    );
    let report = code(&root().join("crates/report/src/context/mod.rs"));
    assert!(
        !report.contains("fn analysis_input") && !report.contains("fn gate_input"),
        "the report builds analysis inputs of its own"
    );
}
