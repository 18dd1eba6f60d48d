//! What the SQL features hold on a real PostgreSQL server, tried as an
//! attacker and as a database engineer would (docs/safety.md, "Your
//! database"): a private copy cannot be bypassed (a catalog-qualified
//! name, SQL that sets search_path, a name hidden in a `DO` body), a
//! prepared statement runs the query written, another session's DDL in a
//! schema the experiment never names is noted, not held against the run,
//! `strict` fails a run that leaves dead rows, and plans are shown node by
//! node. Each case runs the built binary and compares the user's table,
//! its sequence, its indexes and its dead-row count before and after.

use crate::common;

use common::run_on_database as run;
use common::{err_of, pg_url, read_json, runner_std, sql_pair, write_spec};
use postgres::{Client, NoTls};
use std::time::{Duration, Instant};

fn client(url: &str) -> Client {
    Client::connect(url, NoTls).expect("connect")
}

/// The user's table: a serial key (its sequence at 1000), an index of
/// its own, 1000 rows.
pub fn user_objects(url: &str) {
    client(url)
        .batch_execute(
            "CREATE TABLE public.orders (id serial PRIMARY KEY, customer int NOT NULL, note text NOT NULL);
             CREATE INDEX orders_customer ON public.orders (customer);
             INSERT INTO public.orders (customer, note) SELECT g % 100, 'note ' || g FROM generate_series(1, 1000) g;
             ANALYZE public.orders;",
        )
        .expect("user objects");
}

/// What "unchanged" means for the user's table.
#[derive(Debug, Clone, PartialEq)]
pub struct Orders {
    /// A digest of every row, in key order.
    rows: String,
    /// `last_value is_called` of its sequence.
    sequence: String,
    /// Every index's definition.
    indexes: String,
    /// Dead row versions, and every row version written, committed or
    /// rolled back (`n_tup_ins + n_tup_upd + n_tup_del`).
    dead: i64,
    written: i64,
}

/// The user's table once every other session of the test's database has
/// ended and its statistics have settled (a session's reach the views as
/// it ends).
pub fn orders(url: &str) -> Orders {
    let mut c = client(url);
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(20) {
        let others: i64 = c
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
                &[],
            )
            .unwrap()
            .get(0);
        if others == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut stats = (0, 0);
    for _ in 0..10 {
        c.batch_execute("SELECT pg_stat_clear_snapshot()").unwrap();
        let r = c
            .query_one(
                "SELECT n_dead_tup, n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_user_tables WHERE relid = 'public.orders'::regclass",
                &[],
            )
            .unwrap();
        stats = (r.get(0), r.get(1));
        std::thread::sleep(Duration::from_millis(100));
    }
    let one = |c: &mut Client, sql: &str| -> String {
        c.query_one(sql, &[])
            .unwrap()
            .get::<_, Option<String>>(0)
            .unwrap_or_default()
    };
    Orders {
        rows: one(
            &mut c,
            "SELECT md5(string_agg(o::text, ',' ORDER BY id)) FROM public.orders o",
        ),
        sequence: one(
            &mut c,
            "SELECT last_value::text || ' ' || is_called::text FROM public.orders_id_seq",
        ),
        indexes: one(
            &mut c,
            "SELECT string_agg(indexdef, '; ' ORDER BY indexname) FROM pg_indexes WHERE schemaname = 'public' AND tablename = 'orders'",
        ),
        dead: stats.0,
        written: stats.1,
    }
}

/// runner's schemas left in the test's database.
pub fn runner_schemas(url: &str) -> Vec<String> {
    client(url)
        .query(
            "SELECT nspname::text FROM pg_namespace WHERE nspname LIKE 'runner\\_%' ORDER BY 1",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

/// The database's name, as a catalog-qualified name spells it.
fn database_of(url: &str) -> String {
    let path = url.split('?').next().unwrap();
    path.rsplit('/').next().unwrap().to_string()
}

/// [`sql_pair`] with a fixed seed.
fn spec(database: &str, a: &str, b: &str) -> String {
    format!("\nseed = 3{}", sql_pair(database, a, b))
}

const CHECK: &[&str] = &["check"];
const EXEC: &[&str] = &["exec", "--quiet", "--out", "out"];

/// A catalog-qualified name of a copied table (`db.public.orders`), in an
/// INSERT that takes the serial default and in an UPDATE, writes the
/// copy: the run succeeds, and the user's table, its sequence, its
/// indexes and its dead rows are as before (the UPDATE form left 43,200
/// dead rows in the table and said it was "only read").
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn a_catalog_qualified_name_writes_the_copy_and_leaves_the_table() {
    let url = pg_url();
    user_objects(&url);
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let db = database_of(&url);
    let before = orders(&url);
    let insert = format!(
        "run = \"INSERT INTO {db}.public.orders (customer, note) VALUES ({{input}} % 100, 'x'); SELECT count(*) FROM {db}.public.orders WHERE customer = {{input}} % 100 AND id <= 1000\""
    );
    let update = format!(
        "run = \"UPDATE \\\"{db}\\\" . public . orders SET note = 'y' WHERE customer = {{input}} % 100; SELECT count(*) FROM {db}.public.orders WHERE note = 'y'\""
    );
    let body = spec("private_copies = [\"public.orders\"]", &insert, &update);
    for args in [CHECK, EXEC] {
        let o = run(t, &url, args, "catalog", &body);
        assert!(o.status.success(), "{args:?}: {}", err_of(&o));
    }
    assert_eq!(orders(&url), before, "the user's table was reached");
    let report = std::fs::read_to_string(t.join("out/report.md")).unwrap();
    assert!(
        report.contains("the tables themselves were only read"),
        "{report}"
    );
    assert!(
        runner_schemas(&url).is_empty(),
        "{:?}",
        runner_schemas(&url)
    );
}

/// SQL that sets search_path would reach the user's table where the arm
/// means its copy (`SET LOCAL search_path TO public` moved the user's
/// sequence 1000 -> 1012 -> 1024): refused before anything runs, exit 2,
/// one sentence naming the statement and where it is, by check and exec,
/// in setup and run, and the table is as before.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn sql_that_sets_search_path_is_refused_before_anything_runs() {
    let url = pg_url();
    user_objects(&url);
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let before = orders(&url);
    let insert = "INSERT INTO orders (customer, note) VALUES (1, 'x'); UPDATE orders SET note = 'z' WHERE id < 50; SELECT count(*) FROM orders";
    for (a, words) in [
        (
            format!("run = \"SET LOCAL search_path TO public; {insert}\""),
            "SET LOCAL search_path",
        ),
        (
            format!("run = \"SELECT set_config('search_path', 'public', true); {insert}\""),
            "set_config('search_path', ...)",
        ),
        (
            format!("setup = \"SET SESSION search_path = public\"\nrun = \"{insert}\""),
            "SET SESSION search_path",
        ),
        (
            format!("setup = \"RESET ALL\"\nrun = \"{insert}\""),
            "RESET ALL",
        ),
        (
            format!(
                "run = \"DO $$ BEGIN EXECUTE 'SET LOCAL search_path TO public'; END $$; {insert}\""
            ),
            "SET LOCAL search_path",
        ),
    ] {
        let body = spec(
            "private_copies = [\"public.orders\"]",
            &a,
            &format!("run = \"{insert}\""),
        );
        for args in [CHECK, EXEC] {
            let o = run(t, &url, args, "path", &body);
            let err = err_of(&o);
            assert_eq!(o.status.code(), Some(2), "{a}: {err}");
            assert!(
                err.starts_with("error: ") && err.contains("path.toml:"),
                "{err}"
            );
            assert!(err.contains(&format!("{words} sets search_path")), "{err}");
            assert_eq!(err.lines().count(), 1, "one sentence: {err}");
        }
    }
    assert_eq!(orders(&url), before);
    assert!(runner_schemas(&url).is_empty());
}

/// A name the rewrite cannot reach (inside a `DO` body) writes the user's
/// table itself, or moves its sequence: the arm's transaction sees it in
/// the table's own statistics, and check and exec stop before anything is
/// timed, naming the table. The writes are rolled back; what they left is
/// the few dead rows of the checks, not a run's worth.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn a_write_that_bypasses_the_copy_stops_before_timing() {
    let url = pg_url();
    user_objects(&url);
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let plain =
        "run = \"DO $$ BEGIN PERFORM 1; END $$; SELECT count(*) FROM orders WHERE note LIKE 'n%'\"";
    let hidden = "run = \"DO $$ BEGIN UPDATE public.orders SET note = note WHERE id <= 40; END $$; SELECT count(*) FROM orders WHERE note LIKE 'n%'\"";
    let before = orders(&url);
    let body = spec("private_copies = [\"public.orders\"]", plain, hidden);
    for args in [CHECK, EXEC] {
        let o = run(t, &url, args, "hidden", &body);
        let err = err_of(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("the SQL wrote your table public.orders itself (0 rows inserted, 40 updated, 0 deleted)"),
            "{err}"
        );
        assert!(err.contains("name the table in the SQL itself"), "{err}");
    }
    assert!(!t.join("out").exists(), "nothing was measured");
    let after = orders(&url);
    assert_eq!(
        (&after.rows, &after.sequence, &after.indexes),
        (&before.rows, &before.sequence, &before.indexes)
    );
    // Once per command, at the first look before timing: 40 rows each.
    assert!(after.written - before.written <= 80, "{before:?} {after:?}");
    // Its sequence, moved by a name inside a DO body: caught the same way.
    let seq = "run = \"DO $$ BEGIN PERFORM nextval('public.orders_id_seq'); END $$; SELECT 1\"";
    let body = spec(
        "private_copies = [\"public.orders\"]",
        "run = \"DO $$ BEGIN PERFORM 1; END $$; SELECT 1\"",
        seq,
    );
    let o = run(t, &url, CHECK, "seq", &body);
    let err = err_of(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the SQL moved sequence public.orders_id_seq of your table itself (last value 1000 -> 1001)"),
        "{err}"
    );
    assert!(runner_schemas(&url).is_empty());
}

/// protocol = "prepared" with `{input}` inside a string literal or a
/// dollar quote silently ran `LIKE '%$1%'`: refused before anything
/// runs, exit 2, pointing at the `{input}`; outside quotes it runs, and
/// a prepared arm and a simple arm of the same SQL agree.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn a_prepared_input_inside_quotes_is_refused_and_outside_them_runs() {
    let url = pg_url();
    user_objects(&url);
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let before = orders(&url);
    for (run_sql, place) in [
        (
            "SELECT count(*) FROM orders WHERE note LIKE '%{input}%'",
            "a string literal",
        ),
        (
            "SELECT count(*) FROM orders WHERE note = $n$note {input}$n$",
            "a dollar-quoted string",
        ),
    ] {
        let arm = format!("protocol = \"prepared\"\nrun = \"{run_sql}\"");
        let body = spec("", &arm, &arm);
        for args in [CHECK, EXEC] {
            let o = run(t, &url, args, "lit", &body);
            let err = err_of(&o);
            assert_eq!(o.status.code(), Some(2), "{err}");
            assert!(
                err.starts_with("error: ") && err.contains("lit.toml:"),
                "{err}"
            );
            assert!(
                err.contains(&format!(
                    "protocol = \"prepared\": statement 1 has {{input}} inside {place}"
                )),
                "{err}"
            );
        }
    }
    let prepared =
        "protocol = \"prepared\"\nrun = \"SELECT count(*) FROM orders WHERE note LIKE '%' || ({input} % 1000) || '%' -- {input}\"";
    let simple = "run = \"SELECT count(*) FROM orders WHERE note LIKE '%' || ({input} % 1000) || '%' -- {input}\"";
    let o = run(t, &url, EXEC, "ok", &spec("", simple, prepared));
    assert!(o.status.success(), "{}", err_of(&o));
    assert_eq!(orders(&url), before);
}

/// Another session's DDL in a schema the experiment never names failed
/// the fork (exit 1) with a message that blamed "a table the experiment
/// names": now the run finishes, and run.json and stderr note the other
/// session's work.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn another_sessions_ddl_in_an_unnamed_schema_is_noted_not_held_against_the_run() {
    let url = pg_url();
    user_objects(&url);
    client(&url)
        .batch_execute("CREATE SCHEMA elsewhere; CREATE TABLE elsewhere.t (x int)")
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let slow = "run = \"SELECT count(*) FROM orders, pg_sleep(0.02)\"";
    let body = spec("", slow, slow).replace("pairs = 5", "pairs = 25");
    let file = write_spec(t, "busy", &body);
    let child = runner_std()
        .env("RUNNER_DATABASE_URL", &url)
        .current_dir(t)
        .arg("exec")
        .arg(&file)
        .args(["--quiet", "--out", "busy"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let other = url.clone();
    let ddl = std::thread::spawn(move || {
        let mut c = client(&other);
        for i in 0..30 {
            c.batch_execute(&format!(
                "ALTER TABLE elsewhere.t ADD COLUMN c{i} int; CREATE TABLE elsewhere.n{i} (x int); \
                 CREATE OR REPLACE FUNCTION elsewhere.f() RETURNS int LANGUAGE sql AS 'SELECT {i}'"
            ))
            .unwrap();
            std::thread::sleep(Duration::from_millis(60));
        }
    });
    let o = child.wait_with_output().unwrap();
    ddl.join().unwrap();
    let err = err_of(&o);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("a table the experiment names"), "{err}");
    let run_json = read_json(&t.join("busy/run.json"));
    let noted: Vec<String> = run_json["forks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| {
            f["database_guard"]["other_sessions"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert!(noted.iter().any(|s| s.contains("elsewhere.")), "{noted:?}");
    for f in run_json["forks"].as_array().unwrap() {
        assert_eq!(f["database_guard"]["held"], true);
    }
}

/// `[database] strict = true`: an UPDATE of the user's table (rolled back,
/// its content unchanged) left dead rows, which the default run says in
/// its Setup and a strict run refuses (exit 1) naming the table.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn strict_fails_a_run_that_leaves_dead_rows() {
    let url = pg_url();
    user_objects(&url);
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let update = "run = \"UPDATE orders SET note = note WHERE customer = {input} % 100; SELECT count(*) FROM orders\"";
    let before = orders(&url);
    let o = run(
        t,
        &url,
        &["exec", "--quiet", "--out", "strict"],
        "strict",
        &spec("strict = true", update, update),
    );
    let err = err_of(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("table public.orders was left")
            && err.contains("dead row versions by rolled-back writes, which [database] strict = true does not allow"),
        "{err}"
    );
    assert!(
        err.contains("an object the experiment names or copies"),
        "{err}"
    );
    assert!(!t.join("strict").exists());
    // Without strict the same run finishes and its Setup says the dead rows.
    let o = run(t, &url, EXEC, "lax", &spec("", update, update));
    assert!(o.status.success(), "{}", err_of(&o));
    let report = std::fs::read_to_string(t.join("out/report.md")).unwrap();
    assert!(
        report.contains("rolled-back writes left") && report.contains("dead row versions"),
        "{report}"
    );
    let after = orders(&url);
    assert_eq!(
        (&after.rows, &after.sequence, &after.indexes),
        (&before.rows, &before.sequence, &before.indexes)
    );
    assert!(
        after.written > before.written,
        "the control: rows were written"
    );
}

/// `explain = true`: the report shows each arm's plans whole under
/// "Plans" (actual rows and estimates, loops, time, the sort's method), a
/// node-by-node table of the two arms, and no plan cut short.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn plans_show_rows_loops_time_and_a_node_by_node_comparison() {
    let url = pg_url();
    user_objects(&url);
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let join = "SELECT o.customer, count(*) FROM orders o JOIN orders p ON p.customer = o.customer AND p.id < 200 WHERE o.id < 400 GROUP BY o.customer ORDER BY 2 DESC, 1";
    let body = spec(
        "private_copies = [\"public.orders\"]\nexplain = true",
        &format!("setup = \"SET LOCAL enable_hashjoin = off\"\nrun = \"{join}\""),
        &format!("run = \"{join}\""),
    );
    let before = orders(&url);
    let o = run(t, &url, EXEC, "plans", &body);
    assert!(o.status.success(), "{}", err_of(&o));
    let report = std::fs::read_to_string(t.join("out/report.md")).unwrap();
    let plans = report
        .split("<details><summary>Plans (EXPLAIN (ANALYZE, BUFFERS) of the first fork")
        .nth(1)
        .unwrap_or_else(|| panic!("no Plans section: {report}"))
        .split("</details>")
        .next()
        .unwrap();
    for want in [
        "-- statement 1: SELECT o.customer",
        "Sort  [rows ",
        "(est. ",
        " ms",
        "sort: ",
        "-> ",
        "| statement | node | `a` | `b` |",
    ] {
        assert!(plans.contains(want), "{want:?} not in {plans}");
    }
    assert!(
        plans.contains(" Join") || plans.contains("Nested Loop"),
        "{plans}"
    );
    let rows = plans.lines().filter(|l| l.starts_with("| 1 |")).count();
    assert!(rows >= 3, "the arms node by node: {plans}");
    // Nothing of a plan is cut short, in the Setup or below it.
    let setup_plans: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("- Plan of"))
        .collect();
    assert_eq!(setup_plans.len(), 2, "{report}");
    for l in setup_plans.iter().chain([&plans]) {
        assert!(!l.contains('…') && !l.contains("..."), "{l}");
    }
    assert_eq!(orders(&url), before);
}
