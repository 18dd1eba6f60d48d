//! A test that cannot run must say so in `cargo test`'s summary: every test
//! that needs a PostgreSQL server (it calls `pg_url()`) carries the
//! `cfg_attr(not(runner_postgres), ignore = ...)` that build.rs switches, so
//! without RUNNER_DATABASE_URL it is counted as ignored, never as passed.

use std::path::Path;

const IGNORE: &str =
    "#[cfg_attr(not(runner_postgres), ignore = \"SKIPPED: RUNNER_DATABASE_URL not set\")]";

/// (file, test name) of every `#[test]` function whose body calls `pg_url()`,
/// with whether its attributes carry [`IGNORE`].
fn postgres_tests() -> Vec<(String, String, bool)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let path = entry.path();
        let is_rust = path.extension().and_then(|e| e.to_str()) == Some("rs");
        if !is_rust || path.file_name() == Some("skips.rs".as_ref()) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        // Split at each test; a chunk holds its attributes and its body.
        for chunk in text.split("#[test]").skip(1) {
            let Some(name) = chunk.split("fn ").nth(1).and_then(|s| s.split('(').next()) else {
                continue;
            };
            let body_end = chunk.find("\n}\n").unwrap_or(chunk.len());
            if chunk[..body_end].contains("pg_url()") {
                let attrs = &chunk[..chunk.find("fn ").unwrap_or(0)];
                out.push((
                    path.file_name().unwrap().to_string_lossy().into_owned(),
                    name.to_string(),
                    attrs.contains(IGNORE),
                ));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_postgres_test_is_ignored_without_a_server() {
    let tests = postgres_tests();
    assert!(tests.len() >= 9, "found {tests:?}");
    let bare: Vec<_> = tests.iter().filter(|t| !t.2).collect();
    assert!(
        bare.is_empty(),
        "these PostgreSQL tests would pass silently without a server; add {IGNORE}: {bare:?}"
    );
}

/// The cfg follows the variable: set here exactly when this build saw it.
#[test]
fn the_cfg_follows_runner_database_url() {
    let set_at_build = option_env!("RUNNER_DATABASE_URL").is_some_and(|u| !u.trim().is_empty());
    assert_eq!(cfg!(runner_postgres), set_at_build);
}
