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

#[test]
fn prepared_on_sqlite_says_it_needs_postgresql() {
    let tmp = tempfile::tempdir().unwrap();
    let body = r#"
[database]
backend = "sqlite"
[strategies.p]
kind = "sql"
protocol = "prepared"
run = "SELECT {input} % 7"
[design]
baseline = "p"
treatment = "p"
forks = 1
pairs = 5
"#;
    let o = runner()
        .current_dir(tmp.path())
        .arg("exec")
        .arg(spec(tmp.path(), "prepsqlite", body))
        .args(["--quiet", "--out", "out"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("protocol = \"prepared\" needs PostgreSQL"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_unknown_protocol_is_refused_with_the_valid_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let body = "[strategies.p]\nkind = \"sql\"\nprotocol = \"extended\"\nrun = \"SELECT 1\"\n[design]\nbaseline = \"p\"\ntreatment = \"p\"\n";
    let o = runner()
        .current_dir(tmp.path())
        .arg("check")
        .arg(spec(tmp.path(), "badproto", body))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("strategies.p.protocol must be one of \"simple\", \"prepared\""),
        "{e}"
    );
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

    /// Eight one-row tables joined: planning the join order costs far more
    /// than running it. The same statement, simple against prepared (a
    /// generic plan, made once): the run completes, the arms agree on
    /// their rows, the Setup names each arm's protocol, and if the
    /// difference is resolved it is the prepared arm that is faster.
    #[test]
    #[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
    fn prepared_skips_the_planning_that_simple_pays_every_run() {
        let Some(url) = pg_url() else { return };
        let tables: String = (1..=8)
            .map(|i| format!("CREATE TABLE j{i} (id bigint PRIMARY KEY, v int); INSERT INTO j{i} VALUES (0, {i}); ANALYZE j{i};\n"))
            .collect();
        let joins: String = (2..=8)
            .map(|i| format!(" JOIN j{i} ON j{i}.id = j{}.id", i - 1))
            .collect();
        let run = format!("SELECT j1.v + j8.v FROM j1{joins} WHERE j1.id = {{input}} % 1");
        let body = format!(
            r#"
[database]
explain = true
[strategies.simple]
kind = "sql"
setup = """{tables}"""
run = "{run}"
[strategies.prepared]
kind = "sql"
protocol = "prepared"
setup = """{tables}SET LOCAL plan_cache_mode = force_generic_plan;"""
run = "{run}"
[design]
baseline = "simple"
treatment = "prepared"
forks = 2
warmup_pairs = 5
pairs = 30
"#
        );
        let tmp = tempfile::tempdir().unwrap();
        let out = runner()
            .env("RUNNER_DATABASE_URL", &url)
            .current_dir(tmp.path())
            .arg("exec")
            .arg(spec(tmp.path(), "prepared", &body))
            .args(["--quiet", "--out", "out"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let md = std::fs::read_to_string(tmp.path().join("out/report.md")).unwrap();
        assert!(
            md.contains("Protocol: `prepared` prepared; `simple` simple."),
            "{md}"
        );
        // The plan after the runs is of what a run sent: the EXECUTE of the
        // statement prepared at set-up, and the plain text under simple.
        let run = read_json(&tmp.path().join("out/run.json"));
        let plans = &run["forks"][0]["sql"]["plans"];
        let sent = |arm: &str| plans[arm][0]["statement"].as_str().unwrap().to_string();
        assert!(
            sent("treatment").starts_with("EXECUTE runner_p0("),
            "{plans}"
        );
        assert!(sent("baseline").starts_with("SELECT j1.v"), "{plans}");
        let a = read_json(&tmp.path().join("out/analysis.json"));
        let direction = a["cells"][0]["effect"]["direction"].as_str().unwrap();
        assert!(
            direction == "faster" || direction == "no-difference",
            "prepared came out {direction}"
        );
    }
}
