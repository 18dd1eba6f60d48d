//! `kind = "sql"` through the real binary (docs/guide/own-code.md), on the
//! embedded SQLite and, with RUNNER_DATABASE_URL, on a real PostgreSQL:
//! a slower query is seen, different rows are caught before timing, grid
//! values reach the SQL, and a write to the user's own table never lasts.

use crate::common;
use common::faults::{exec, stderr};
use common::*;
use std::path::{Path, PathBuf};

fn spec(dir: &Path, name: &str, body: &str) -> PathBuf {
    let text = format!("name = \"{name}\"\nseed = 5\n{body}\n[analysis]\nresamples = 200\n");
    write_spec(dir, name, &text)
}

/// A table of `{rows}` rows, the same on both backends.
const TABLE: &str = r#"setup = """
CREATE TABLE t (id integer PRIMARY KEY, v integer NOT NULL);
INSERT INTO t (id, v)
  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {rows})
  SELECT i, (i * 7919) % 1000 FROM n;
ANALYZE t;
""""#;

fn verdicts(analysis: &serde_json::Value, cell: usize) -> Vec<String> {
    analysis["cells"][cell]["forks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["verdict"].as_str().unwrap().to_string())
        .collect()
}

/// An indexed lookup against the same lookup forced to scan 20000 rows
/// (`+id` keeps SQLite from using the primary key): same rows, slower.
#[test]
fn a_slower_query_is_seen_by_every_fork() {
    let tmp = tempfile::tempdir().unwrap();
    let body = format!(
        r#"
[database]
backend = "sqlite"
[strategies.index]
kind = "sql"
{TABLE}
run = "SELECT id, v FROM t WHERE id = 1 + {{input}} % {{rows}}"
[strategies.scan]
kind = "sql"
{TABLE}
run = "SELECT id, v FROM t WHERE +id = 1 + {{input}} % {{rows}}"
[design]
baseline = "index"
treatment = "scan"
forks = 2
warmup_pairs = 2
pairs = 20
[grid]
rows = [20000]
"#
    );
    let out = exec_ok(tmp.path(), &spec(tmp.path(), "scan", &body), "out", &[]);
    let a = read_json(&out.join("analysis.json"));
    assert_eq!(verdicts(&a, 0), ["seen", "seen"]);
    assert!(a["cells"][0]["pooled"]["median_ns"].as_f64().unwrap() > 0.0);
    assert!(a["cells"][0].get("usage").is_none(), "sql records no usage");
    let text = std::fs::read_to_string(out.join("pairs.csv")).unwrap();
    assert_eq!(text.lines().next().unwrap().split(',').count(), 11);
}

#[test]
fn a_variant_returning_other_rows_is_caught_before_timing() {
    let tmp = tempfile::tempdir().unwrap();
    let body = format!(
        r#"
[database]
backend = "sqlite"
[strategies.right]
kind = "sql"
{TABLE}
run = "SELECT v FROM t WHERE id <= 10"
[strategies.wrong]
kind = "sql"
{TABLE}
run = "SELECT v FROM t WHERE id < 10"
[design]
baseline = "right"
treatment = "wrong"
forks = 1
pairs = 5
[grid]
rows = [100]
"#
    );
    let o = exec(
        tmp.path(),
        &spec(tmp.path(), "rows", &body),
        "out",
        None,
        &[],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "baseline `right` (sql) and treatment `wrong` (sql) disagree on the same input"
        ),
        "{err}"
    );
    // Row 10 has v = 79190 % 1000 = 190.
    assert!(
        err.contains("returned 10 rows vs 9; rows only in the first: (190)"),
        "{err}"
    );
}

/// `{rows}` must reach both the setup and the measured SQL, or the arms
/// (a count and the literal) disagree and the run stops.
#[test]
fn grid_values_reach_setup_and_measured_sql() {
    let tmp = tempfile::tempdir().unwrap();
    let body = format!(
        r#"
[database]
backend = "sqlite"
[strategies.count]
kind = "sql"
{TABLE}
run = "SELECT count(*) FROM t"
[strategies.literal]
kind = "sql"
run = "SELECT {{rows}}"
[design]
baseline = "count"
treatment = "literal"
forks = 1
warmup_pairs = 0
pairs = 4
[grid]
rows = [3, 70]
"#
    );
    let out = exec_ok(tmp.path(), &spec(tmp.path(), "reach", &body), "out", &[]);
    let run = read_json(&out.join("run.json"));
    assert!(run["forks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["checks"]["arms_agree"] == true));
    // A swept strategy key reaches the SQL too: the wrong value stops the run.
    let bad = body.replace(
        "[grid]\n",
        "[grid]\n\"strategies.literal.run\" = [\"SELECT {rows}\", \"SELECT {rows} + 1\"]\n",
    );
    let o = exec(
        tmp.path(),
        &spec(tmp.path(), "reach2", &bad),
        "out2",
        None,
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("disagree"), "{}", stderr(&o));
}

/// The measured SQL deletes and updates the user's table; a copy is what
/// it works on, every run is rolled back, and the user's file is untouched.
#[test]
fn sqlite_writes_to_a_users_table_never_last() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("shop.db");
    {
        let c = rusqlite::Connection::open(&file).unwrap();
        c.execute_batch(
            "CREATE TABLE orders (id integer PRIMARY KEY, qty integer);
             INSERT INTO orders VALUES (1, 10), (2, 20), (3, 30);",
        )
        .unwrap();
    }
    let before = std::fs::read(&file).unwrap();
    let body = r#"
[database]
backend = "sqlite"
sqlite_file = "shop.db"
[strategies.w]
kind = "sql"
run = "DELETE FROM orders WHERE id = 1 + {input} % 3; UPDATE orders SET qty = qty * 2; SELECT count(*), sum(qty) FROM orders"
[design]
baseline = "w"
treatment = "w"
forks = 2
warmup_pairs = 1
pairs = 10
"#;
    // The checks run each arm twice on one input: a write that lasted
    // would change the second result and stop the run.
    exec_ok(tmp.path(), &spec(tmp.path(), "writes", body), "out", &[]);
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "shop.db is byte-identical"
    );
}

mod postgres {
    use super::*;
    use runner_db::pg::connect::connect;

    fn content(url: &str, table: &str) -> String {
        let (mut c, _) = connect(url).unwrap();
        c.query_one(
            &format!("SELECT string_agg(id || ':' || qty, ',' ORDER BY id) FROM {table}"),
            &[],
        )
        .unwrap()
        .get(0)
    }

    fn schemas_like(url: &str, prefix: &str) -> Vec<String> {
        let (mut c, _) = connect(url).unwrap();
        c.query(
            "SELECT nspname::text FROM pg_namespace WHERE starts_with(nspname, $1)",
            &[&prefix],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
    }

    /// A user schema with a table the measured SQL writes through
    /// `search_path`; after the run the table is as it was, and every
    /// schema runner made is gone.
    #[test]
    #[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
    fn writes_to_a_users_table_never_last_and_runner_leaves_no_schema() {
        let url = pg_url();
        let user = format!("it_user_{}", std::process::id());
        let (mut c, _) = connect(&url).unwrap();
        c.batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {user} CASCADE; CREATE SCHEMA {user};
             CREATE TABLE {user}.orders (id integer PRIMARY KEY, qty integer);
             INSERT INTO {user}.orders SELECT i, 10 * i FROM generate_series(1, 50) i;"
        ))
        .unwrap();
        let before = content(&url, &format!("{user}.orders"));
        let tmp = tempfile::tempdir().unwrap();
        let body = format!(
            r#"
[strategies.w]
kind = "sql"
search_path = ["{user}"]
setup = "CREATE TABLE mine AS SELECT * FROM {user}.orders WHERE id <= 5"
run = """
UPDATE orders SET qty = qty + 1 WHERE id = 1 + {{input}} % 50;
DELETE FROM orders WHERE id > 40;
INSERT INTO orders VALUES (1000, 1);
SELECT count(*), sum(qty) FROM orders;
SELECT count(*) FROM mine"""
[design]
baseline = "w"
treatment = "w"
forks = 2
warmup_pairs = 1
pairs = 10
"#
        );
        let out = runner()
            .env("RUNNER_DATABASE_URL", &url)
            .current_dir(tmp.path())
            .arg("exec")
            .arg(spec(tmp.path(), "pgwrites", &body))
            .args(["--quiet", "--out", "out"])
            .output()
            .unwrap();
        let after = content(&url, &format!("{user}.orders"));
        c.batch_execute(&format!("DROP SCHEMA {user} CASCADE"))
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(after, before, "the user's table is unchanged");
        let run = read_json(&tmp.path().join("out/run.json"));
        let id = run["run_id"].as_str().unwrap();
        assert!(schemas_like(&url, &format!("runner_{id}")).is_empty());
        assert_eq!(run["database"]["backend"], "postgres");
    }

    /// The same formulations on PostgreSQL: a scan (a cast defeats the
    /// index) is seen against the index lookup, and the table is built by
    /// setup SQL from a grid value.
    #[test]
    #[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
    fn a_slower_query_is_seen_on_postgres() {
        let url = pg_url();
        let tmp = tempfile::tempdir().unwrap();
        let body = format!(
            r#"
[strategies.index]
kind = "sql"
{TABLE}
run = "SELECT id, v FROM t WHERE id = 1 + {{input}} % {{rows}}"
[strategies.scan]
kind = "sql"
{TABLE}
run = "SELECT id, v FROM t WHERE id::text = (1 + {{input}} % {{rows}})::text"
[design]
baseline = "index"
treatment = "scan"
forks = 2
warmup_pairs = 2
pairs = 15
[grid]
rows = [20000]
"#
        );
        let out = runner()
            .env("RUNNER_DATABASE_URL", &url)
            .current_dir(tmp.path())
            .arg("exec")
            .arg(spec(tmp.path(), "pgscan", &body))
            .args(["--quiet", "--out", "out"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let a = read_json(&tmp.path().join("out/analysis.json"));
        assert_eq!(verdicts(&a, 0), ["seen", "seen"]);
    }
}
