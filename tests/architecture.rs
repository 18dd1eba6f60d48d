//! No two top-level modules of the crate import each other:
//! the module map in docs/architecture.md is a layering, not a knot. An
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

/// The map in docs/architecture.md names every top-level module.
#[test]
fn the_architecture_page_names_every_module() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
    for m in imports().keys() {
        assert!(
            doc.contains(&format!("`{m}`")),
            "docs/architecture.md does not name module `{m}`"
        );
    }
}
