//! "User code cannot harm" for SQL (docs/safety.md, "Your database"): whatever
//! the user's setup or measured SQL does, nothing outside runner's schemas
//! lasts. Each PostgreSQL case runs the real binary against the real server
//! in a database of its own, and compares the user's objects before and
//! after, not only the exit code. SQLite cases run everywhere.

use crate::common;

use common::{err_of, pg_superuser_url, pg_url, private_database, read_json, runner, write_spec};
use postgres::{Client, NoTls};
use std::path::Path;
use std::process::Output;

fn client(url: &str) -> Client {
    Client::connect(url, NoTls).expect("connect")
}

/// The user's objects: a table with 20 rows, a sequence at 1, a table with
/// a serial column, and a function that moves the sequence out of sight of
/// any parser.
fn user_objects(url: &str) {
    client(url)
        .batch_execute(
            "CREATE TABLE public.victim (id int PRIMARY KEY, v text NOT NULL);
             INSERT INTO public.victim SELECT i, 'row ' || i FROM generate_series(1, 20) i;
             CREATE SEQUENCE public.vseq;
             SELECT nextval('public.vseq');
             CREATE TABLE public.withserial (id serial PRIMARY KEY, v int);
             CREATE FUNCTION public.bump() RETURNS bigint LANGUAGE sql AS 'SELECT nextval(''public.vseq'')';",
        )
        .expect("user objects");
}

/// Everything a test compares: victim's rows and columns, the sequences'
/// last values, and the tables and schemas that exist.
fn state(url: &str) -> Vec<String> {
    let mut c = client(url);
    let mut out = Vec::new();
    for r in c
        .query(
            "SELECT id::text || '=' || v FROM public.victim ORDER BY id",
            &[],
        )
        .unwrap()
    {
        out.push(r.get(0));
    }
    for sql in [
        "SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_schema = 'public' AND table_name = 'victim'",
        "SELECT 'vseq ' || last_value FROM public.vseq",
        "SELECT 'withserial_id_seq ' || last_value || ' ' || is_called FROM public.withserial_id_seq",
        "SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'",
        "SELECT string_agg(nspname, ',' ORDER BY nspname) FROM pg_namespace",
        "SELECT count(*)::text FROM public.withserial",
    ] {
        out.push(c.query_one(sql, &[]).unwrap().get::<_, Option<String>>(0).unwrap_or_default());
    }
    out
}

fn spec(setup: Option<&str>, run: &str) -> String {
    let setup = setup.map_or(String::new(), |s| format!("setup = '''{s}'''\n"));
    format!(
        r#"
[strategies.s]
kind = "sql"
search_path = ["public"]
{setup}run = '''{run}'''
[design]
baseline = "s"
treatment = "s"
forks = 2
warmup_pairs = 1
pairs = 5
"#
    )
}

fn exec(dir: &Path, url: &str, name: &str, body: &str) -> Output {
    runner()
        .env("RUNNER_DATABASE_URL", url)
        .current_dir(dir)
        .arg("exec")
        .arg(write_spec(dir, name, body))
        .args(["--quiet", "--out", name])
        .output()
        .unwrap()
}

/// Setup and measured SQL that delete, update, truncate, alter and drop the
/// user's own table in every form a review of the guard tried (and the SQL parser
/// does not recognise as a write to it): the run succeeds, and the table,
/// its rows and its columns are exactly as before, because the fork's
/// transaction is never committed.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn setup_and_runs_that_write_the_users_tables_change_nothing() {
    let url = pg_url();
    user_objects(&url);
    let before = state(&url);
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (
            Some(r#"CREATE TABLE t(x int); DELETE FROM "public"."victim" WHERE id = 10"#),
            "SELECT count(*) FROM victim",
        ),
        (
            Some("DO $$ BEGIN DELETE FROM public.victim WHERE id = 11; END $$"),
            "SELECT count(*) FROM victim",
        ),
        (
            Some("CREATE TABLE t(x int); WITH d AS (DELETE FROM public.victim WHERE id = 12 RETURNING id) INSERT INTO t SELECT id FROM d"),
            "SELECT count(*) FROM t",
        ),
        (
            Some("WITH d AS (DELETE FROM public.victim WHERE id > 15 RETURNING id) SELECT count(*) FROM d"),
            "SELECT 1",
        ),
        (
            Some("TRUNCATE public.victim; ALTER TABLE public.victim ADD COLUMN z int; DROP TABLE public.withserial; CREATE TABLE public.planted(x int); CREATE SCHEMA planted"),
            "SELECT 1",
        ),
        (
            None,
            "UPDATE public.victim SET v = 'x'; DELETE FROM public.victim WHERE id < 5; SELECT count(*) FROM public.victim",
        ),
    ];
    for (i, (setup, run)) in cases.iter().enumerate() {
        let name = format!("w{i}");
        let out = exec(tmp.path(), &url, &name, &spec(*setup, run));
        assert!(out.status.success(), "case {i}: {}", err_of(&out));
        assert_eq!(state(&url), before, "case {i}: the user's objects changed");
        let run_json = read_json(&tmp.path().join(&name).join("run.json"));
        for f in run_json["forks"].as_array().unwrap() {
            assert_eq!(f["database_guard"]["held"], true, "case {i}");
            assert!(f["database_guard"]["relations"].as_u64().unwrap() >= 2);
        }
        let report = std::fs::read_to_string(tmp.path().join(&name).join("report.md")).unwrap();
        assert!(
            report.contains("- Your database: runner never commits what a fork writes"),
            "case {i}"
        );
        // Its content is as before; what rolled-back writes left is counted
        // (an UPDATE's dead row versions), never called "unchanged".
        assert!(report.contains("unchanged after every one of the 2 forks"));
    }
}

/// A COMMIT the parser cannot see (inside a `DO` block) cannot end the
/// fork's transaction: PostgreSQL refuses it inside a transaction block, the
/// fork fails (exit 1) and the DELETE before it is rolled back.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn a_hidden_commit_fails_the_fork_and_commits_nothing() {
    let url = pg_url();
    user_objects(&url);
    let before = state(&url);
    let tmp = tempfile::tempdir().unwrap();
    for (i, (setup, run)) in [
        (
            Some("DELETE FROM public.victim; DO $$ BEGIN COMMIT; END $$"),
            "SELECT 1",
        ),
        (
            None,
            "DELETE FROM public.victim; DO $$ BEGIN COMMIT; END $$",
        ),
    ]
    .iter()
    .enumerate()
    {
        let out = exec(tmp.path(), &url, &format!("c{i}"), &spec(*setup, run));
        assert_eq!(out.status.code(), Some(1), "case {i}: {}", err_of(&out));
        assert_eq!(state(&url), before, "case {i}");
    }
}

/// What PostgreSQL does not roll back is refused before anything runs
/// (exit 2 naming it), and the user's sequence has not moved.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn what_postgres_cannot_roll_back_is_refused_before_anything_runs() {
    let url = pg_url();
    user_objects(&url);
    let before = state(&url);
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("copied.csv");
    let touched = tmp.path().join("touched");
    for (setup, run, named) in [
        (None, "SELECT nextval('vseq') > 0".to_string(), "nextval"),
        (
            Some("SELECT setval('vseq', 9999)"),
            "SELECT 1".to_string(),
            "setval",
        ),
        (
            None,
            "SELECT setval('public.vseq', 9999)".to_string(),
            "setval",
        ),
        (
            None,
            format!("COPY (SELECT 1) TO PROGRAM 'touch {}'", touched.display()),
            "PROGRAM",
        ),
        (
            None,
            format!("COPY public.victim TO '{}'", file.display()),
            "COPY",
        ),
        (
            None,
            "SELECT lo_export(1, '/tmp/x')".to_string(),
            "lo_export",
        ),
        (None, "SELECT pg_advisory_lock(42)".to_string(), "advisory"),
        (None, "NOTIFY ch".to_string(), "NOTIFY"),
        (None, "LISTEN ch".to_string(), "LISTEN"),
        (
            None,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE false".to_string(),
            "pg_terminate_backend",
        ),
        (
            None,
            "SELECT * FROM dblink('dbname=bench', 'DELETE FROM victim') AS t(x text)".to_string(),
            "dblink",
        ),
    ] {
        let out = exec(tmp.path(), &url, "refused", &spec(setup, &run));
        assert_eq!(out.status.code(), Some(2), "{run}: {}", err_of(&out));
        let err = err_of(&out);
        assert!(err.contains(named), "{run}: {err}");
        assert!(err.contains(".toml:"), "names file:line:col: {err}");
        assert!(!tmp.path().join("refused").exists(), "nothing ran");
    }
    assert_eq!(state(&url), before);
    assert!(!file.exists() && !touched.exists());
}

/// Moving a sequence from inside a function (no parser sees it) is found
/// by the fingerprint around exec's trial runs: the run fails (exit 1)
/// naming the sequence, and run.json has no fork. Through a serial
/// column's DEFAULT it is refused before anything runs (exit 2, the
/// catalog says the INSERT would call nextval).
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn a_sequence_moved_out_of_sight_fails_the_run_naming_it() {
    let url = pg_url();
    user_objects(&url);
    let tmp = tempfile::tempdir().unwrap();
    for (run, named, code) in [
        ("SELECT public.bump() > 0", "sequence public.vseq moved", 1),
        (
            "INSERT INTO public.withserial (v) VALUES (1)",
            "INSERT INTO public.withserial leaves column \"id\" to its default",
            2,
        ),
    ] {
        let rows_before = state(&url)[..20].to_vec();
        let before = state(&url);
        let out = exec(tmp.path(), &url, "moved", &spec(None, run));
        assert_eq!(out.status.code(), Some(code), "{run}: {}", err_of(&out));
        if code == 2 {
            assert_eq!(state(&url), before, "refused before anything ran");
        }
        assert!(err_of(&out).contains(named), "{run}: {}", err_of(&out));
        assert!(!tmp.path().join("moved").exists());
        // The rows the INSERT wrote were rolled back all the same.
        assert_eq!(state(&url)[..20].to_vec(), rows_before);
        let withserial_rows = state(&url).last().cloned();
        assert_eq!(withserial_rows.as_deref(), Some("0"));
        std::fs::remove_dir_all(tmp.path().join("moved.partial")).ok();
    }
}

/// A superuser role is named as a warning by `check` and in the report:
/// its SQL can run programs from inside a function, which no rollback undoes.
#[test]
#[cfg_attr(
    not(runner_postgres_superuser),
    ignore = "SKIPPED: RUNNER_DATABASE_SUPERUSER_URL not set"
)]
fn a_superuser_role_is_a_warning_in_check_and_in_the_report() {
    let server = pg_superuser_url();
    let url = private_database(&server);
    user_objects(&url);
    let tmp = tempfile::tempdir().unwrap();
    let body = spec(None, "SELECT count(*) FROM victim");
    let check = runner()
        .env("RUNNER_DATABASE_URL", &url)
        .arg("check")
        .arg(write_spec(tmp.path(), "su", &body))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success(), "{}", err_of(&check));
    assert!(
        text.contains("warning     role \"bench_super\" is a superuser"),
        "{text}"
    );
    let out = exec(tmp.path(), &url, "su", &body);
    assert!(out.status.success(), "{}", err_of(&out));
    let report = std::fs::read_to_string(tmp.path().join("su/report.md")).unwrap();
    assert!(report.contains("**Warning, database role:** role \"bench_super\" is a superuser"));
    // The plain role gets no warning.
    let plain = pg_url();
    let check = runner()
        .env("RUNNER_DATABASE_URL", &plain)
        .arg("check")
        .arg(tmp.path().join("su.toml"))
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&check.stdout).contains("warning     role"));
}

/// SQLite: the user's SQL cannot attach another database, write one with
/// VACUUM INTO, or load an extension, not even where the parser does not
/// look (the session API, as a statement runner did not check): SQLite
/// itself refuses, and no file appears.
#[test]
fn sqlite_sessions_cannot_reach_a_file() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("out.db");
    let t = target.display();
    for sql in [
        format!("ATTACH '{t}' AS x"),
        format!("ATTACH 'file:{t}?mode=rwc' AS x"),
        format!("VACUUM INTO '{t}'"),
        "SELECT load_extension('/nonexistent/ext')".to_string(),
    ] {
        let mut s = runner_db::open::session(&runner_db::DbTarget::Sqlite, "b", &[], None).unwrap();
        s.begin().unwrap();
        let r = s.run(std::slice::from_ref(&sql), None);
        assert!(r.is_err(), "{sql} was allowed");
        assert!(!target.exists(), "{sql} wrote a file");
        // In setup too.
        let r = runner_db::open::session(&runner_db::DbTarget::Sqlite, "b", &[], Some(&sql));
        assert!(r.is_err(), "setup: {sql} was allowed");
        assert!(!target.exists(), "setup: {sql} wrote a file");
    }
}

/// SQLite through the binary: ATTACH and VACUUM INTO are refused before
/// anything runs, and a `database.sqlite_file` the SQL writes to is left
/// byte for byte as it was.
#[test]
fn sqlite_file_and_attach_through_the_binary() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("user.db");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "CREATE TABLE victim (id int PRIMARY KEY, v text);
             INSERT INTO victim VALUES (1, 'a'), (2, 'b');",
        )
        .unwrap();
    }
    let bytes = std::fs::read(&db).unwrap();
    let body = |setup: &str, run: &str| {
        format!(
            r#"
[database]
backend = "sqlite"
sqlite_file = "user.db"
[strategies.s]
kind = "sql"
setup = '''{setup}'''
run = '''{run}'''
[design]
baseline = "s"
treatment = "s"
forks = 1
warmup_pairs = 1
pairs = 3
"#
        )
    };
    let run = |name: &str, text: &str| {
        runner()
            .current_dir(tmp.path())
            .arg("exec")
            .arg(write_spec(tmp.path(), name, text))
            .args(["--quiet", "--out", name])
            .output()
            .unwrap()
    };
    let ok = run(
        "writes",
        &body(
            "DELETE FROM victim WHERE id = 1",
            "UPDATE victim SET v = 'z'; DELETE FROM victim; SELECT count(*) FROM victim",
        ),
    );
    assert!(ok.status.success(), "{}", err_of(&ok));
    assert_eq!(
        std::fs::read(&db).unwrap(),
        bytes,
        "the user's file is unchanged"
    );
    for (setup, run_sql) in [
        ("ATTACH 'user.db' AS u", "SELECT 1"),
        ("SELECT 1", "VACUUM INTO 'copy.db'"),
        ("SELECT 1", "DETACH u"),
    ] {
        let out = run("refused", &body(setup, run_sql));
        assert_eq!(
            out.status.code(),
            Some(2),
            "{setup} / {run_sql}: {}",
            err_of(&out)
        );
        assert!(!tmp.path().join("copy.db").exists());
    }
    assert_eq!(std::fs::read(&db).unwrap(), bytes);
}
