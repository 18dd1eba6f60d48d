//! The migration on the JSON: each key a version 0 file may lack is added
//! with the value reading it always gave, a key it holds is kept, and the
//! version decides (a current file is left alone). The structs' side, a
//! committed folder read with and without the keys, is tested beside them
//! (`run_folder`, `analysis`).

use super::*;
use serde_json::json;

/// The argv parser of the layer above, as the migration sees it: here a
/// stand-in that records the words, so the step's plumbing is what is
/// tested (the real parser's own test is in `run_folder`).
fn words(argv: &[String]) -> Result<Value, StepError> {
    match argv.get(1).map(String::as_str) {
        Some("exec") => Ok(json!({"command": "exec", "words": argv})),
        _ => Err(StepError::ArgvNotACommand {
            line: argv.join(" "),
            why: "not exec".into(),
        }),
    }
}

const RUN: Kind = Kind::Run { argv: &words };

#[test]
fn older_files_are_migrated_and_newer_ones_refused() {
    let p = Path::new("dir/run.json");
    let old = json!({"run_id": "x"});
    assert_eq!(version_of(p, &old, &RUN), Ok(0));
    let up = migrate(p, old, RUN).unwrap();
    assert_eq!(up[KEY], 2);
    assert_eq!(up["run_id"], "x");
    let now = json!({"format_version": 2, "run_id": "x"});
    assert_eq!(migrate(p, now.clone(), RUN).unwrap(), now);
    let newer = json!({"format_version": 3});
    assert_eq!(
        migrate(p, newer, RUN).unwrap_err().to_string(),
        "dir/run.json has format_version 3, written by a newer runner; this runner reads format_version 0 to 2: upgrade runner to read it"
    );
    let bad = json!({"format_version": "one"});
    assert_eq!(
        readable(p, &bad, &RUN).unwrap_err().to_string(),
        "dir/run.json: format_version must be a whole number from 0 to 2, got \"one\""
    );
    // analysis.json keeps its own version.
    let a = Path::new("dir/analysis.json");
    assert_eq!(
        migrate(a, json!({"format_version": 2}), Kind::Analysis)
            .unwrap_err()
            .to_string(),
        "dir/analysis.json has format_version 2, written by a newer runner; this runner reads format_version 0 to 1: upgrade runner to read it"
    );
}

#[test]
fn a_version_0_run_json_gets_every_key_it_lacks_as_the_old_default() {
    let p = Path::new("r/run.json");
    let old = json!({
        "command_line": ["./runner", "exec", "a.toml"],
        "build": {"profile": "release"},
        "environment": {"os": "Linux"},
        "spec": {"experiment": {"design": {"forks": 2}, "gate": {"min_power": 0.8}}},
        "forks": [{"cell": 0, "checks": {"repeatable": true}, "placement": {"worker_pinned": true}}],
        "merged": {"shards": [{"command_line": ["runner", "exec", "b.toml"], "build": {}, "environment": {}}]},
    });
    let up = migrate(p, old, RUN).unwrap();
    assert_eq!(
        up,
        json!({
            "format_version": 2,
            "invocation": {"command": "exec", "words": ["./runner", "exec", "a.toml"]},
            "build": {"profile": "release", "launched_as": "cargo run --release --"},
            "environment": {"os": "Linux", "checks": [], "busiest_processes": [],
                            "code": {"state": "not-recorded"}},
            "spec": {"experiment": {
                "design": {"forks": 2, "placement": "same-core"},
                "gate": {"min_power": 0.8, "max_false_block": 0.1, "within_check": false},
            }},
            "forks": [{
                "cell": 0,
                "resource_usage": false,
                "checks": {"repeatable": true, "matches_in_memory": null},
                "placement": {"worker_pinned": true, "backend_cpus": [], "backend_ticks": 0},
            }],
            "merged": {"shards": [
                {"invocation": {"command": "exec", "words": ["runner", "exec", "b.toml"]},
                 "build": {"launched_as": "cargo run --release --"},
                 "environment": {"checks": [], "busiest_processes": [],
                                 "code": {"state": "not-recorded"}}}
            ]},
        })
    );
    // An analyze folder's invocation gains the clock step it could not
    // take then.
    let analyze = json!({"invocation": {"command": "analyze", "csv": "p.csv"}});
    let up = migrate(p, analyze, RUN).unwrap();
    assert_eq!(up["invocation"]["clock_resolution_ns"], 0);
}

#[test]
fn a_key_a_version_0_file_holds_is_kept_and_a_current_file_is_left_alone() {
    let p = Path::new("r/run.json");
    let held = json!({
        "invocation": {"command": "analyze", "clock_resolution_ns": 20},
        "build": {"launched_as": "runner"},
        "spec": {"experiment": {"design": {"placement": "none"},
                 "gate": {"max_false_block": 0.2, "within_check": true}}},
        "forks": [{"resource_usage": true, "checks": {"matches_in_memory": true}}],
    });
    let mut want = held.clone();
    want[KEY] = 2.into();
    assert_eq!(migrate(p, held, RUN).unwrap(), want);
    // Version 2 never held `command_line` or lacked these keys: nothing
    // is added, so a missing key stays missing and serde refuses it.
    let current = json!({"format_version": 2, "command_line": ["runner", "exec", "a.toml"],
                         "forks": [{}], "environment": {}});
    assert_eq!(migrate(p, current.clone(), RUN).unwrap(), current);
}

#[test]
fn a_version_0_argv_that_is_no_runner_command_is_one_sentence() {
    let p = Path::new("r/run.json");
    let e = |v: Value| migrate(p, v, RUN).unwrap_err().to_string();
    assert_eq!(
        e(json!({"command_line": ["runner", "frobnicate"]})),
        "r/run.json: command_line `runner frobnicate` is not a runner exec, merge or analyze command line (not exec)"
    );
    assert_eq!(
        e(json!({"command_line": ["runner", 3]})),
        "r/run.json: command_line holds 3, not an argument (text)"
    );
    assert_eq!(
        e(json!({"command_line": "runner exec a.toml"})),
        "r/run.json: command_line is \"runner exec a.toml\", not a list of arguments"
    );
}

#[test]
fn a_version_0_analysis_json_gets_every_key_it_lacks_as_the_old_default() {
    let p = Path::new("r/analysis.json");
    let measured = json!({"cell": 3, "flagged": 9, "forks": 10, "share": 0.9});
    let computed = json!({"cell": 1, "power": 0.9, "slowdown_ns": 4.0, "spread_ns": 1.0});
    let old = json!({
        "cells": [{"pooled": {"n": 4}, "cross_runs": {"slower": 1}}],
        "gate": {
            "false_alarms": {"flagged": 0, "forks": 29, "upper_bound": 0.1},
            "power": measured,
            "groups": [
                {"false_alarms": {"cell": 2, "upper_bound": 0.1}, "power": computed},
                {"false_alarms": null}
            ],
        },
    });
    let up = migrate(p, old, Kind::Analysis).unwrap();
    assert_eq!(
        up,
        json!({
            "format_version": 1,
            "cells": [{"pooled": {"n": 4, "share_tied": 0.0},
                       "cross_runs": {"slower": 1, "faster": 0}}],
            "gate": {
                "max_false_block": 0.1,
                "advice": null,
                "false_alarms": {"flagged": 0, "forks": 29, "upper_bound": 0.1,
                                 "lower_bound": 0.0},
                "false_blocks": null,
                "power": null,
                "groups": [
                    {"false_alarms": {"cell": 2, "upper_bound": 0.1, "lower_bound": 0.0},
                     "power": computed, "false_blocks": null},
                    {"false_alarms": null, "power": null, "false_blocks": null}
                ],
            },
        })
    );
}

#[derive(Debug, serde::Deserialize)]
#[allow(dead_code)]
struct Needs {
    format_version: u32,
    run_id: String,
}

#[test]
fn parse_names_the_line_of_a_current_file_and_refuses_a_newer_one() {
    let p = Path::new("r/run.json");
    let e = parse::<Needs>(p, b"{\"format_version\": 2\n}", RUN).unwrap_err();
    assert_eq!(e.to_string(), "missing field `run_id` at line 2 column 1");
    let e = parse::<Needs>(p, b"{\"format_version\": 7, \"run_id\": \"x\"}", RUN).unwrap_err();
    assert!(matches!(
        e,
        ReadError::Format(FormatError::Newer { found: 7, .. })
    ));
    let old = parse::<Needs>(p, b"{\"run_id\": \"x\"}", RUN).unwrap();
    assert_eq!((old.format_version, old.run_id.as_str()), (2, "x"));
}

#[test]
fn a_version_1_run_json_has_no_code_recorded_and_its_left_out_counts_are_the_old_defaults() {
    let p = Path::new("r/run.json");
    let spec = |toml: &str| {
        json!({
            "format_version": 1,
            "environment": {"git_commit": "abc"},
            "spec": {"toml": toml, "experiment": {"design": {"warmup_pairs": 80, "pairs": 300}}},
            "merged": {"shards": [{"environment": {}}]},
        })
    };
    let up = migrate(p, spec("[design]\nforks = 2\n"), RUN).unwrap();
    assert_eq!(up[KEY], 2);
    assert_eq!(up["environment"]["code"], json!({"state": "not-recorded"}));
    assert_eq!(
        up["merged"]["shards"][0]["environment"]["code"],
        json!({"state": "not-recorded"})
    );
    assert_eq!(
        up["spec"]["experiment"]["design"],
        json!({"warmup_pairs": 80, "pairs": 300, "runs_per_fork":
               {"warmup_pairs": true, "pairs": true, "chosen": {"by": "defaults"}}})
    );
    // Only the key left out; none when the file set both.
    let one = migrate(p, spec("design = { pairs = 300 }\n"), RUN).unwrap();
    assert_eq!(
        one["spec"]["experiment"]["design"]["runs_per_fork"],
        json!({"warmup_pairs": true, "pairs": false, "chosen": {"by": "defaults"}})
    );
    let both = migrate(p, spec("[design]\nwarmup_pairs = 80\npairs = 300\n"), RUN).unwrap();
    assert_eq!(
        both["spec"]["experiment"]["design"].get("runs_per_fork"),
        None
    );
    // A code a file holds is kept.
    let mut held = spec("");
    held["environment"]["code"] = json!({"state": "no-repository", "why": "x"});
    let up = migrate(p, held, RUN).unwrap();
    assert_eq!(up["environment"]["code"]["state"], "no-repository");
}
