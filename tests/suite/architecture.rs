//! The module map in docs/architecture.md is a layering, not a knot: a
//! top-level module imports only modules in the rows above its own. An
//! import is any `crate::NAME` path outside a comment in a module's files;
//! a test module (`tests.rs`, `tests/`) counts like any other file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

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

/// Top-level module -> the top-level modules its files name as `crate::X`.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
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
            for line in std::fs::read_to_string(p).unwrap().lines() {
                let code = line.split("//").next().unwrap_or("");
                for (i, _) in code.match_indices("crate::") {
                    let rest = &code[i + "crate::".len()..];
                    let word: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if names.contains(&word) && &word != m {
                        used.insert(word);
                    }
                }
            }
        }
        out.insert(m.clone(), used);
    }
    out
}

#[test]
fn no_two_top_level_modules_import_each_other() {
    let g = imports();
    let mut both = Vec::new();
    for (a, uses) in &g {
        for b in uses {
            if a < b && g.get(b).is_some_and(|u| u.contains(a)) {
                both.push(format!("{a} <-> {b}"));
            }
        }
    }
    assert!(
        both.is_empty(),
        "top-level modules that import each other (move the shared part down a layer, see docs/architecture.md): {both:?}"
    );
}

/// Module -> its layer, from the table of docs/architecture.md: a row that
/// starts with a number opens a layer, a row with an empty first cell
/// continues it; every `name` in backticks in the second cell is a module.
fn layers() -> BTreeMap<String, u32> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
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
        layer.len() > 20,
        "docs/architecture.md's table read as {layer:?}"
    );
    assert!(
        wrong.is_empty(),
        "imports against the layering of docs/architecture.md (move the shared part up a layer, or move a module down and update the table): {wrong:?}"
    );
}

/// The map in docs/architecture.md names every top-level module.
#[test]
fn the_architecture_page_names_every_module() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
    let layer = layers();
    for m in imports().keys() {
        assert!(
            doc.contains(&format!("`{m}`")) && layer.contains_key(m),
            "docs/architecture.md's table does not name module `{m}`"
        );
    }
}
