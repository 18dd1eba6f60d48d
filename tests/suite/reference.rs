//! docs/reference.md documents every key of the experiment file, and only
//! keys that exist: the valid keys of every table and strategy kind come
//! from the validator itself (its "unknown key" error lists them), so a key
//! added to the spec without a row here, or a row for a key that is gone,
//! fails this test.

use crate::common;

use common::{runner, write_spec};
use std::collections::BTreeSet;

/// The keys the validator accepts where `zzz` stands in `body`.
fn valid_keys(body: &str) -> Vec<String> {
    let tmp = tempfile::tempdir().unwrap();
    let out = runner()
        .arg("check")
        .arg(write_spec(tmp.path(), "k", body))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    // Every problem of the file is a line of its own, in the file's
    // order: the unknown key's is the one that names `zzz`.
    let list = err
        .lines()
        .find(|l| l.contains("zzz`"))
        .and_then(|l| l.split(" are: ").nth(1))
        .unwrap_or_else(|| panic!("no list of valid keys in {err:?}"));
    list.trim()
        .split(", ")
        .map(|k| k.trim().to_string())
        .collect()
}

/// The keys of the table under `heading` (up to the next heading of the
/// same or a higher level): the first column's code spans.
fn documented(doc: &str, heading: &str) -> BTreeSet<String> {
    let level = heading.chars().take_while(|c| *c == '#').count();
    let mut lines = doc.lines().skip_while(|l| !l.starts_with(heading));
    assert!(
        lines.next().is_some(),
        "docs/reference.md has no {heading:?}"
    );
    let mut keys = BTreeSet::new();
    for l in lines {
        let hashes = l.chars().take_while(|c| *c == '#').count();
        if hashes > 0 && hashes <= level {
            break;
        }
        if !l.starts_with("| `") {
            continue;
        }
        let first = l.split('|').nth(1).unwrap_or_default();
        if let Some(k) = first.split('`').nth(1) {
            keys.insert(k.to_string());
        }
    }
    keys
}

const DESIGN: &str = "[design]\nbaseline = \"a\"\ntreatment = \"a\"\n";

#[test]
fn the_reference_documents_every_key_and_no_other() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reference.md"),
    )
    .unwrap();
    let mut cases: Vec<(String, &str)> = vec![
        ("zzz = 1\n".into(), "## Top level"),
        ("[workload]\nzzz = 1\n".into(), "## `[workload]`"),
        ("[database]\nzzz = 1\n".into(), "## `[database]`"),
        ("[design]\nzzz = 1\n".into(), "## `[design]`"),
        ("[design.stop]\nzzz = 1\n".into(), "## `[design.stop]`"),
        ("[analysis]\nzzz = 1\n".into(), "## `[analysis]`"),
        ("[report]\nzzz = 1\n".into(), "## `[report]`"),
        ("[gate]\nzzz = 1\n".into(), "## `[gate]`"),
    ];
    for (kind, extra, heading) in [
        ("command", "argv = ['true']\n", "### `kind = \"command\"`"),
        ("sql", "run = 'SELECT 1'\n", "### `kind = \"sql\"`"),
        ("spin", "", "### `kind = \"spin\"`"),
    ] {
        cases.push((
            format!("{DESIGN}[strategies.a]\nkind = '{kind}'\n{extra}zzz = 1\n"),
            heading,
        ));
    }
    for (body, heading) in cases {
        let mut valid: BTreeSet<String> = valid_keys(&body).into_iter().collect();
        if heading.starts_with("### `kind") {
            // `kind` itself is documented once, under [strategies.NAME].
            assert!(valid.remove("kind"));
        }
        let doc_keys = documented(&doc, heading);
        assert_eq!(
            doc_keys, valid,
            "{heading}: docs/reference.md (left) and the validator (right) disagree"
        );
    }
    // The kinds without keys of their own.
    for kind in ["in-memory", "tx-rollback", "noop"] {
        let body = format!("{DESIGN}[strategies.a]\nkind = '{kind}'\nzzz = 1\n");
        assert_eq!(valid_keys(&body), ["kind"], "{kind}");
        assert!(doc.contains(&format!("`{kind}`")), "{kind}");
    }
    assert!(documented(&doc, "## `[strategies.NAME]`").contains("kind"));
}
