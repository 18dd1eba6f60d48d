//! Memory layout as a design factor through the real binary:
//! each fork's layout is a function of the seed, recorded in run.json and
//! announced by `check`; `fixed` gives every fork the same one; a command
//! the worker starts finds the padding in its environment; a bad value is
//! refused with its position.

use crate::common;
use common::*;
use serde_json::Value;
use std::path::Path;

const SPEC: &str = r#"
name = "lb"
seed = 11
[workload]
plans = 2
months = 6
[strategies.memory]
kind = "in-memory"
[design]
baseline = "memory"
treatment = "memory"
forks = 3
warmup_pairs = 1
pairs = 10
[grid]
layout = ["fixed", "random"]
[analysis]
resamples = 100
"#;

/// `(cell, fork) -> forks[].layout` of a finished run.
fn layouts(out: &Path) -> std::collections::BTreeMap<(u64, u64), Value> {
    read_json(&out.join("run.json"))["forks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let key = (f["cell"].as_u64().unwrap(), f["fork"].as_u64().unwrap());
            (key, f["layout"].clone())
        })
        .collect()
}

/// The planned part of a layout record: what the seed decides.
fn planned(l: &Value) -> Value {
    let keys = [
        "layout",
        "seed",
        "env_pad_bytes",
        "stack_offset_bytes",
        "heap_offset_bytes",
    ];
    keys.iter()
        .map(|k| (k.to_string(), l[*k].clone()))
        .collect()
}

#[test]
fn the_same_seed_gives_the_same_layouts_and_fixed_gives_one_layout_to_every_fork() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "lb", SPEC);
    let out_a = exec_ok(tmp.path(), &spec, "a", &[]);
    let a = layouts(&out_a);
    let b = layouts(&exec_ok(tmp.path(), &spec, "b", &[]));
    assert_eq!(a.len(), 6);
    for (k, l) in &a {
        assert_eq!(
            planned(l),
            planned(&b[k]),
            "fork {k:?} differs between runs"
        );
    }
    // Cell 0 is fixed, cell 1 random (the grid's order).
    let fixed: Vec<&Value> = (0..3).map(|f| &a[&(0, f)]).collect();
    let random: Vec<&Value> = (0..3).map(|f| &a[&(1, f)]).collect();
    for l in &fixed {
        assert_eq!(l["layout"], "fixed");
        assert_eq!(planned(l), planned(fixed[0]));
        // ASLR off, unless the machine refused it, and then it says why.
        assert!(
            l["aslr"] == false || l["aslr_note"].is_string(),
            "fixed fork with ASLR on and no reason: {l}"
        );
        // With ASLR off and the same padding and offsets, the timed runs'
        // stack lands at the same place in its page in every fork.
        if l["aslr"] == false && fixed[0]["aslr"] == false {
            assert_eq!(l["stack_page_offset"], fixed[0]["stack_page_offset"]);
        }
    }
    for l in &random {
        assert_eq!(l["layout"], "random");
        assert!(l["env_pad_bytes"].as_u64().unwrap() <= 4096);
        assert!(l["stack_offset_bytes"].as_u64().unwrap() < 4096);
        assert!(l["heap_offset_bytes"].as_u64().unwrap() < 4096);
    }
    let seeds: std::collections::BTreeSet<String> =
        random.iter().map(|l| l["seed"].to_string()).collect();
    assert_eq!(seeds.len(), 3, "each random fork has its own seed");
    assert_ne!(planned(random[0]), planned(random[1]));

    // The Layout section: both layouts, their ratio, the factors under random.
    let analysis = read_json(&out_a.join("analysis.json"));
    let l = &analysis["layout"];
    let groups: Vec<&str> = l["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["layout"].as_str().unwrap())
        .collect();
    assert_eq!(groups, ["fixed", "random"]);
    // The ratio of spreads, or why there is none: three forks of a tiny
    // workload may all have the same median on the clock's steps (a spread
    // of 0), so its value is the machine's, not the test's.
    let ratio = &l["ratio"];
    assert!(
        ratio["estimate"].as_f64().is_some_and(|r| r >= 0.0) || ratio["note"].is_string(),
        "{l}"
    );
    assert_eq!(l["factors"].as_array().unwrap().len(), 5);
    assert_eq!(l["factors"][0]["n"], 3);
    let report = std::fs::read_to_string(out_a.join("report.md")).unwrap();
    assert!(report.contains("## Layout"), "{report}");
    // Which verdict depends on the spreads this machine gave.
    assert!(
        report.contains("under `fixed`") || report.contains("The spreads cannot be compared"),
        "{report}"
    );
    // `runner report` re-renders it byte for byte from run.json and pairs.csv.
    let again = tmp.path().join("again.md");
    let o = run_in(
        tmp.path(),
        &[
            "report",
            out_a.to_str().unwrap(),
            "--out",
            again.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", err_of(&o));
    assert_eq!(std::fs::read_to_string(&again).unwrap(), report);

    // A recorded layout is checked against the seed: an edited one is refused.
    let edited = tmp.path().join("edited");
    copy_tree(&out_a, &edited);
    edit_json(&edited.join("run.json"), |r| {
        let l = &mut r["forks"][0]["layout"];
        l["env_pad_bytes"] = (l["env_pad_bytes"].as_u64().unwrap() + 1).into();
    });
    let o = run_in(tmp.path(), &["report", edited.to_str().unwrap()]);
    assert_refused(&o, &["forks[0].layout is not the layout the seed gives"]);

    // `check` announces exactly what the run then used.
    let check = run_in(tmp.path(), &["check", spec.to_str().unwrap()]);
    assert!(check.status.success(), "{}", err_of(&check));
    let text = String::from_utf8(check.stdout).unwrap();
    for ((cell, fork), l) in &a {
        let line = format!(
            "fork {fork:<4} {}: {} B of environment padding, stack offset {} B, heap offset {} B, ASLR {}",
            l["layout"].as_str().unwrap(),
            l["env_pad_bytes"],
            l["stack_offset_bytes"],
            l["heap_offset_bytes"],
            if l["layout"] == "fixed" { "off" } else { "on" }
        );
        let at = format!("cell {cell:<3} {line}");
        assert!(text.contains(&at), "check does not say {at:?}:\n{text}");
    }
}

#[test]
fn a_command_finds_its_fork_padding_in_its_environment_and_system_adds_none() {
    let tmp = tempfile::tempdir().unwrap();
    let seen = tmp.path().join("seen");
    std::fs::create_dir(&seen).unwrap();
    let spec = write_spec(
        tmp.path(),
        "envs",
        &format!(
            r#"
seed = 3
[strategies.env]
kind = "command"
argv = ["sh", "-c", "env > '{}'/env.$$"]
[design]
baseline = "env"
treatment = "env"
forks = 2
warmup_pairs = 0
pairs = 2
layout = "random"
[analysis]
resamples = 100
"#,
            seen.display()
        ),
    );
    let out = exec_ok(tmp.path(), &spec, "out", &[]);
    let recorded: std::collections::BTreeSet<u64> = layouts(&out)
        .values()
        .map(|l| l["env_pad_bytes"].as_u64().unwrap())
        .collect();
    let padding_of = |text: &str| -> Option<String> {
        text.lines()
            .find_map(|l| l.strip_prefix("RUNNER_LAYOUT_PAD="))
            .map(String::from)
    };
    let files: Vec<_> = std::fs::read_dir(&seen).unwrap().flatten().collect();
    // Two forks x two pairs x two arms, plus the agreement check's runs.
    assert!(files.len() >= 8, "{} command runs", files.len());
    let mut found = std::collections::BTreeSet::new();
    for f in &files {
        let text = std::fs::read_to_string(f.path()).unwrap();
        let pad =
            padding_of(&text).unwrap_or_else(|| panic!("no RUNNER_LAYOUT_PAD in {:?}", f.path()));
        assert!(pad.bytes().all(|b| b == b'x'));
        found.insert(pad.len() as u64);
    }
    assert_eq!(found, recorded, "the commands saw the recorded paddings");

    // The default adds nothing to the environment and records nothing.
    for f in files {
        std::fs::remove_file(f.path()).unwrap();
    }
    let out = exec_ok(
        tmp.path(),
        &spec,
        "system",
        &["--set", "design.layout=\"system\""],
    );
    assert!(layouts(&out).values().all(Value::is_null));
    let files: Vec<_> = std::fs::read_dir(&seen).unwrap().flatten().collect();
    assert!(!files.is_empty());
    for f in files {
        let text = std::fs::read_to_string(f.path()).unwrap();
        assert_eq!(padding_of(&text), None, "{:?}", f.path());
    }
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(!report.contains("## Layout"));
}

#[test]
fn a_bad_layout_is_refused_with_its_position() {
    let tmp = tempfile::tempdir().unwrap();
    let base = "[strategies.a]\nkind = \"noop\"\n[design]\nbaseline = \"a\"\ntreatment = \"a\"\n";
    let cases = [
        (
            format!("{base}layout = \"randomized\"\n"),
            "k.toml:6:10: design.layout must be \"system\"",
        ),
        (
            format!("{base}layout = 1\n"),
            "k.toml:6:10: design.layout must be",
        ),
        (
            format!("{base}[grid]\nlayout = [\"fixed\", \"shuffled\"]\n"),
            "k.toml:7:20: grid.layout[1] must be",
        ),
        (
            format!("{base}[grid]\nlayout = [\"fixed\", \"fixed\"]\n"),
            "k.toml:7:20: grid.layout[1] = \"fixed\" repeats grid.layout[0]",
        ),
    ];
    for (text, expect) in cases {
        let spec = write_spec(tmp.path(), "k", &text);
        let before = tree(tmp.path());
        let o = run_in(tmp.path(), &["exec", spec.to_str().unwrap(), "--quiet"]);
        assert_refused(&o, &[expect]);
        assert_eq!(err_of(&o).trim_end().lines().count(), 1);
        assert_eq!(tree(tmp.path()), before, "a refused spec writes nothing");
    }
}
