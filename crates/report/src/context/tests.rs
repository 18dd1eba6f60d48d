use super::*;
use std::path::Path;

/// `info` with `edit` applied to its JSON: how a test changes a record,
/// whose fields are the folder crate's alone (as a file on disk would be
/// changed, and read back the same way).
fn edited(info: &RunInfo, edit: impl FnOnce(&mut serde_json::Value)) -> RunInfo {
    let mut v = serde_json::to_value(info).unwrap();
    edit(&mut v);
    serde_json::from_value(v).unwrap()
}

/// The committed floor report (small: noop arms, no database).
fn floor() -> (RunInfo, Analysis) {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("reports/floor");
    let (info, pairs) = crate::read_folder(&dir).expect("the committed floor report reads");
    let analysis = runner_analysis::run::analyse(&info, &pairs).expect("and analyses");
    (info, analysis)
}

/// The floor report analysed as if it had a gate of 500 ns whose
/// self-check were its d = 0 cell (an A/A) and its 1 µs cell (a 0.5x
/// cell of a 2 µs gate would be; here it is blocked in every fork, which
/// a regression outranks only when the self-check shows nothing: this
/// test reads the words, not the verdict).
fn gated_floor() -> (RunInfo, Analysis) {
    use runner_analysis::gate::{GateCellInfo, GateInput};
    use runner_plan::Role;
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("reports/floor");
    let (info, pairs) = crate::read_folder(&dir).unwrap();
    let role = |c: &runner_plan::Cell| match c.delay_ns {
        0 => Role::GateNull,
        1000 => Role::GateWithin,
        _ => Role::Experiment,
    };
    let gate = runner_spec::Gate {
        max_slowdown: runner_spec::MaxSlowdown::Ns(500),
        metric: runner_spec::Metric::Time,
        min_power: 0.5,
        // Shown above 99 % never: the 1 µs cell's blocked forks do not
        // turn the verdict inconclusive here.
        max_false_block: 0.99,
        self_check: true,
        within_check: true,
        max_retry_factor: Some(4.0),
        allow_overrides: true,
    };
    let info = edited(&info, |v| {
        v["spec"]["experiment"]["gate"] = serde_json::to_value(gate).unwrap();
    });
    let mut input = runner_analysis::run::input(&info);
    input
        .cells
        .retain(|c| c.delay_ns != 0 && c.delay_ns != 1000);
    let g = GateInput {
        gate,
        sizing: None,
        cells: info
            .cells()
            .iter()
            .filter(|c| role(c) != Role::Experiment)
            .map(|c| GateCellInfo {
                cell: c.cell,
                role: role(c),
                params: c.params.clone(),
                delay_ns: c.delay_ns,
            })
            .collect(),
    };
    let analysis = runner_analysis::analyse_with(&input, Some(&g), None, &pairs).unwrap();
    (info, analysis)
}

#[test]
fn a_gated_context_has_the_verdict_and_both_self_checks() {
    let (info, analysis) = gated_floor();
    let g = analysis.gate.as_ref().unwrap();
    assert_eq!(g.groups.len(), 1);
    assert_eq!(g.groups[0].cells.len(), 3, "0.1, 0.5 and 5 µs");
    let within = g.groups[0].false_blocks.as_ref().unwrap();
    assert_eq!((within.delay_ns, within.per_fork.len()), (1000, 10));
    // The power is the deciding interval's, computed.
    assert!(g.groups[0].power.is_some());
    // 5 µs is ten times the threshold: a regression decides.
    assert_eq!(g.verdict, runner_analysis::gate::Verdict::Regression);
    assert_eq!(g.exit_code, 3);
    let ctx = serde_json::to_value(build(&info, &analysis)).unwrap();
    assert_eq!(ctx["gate"]["view"]["label"], "REGRESSION");
    // The first regression decides.
    let first = g.groups[0]
        .cells
        .iter()
        .find(|c| c.decision == runner_analysis::gate::Verdict::Regression)
        .unwrap();
    assert_eq!(ctx["gate"]["view"]["deciding_cell"], first.cell);
    assert!(ctx["gate"]["view"]["self_check"]
        .as_str()
        .unwrap()
        .contains("against itself"));
}

/// Every path of `sub` is in `whole` with the same value.
fn assert_contains(whole: &serde_json::Value, sub: &serde_json::Value, at: &str) {
    match sub {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                let w = whole
                    .get(k)
                    .unwrap_or_else(|| panic!("the context lacks {at}.{k}"));
                assert_contains(w, v, &format!("{at}.{k}"));
            }
        }
        serde_json::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                assert_contains(&whole[i], v, &format!("{at}[{i}]"));
            }
        }
        _ => assert_eq!(whole, sub, "{at}"),
    }
}

#[test]
fn the_context_holds_analysis_json_unchanged_at_the_top_level() {
    let (info, analysis) = floor();
    let ctx = serde_json::to_value(build(&info, &analysis)).unwrap();
    let json = serde_json::to_value(&analysis).unwrap();
    assert_contains(&ctx, &json, "");
    for key in [
        "spec",
        "environment",
        "database",
        "run",
        "reproduce",
        "text",
    ] {
        assert!(ctx.get(key).is_some(), "{key}");
    }
    assert!(ctx["cells"][0]["view"]["label"].is_string());
    assert!(ctx["headline"]["groups"][0]["view"]["threshold"].is_string());
    // The first group's view is at the top of `headline` too.
    assert_eq!(
        ctx["headline"]["view"],
        ctx["headline"]["groups"][0]["view"]
    );
}

#[test]
fn the_reproduce_command_pastes_as_the_same_argv() {
    let (info, _) = floor();
    let invocation = runner_folder::Invocation::from_argv(&[
        "./target/release/runner",
        "exec",
        "experiments/floor.toml",
        "--quiet",
        "--set",
        "grid.delay_us=[0, 5]",
        "--out",
        "reports/my floor",
        "--set=design.forks=2",
        "--resume",
        "reports/x.partial",
    ])
    .unwrap();
    let info = edited(&info, |v| {
        v["invocation"] = serde_json::to_value(&invocation).unwrap();
    });
    let cmd = reproduce_command(&info);
    assert_eq!(
        shlex::split(&cmd).unwrap(),
        [
            "cargo",
            "run",
            "--release",
            "--",
            "exec",
            "experiments/floor.toml",
            "--out",
            "reports/my floor",
            "--set",
            "grid.delay_us=[0, 5]",
            "--set",
            "design.forks=2",
        ]
    );
    let info = edited(&info, |v| v["seeds"]["drawn"] = true.into());
    let argv = shlex::split(&reproduce_command(&info)).unwrap();
    assert_eq!(
        argv[argv.len() - 2..],
        ["--set".to_string(), format!("seed={}", info.seeds().master)]
    );
}

#[test]
fn a_postgres_run_reproduces_with_its_url_but_never_a_password() {
    let (info, analysis) = floor();
    let info = edited(&info, |v| {
        v["database"] = serde_json::json!({
            "backend": "postgres",
            "version": "PostgreSQL 15.18 on x86_64",
            "postgres": {
                "server_version": "15.18 (Debian 15.18-0+deb12u1)",
                "shared_buffers": "128MB", "synchronous_commit": "on", "fsync": "on",
                "wal_level": "replica", "transport": "tcp", "host": "127.0.0.1",
                "port": 54329, "database": "bench", "user": "bench"
            }
        })
    });
    let ctx = build(&info, &analysis);
    let r = &ctx.reproduce;
    assert!(
        r.command
            .starts_with("RUNNER_DATABASE_URL=postgres://bench@127.0.0.1:54329/bench cargo run"),
        "{}",
        r.command
    );
    let db = r.database.as_deref().unwrap();
    assert!(
        db.starts_with("PostgreSQL 15.18 at 127.0.0.1:54329, database bench"),
        "{db}"
    );
    assert!(db.contains("no password is recorded"), "{db}");
    assert!(!r.command.contains(":bench@"));
}

#[test]
fn an_embedded_sqlite_run_says_so_and_sets_no_url() {
    let (info, analysis) = floor();
    let info = edited(&info, |v| {
        v["database"] = serde_json::json!({"backend": "sqlite", "version": "3.46.0"});
    });
    let ctx = build(&info, &analysis);
    assert!(ctx
        .reproduce
        .command
        .starts_with("cargo run --release -- exec"));
    let db = ctx.reproduce.database.unwrap();
    assert!(db.starts_with("embedded SQLite 3.46.0"), "{db}");
    assert!(db.contains("leave RUNNER_DATABASE_URL unset"), "{db}");
}

#[test]
fn a_dirty_build_is_named_and_the_commit_kept_whole() {
    let (info, analysis) = floor();
    let info = edited(&info, |v| {
        v["environment"]["git_commit"] = "0123456789abcdef0123456789abcdef01234567-dirty".into();
    });
    let ctx = build(&info, &analysis);
    assert_eq!(
        ctx.reproduce.commit,
        "0123456789abcdef0123456789abcdef01234567"
    );
    assert!(ctx.reproduce.commit_dirty);
}

/// Every key name of the context, except inside `params` (grid values).
fn key_names(v: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                out.insert(k.clone());
                if k != "params" {
                    key_names(v, out);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| key_names(v, out)),
        _ => {}
    }
}

/// The committed floor report as if merged from two shards on two hosts
/// (forks alternate between `a` and `b`), with one job missing.
fn floor_on_two_hosts() -> (RunInfo, Analysis) {
    use runner_folder::merged::{Machine, MergedInfo, MergedShard, MissingJob};
    use runner_folder::shard::{ShardInfo, Source};
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("reports/floor");
    let (info, pairs) = crate::read_folder(&dir).unwrap();
    let shard = |index: u32, host: &str| ShardInfo {
        index,
        count: 2,
        source: Source::Flag,
        host: host.into(),
        host_override: true,
        scheduler: Default::default(),
    };
    let machine = |host: &str| Machine {
        host: host.into(),
        host_override: true,
        cpu_model: "CPU".into(),
        logical_cores: 2,
        memory_bytes: 1,
        forks: 25,
        shards: vec![1],
    };
    let merged = MergedInfo {
        shards: [(1, "a"), (2, "b")]
            .iter()
            .map(|&(i, h)| MergedShard {
                folder: format!("s{i}"),
                run_id: "r".into(),
                shard: shard(i, h),
                jobs: 25,
                invocation: runner_folder::Invocation::from_argv(&["runner", "exec", "x.toml"])
                    .unwrap(),
                build: info.build().clone(),
                database: None,
                started_at: "t".into(),
                finished_at: Some("t".into()),
                environment: info.environment().clone(),
            })
            .collect(),
        machines: vec![machine("a"), machine("b")],
        missing: vec![MissingJob {
            cell: 0,
            fork: 0,
            shard: 1,
        }],
    };
    let info = edited(&info, |v| {
        for f in v["forks"].as_array_mut().unwrap() {
            let host = if f["fork"].as_u64().unwrap() % 2 == 0 {
                "a"
            } else {
                "b"
            };
            f["host"] = host.into();
        }
        v["merged"] = serde_json::to_value(&merged).unwrap();
    });
    let analysis = runner_analysis::run::analyse(&info, &pairs).unwrap();
    (info, analysis)
}

#[test]
fn a_run_over_two_hosts_has_the_machines_level_and_one_host_none() {
    let (info, analysis) = floor_on_two_hosts();
    let machines = analysis.machines.as_ref().expect("two hosts");
    assert_eq!(machines.hosts.len(), 2);
    assert_eq!(machines.hosts[0].forks, 25);
    let cell = analysis.cells[0].machines.as_ref().unwrap();
    assert_eq!(cell.hosts.iter().map(|h| h.forks).sum::<u32>(), 10);
    assert!(cell.variance.is_some());
    let ctx = build(&info, &analysis);
    let view = &ctx.machines.as_ref().unwrap().view;
    assert_eq!(view.rows.len(), 2);
    assert_eq!(view.rows[0].seen.len(), analysis.cells.len());
    assert!(view.lever.is_some());
    let missing = ctx.merge.as_ref().unwrap().missing.as_deref().unwrap();
    assert!(missing.contains("without shard 1/2"), "{missing}");
    assert!(ctx.text.one_run.contains("one run over 2 machines"));
    // The same data without hosts: no machines key anywhere.
    let (plain, analysis) = floor();
    let json = serde_json::to_value(&analysis).unwrap();
    assert!(json.get("machines").is_none());
    assert!(json["cells"][0].get("machines").is_none());
    assert!(build(&plain, &analysis).machines.is_none());
}

#[test]
fn templates_readme_documents_every_key_of_the_context() {
    let doc = std::fs::read_to_string(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("templates/README.md"),
    )
    .unwrap();
    // A gate, so its keys are there too, and an import record.
    let (info, analysis) = gated_floor();
    let imported = runner_folder::Imported {
        file: "x.csv".into(),
        sha256: "ab".into(),
        rows: 1,
        columns: vec!["fork".into()],
        cells_by: "cell".into(),
        forks: vec![runner_folder::ImportedFork {
            cell: 0,
            fork: 0,
            source: "1".into(),
        }],
        has_spin: false,
        has_start_times: false,
    };
    // A PostgreSQL database, so its keys are there too.
    let database = serde_json::json!({
        "backend": "postgres", "version": "v",
        "postgres": {
            "server_version": "15", "shared_buffers": "128MB", "synchronous_commit": "on",
            "fsync": "on", "wal_level": "replica", "transport": "tcp", "host": "h",
            "port": 1, "database": "d", "user": "u"
        }
    });
    let info = edited(&info, |v| {
        v["imported"] = serde_json::to_value(&imported).unwrap();
        v["database"] = database;
    });
    let ctx = serde_json::to_value(build(&info, &analysis)).unwrap();
    let mut keys = std::collections::BTreeSet::new();
    key_names(&ctx, &mut keys);
    // A merged run over two hosts, and a shard, have keys of their own.
    let (merged, analysis) = floor_on_two_hosts();
    key_names(
        &serde_json::to_value(build(&merged, &analysis)).unwrap(),
        &mut keys,
    );
    let shard = merged.as_shard(&merged.merged().as_ref().unwrap().shards[0]);
    key_names(
        &serde_json::to_value(build(&shard, &analysis)).unwrap(),
        &mut keys,
    );
    // A sequential design has keys of its own (`stop`, `cells[].stop`).
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("reports/stop-memory");
    let (info, pairs) = crate::read_folder(&dir).unwrap();
    let analysis = runner_analysis::run::analyse(&info, &pairs).unwrap();
    key_names(
        &serde_json::to_value(build(&info, &analysis)).unwrap(),
        &mut keys,
    );
    assert!(keys.contains("naive_interval") && keys.contains("covers_injected"));
    // A run that counts instructions has keys of its own
    // (`cells[].instructions`, `instructions`, `environment.counters`).
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("reports/instructions");
    let (info, pairs) = crate::read_folder(&dir).unwrap();
    let analysis = runner_analysis::run::analyse(&info, &pairs).unwrap();
    let ctx = serde_json::to_value(build(&info, &analysis)).unwrap();
    // Only the parts counting adds: its strategies' names and command
    // keys are the file's, not the context's.
    keys.extend(ctx.as_object().unwrap().keys().cloned());
    for part in [
        &ctx["instructions"],
        &ctx["cells"][0]["instructions"],
        &ctx["environment"]["counters"],
        &ctx["spec"]["design"]["counting"],
    ] {
        assert!(part.is_object(), "{part}");
        key_names(part, &mut keys);
    }
    keys.insert("counting".into());
    assert!(keys.contains("counted_run_ns") && keys.contains("counted_with"));
    let missing: Vec<&String> = keys
        .iter()
        .filter(|k| {
            !(doc.contains(&format!("`{k}`"))
                || doc.contains(&format!(".{k}`"))
                || doc.contains(&format!("`{k}.")))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "templates/README.md does not document {missing:?}"
    );
}

/// Carry-over advice is for arms that differ: where both arms run one
/// program (here the cells of the sweep where the treatment is `gzip -1`
/// too), the runs before either are the same, so a contrast the analysis
/// marks (a CPU hog's slices falling unevenly) gets no advice to change
/// the order; where they differ (`gzip -6`), it does.
#[test]
fn carry_over_advice_only_where_the_arms_differ() {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("reports/command-gzip");
    let (info, pairs) = crate::read_folder(&dir).unwrap();
    let analysed = runner_analysis::run::analyse(&info, &pairs).unwrap();
    let same_program = |c: &runner_analysis::CellAnalysis| {
        c.params["strategies.other.argv"]
            .to_string()
            .contains("\"-1\"")
    };
    let advised = |mark_same: bool| -> bool {
        let mut analysis = analysed.clone();
        for c in &mut analysis.cells {
            c.carry_over.treatment.inflates = same_program(c) == mark_same;
        }
        let ctx = build(&info, &analysis);
        ctx.comparison
            .iter()
            .flat_map(|c| c.warnings.iter())
            .any(|w| w.kind == "carry-over")
    };
    assert!(analysed.cells.iter().any(same_program));
    assert!(!advised(true), "no advice where both arms run gzip -1");
    assert!(advised(false), "advice where gzip -6 runs after gzip -1");
}
