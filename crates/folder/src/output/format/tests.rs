//! The migration on the JSON: each key a version 0 file may lack is added
//! as the literal its version read it as, a key it holds is kept, the
//! version decides (a current file is left alone), and a file relabelled
//! as older is refused. The structs' side, a committed folder read with and
//! without the keys, is tested beside them (`run_folder`, `analysis`).

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

const RUN: Kind = Kind::Run { argv: words };

#[test]
fn older_files_are_migrated_and_newer_ones_refused() {
    let p = Path::new("dir/run.json");
    let old = json!({"run_id": "x"});
    assert_eq!(version_of(p, &old, 1), Ok(0));
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
        migrate(p, bad, RUN).unwrap_err().to_string(),
        "dir/run.json: format_version must be a whole number from 0 to 2, got \"one\""
    );
    let huge = json!({"format_version": u64::MAX});
    assert!(matches!(
        migrate(p, huge, Kind::Fork),
        Err(FormatError::Newer {
            found: u64::MAX,
            newest: 1,
            ..
        })
    ));
}

/// Each file's versions are its own, and the rows of each table are its
/// versions in order: row n takes version n to n + 1 and names a key that
/// version introduced (so a relabelled file can be told).
#[test]
fn each_file_has_its_own_table_of_steps_one_row_per_version() {
    fn rows<A>(steps: &[Step<A>]) -> Vec<(u32, usize)> {
        steps.iter().map(|s| (s.from, s.introduced.len())).collect()
    }
    for (file, rows, version) in [
        ("run.json", rows(run::STEPS), RUN_VERSION),
        ("analysis.json", rows(analysis::STEPS), ANALYSIS_VERSION),
        ("a fork record", rows(fork::STEPS), FORK_VERSION),
    ] {
        assert_eq!(rows.len(), version as usize, "{file}");
        for (n, (from, introduced)) in rows.into_iter().enumerate() {
            assert_eq!(
                from as usize, n,
                "{file}: row {n} starts from version {from}"
            );
            assert!(
                introduced > 0,
                "{file}: row {n} names no key its version introduced"
            );
        }
    }
    assert_eq!((RUN_VERSION, ANALYSIS_VERSION, FORK_VERSION), (2, 2, 1));
}

/// A step says what its version meant with literals: none reaches for a
/// constant of the code it migrates, whose value may change later.
#[test]
fn the_steps_fill_literals_not_todays_constants() {
    for (file, text) in [
        ("run.rs", include_str!("run.rs")),
        ("analysis.rs", include_str!("analysis.rs")),
        ("fork.rs", include_str!("fork.rs")),
        ("json.rs", include_str!("json.rs")),
    ] {
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap();
            assert!(
                !code.contains("crate::") && !code.contains("DEFAULT"),
                "{file}:{}: a step reads a constant of today's code: {line}",
                n + 1
            );
        }
    }
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
                "gate": {"min_power": 0.8, "max_false_block": 0.1, "within_check": false,
                         "max_retry_factor": null, "allow_overrides": true},
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
    // What version 2 added, as version 1 read it.
    want["spec"]["experiment"]["gate"]["max_retry_factor"] = Value::Null;
    want["spec"]["experiment"]["gate"]["allow_overrides"] = true.into();
    assert_eq!(migrate(p, held, RUN).unwrap(), want);
    // Version 2 never held `command_line` or lacked these keys: nothing
    // is added, so a missing key stays missing and serde refuses it.
    let current = json!({"format_version": 2, "command_line": ["runner", "exec", "a.toml"],
                         "forks": [{}]});
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

/// A current file relabelled as version 0 (here with `launched_as` taken
/// out, which version 0 would fill with cargo) is refused in one
/// sentence, not read as an old file with old defaults; a true version 0
/// file, without the key, still reads.
#[test]
fn a_file_relabelled_as_older_is_refused() {
    let p = Path::new("r/run.json");
    let relabelled = json!({"format_version": 0, "build": {"profile": "release"}});
    let e = migrate(p, relabelled, RUN).unwrap_err();
    assert_eq!(
        e.to_string(),
        "r/run.json says format_version 0 but holds `format_version`, which runners write only from format_version 1 on: a file relabelled as older is not read"
    );
    assert!(matches!(
        e,
        FormatError::Relabelled {
            found: 0,
            since: 1,
            ..
        }
    ));
    for kind in [Kind::Analysis, Kind::Fork] {
        let e = migrate(p, json!({"format_version": 0}), kind).unwrap_err();
        assert!(matches!(e, FormatError::Relabelled { key: KEY, .. }), "{e}");
    }
    let old = json!({"build": {"profile": "release"}});
    let up = migrate(p, old, RUN).unwrap();
    assert_eq!(up["build"]["launched_as"], "cargo run --release --");
}

#[test]
fn a_key_path_is_found_through_objects_and_lists() {
    let file = json!({
        "format_version": 1,
        "build": {"launched_as": "runner"},
        "forks": [{"placement": null}, {"placement": {"backend_ticks": 3}}],
        "merged": {"shards": []},
    });
    for (path, held) in [
        ("format_version", true),
        ("build.launched_as", true),
        ("build.fault", false),
        ("forks[].placement.backend_ticks", true),
        ("forks[].placement.backend_cpus", false),
        ("forks[]", true),
        ("merged.shards[].build", false),
        ("build[].launched_as", false),
        ("run_id", false),
    ] {
        assert_eq!(json::holds(&file, path), held, "{path}");
    }
}

/// A fork's record in `DIR.partial/forks/` carries its own version: one
/// written before it (by the runner that started a run, resumed by this
/// one) reads with the literals of version 0; one this runner writes
/// starts with the key and reads back as it was.
#[test]
fn a_fork_record_is_versioned_and_an_old_one_migrates() {
    #[derive(Debug, serde::Serialize, serde::Deserialize, PartialEq)]
    struct Fork {
        cell: u32,
        resource_usage: bool,
        checks: serde_json::Map<String, Value>,
    }
    let p = Path::new("o.partial/forks/c0-f1.json");
    let old = br#"{"cell": 0, "checks": {"repeatable": true}}"#;
    let read: Fork = parse(p, old, Kind::Fork).unwrap();
    assert!(!read.resource_usage);
    assert_eq!(read.checks["matches_in_memory"], Value::Null);
    let text = serde_json::to_string_pretty(&versioned(Kind::Fork, &read)).unwrap();
    assert!(
        text.starts_with("{\n  \"format_version\": 1,\n  \"cell\": 0,"),
        "{text}"
    );
    assert_eq!(parse::<Fork>(p, text.as_bytes(), Kind::Fork).unwrap(), read);
    let newer = br#"{"format_version": 2, "cell": 0}"#;
    assert_eq!(
        parse::<Fork>(p, newer, Kind::Fork).unwrap_err().to_string(),
        "o.partial/forks/c0-f1.json has format_version 2, written by a newer runner; this runner reads format_version 0 to 1: upgrade runner to read it"
    );
}

/// Version 1 to 2 of run.json: a sequential design stopped by Lai's
/// sequence over D, a gate had no retry cap and took every `--set`, and
/// `statistic` is read no more; a fixed design gets no stop method.
#[test]
fn a_version_1_run_reads_as_the_rule_it_ran_under() {
    let run = |experiment: serde_json::Value| {
        let file = serde_json::json!({"format_version": 1, "spec": {"experiment": experiment}});
        migrate(
            Path::new("run.json"),
            file,
            Kind::Run {
                argv: |_| unreachable!("a version 1 file holds an invocation"),
            },
        )
        .unwrap()
    };
    let sequential = run(serde_json::json!({
        "design": {"stop": {"decide": true}},
        "gate": {"max_slowdown": {"percent": 5.0}, "statistic": "hierarchical"}
    }));
    assert_eq!(sequential["format_version"], 2);
    assert_eq!(sequential["stop_method"], "sequence-on-difference");
    let gate = &sequential["spec"]["experiment"]["gate"];
    assert_eq!(gate["max_retry_factor"], serde_json::Value::Null);
    assert_eq!(gate["allow_overrides"], true);
    assert!(gate.get("statistic").is_none(), "{gate}");
    let fixed = run(serde_json::json!({"design": {"forks": 3}}));
    assert!(fixed.get("stop_method").is_none(), "{fixed}");
    // A version 1 file holding a key of version 2 was relabelled.
    let relabelled = serde_json::json!({"format_version": 1, "stop_method": "spending"});
    let e = migrate(
        Path::new("run.json"),
        relabelled,
        Kind::Run {
            argv: |_| unreachable!(),
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("holds `stop_method`"), "{e}");
    // Counting came in version 2 too: a version 1 file that counted was
    // relabelled, and one that did not reads with nothing filled (absent
    // says it timed alone).
    for (key, file) in [
        (
            "spec.experiment.design.counting",
            serde_json::json!({"format_version": 1, "spec": {"experiment": {"design": {"counting": {"time": true}}}}}),
        ),
        (
            "forks[].counted",
            serde_json::json!({"format_version": 1, "forks": [{"counted": {"tool": "cachegrind"}}]}),
        ),
        (
            "environment.counters",
            serde_json::json!({"format_version": 1, "environment": {"counters": {}}}),
        ),
        (
            "spec.experiment.gate.metric",
            serde_json::json!({"format_version": 1, "spec": {"experiment": {"gate": {"metric": "instructions"}}}}),
        ),
    ] {
        let e = migrate(
            Path::new("run.json"),
            file,
            Kind::Run {
                argv: |_| unreachable!(),
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains(&format!("holds `{key}`")), "{e}");
    }
    let timed = run(serde_json::json!({"design": {"forks": 3}}));
    assert!(timed["spec"]["experiment"]["design"]
        .get("counting")
        .is_none());
}

/// An older analysis.json holds an older runner's statistics, which are
/// made again from the folder's data, not reshaped: version 0 and 1 are
/// refused in one sentence that says how; version 2 reads.
#[test]
fn an_older_analysis_is_refused_with_how_to_make_it_again() {
    for file in [
        serde_json::json!({"format_version": 1, "cells": []}),
        serde_json::json!({"cells": []}),
    ] {
        let e = migrate(Path::new("out/analysis.json"), file, Kind::Analysis).unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("out/analysis.json: it holds an older runner's analysis")
                && text.contains("`runner report` on its folder writes it anew"),
            "{text}"
        );
        assert_eq!(text.lines().count(), 1);
    }
    let now = serde_json::json!({"format_version": 2, "cells": []});
    assert_eq!(
        migrate(Path::new("a.json"), now.clone(), Kind::Analysis).unwrap(),
        now
    );
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
}
