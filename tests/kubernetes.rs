//! The Kubernetes recipe, `examples/kubernetes/aa-indexed-job.yaml`: there
//! is no cluster here, so it is validated against the Kubernetes 1.33 JSON
//! schemas (PyPI's `kubernetes-validate`, offline, strict: an unknown field
//! is an error), and checked to fit runner's command line: as many
//! completions as `--shards`, and the merge given exactly the folders the
//! shards write.

// Helpers shared by this crate's modules are `pub` for them; nothing
// outside the test binary can reach them anyway.
#![allow(unreachable_pub)]

mod common;
use common::*;
use std::path::{Path, PathBuf};

fn manifest() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kubernetes/aa-indexed-job.yaml")
}

#[test]
#[cfg_attr(
    not(runner_kubernetes_validate),
    ignore = "SKIPPED: kubernetes-validate not installed"
)]
fn the_indexed_job_manifest_is_valid_against_the_job_schema() {
    let mut validate = kubernetes_validate();
    let out = validate
        .args(["--strict", "-k", "1.33.0"])
        .arg(manifest())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    for resource in [
        "persistentvolumeclaim/runner-aa-results",
        "job/runner-aa-shards",
        "job/runner-aa-merge",
    ] {
        assert!(
            text.contains(&format!("passed for resource {resource}")),
            "{text}"
        );
    }

    // The validator does reject what a cluster would: a misspelt field.
    let tmp = tempfile::tempdir().unwrap();
    let broken = tmp.path().join("broken.yaml");
    let yaml = std::fs::read_to_string(manifest()).unwrap();
    std::fs::write(&broken, yaml.replace("completionMode:", "completionMod:")).unwrap();
    let out = kubernetes_validate()
        .args(["--strict", "-k", "1.33.0"])
        .arg(&broken)
        .output()
        .unwrap();
    assert!(!out.status.success(), "a misspelt field passed");
}

/// The manifest's numbers agree with each other and with runner.
#[test]
fn the_manifest_cuts_and_merges_the_same_shards() {
    let text = std::fs::read_to_string(manifest()).unwrap();
    // Without its comments.
    let yaml: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    let number_after = |key: &str| -> u32 {
        let at = yaml.find(key).unwrap_or_else(|| panic!("no {key}")) + key.len();
        yaml[at..]
            .trim_start()
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let completions = number_after("completions:");
    assert_eq!(number_after("parallelism:"), completions);
    assert_eq!(number_after("--shards"), completions);
    assert!(yaml.contains("completionMode: Indexed"));
    assert!(yaml.contains(r#"out="/data/shards/aa/$JOB_COMPLETION_INDEX""#));
    let merge_at = yaml.find("- merge\n").expect("a merge command");
    let shards: Vec<&str> = yaml[merge_at..]
        .lines()
        .map(str::trim)
        .filter_map(|l| l.strip_prefix("- /data/shards/aa/"))
        .collect();
    let want: Vec<String> = (0..completions).map(|i| i.to_string()).collect();
    assert_eq!(shards, want, "the merge lists every shard folder once");

    // What runner makes of the pod's environment: index i of completions is
    // shard i + 1, and --shards must be given.
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "small", SMALL_AA);
    let o = runner()
        .current_dir(tmp.path())
        .env("JOB_COMPLETION_INDEX", "1")
        .args([
            "exec",
            spec.to_str().unwrap(),
            "--quiet",
            "--shards",
            "4",
            "--out",
            "s",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err_of(&o));
    let info = read_json(&tmp.path().join("s/run.json"));
    assert_eq!(
        (
            info["shard"]["index"].as_u64(),
            info["shard"]["count"].as_u64()
        ),
        (Some(2), Some(4))
    );
}
