//! Every run of the user's SQL is guarded (docs/safety.md, "Your
//! database"): check's and exec's trials sit inside the fingerprint, an
//! INSERT that would move a sequence is refused before anything runs,
//! private copies take the writes, plans sit beside times, and another
//! session's work in a table the experiment does not name is said but
//! not held against the run. Each case compares the user's tables and
//! sequences before and after, on the real server.

use crate::common;

use common::{err_of, pg_url, read_json, runner, runner_std, write_spec};
use common::{run_on_database as run, sql_pair as spec};
use postgres::{Client, NoTls};

fn client(url: &str) -> Client {
    Client::connect(url, NoTls).expect("connect")
}

/// A table with a bigserial key and 2000 rows, an index-free column.
fn user_objects(url: &str) {
    client(url)
        .batch_execute(
            "CREATE TABLE public.acc (id bigserial PRIMARY KEY, v int NOT NULL);
             INSERT INTO public.acc (v) SELECT g % 500 FROM generate_series(1, 2000) g;
             CREATE TABLE public.victim (id int PRIMARY KEY, v text);
             INSERT INTO public.victim SELECT g, 'x' FROM generate_series(1, 10) g;
             ANALYZE public.acc; ANALYZE public.victim;",
        )
        .expect("user objects");
}

/// The user's sequence, its table's rows and their statistics counters.
fn state(url: &str) -> (String, i64, i64) {
    let mut c = client(url);
    let seq: String = c
        .query_one(
            "SELECT last_value::text || ' ' || is_called::text FROM public.acc_id_seq",
            &[],
        )
        .unwrap()
        .get(0);
    let rows: i64 = c
        .query_one("SELECT count(*) FROM public.acc", &[])
        .unwrap()
        .get(0);
    (seq, rows, written(url))
}

/// n_tup_ins + n_tup_upd + n_dead_tup of public.acc (statistics reach
/// the view shortly after a session ends: waited for by the guard).
fn written(url: &str) -> i64 {
    let mut c = client(url);
    c.batch_execute("SELECT pg_stat_clear_snapshot()").unwrap();
    c.query_one(
        "SELECT n_tup_ins + n_tup_upd + n_dead_tup FROM pg_stat_user_tables WHERE relname = 'acc'",
        &[],
    )
    .unwrap()
    .get(0)
}

const INSERT_A: &str =
    "run = \"INSERT INTO acc (v) VALUES (1); SELECT count(*) FROM acc WHERE v < 3\"";
const INSERT_B: &str =
    "run = \"INSERT INTO public.acc (v) VALUES (2); SELECT count(*) FROM public.acc WHERE v < 3\"";

/// An INSERT into a bigserial column: check and exec refuse it with exit 2
/// naming the column and the fix, and the sequence has not moved. With
/// `private_copies` the same experiment runs, writing its copies.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn an_insert_into_a_serial_key_is_refused_or_goes_to_a_private_copy() {
    let url = pg_url();
    user_objects(&url);
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let before = state(&url);
    let body = spec("", INSERT_A, INSERT_B);
    for args in [vec!["check"], vec!["exec", "--quiet", "--out", "refused"]] {
        let o = run(t, &url, &args, "ins", &body);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", err_of(&o));
        let err = err_of(&o);
        assert!(
            err.contains("INSERT INTO public.acc leaves column \"id\" to its default")
                && err.contains("private_copies"),
            "{err}"
        );
        assert_eq!(state(&url), before, "{args:?}: the sequence moved");
    }
    assert!(!t.join("refused").exists());
    // The same with private copies: check and exec run, the user's table
    // gets no write and its sequence does not move.
    let body = spec("private_copies = [\"public.acc\"]", INSERT_A, INSERT_B);
    let o = run(t, &url, &["check"], "copies", &body);
    assert!(o.status.success(), "{}", err_of(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("private copies per fork of public.acc"),
        "{out}"
    );
    assert!(
        out.contains("guard       the database outside runner's schemas was unchanged"),
        "{out}"
    );
    let o = run(
        t,
        &url,
        &["exec", "--quiet", "--out", "copies"],
        "copies",
        &body,
    );
    assert!(o.status.success(), "{}", err_of(&o));
    assert_eq!(state(&url), before, "the user's table or sequence changed");
    let run_json = read_json(&t.join("copies/run.json"));
    for f in run_json["forks"].as_array().unwrap() {
        assert_eq!(f["database_guard"]["held"], true);
        assert_eq!(f["database_guard"]["residue"], serde_json::json!([]));
        let copies = f["sql"]["copies"].as_array().unwrap();
        assert_eq!(copies.len(), 2, "one copy per arm: {copies:?}");
        assert_eq!(copies[0]["table"], "public.acc");
        assert_eq!(copies[0]["rows"], 2000);
    }
}

/// A `DO` block calling nextval hides it from the parser: check's trial
/// runs, now inside the guard, find the moved sequence and exit 1 naming it.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn a_do_block_that_moves_a_sequence_fails_check_naming_it() {
    let url = pg_url();
    user_objects(&url);
    let tmp = tempfile::tempdir().unwrap();
    let hidden = "run = \"DO $$ BEGIN PERFORM nextval('public.acc_id_seq'); END $$; SELECT 1\"";
    let o = run(
        tmp.path(),
        &url,
        &["check"],
        "hidden",
        &spec("", hidden, hidden),
    );
    assert_eq!(o.status.code(), Some(1), "{}", err_of(&o));
    let err = err_of(&o);
    assert!(
        err.contains("during check's trial runs")
            && err.contains("sequence public.acc_id_seq moved"),
        "{err}"
    );
    // The plan was printed first, with what the guard saw.
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("guard       the database changed"), "{out}");
}

/// An UPDATE arm with private copies leaves the user's table without a
/// single write, dead row or inserted row: n_tup_ins + n_tup_upd +
/// n_dead_tup unchanged; without copies the same arm leaves dead rows,
/// which check and the run report as the trials' and forks' residue.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn an_update_arm_with_private_copies_leaves_the_users_table_untouched() {
    let url = pg_url();
    user_objects(&url);
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let update = "run = \"UPDATE acc SET v = v + 1 WHERE id <= 200; SELECT sum(v) FROM acc\"";
    let before = state(&url);
    let body = spec("private_copies = [\"acc\"]", update, update);
    let o = run(t, &url, &["exec", "--quiet", "--out", "upd"], "upd", &body);
    assert!(o.status.success(), "{}", err_of(&o));
    let o = run(t, &url, &["check"], "upd", &body);
    assert!(o.status.success(), "{}", err_of(&o));
    assert_eq!(state(&url), before, "the user's table was written");
    // Without copies: the content is unchanged, but check says what the
    // trials' rolled-back writes left behind.
    let body = spec("", update, update);
    let o = run(t, &url, &["check"], "bloat", &body);
    assert!(o.status.success(), "{}", err_of(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("but their rolled-back writes left") && out.contains("in public.acc"),
        "{out}"
    );
    assert!(written(&url) > before.2);
}

/// explain = true: report-ready plans per fork in run.json; the baseline
/// scans the table, the treatment (whose setup makes an index) does not.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn explain_records_each_arms_plan_beside_its_times() {
    let url = pg_url();
    user_objects(&url);
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let query = "SELECT count(*) FROM acc WHERE v = 7";
    let body = spec(
        "private_copies = [\"public.acc\"]\nexplain = true",
        &format!("run = \"{query}\""),
        &format!("setup = \"CREATE INDEX acc_v ON acc (v)\"\nrun = \"{query}\""),
    );
    let o = run(
        t,
        &url,
        &["exec", "--quiet", "--out", "plans"],
        "plans",
        &body,
    );
    assert!(o.status.success(), "{}", err_of(&o));
    let run_json = read_json(&t.join("plans/run.json"));
    for f in run_json["forks"].as_array().unwrap() {
        let plans = &f["sql"]["plans"];
        let text = |arm: &str| plans[arm].to_string();
        assert!(text("baseline").contains("Seq Scan"), "{plans}");
        assert!(text("treatment").contains("acc_v"), "{plans}");
        assert!(text("treatment").contains("Shared Hit Blocks"), "{plans}");
    }
    let report = std::fs::read_to_string(t.join("plans/report.md")).unwrap();
    assert!(report.contains("Seq Scan"), "{report}");
    assert!(
        report.contains("Index") && report.contains("using acc_v"),
        "{report}"
    );
    assert!(report.contains("CREATE INDEX acc_v ON acc (v)"), "{report}");
    // The user's table got no index.
    let indexes: i64 = client(&url)
        .query_one(
            "SELECT count(*) FROM pg_indexes WHERE tablename = 'acc' AND indexname = 'acc_v'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(indexes, 0);
}

/// A search_path schema that does not exist: exit 2 naming it, before
/// anything runs.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn a_missing_search_path_schema_is_refused_naming_it() {
    let url = pg_url();
    let tmp = tempfile::tempdir().unwrap();
    let body = spec("", "run = \"SELECT 1\"", "run = \"SELECT 1\"")
        .replace("search_path = [\"public\"]", "search_path = [\"shopp\"]");
    for args in [vec!["check"], vec!["exec", "--quiet", "--out", "x"]] {
        let o = run(tmp.path(), &url, &args, "path", &body);
        assert_eq!(o.status.code(), Some(2), "{}", err_of(&o));
        assert!(
            err_of(&o).contains("search_path names schema \"shopp\", which does not exist"),
            "{}",
            err_of(&o)
        );
    }
}

/// Another session commits to a table the experiment never names while
/// the run goes on: the run finishes (exit 0), and run.json says what the
/// other session did.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn another_sessions_commit_to_an_unnamed_table_is_said_not_held_against_the_run() {
    let url = pg_url();
    user_objects(&url);
    let tmp = tempfile::tempdir().unwrap();
    let slow = "run = \"SELECT count(*) FROM acc, pg_sleep(0.02)\"";
    let body = spec("", slow, slow).replace("pairs = 5", "pairs = 25");
    let file = write_spec(tmp.path(), "busy", &body);
    let child = runner_std()
        .env("RUNNER_DATABASE_URL", &url)
        .current_dir(tmp.path())
        .arg("exec")
        .arg(&file)
        .args(["--quiet", "--out", "busy"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let writer_url = url.clone();
    let writer = std::thread::spawn(move || {
        let mut c = client(&writer_url);
        for i in 0..40 {
            c.batch_execute(&format!("UPDATE public.victim SET v = 'w{i}'"))
                .unwrap();
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    });
    let o = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(o.status.success(), "{}", err_of(&o));
    let run_json = read_json(&tmp.path().join("busy/run.json"));
    let said: Vec<String> = run_json["forks"]
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
    assert!(
        said.iter().any(|s| s.contains("table public.victim")),
        "{said:?}"
    );
    for f in run_json["forks"].as_array().unwrap() {
        assert_eq!(f["database_guard"]["held"], true);
    }
}

/// SQLite: `private_copies` names tables of `database.sqlite_file` (a
/// missing one is refused, exit 2), the file is left byte for byte, and
/// `explain = true` records `EXPLAIN QUERY PLAN` per arm: a scan for the
/// baseline, the index the treatment's setup made for the treatment.
#[test]
fn sqlite_private_copies_and_query_plans() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let db = t.join("shop.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(
            "CREATE TABLE acc (id INTEGER PRIMARY KEY AUTOINCREMENT, v int);
             WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 500)
             INSERT INTO acc (v) SELECT i % 50 FROM g;",
        )
        .unwrap();
    let bytes = std::fs::read(&db).unwrap();
    let body = |copies: &str| {
        format!(
            r#"
[database]
backend = "sqlite"
sqlite_file = "shop.db"
private_copies = ["{copies}"]
explain = true
[strategies.a]
kind = "sql"
run = "INSERT INTO acc (v) VALUES (7); SELECT count(*) FROM acc WHERE v = 7"
[strategies.b]
kind = "sql"
setup = "CREATE INDEX acc_v ON acc (v)"
run = "INSERT INTO acc (v) VALUES (7); SELECT count(*) FROM acc WHERE v = 7"
[design]
baseline = "a"
treatment = "b"
forks = 1
warmup_pairs = 1
pairs = 3
"#
        )
    };
    let go = |name: &str, text: &str| {
        runner()
            .current_dir(t)
            .env_remove("RUNNER_DATABASE_URL")
            .arg("exec")
            .arg(write_spec(t, name, text))
            .args(["--quiet", "--out", name])
            .output()
            .unwrap()
    };
    let o = go("missing", &body("nosuch"));
    assert_eq!(o.status.code(), Some(2), "{}", err_of(&o));
    assert!(err_of(&o).contains("has no such table"), "{}", err_of(&o));
    let o = go("lite", &body("acc"));
    assert!(o.status.success(), "{}", err_of(&o));
    assert_eq!(std::fs::read(&db).unwrap(), bytes, "the file is unchanged");
    let run_json = read_json(&t.join("lite/run.json"));
    let plans = &run_json["forks"][0]["sql"]["plans"];
    assert!(
        plans["baseline"].to_string().contains("SCAN acc"),
        "{plans}"
    );
    assert!(plans["treatment"].to_string().contains("acc_v"), "{plans}");
    let report = std::fs::read_to_string(t.join("lite/report.md")).unwrap();
    assert!(report.contains("The arms' plans differ"), "{report}");
    // SQLite's plan is named for what it is, and measures no buffers.
    let plan_lines: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("- Plan of"))
        .collect();
    assert_eq!(plan_lines.len(), 2, "{report}");
    for l in plan_lines {
        assert!(
            l.contains("(EXPLAIN QUERY PLAN after the measured runs, untimed)"),
            "{l}"
        );
        assert!(!l.contains("buffers") && !l.contains("ANALYZE"), "{l}");
    }
    assert!(
        report.contains("<details><summary>Plans (EXPLAIN QUERY PLAN of the first fork"),
        "{report}"
    );
}
