//! How `sql` arms run, through the real binary (docs/guide/own-code.md,
//! "Failures"): runs that fail
//! where `allow_failure = true` are timed, rolled back and counted with
//! their codes. On SQLite always; on PostgreSQL with RUNNER_DATABASE_URL
//! (ignored without it, see `common::pg_url`), where the user's table is
//! compared before and after.

use crate::common;
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

/// An arm that fails every measured run, allowed to: the Finding names
/// its failure rate beside the ratio it qualifies, since the times are
/// those of runs that ended at their error.
#[test]
fn an_arm_that_always_fails_has_its_failure_rate_in_the_finding() {
    let tmp = tempfile::tempdir().unwrap();
    let always = "SELECT abs(-9223372036854775807 - 1) AS x WHERE 1 = 1";
    let body = format!(
        "[database]\nbackend = \"sqlite\"\n{}",
        failing(always, true)
    );
    let out = exec_ok(tmp.path(), &spec(tmp.path(), "always", &body), "out", &[]);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let finding = md
        .split("## Finding")
        .nth(1)
        .and_then(|f| f.split("\n## ").next())
        .expect("a Finding");
    for arm in ["a", "b"] {
        assert!(
            finding.contains(&format!(
                "**Warning, failures:** `{arm}` failed 80 of 80 measured runs (100 %"
            )) || finding.contains(&format!("`{arm}` failed 80 of 80 measured runs (100 %")),
            "{arm}: {finding}"
        );
    }
    assert!(
        finding.contains("the figures above time `a`'s failures, not its work"),
        "{finding}"
    );
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
fn prepared_on_sqlite_is_refused_before_anything_runs() {
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
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("strategies.p.protocol: protocol = \"prepared\" needs PostgreSQL"),
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
    use runner_db::pg::connect::connect;

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
        let url = pg_url();
        let (mut c, _) = connect(&url).unwrap();
        c.batch_execute(
            "CREATE TABLE public.orders (id integer PRIMARY KEY, qty integer);
             INSERT INTO public.orders SELECT i, 10 * i FROM generate_series(1, 20) i;",
        )
        .unwrap();
        // The inserts reach the statistics views now, not during a fork
        // (where runner's guard would take them for a change).
        c.batch_execute("SELECT pg_stat_force_next_flush()")
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
        let url = pg_url();
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

mod clients {
    use super::*;
    use runner_db::pg::connect::connect;

    fn orders(url: &str) -> String {
        let (mut c, _) = connect(url).unwrap();
        c.query_one(
            "SELECT string_agg(id || ':' || qty, ',' ORDER BY id) FROM public.orders",
            &[],
        )
        .unwrap()
        .get(0)
    }

    fn exec_pg(url: &str, dir: &Path, name: &str, body: &str) -> std::process::Output {
        runner()
            .env("RUNNER_DATABASE_URL", url)
            .current_dir(dir)
            .arg("exec")
            .arg(spec(dir, name, body))
            .args(["--quiet", "--out", "out"])
            .output()
            .unwrap()
    }

    /// Four clients of a 20 ms sleep per arm: the clients run at once, so
    /// a run's median is at least 20 ms and far below the 80 ms of four
    /// sleeps in turn (the margin is 50 ms of scheduling per run).
    #[test]
    #[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
    fn four_clients_sleep_at_once_and_the_report_says_so() {
        let url = pg_url();
        let tmp = tempfile::tempdir().unwrap();
        let body = r#"
[strategies.sleep]
kind = "sql"
clients = 4
run = "SELECT pg_sleep(0.02), {client} AS c"
[design]
baseline = "sleep"
treatment = "sleep"
forks = 1
warmup_pairs = 1
pairs = 6
"#;
        let out = exec_pg(&url, tmp.path(), "sleep4", body);
        assert!(out.status.success(), "{}", stderr(&out));
        let (header, rows) = csv_rows(&tmp.path().join("out/pairs.csv"));
        let b = col(&header, "baseline_ns");
        let mut ns: Vec<u64> = rows
            .iter()
            .filter(|r| r[2] == "measure")
            .map(|r| r[b].parse().unwrap())
            .collect();
        ns.sort_unstable();
        let median = ns[ns.len() / 2];
        assert!(
            (20_000_000..70_000_000).contains(&median),
            "median {median} ns"
        );
        let run = read_json(&tmp.path().join("out/run.json"));
        let times = &run["forks"][0]["sql"]["clients"]["baseline"];
        assert_eq!(times["clients"], 4);
        // A/A: both arms of 6 measured pairs, 4 clients each.
        assert_eq!(times["ns"].as_array().unwrap().len(), 6 * 2 * 4);
        let md = std::fs::read_to_string(tmp.path().join("out/report.md")).unwrap();
        assert!(md.contains("`sleep` ran as 4 concurrent clients"), "{md}");
        assert!(md.contains("p99"), "{md}");
    }

    /// Four clients update the same row of a private copy of the user's
    /// table; the copy is shared (committed in the arm's schema), every
    /// write is rolled back, and afterwards the user's table, its schema
    /// list and its locks are as before.
    #[test]
    #[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
    fn hot_row_updates_by_four_clients_leave_nothing_of_the_users() {
        let url = pg_url();
        let (mut c, _) = connect(&url).unwrap();
        c.batch_execute(
            "CREATE TABLE public.orders (id integer PRIMARY KEY, qty integer);
             INSERT INTO public.orders SELECT i, 10 * i FROM generate_series(1, 20) i;",
        )
        .unwrap();
        // The inserts reach the statistics views now, not during a fork
        // (where runner's guard would take them for a change).
        c.batch_execute("SELECT pg_stat_force_next_flush()")
            .unwrap();
        let before = orders(&url);
        let tmp = tempfile::tempdir().unwrap();
        let body = r#"
[database]
private_copies = ["public.orders"]
[strategies.hot]
kind = "sql"
clients = 4
search_path = ["public"]
run = "UPDATE orders SET qty = qty + 1 WHERE id = 1; SELECT pg_sleep(0.01); UPDATE public.orders SET qty = qty + {client} WHERE id = 2 + {client}"
[strategies.index]
kind = "sql"
clients = 4
search_path = ["public"]
setup = "CREATE INDEX orders_qty ON orders (qty)"
run = "UPDATE orders SET qty = qty + 1 WHERE id = 1; SELECT pg_sleep(0.01); UPDATE public.orders SET qty = qty + {client} WHERE id = 2 + {client}"
[design]
baseline = "hot"
treatment = "index"
forks = 2
warmup_pairs = 1
pairs = 8
"#;
        let out = exec_pg(&url, tmp.path(), "hot", body);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(orders(&url), before, "the user's table is unchanged");
        let run = read_json(&tmp.path().join("out/run.json"));
        for f in run["forks"].as_array().unwrap() {
            assert_eq!(f["database_guard"]["held"], true, "{f}");
        }
        // The clients wait for each other's row 1: the sampler saw it.
        let locks: u64 = run["forks"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|f| {
                ["baseline", "treatment"].map(|a| {
                    f["sql"]["clients"][a]["waits"]["Lock"]
                        .as_u64()
                        .unwrap_or(0)
                })
            })
            .sum();
        assert!(locks > 0, "no lock wait sampled: {run}");
        let md = std::fs::read_to_string(tmp.path().join("out/report.md")).unwrap();
        assert!(md.contains("waiting for a lock"), "{md}");
        let id = run["run_id"].as_str().unwrap();
        let left: i64 = c
            .query_one(
                "SELECT count(*) FROM pg_namespace WHERE starts_with(nspname, $1)",
                &[&format!("runner_{id}")],
            )
            .unwrap()
            .get(0);
        assert_eq!(left, 0, "no schema of runner's is left");
        let indexes: i64 = c
            .query_one(
                "SELECT count(*) FROM pg_indexes WHERE tablename = 'orders'",
                &[],
            )
            .unwrap()
            .get(0);
        assert_eq!(indexes, 1, "only the user's primary key");
        let locks: i64 = c
            .query_one(
                "SELECT count(*) FROM pg_locks WHERE pid <> pg_backend_pid() AND locktype = 'relation' AND relation = 'public.orders'::regclass",
                &[],
            )
            .unwrap()
            .get(0);
        assert_eq!(locks, 0, "no lock on the user's table is left");
    }

    /// A setup that writes the user's table is refused before its commit:
    /// the run fails naming the table, and the table is as it was.
    #[test]
    #[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
    fn a_setup_that_reaches_outside_the_arms_schema_is_never_committed() {
        let url = pg_url();
        let (mut c, _) = connect(&url).unwrap();
        c.batch_execute(
            "CREATE TABLE public.orders (id integer PRIMARY KEY, qty integer);
             INSERT INTO public.orders SELECT i, 10 * i FROM generate_series(1, 20) i;",
        )
        .unwrap();
        // The inserts reach the statistics views now, not during a fork
        // (where runner's guard would take them for a change).
        c.batch_execute("SELECT pg_stat_force_next_flush()")
            .unwrap();
        let before = orders(&url);
        for (n, setup) in [
            "UPDATE public.orders SET qty = 0",
            "CREATE INDEX orders_qty ON public.orders (qty)",
            "CREATE FUNCTION public.f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
            "DO $$BEGIN BEGIN DELETE FROM public.orders; END; END$$",
        ]
        .iter()
        .enumerate()
        {
            let tmp = tempfile::tempdir().unwrap();
            let body = format!(
                r#"
[strategies.w]
kind = "sql"
clients = 2
setup = "{setup}"
run = "SELECT 1"
[design]
baseline = "w"
treatment = "w"
forks = 1
pairs = 3
"#
            );
            let out = exec_pg(&url, tmp.path(), &format!("outside{n}"), &body);
            assert!(!out.status.success(), "{setup}");
            let e = stderr(&out);
            assert!(e.contains("reached outside it"), "{setup}: {e}");
            assert_eq!(orders(&url), before, "{setup}");
        }
        let extra: i64 = c
            .query_one(
                "SELECT (SELECT count(*) FROM pg_indexes WHERE tablename = 'orders') + (SELECT count(*) FROM pg_proc WHERE proname = 'f')",
                &[],
            )
            .unwrap()
            .get(0);
        assert_eq!(extra, 1, "only the primary key; no function f");
    }
}

/// One client against four of the same statement, in one run: the check
/// compares the first client's rows with the one client's, and the runs
/// are paired as usual.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn one_client_against_four_in_one_run() {
    let url = pg_url();
    let tmp = tempfile::tempdir().unwrap();
    let body = r#"
[strategies.one]
kind = "sql"
run = "SELECT {input} % 7 AS x, {client} AS c"
[strategies.four]
kind = "sql"
clients = 4
run = "SELECT {input} % 7 AS x, {client} AS c"
[design]
baseline = "one"
treatment = "four"
forks = 1
warmup_pairs = 1
pairs = 5
"#;
    let out = runner()
        .env("RUNNER_DATABASE_URL", &url)
        .current_dir(tmp.path())
        .arg("exec")
        .arg(spec(tmp.path(), "oneandfour", body))
        .args(["--quiet", "--out", "out"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let run = read_json(&tmp.path().join("out/run.json"));
    let c = &run["forks"][0]["sql"]["clients"];
    assert!(c["baseline"].is_null(), "{c}");
    assert_eq!(c["treatment"]["ns"].as_array().unwrap().len(), 5 * 4);
}

/// `[grid] clients` sweeps every sql arm's clients together, so a cell's
/// arms always contend alike: each cell's forks record that many clients
/// per arm, the Setup gives each level its own latency line, and the
/// report plots the speed ratio against the levels.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn a_clients_sweep_runs_both_arms_at_each_level() {
    let url = pg_url();
    let tmp = tempfile::tempdir().unwrap();
    let body = r#"
[strategies.short]
kind = "sql"
run = "SELECT pg_sleep(0.001), {client} AS c"
[strategies.long]
kind = "sql"
run = "SELECT pg_sleep(0.004), {client} AS c"
[design]
baseline = "short"
treatment = "long"
forks = 2
warmup_pairs = 1
pairs = 6
[grid]
clients = [1, 3]
"#;
    let out = runner()
        .env("RUNNER_DATABASE_URL", &url)
        .current_dir(tmp.path())
        .arg("exec")
        .arg(spec(tmp.path(), "sweep", body))
        .args(["--quiet", "--out", "out"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let dir = tmp.path().join("out");
    let run = read_json(&dir.join("run.json"));
    assert_eq!(
        run["spec"]["experiment"]["grid"]["clients"],
        serde_json::json!([1, 3])
    );
    for f in run["forks"].as_array().unwrap() {
        let cell = f["cell"].as_u64().unwrap();
        let level = run["cells"][cell as usize]["params"]["clients"]
            .as_u64()
            .unwrap();
        let c = &f["sql"]["clients"];
        if level == 1 {
            assert!(
                c.is_null() || (c["baseline"].is_null() && c["treatment"].is_null()),
                "{f}"
            );
        } else {
            for arm in ["baseline", "treatment"] {
                assert_eq!(c[arm]["clients"], 3, "{f}");
                assert_eq!(c[arm]["ns"].as_array().unwrap().len(), 6 * 3, "{f}");
            }
        }
    }
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("`short` ran as 3 concurrent clients"), "{md}");
    assert!(md.contains("`long` ran as 3 concurrent clients"), "{md}");
    assert!(md.contains("](clients.svg)"), "{md}");
    let svg = std::fs::read_to_string(dir.join("clients.svg")).unwrap();
    assert!(svg.contains("concurrent clients per arm"), "{svg}");
    // Redrawn byte for byte.
    let before = std::fs::read(dir.join("clients.svg")).unwrap();
    runner().arg("report").arg(&dir).assert().success();
    assert_eq!(std::fs::read(dir.join("clients.svg")).unwrap(), before);
}

/// A swept `clients` is refused where it cannot run or would mean two
/// things: on SQLite, beside a sweep of one arm's clients, and with no sql
/// arm to set.
#[test]
fn a_clients_sweep_is_refused_where_it_cannot_run() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (
            "[database]\nbackend = \"sqlite\"\n[strategies.q]\nkind = \"sql\"\nrun = \"SELECT {input}\"\n[design]\nbaseline = \"q\"\ntreatment = \"q\"\n[grid]\nclients = [1, 4]\n",
            "grid.clients[1] = 4: concurrent clients need PostgreSQL",
        ),
        (
            "[strategies.q]\nkind = \"sql\"\nrun = \"SELECT {input}\"\n[design]\nbaseline = \"q\"\ntreatment = \"q\"\n[grid]\nclients = [1, 4]\n\"strategies.q.clients\" = [2, 3]\n",
            "both sweep `q`'s clients",
        ),
        (
            "[strategies.c]\nkind = \"command\"\nargv = [\"true\"]\n[design]\nbaseline = \"c\"\ntreatment = \"c\"\n[grid]\nclients = [1, 4]\n",
            "grid.clients sweeps the concurrent clients of `sql` arms",
        ),
        (
            "[strategies.q]\nkind = \"sql\"\nrun = \"SELECT {input}\"\n[design]\nbaseline = \"q\"\ntreatment = \"q\"\n[grid]\nclients = [0, 4]\n",
            "an integer from 1 to 64",
        ),
    ];
    for (i, (body, said)) in cases.iter().enumerate() {
        let o = runner()
            .env_remove("RUNNER_DATABASE_URL")
            .current_dir(tmp.path())
            .arg("check")
            .arg(spec(tmp.path(), &format!("bad{i}"), body))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{body}\n{}", stderr(&o));
        assert!(stderr(&o).contains(said), "{body}\n{}", stderr(&o));
    }
}

/// A rewrite that returns other rows only where `{input} % 4 = 0`: with
/// one input per look, `check` passed it and exec caught it only by the
/// luck of the seed. At the default `check_inputs` (5), `check` refuses
/// it (exit 2, naming the disagreement) and so does exec before timing,
/// for every seed from 1 to 10; with `check_inputs = 1` check's one
/// trial input lets it through, the control.
#[test]
fn a_rewrite_that_differs_on_every_fourth_input_is_refused_for_every_seed() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let body = |inputs: &str| {
        format!(
            r#"
[database]
backend = "sqlite"
{inputs}
[strategies.a]
kind = "sql"
setup = "CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (1), (2), (3)"
run = "SELECT count(*) FROM t WHERE v < 3"
[strategies.b]
kind = "sql"
setup = "CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (1), (2), (3)"
run = "SELECT count(*) + CASE WHEN {{input}} % 4 = 0 THEN 1 ELSE 0 END FROM t WHERE v < 3"
[design]
baseline = "a"
treatment = "b"
forks = 2
warmup_pairs = 1
pairs = 5
"#
        )
    };
    let file = spec(t, "rewrite", &body(""));
    for seed in 1..=10 {
        let seed_set = format!("seed={seed}");
        for args in [
            vec!["check", "--set", &seed_set],
            vec!["exec", "--quiet", "--out", "o", "--set", &seed_set],
        ] {
            let o = runner()
                .current_dir(t)
                .env_remove("RUNNER_DATABASE_URL")
                .args(&args)
                .arg(&file)
                .output()
                .unwrap();
            let err = err_of(&o);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
            assert!(
                err.contains(
                    "baseline `a` (sql) and treatment `b` (sql) disagree on the same input"
                ),
                "{args:?}: {err}"
            );
        }
    }
    assert!(!t.join("o").exists());
    let file = spec(t, "one", &body("check_inputs = 1"));
    let o = runner()
        .current_dir(t)
        .env_remove("RUNNER_DATABASE_URL")
        .arg("check")
        .arg(&file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err_of(&o));
}
