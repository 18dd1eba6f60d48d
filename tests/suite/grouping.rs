//! A cell's group (the headline's, the gate's, a report panel's) is every
//! grid value but the harness's own delay, whatever the user's keys are
//! called: a key named `delayed` is not the delay (before, four
//! `starts_with("delay")` filters grouped such cells together).

use crate::common;

use common::{read_json, runner, write_spec};

fn groups_for(key: &str) -> (usize, Vec<String>) {
    let tmp = tempfile::tempdir().unwrap();
    let body = format!(
        r#"
seed = 7
[strategies.c]
kind = "command"
argv = ["true", "{{{key}}}"]
[design]
baseline = "c"
treatment = "c"
forks = 2
warmup_pairs = 0
pairs = 5
[grid]
delay_us = [0, 50]
{key} = [1, 2]
"#
    );
    let spec = write_spec(tmp.path(), "g", &body);
    let out = runner()
        .current_dir(tmp.path())
        .args(["exec", spec.to_str().unwrap(), "--quiet", "--out", "out"])
        .env_remove("RUNNER_DATABASE_URL")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{key}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let a = read_json(&tmp.path().join("out/analysis.json"));
    let groups = a["headline"]["groups"].as_array().unwrap();
    let labels = groups.iter().map(|g| g["params"].to_string()).collect();
    (groups.len(), labels)
}

#[test]
fn user_keys_named_like_the_harness_group_like_any_other() {
    let (n, labels) = groups_for("level");
    assert_eq!(n, 2, "{labels:?}");
    for key in ["delayed", "d", "delay", "pair", "fork"] {
        let (n, labels) = groups_for(key);
        assert_eq!(n, 2, "{key}: {labels:?}");
        assert!(labels.iter().all(|l| l.contains(key)), "{key}: {labels:?}");
    }
}
