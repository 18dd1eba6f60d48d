//! Bounds: counts, the spec file and the
//! template are bounded, each refusal saying the bound and why, before
//! anything is created; `check` says how long the analysis will take.

use crate::common;
use common::*;
use std::time::Duration;

#[test]
fn a_count_beyond_its_bound_is_refused_before_anything_is_created() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    write_spec(t, "small", SMALL_AA);
    let before = tree(t);
    for (set, says) in [
        // Before: `memory allocation of 68719476720 bytes failed`, a
        // backtrace, and an unusable o.partial/.
        (
            "design.forks=4294967295",
            "design.forks must be a positive integer up to 10000 (each fork is a fresh process and a record in run.json",
        ),
        // Before: a 3.7 GB run.json.
        ("design.forks=10000000", "up to 10000"),
        // Before: minutes of analysis that Ctrl-C could not stop.
        ("analysis.resamples=100000000", "from 100 to 100000"),
        // Before: broke the built-in template after the whole run.
        ("analysis.confidence=1e-17", "from 0.5 to 0.999"),
        ("design.pairs=1000001", "up to 1000000"),
        ("workload.months=100000", "up to 1200"),
    ] {
        let o = run_in(t, &["exec", "small.toml", "--quiet", "--out", "o", "--set", set]);
        assert_refused(&o, &[&format!("--set {set}: "), says]);
        assert_eq!(tree(t), before, "{set} created something");
    }
}

/// `check /dev/zero` hung reading forever.
#[test]
fn an_endless_or_huge_spec_file_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let o = runner()
        .current_dir(tmp.path())
        .args(["check", "/dev/zero"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_refused(
        &o,
        &["/dev/zero: cannot read the experiment file: it is larger than 1024 KiB"],
    );
    let big = tmp.path().join("big.toml");
    std::fs::write(&big, format!("{SMALL_AA}\n#{}\n", "x".repeat(1 << 20))).unwrap();
    let o = run_in(tmp.path(), &["check", "big.toml"]);
    assert_refused(&o, &["larger than 1024 KiB"]);
}

#[test]
fn check_estimates_the_analysis() {
    let tmp = tempfile::tempdir().unwrap();
    write_spec(tmp.path(), "small", SMALL_AA);
    let o = run_in(
        tmp.path(),
        &[
            "check",
            "small.toml",
            "--set",
            "analysis.resamples=100000",
            "--set",
            "design.pairs=100000",
        ],
    );
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    assert!(o.status.success(), "{}", err_of(&o));
    // 5 x 100000 resamples x 400000 measured pairs x 3 ns = 600 s.
    assert!(
        out.contains("analysis    about 10.0 min (100000 resamples x 400000 measured pairs, after the forks)"),
        "{out}"
    );
}

/// Nested template loops ran to 4.2 GB; a template's work and
/// output are bounded, and the folder is left as it was.
#[test]
fn a_runaway_template_is_stopped_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "small", SMALL_AA);
    let out = exec_ok(t, &spec, "fin", &[]);
    std::fs::write(
        t.join("loops.j2"),
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\n",
    )
    .unwrap();
    std::fs::write(
        t.join("huge.j2"),
        "{% for i in range(100000) %}{{ \"x\" * 1000 }}{% endfor %}\n",
    )
    .unwrap();
    let before = tree(t);
    for (template, says) in [
        (
            "loops.j2",
            "loops.j2:1: template error: the template did more work than any report needs",
        ),
        (
            "huge.j2",
            "huge.j2: template error: the rendering passed 16 MiB",
        ),
    ] {
        let o = runner()
            .current_dir(t)
            .args(["report", "fin", "--template", template])
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap();
        assert_refused(&o, &[says]);
        assert_eq!(tree(t), before);
    }
    assert!(out.join("report.md").is_file());
}
