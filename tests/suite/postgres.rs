//! Against a real PostgreSQL server named by RUNNER_DATABASE_URL (start one
//! with `source .ci/postgres.sh`). Without it they are ignored, and `cargo
//! test` counts them as such (see `common::pg_url`); under
//! RUNNER_REQUIRE_POSTGRES=1 a missing server fails CI.

use crate::common;
use common::pg_url;
use runner::strategy::agreement::{check_agreement, Side, Two};
use runner::strategy::{build, Setting, Strategy};
use runner_core::preview::Model;
use runner_db::open::info as db_info;
use runner_db::pg::connect::connect;
use runner_db::pg::schema::{create_run_schema, drop_run_schema};
use runner_db::{hash_rows, DbError, DbTarget};
use runner_spec::{StrategyKind, WorkloadParams};
use std::sync::atomic::{AtomicU32, Ordering};

const W: WorkloadParams = WorkloadParams {
    plans: 40,
    months: 60,
};

/// Unique per test and per process, so tests run in parallel and reruns
/// never meet a leftover schema of their own.
fn run_id(tag: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let n = N.fetch_add(1, Ordering::Relaxed);
    format!("t_{tag}_{}_{nanos}_{n}", std::process::id())
}

fn schema_exists(url: &str, schema: &str) -> bool {
    let (mut c, _) = connect(url).unwrap();
    let row = c
        .query_one(
            "SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1",
            &[&schema],
        )
        .unwrap();
    row.get::<_, i64>(0) == 1
}

/// Pair inputs across the whole range (a draw is below 2^63).
const INPUTS: [u64; 6] = [
    0,
    1 << 30,
    1 << 52,
    12_345_678_901_234,
    1 << 62,
    (1 << 63) - 1,
];

fn at(db: Option<&DbTarget>) -> Setting<'_> {
    Setting::new(W, db)
}

/// The worker's agreement check, baseline `a` and treatment `b`, on INPUTS;
/// it also compares every preview with the in-memory calculation.
fn agree(a: &mut dyn Strategy, b: &mut dyn Strategy) -> runner::strategy::error::Result<()> {
    let side = |name| Side {
        name,
        label: "test".into(),
        observed: true,
    };
    for input in INPUTS {
        let found = check_agreement(&mut Two(a, b), &side("a"), &side("b"), W, input, "")?;
        assert_eq!(found.matches_in_memory, Some(true));
    }
    Ok(())
}

#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn tx_rollback_agrees_with_in_memory_bit_for_bit() {
    let url = pg_url();
    let id = run_id("agree");
    let schema = create_run_schema(&url, &id).unwrap();
    let target = DbTarget::Postgres {
        url: url.clone(),
        schema,
    };
    let mut mem = build(&StrategyKind::InMemory, &at(None)).unwrap();
    let mut tx = build(&StrategyKind::TxRollback, &at(Some(&target))).unwrap();
    let result = agree(tx.as_mut(), mem.as_mut()).and_then(|()| agree(mem.as_mut(), tx.as_mut()));
    drop(tx);
    drop_run_schema(&url, &id).unwrap();
    result.unwrap();
}

#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn previews_leave_the_table_unchanged_and_the_schema_is_dropped() {
    let url = pg_url();
    let id = run_id("hash");
    let schema = create_run_schema(&url, &id).unwrap();
    assert!(schema_exists(&url, &schema));
    let target = DbTarget::Postgres {
        url: url.clone(),
        schema: schema.clone(),
    };
    let mut tx = build(&StrategyKind::TxRollback, &at(Some(&target))).unwrap();
    let seeded = tx.content_hash().unwrap().unwrap();
    assert_eq!(seeded, hash_rows(Model::new(W.plans).fields()));
    for i in 0..200u64 {
        tx.observe(i << 53).unwrap();
    }
    assert_eq!(tx.content_hash().unwrap().unwrap(), seeded);
    drop(tx);
    drop_run_schema(&url, &id).unwrap();
    assert!(!schema_exists(&url, &schema));
    // Dropping again is a no-op, so a parent can clean up unconditionally.
    drop_run_schema(&url, &id).unwrap();
}

#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn an_existing_schema_is_refused_and_left_intact() {
    let url = pg_url();
    let id = run_id("taken");
    let schema = format!("runner_{id}");
    let (mut c, _) = connect(&url).unwrap();
    c.batch_execute(&format!(
        "CREATE SCHEMA {schema}; CREATE TABLE {schema}.marker (v int); \
         INSERT INTO {schema}.marker VALUES (42)"
    ))
    .unwrap();

    let err = create_run_schema(&url, &id).unwrap_err();
    assert!(
        matches!(err, DbError::SchemaExists(ref s) if *s == schema),
        "{err}"
    );
    assert!(err.to_string().contains("already exists"), "{err}");
    // Neither a worker nor the cleanup may touch it either.
    let target = DbTarget::Postgres {
        url: url.clone(),
        schema: schema.clone(),
    };
    let werr = build(&StrategyKind::TxRollback, &at(Some(&target)))
        .err()
        .unwrap();
    assert!(
        werr.chain().contains("not created by runner"),
        "{}",
        werr.chain()
    );
    let derr = drop_run_schema(&url, &id).unwrap_err();
    assert!(matches!(derr, DbError::NotOurSchema(_)), "{derr}");

    let v: i32 = c
        .query_one(&format!("SELECT v FROM {schema}.marker"), &[])
        .unwrap()
        .get(0);
    let tables: i64 = c
        .query_one(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1",
            &[&schema],
        )
        .unwrap()
        .get(0);
    c.batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .unwrap();
    assert_eq!((v, tables), (42, 1));
}

#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn connection_failures_are_one_clear_sentence() {
    let url = pg_url();
    let ep = runner_db::pg::connect::Endpoint::parse(&url).unwrap();
    let cases = [
        (
            "postgres://bench:bench@127.0.0.1:1/bench".to_owned(),
            "cannot connect to PostgreSQL at 127.0.0.1:1 database \"bench\": ".to_owned(),
            "refused",
        ),
        (
            format!("postgres://bench:bench@{}:{}/no_such_db", ep.host, ep.port),
            format!(
                "cannot connect to PostgreSQL at {}:{} database \"no_such_db\": ",
                ep.host, ep.port
            ),
            "does not exist",
        ),
        (
            format!("postgres://bench:wrong_pw_x@{}:{}/bench", ep.host, ep.port),
            format!(
                "cannot connect to PostgreSQL at {}:{} database \"bench\": ",
                ep.host, ep.port
            ),
            "password authentication failed",
        ),
    ];
    for (bad, prefix, server_says) in cases {
        let msg = match connect(&bad) {
            Ok(_) => panic!("connected to {prefix}"),
            Err(e) => e.to_string(),
        };
        eprintln!("{msg}");
        assert!(msg.starts_with(&prefix), "{msg}");
        assert!(msg.to_lowercase().contains(server_says), "{msg}");
        assert!(!msg.contains("wrong_pw_x") && !msg.contains('\n'), "{msg}");
    }
}

#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn db_info_reports_version_and_settings() {
    let url = pg_url();
    let target = DbTarget::Postgres {
        url: url.clone(),
        schema: "runner_unused".into(),
    };
    let info = db_info(&target).unwrap();
    assert_eq!(info.backend, "postgres");
    assert!(info.version.starts_with("PostgreSQL "), "{}", info.version);
    let pg = info.postgres.clone().unwrap();
    let ep = runner_db::pg::connect::Endpoint::parse(&url).unwrap();
    assert_eq!((pg.host.as_str(), pg.port), (ep.host.as_str(), ep.port));
    assert_eq!(pg.transport, "tcp");
    assert!(["on", "off"].contains(&pg.fsync.as_str()), "{pg:?}");
    for s in [
        &pg.shared_buffers,
        &pg.synchronous_commit,
        &pg.wal_level,
        &pg.server_version,
    ] {
        assert!(!s.is_empty(), "{pg:?}");
    }
    let json = serde_json::to_string(&info).unwrap();
    assert!(!json.contains("bench:bench"), "{json}");
}

/// An `sql` arm's schema `runner_<id>_b` that runner did not make is
/// refused, untouched; cleanup still drops runner's own run schema and
/// reports the foreign one.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn a_foreign_arm_schema_is_refused_and_left_intact() {
    let url = pg_url();
    let id = run_id("arm");
    let schema = create_run_schema(&url, &id).unwrap();
    let arm = format!("{schema}_b");
    let (mut c, _) = connect(&url).unwrap();
    c.batch_execute(&format!(
        "CREATE SCHEMA {arm}; CREATE TABLE {arm}.keep (v int); INSERT INTO {arm}.keep VALUES (7)"
    ))
    .unwrap();
    let target = DbTarget::Postgres {
        url: url.clone(),
        schema: schema.clone(),
    };
    let err = runner_db::open::session(&target, "b", &[], None)
        .err()
        .unwrap();
    assert!(
        matches!(err, DbError::NotOurSchema(ref s) if *s == arm),
        "{err}"
    );
    let derr = drop_run_schema(&url, &id).unwrap_err();
    assert!(matches!(derr, DbError::NotOurSchema(_)), "{derr}");
    assert!(
        !schema_exists(&url, &schema),
        "runner's own schema is dropped"
    );
    let v: i32 = c
        .query_one(&format!("SELECT v FROM {arm}.keep"), &[])
        .unwrap()
        .get(0);
    assert_eq!(v, 7);
    c.batch_execute(&format!("DROP SCHEMA {arm} CASCADE"))
        .unwrap();
}

/// The safety net behind validation: measured SQL that ended runner's
/// transaction (validation refuses it, so only a direct call can) makes
/// the run fail instead of passing silently, on both backends; on
/// PostgreSQL the COMMIT itself fails (the fork's guard row), so the write
/// before it never lasts.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn a_transaction_ended_by_the_measured_sql_is_reported() {
    let sqlite = DbTarget::Sqlite;
    let mut s =
        runner_db::open::session(&sqlite, "b", &[], Some("CREATE TABLE t (a int)")).unwrap();
    s.begin().unwrap();
    s.run(&["INSERT INTO t VALUES (1)".into(), "COMMIT".into()], None)
        .unwrap();
    assert!(matches!(s.rollback(), Err(DbError::TransactionEnded(_))));
    s.begin().unwrap();
    s.run(&["INSERT INTO t VALUES (1)".into()], None).unwrap();
    s.rollback().unwrap();

    let url = pg_url();
    let (mut c, _) = connect(&url).unwrap();
    c.batch_execute("CREATE TABLE public.keep (a int)").unwrap();
    let id = run_id("ended");
    let schema = create_run_schema(&url, &id).unwrap();
    let target = DbTarget::Postgres {
        url: url.clone(),
        schema,
    };
    let mut s =
        runner_db::open::session(&target, "t", &[], Some("CREATE TABLE t (a int)")).unwrap();
    s.begin().unwrap();
    s.run(&["SELECT 1".into()], None).unwrap();
    s.rollback().unwrap();
    s.begin().unwrap();
    let commit = s.run(
        &["INSERT INTO public.keep VALUES (1)".into(), "COMMIT".into()],
        None,
    );
    assert!(commit.is_err(), "the COMMIT must fail: {commit:?}");
    let ended = s.rollback();
    drop(s);
    drop_run_schema(&url, &id).unwrap();
    assert!(
        matches!(ended, Err(DbError::TransactionEnded(_))),
        "{ended:?}"
    );
    let rows: i64 = c
        .query_one("SELECT count(*) FROM public.keep", &[])
        .unwrap()
        .get(0);
    assert_eq!(rows, 0, "the write before the COMMIT did not last");
}
