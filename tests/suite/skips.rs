//! A test that cannot run must say so in `cargo test`'s summary: every test
//! that needs an outside service (it calls `pg_url()`, `slurm_conf()` or
//! `kubernetes_validate()`) carries the `cfg_attr(not(...), ignore = ...)`
//! that build.rs switches, so without the service it is counted as
//! ignored, never as passed.

use std::path::Path;

/// (the helper a test calls, the attribute it must carry).
const SERVICES: [(&str, &str); 3] = [
    (
        "pg_url()",
        "#[cfg_attr(not(runner_postgres), ignore = \"SKIPPED: RUNNER_DATABASE_URL not set\")]",
    ),
    (
        "slurm_conf()",
        "#[cfg_attr(not(runner_slurm), ignore = \"SKIPPED: SLURM_CONF not set\")]",
    ),
    (
        "kubernetes_validate()",
        "#[cfg_attr(not(runner_kubernetes_validate), ignore = \"SKIPPED: kubernetes-validate not installed\")]",
    ),
];

/// (file, test name, whether its attributes carry the ignore) of every
/// `#[test]` function whose body calls `helper`.
fn tests_calling(helper: &str, ignore: &str) -> Vec<(String, String, bool)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut out = Vec::new();
    let files = std::fs::read_dir(&root)
        .unwrap()
        .chain(std::fs::read_dir(root.join("suite")).unwrap());
    for entry in files.flatten() {
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
            if chunk[..body_end].contains(helper) {
                // Compared without whitespace: rustfmt may wrap a long attribute.
                let bare = |s: &str| s.split_whitespace().collect::<String>();
                let attrs = &chunk[..chunk.find("fn ").unwrap_or(0)];
                out.push((
                    path.file_name().unwrap().to_string_lossy().into_owned(),
                    name.to_string(),
                    bare(attrs).contains(&bare(ignore)),
                ));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_service_test_is_ignored_without_its_service() {
    for (helper, ignore) in SERVICES {
        let tests = tests_calling(helper, ignore);
        let least = if helper == "pg_url()" { 9 } else { 1 };
        assert!(tests.len() >= least, "{helper}: found {tests:?}");
        let bare: Vec<_> = tests.iter().filter(|t| !t.2).collect();
        assert!(
            bare.is_empty(),
            "these tests would pass silently without their service; add {ignore}: {bare:?}"
        );
    }
}

/// The cfgs follow their variables: set here exactly when this build saw them.
#[test]
fn the_cfgs_follow_their_variables() {
    let set = |v: Option<&str>| v.is_some_and(|u| !u.trim().is_empty());
    assert_eq!(
        cfg!(runner_postgres),
        set(option_env!("RUNNER_DATABASE_URL"))
    );
    assert_eq!(cfg!(runner_slurm), set(option_env!("SLURM_CONF")));
}
