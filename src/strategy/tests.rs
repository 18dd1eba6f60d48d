use super::*;
use runner_core::preview::{calculate, Model, Overrides};
use runner_spec::{CommandSpec, Program, SqlSpec, SqlText};
use std::time::{Duration, Instant};

/// The worker's agreement check on two instances, over several inputs.
#[cfg(feature = "sqlite")]
fn agree(a: &mut dyn Strategy, b: &mut dyn Strategy, inputs: &[u64]) -> super::error::Result<()> {
    let side = |name| agreement::Side {
        name,
        label: "test".into(),
        observed: true,
    };
    for &input in inputs {
        check_agreement(
            &mut agreement::Two(a, b),
            &side("a"),
            &side("b"),
            W,
            input,
            &format!("input {input}"),
        )?;
    }
    Ok(())
}

const W: WorkloadParams = WorkloadParams {
    plans: 8,
    months: 24,
};

fn at(db: Option<&DbTarget>) -> Setting<'_> {
    Setting::new(W, db)
}

/// Inputs spread over the whole range, the largest a draw can give included.
const INPUTS: [u64; 6] = [0, 1 << 40, 12_345_678_901, 1 << 62, (1 << 63) - 1, 777];

fn one(s: &mut dyn Strategy, input: u64) -> Outcome {
    s.before(input).unwrap();
    s.run(input).unwrap();
    s.after().unwrap()
}

#[test]
fn inputs_map_to_slider_positions_in_range() {
    assert_eq!(Overrides::from_input(0).delta, 0.0);
    let top = Overrides::from_input((1 << 63) - 1).delta;
    assert!(top < 0.05 && top > 0.0499999, "{top}");
    // Only the low 63 bits count, so no input leaves [0, 0.05).
    assert_eq!(Overrides::from_input(u64::MAX).delta, top);
    assert_eq!(Overrides::from_input(1 << 62).delta, 0.025);
}

#[test]
fn in_memory_matches_the_calculator_and_forgets_each_input() {
    let mut s = build(&StrategyKind::InMemory, &at(None)).unwrap();
    for input in INPUTS {
        let mut model = Model::new(W.plans);
        Overrides::from_input(input).apply(&mut model);
        let expected = Observation::Preview(calculate(&model, W.months));
        assert!(s.observe(input).unwrap().same(&expected));
        assert_ne!(one(s.as_mut(), input).fingerprint, NOTHING);
    }
    assert_eq!(s.content_hash().unwrap(), None);
}

#[cfg(feature = "sqlite")]
#[test]
fn sqlite_tx_rollback_agrees_with_in_memory_bit_for_bit() {
    let mut mem = build(&StrategyKind::InMemory, &at(None)).unwrap();
    let mut tx = build(&StrategyKind::TxRollback, &at(Some(&DbTarget::Sqlite))).unwrap();
    agree(mem.as_mut(), tx.as_mut(), &INPUTS).unwrap();
    agree(tx.as_mut(), mem.as_mut(), &INPUTS).unwrap();
    for input in INPUTS {
        assert_eq!(one(mem.as_mut(), input), one(tx.as_mut(), input));
    }
}

#[cfg(feature = "sqlite")]
#[test]
fn sqlite_content_hash_survives_100_previews() {
    let mut tx = build(&StrategyKind::TxRollback, &at(Some(&DbTarget::Sqlite))).unwrap();
    let seeded = tx.content_hash().unwrap().unwrap();
    assert_eq!(seeded, runner_db::hash_rows(Model::new(W.plans).fields()));
    for i in 0..100u64 {
        assert!(matches!(
            tx.observe(i << 52).unwrap(),
            Observation::Preview(_)
        ));
    }
    assert_eq!(tx.content_hash().unwrap().unwrap(), seeded);
}

#[test]
fn database_kinds_without_a_database_are_a_clear_error() {
    let err = build(&StrategyKind::TxRollback, &at(None)).err().unwrap();
    assert!(err.to_string().contains("needs a database"), "{err}");
    let sql = StrategyKind::Sql(Box::new(sql_spec("SELECT 1", None)));
    let err = build(&sql, &at(None)).err().unwrap();
    assert!(
        err.to_string().contains("kind sql needs a database"),
        "{err}"
    );
}

#[test]
fn spin_waits_at_least_its_duration() {
    let mut s = build(
        &StrategyKind::Spin {
            duration_ns: 200_000,
        },
        &at(None),
    )
    .unwrap();
    for _ in 0..5 {
        let start = Instant::now();
        assert_eq!(one(s.as_mut(), 0).fingerprint, NOTHING);
        assert!(start.elapsed() >= Duration::from_micros(200));
    }
    assert!(spin::spin_for(Duration::from_micros(50)) >= Duration::from_micros(50));
}

#[test]
fn noop_returns_nothing() {
    let mut s = build(&StrategyKind::Noop, &at(None)).unwrap();
    assert_eq!(one(s.as_mut(), 5), Outcome::of(NOTHING));
    assert_eq!(s.observe(5).unwrap(), Observation::Nothing);
}

#[test]
fn previews_compare_bit_for_bit() {
    let p = calculate(&Model::new(1), 2);
    let mut q = p;
    q.ending_cash = f64::from_bits(p.ending_cash.to_bits() + 1);
    assert!(!Observation::Preview(p).same(&Observation::Preview(q)));
    assert!(!Observation::Preview(p).same(&Observation::Nothing));
    assert!(Observation::Nothing.same(&Observation::Nothing));
}

fn command(argv: &[&str]) -> CommandSpec {
    CommandSpec {
        program: Program::Argv(argv.iter().map(|s| s.to_string()).collect()),
        compare_output: true,
        ..CommandSpec::default()
    }
}

fn build_command(spec: CommandSpec) -> super::error::Result<Box<dyn Strategy>> {
    build(&StrategyKind::Command(Box::new(spec)), &at(None))
}

#[test]
fn a_command_sees_its_input_and_reports_its_usage() {
    let mut s = build_command(command(&["sh", "-c", "echo $0 $X", "{input}"])).unwrap();
    let mut spec = command(&["sh", "-c", "echo $0 $X", "{input}"]);
    spec.env.insert("X".into(), "x{input}".into());
    let mut with_env = build_command(spec).unwrap();
    assert_eq!(
        s.observe(42).unwrap(),
        Observation::Command {
            status: "exit 0".into(),
            stdout: Some(Stdout::of(b"42\n"))
        }
    );
    let Observation::Command { stdout, .. } = with_env.observe(7).unwrap() else {
        panic!("a command observes a command")
    };
    assert_eq!(stdout.unwrap().head, b"7 x7\n");
    let o = one(s.as_mut(), 1);
    let usage = o.usage.expect("a command records its usage");
    // `sh` maps more than a page of memory; CPU time may round to zero.
    assert!(usage.max_rss_kib > 0, "{usage:?}");
}

#[test]
fn a_failing_command_names_itself_its_status_and_its_stderr() {
    let mut s = build_command(command(&["sh", "-c", "echo broken pipe >&2; exit 3"])).unwrap();
    s.before(9).unwrap();
    s.run(9).unwrap();
    let e = s.after().unwrap_err().to_string();
    assert!(
        e.contains("command `sh -c 'echo broken pipe >&2; exit 3'`"),
        "{e}"
    );
    assert!(e.contains("ended with exit 3 on input 9"), "{e}");
    assert!(e.contains("broken pipe"), "{e}");
    assert!(s.observe(9).is_err());

    let mut spec = command(&["sh", "-c", "exit 3"]);
    spec.allow_failure = true;
    let mut s = build_command(spec).unwrap();
    assert_eq!(
        one(s.as_mut(), 0).fingerprint,
        one(s.as_mut(), 1).fingerprint
    );
    // A run allowed to fail that did is compared with nothing (a command
    // may fail on some runs only), and says how it ended.
    assert_eq!(
        s.observe(0).unwrap(),
        Observation::Failed {
            code: "exit 3".into()
        }
    );
    let ok = build_command(command(&["true"])).unwrap().observe(0);
    assert!(
        matches!(
            ok,
            Ok(Observation::Command {
                stdout: Some(_),
                ..
            })
        ),
        "{ok:?}"
    );
}

#[test]
fn a_command_past_its_timeout_is_killed() {
    let mut spec = command(&["sleep", "5"]);
    spec.timeout_ns = Some(100_000_000);
    let mut s = build_command(spec).unwrap();
    let start = Instant::now();
    s.before(0).unwrap();
    let e = s.run(0).unwrap_err().to_string();
    assert!(e.contains("timeout_s = 0.1 s"), "{e}");
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "killed, not waited for"
    );
}

#[test]
fn setup_prepare_and_teardown_run_outside_the_runs_in_scratch() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let log = log.path().display().to_string();
    let mut spec = command(&["cat", "{scratch}/data"]);
    spec.setup = Some(vec![
        "sh".into(),
        "-c".into(),
        format!("echo ready > {{scratch}}/data; echo setup >> {log}"),
    ]);
    spec.prepare = Some(vec![
        "sh".into(),
        "-c".into(),
        format!("echo prepare {{input}} >> {log}"),
    ]);
    spec.teardown = Some(vec![
        "sh".into(),
        "-c".into(),
        format!("echo teardown >> {log}"),
    ]);
    let mut s = build_command(spec).unwrap();
    let Observation::Command { stdout, .. } = s.observe(1).unwrap() else {
        panic!("a command observes a command")
    };
    assert_eq!(stdout.unwrap().head, b"ready\n");
    one(s.as_mut(), 2);
    s.teardown().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text, "setup\nprepare 1\nprepare 2\nteardown\n");
    let scratch = std::env::temp_dir().join(format!("runner-{}-b", std::process::id()));
    assert!(!scratch.exists(), "teardown removes {{scratch}}");
}

#[test]
fn a_failing_setup_stops_the_fork_before_any_run() {
    let mut spec = command(&["true"]);
    spec.setup = Some(vec![
        "sh".into(),
        "-c".into(),
        "echo no data >&2; false".into(),
    ]);
    let e = build_command(spec).err().unwrap().to_string();
    assert!(
        e.contains("setup command `sh -c 'echo no data >&2; false'`"),
        "{e}"
    );
    assert!(e.contains("exit 1") && e.contains("no data"), "{e}");
}

fn sql_spec(run: &str, setup: Option<&str>) -> SqlSpec {
    SqlSpec {
        run: SqlText {
            text: run.into(),
            file: None,
        },
        setup: setup.map(|s| SqlText {
            text: s.into(),
            file: None,
        }),
        search_path: Vec::new(),
        ..SqlSpec::default()
    }
}

#[cfg(feature = "sqlite")]
fn build_sql(db: &DbTarget, run: &str, setup: Option<&str>) -> Box<dyn Strategy> {
    build(
        &StrategyKind::Sql(Box::new(sql_spec(run, setup))),
        &at(Some(db)),
    )
    .unwrap()
}

#[cfg(feature = "sqlite")]
const TABLE: &str = "CREATE TABLE t (id integer PRIMARY KEY, v integer);
    INSERT INTO t WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50) SELECT i, i % 7 FROM n";

#[cfg(feature = "sqlite")]
#[test]
fn sql_rows_agree_across_formulations_in_any_order() {
    let db = DbTarget::Sqlite;
    let mut a = build_sql(
        &db,
        "SELECT id FROM t WHERE v IN (SELECT v FROM t WHERE id < 3) ORDER BY id",
        Some(TABLE),
    );
    let mut b = build_sql(&db, "SELECT id FROM t x WHERE EXISTS (SELECT 1 FROM t y WHERE y.id < 3 AND y.v = x.v) ORDER BY id DESC", Some(TABLE));
    agree(a.as_mut(), b.as_mut(), &[0, 1]).unwrap();
    assert_eq!(one(a.as_mut(), 0), one(b.as_mut(), 0));
    let mut c = build_sql(
        &db,
        "SELECT id FROM t WHERE v IN (SELECT v FROM t WHERE id < 4)",
        Some(TABLE),
    );
    let e = agree(a.as_mut(), c.as_mut(), &[0]).unwrap_err().to_string();
    // v = 3 joins the set: ids 3, 10, 17, ... (listed in text order, at most three).
    assert!(e.contains("returned 15 rows vs 22; rows only in the first: none; only in the second: (10), (17), (24)"), "{e}");
}

#[cfg(feature = "sqlite")]
#[test]
fn sql_writes_are_rolled_back_after_every_run() {
    let db = DbTarget::Sqlite;
    let mut s = build_sql(
        &db,
        "UPDATE t SET v = v + {input}; SELECT sum(v) FROM t",
        Some(TABLE),
    );
    let first = s.observe(5).unwrap();
    assert_eq!(first, s.observe(5).unwrap(), "the UPDATE did not last");
    let Observation::Rows { rows, .. } = first.clone() else {
        panic!("sql observes rows")
    };
    let base: i64 = (1..=50).map(|i| i % 7).sum();
    assert_eq!(rows[1], vec![vec![Some((base + 5 * 50).to_string())]]);
    for i in 0..20 {
        one(s.as_mut(), i);
    }
    assert_eq!(rows.len(), 2);
    assert_eq!(s.observe(5).unwrap(), first);
}

#[cfg(feature = "sqlite")]
#[test]
fn sql_on_a_copy_of_a_file_never_writes_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("user.db");
    {
        let c = rusqlite::Connection::open(&file).unwrap();
        c.execute_batch("CREATE TABLE orders (id integer, qty integer); INSERT INTO orders VALUES (1, 10), (2, 20);").unwrap();
    }
    let before = std::fs::read(&file).unwrap();
    let db = DbTarget::SqliteFile {
        file: file.display().to_string(),
    };
    let mut s = build_sql(
        &db,
        "DELETE FROM orders WHERE id = 1; UPDATE orders SET qty = 0; SELECT count(*) FROM orders",
        Some("CREATE TABLE mine AS SELECT * FROM orders"),
    );
    for i in 0..5 {
        one(s.as_mut(), i);
    }
    let Observation::Rows { rows, .. } = s.observe(0).unwrap() else {
        panic!("rows")
    };
    assert_eq!(rows[2], vec![vec![Some("1".to_string())]]);
    s.teardown().unwrap();
    drop(s);
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "the user's file is byte-identical"
    );
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["user.db"], "no journal or copy beside it");
}
