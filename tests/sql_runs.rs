//! How `sql` arms run, through the real binary (docs/guide/own-code.md,
//! "Failures"): runs that fail
//! where `allow_failure = true` are timed, rolled back and counted with
//! their codes. On SQLite always; on PostgreSQL with RUNNER_DATABASE_URL
//! (ignored without it, see `common::pg_url`), where the user's table is
//! compared before and after.

mod common;
use common::faults::stderr;
use common::*;
use std::path::{Path, PathBuf};

fn spec(dir: &Path, name: &str, body: &str) -> PathBuf {
    let text = format!("name = \"{name}\"\nseed = 7\n{body}\n[analysis]\nresamples = 200\n");
    write_spec(dir, name, &text)
}

/// Both arms fail on the inputs divisible by 4 (a quarter of the runs):
/// `fails` is the statement that does, for the backend at hand.
fn failing(fails: &str, allow: bool) -> String {
    format!(
        r#"
[strategies.a]
kind = "sql"
allow_failure = {allow}
run = "{fails}"
[strategies.b]
kind = "sql"
allow_failure = {allow}
run = "{fails} AND 1 = 1"
[design]
baseline = "a"
treatment = "b"
forks = 2
warmup_pairs = 2
pairs = 40
"#
    )
}

/// Each arm's measured failures from run.json: (count, codes seen).
fn failures(run: &serde_json::Value, arm: &str) -> (usize, Vec<String>) {
    let mut codes = Vec::new();
    for f in run["forks"].as_array().unwrap() {
        for r in f["sql"]["failures"].as_array().into_iter().flatten() {
            if r["phase"] == "measure" && r["arm"] == arm {
                codes.push(r["code"].as_str().unwrap().to_string());
            }
        }
    }
    let n = codes.len();
    codes.sort();
    codes.dedup();
    (n, codes)
}

/// 80 measured runs per arm, each failing with probability 1/4 on its
/// own input: fewer than 5 or more than 40 failures has a chance below
/// 1e-6 (binomial tails), so the bounds cannot be broken by chance.
fn assert_counted(out: &Path, code: &str, label: &str) {
    let run = read_json(&out.join("run.json"));
    for arm in ["baseline", "treatment"] {
        let (n, codes) = failures(&run, arm);
        assert!((5..=40).contains(&n), "{arm}: {n} failures");
        assert_eq!(codes, [code], "{arm}");
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for arm in ["a", "b"] {
        let line = md
            .lines()
            .find(|l| l.contains(&format!("Failures of `{arm}`")))
            .unwrap_or_else(|| panic!("no failure line for {arm}:\n{md}"));
        assert!(line.contains("of 80 measured runs"), "{line}");
        assert!(
            line.contains("95 % CI") && line.contains("Clopper-Pearson"),
            "{line}"
        );
        assert!(line.contains(label), "{line}");
    }
}

/// SQLite: abs() of the smallest integer overflows.
const SQLITE_FAILS: &str =
    "SELECT CASE WHEN {input} % 4 = 0 THEN abs(-9223372036854775807 - 1) ELSE 1 END AS x WHERE 1 = 1";

#[test]
fn sqlite_failures_are_counted_with_their_code() {
    let tmp = tempfile::tempdir().unwrap();
    let body = format!(
        "[database]\nbackend = \"sqlite\"\n{}",
        failing(SQLITE_FAILS, true)
    );
    let out = exec_ok(tmp.path(), &spec(tmp.path(), "fails", &body), "out", &[]);
    // SQLITE_ERROR (1): "integer overflow".
    assert_counted(&out, "SQLITE_1", "SQLITE_1 (");
}

#[test]
fn without_allow_failure_a_failing_statement_stops_the_run_and_says_how_to_allow_it() {
    let tmp = tempfile::tempdir().unwrap();
    let body = format!(
        "[database]\nbackend = \"sqlite\"\n{}",
        failing(SQLITE_FAILS, false)
    );
    let o = runner()
        .current_dir(tmp.path())
        .arg("exec")
        .arg(spec(tmp.path(), "nofail", &body))
        .args(["--quiet", "--out", "out"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("set allow_failure = true"), "{e}");
    assert!(e.contains("integer overflow"), "{e}");
}

mod postgres {
    use super::*;
    use runner::db::postgres::connect;

    fn content(url: &str) -> String {
        let (mut c, _) = connect(url).unwrap();
        c.query_one(
            "SELECT string_agg(id || ':' || qty, ',' ORDER BY id) FROM public.orders",
            &[],
        )
        .unwrap()
        .get(0)
    }

    /// The run writes the user's table, then divides by zero on a quarter
    /// of the inputs: each failure is counted with SQLSTATE 22012, and the
    /// write before it is rolled back with the rest (the table is as it
    /// was, and runner's guard found no change).
    #[test]
    #[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
    fn failures_are_timed_rolled_back_and_counted_with_their_sqlstate() {
        let Some(url) = pg_url() else { return };
        let (mut c, _) = connect(&url).unwrap();
        c.batch_execute(
            "CREATE TABLE public.orders (id integer PRIMARY KEY, qty integer);
             INSERT INTO public.orders SELECT i, 10 * i FROM generate_series(1, 20) i;",
        )
        .unwrap();
        let before = content(&url);
        let tmp = tempfile::tempdir().unwrap();
        let fails = "UPDATE orders SET qty = qty + 1; SELECT 1 / ({input} % 4) AS x WHERE 1 = 1";
        let body = failing(fails, true).replace(
            "kind = \"sql\"",
            "kind = \"sql\"\nsearch_path = [\"public\"]",
        );
        let out = runner()
            .env("RUNNER_DATABASE_URL", &url)
            .current_dir(tmp.path())
            .arg("exec")
            .arg(spec(tmp.path(), "pgfails", &body))
            .args(["--quiet", "--out", "out"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(content(&url), before, "the user's table is unchanged");
        let dir = tmp.path().join("out");
        assert_counted(&dir, "22012", "SQLSTATE 22012 (");
        let run = read_json(&dir.join("run.json"));
        for f in run["forks"].as_array().unwrap() {
            assert_eq!(f["database_guard"]["held"], true, "{f}");
        }
    }
}
