//! PostgreSQL faults on the real binary: a server that is down before the
//! run, and a worker whose connection the server kills mid-fork. The
//! mid-run case needs RUNNER_DATABASE_URL (start a server with
//! `source .ci/postgres.sh`); without it those tests are ignored and
//! counted so by `cargo test` (see `common::pg_url`), and under
//! RUNNER_REQUIRE_POSTGRES=1 a missing server fails.

use crate::common;
use common::faults::*;
use common::*;
use std::time::Duration;

const PG_SPEC: &str = r#"
name = "pg"
title = "PostgreSQL faults"
seed = 5
[workload]
plans = 4
months = 12
[database]
backend = "postgres"
url = "postgres://bench:bench@127.0.0.1:1/bench"
[strategies.rb]
kind = "tx-rollback"
[design]
baseline = "rb"
treatment = "rb"
forks = 3
warmup_pairs = 5
pairs = 40
schedule = "sequential"
[analysis]
resamples = 200
"#;

/// The schema of the run whose folder is built at `partial`, named by its
/// run id.
fn run_schema(partial: &std::path::Path) -> String {
    let run_id = read_json(&partial.join("run.json"))["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    format!("runner_{run_id}")
}

/// A run of [`PG_SPEC`] on `url`, started in a fresh folder with `fault`
/// (a pause): the folder, which lives as long as the first value, the
/// running `runner exec` and the path of its `out.partial`.
fn paused_run(
    url: &str,
    fault: &str,
) -> (tempfile::TempDir, std::process::Child, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "pg", PG_SPEC);
    let child = spawn_exec(tmp.path(), &spec, "out", fault, Some(url));
    let partial = tmp.path().join("out.partial");
    (tmp, child, partial)
}

/// Nothing listens on port 1: the run fails before creating anything.
#[test]
fn a_database_that_is_down_before_the_run_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "pg", PG_SPEC);
    let o = exec(t, &spec, "out", None, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("error: cannot connect to PostgreSQL at 127.0.0.1:1 database \"bench\": "),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!t.join("out.partial").exists() && !t.join("out").exists());
}

/// The server drops the second fork's connection (pg_terminate_backend)
/// while that worker pauses: the fork fails naming the database error, the
/// first fork is kept, the run's schema is dropped, and resume finishes.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn a_database_connection_killed_mid_run_fails_the_fork_and_resumes() {
    let url = pg_url();
    use runner_db::pg::connect::connect;
    let (tmp, child, partial) = paused_run(&url, "pause=3000@cell=0,fork=1,pair=5");
    let t = tmp.path();
    wait_for("the first fork", Duration::from_secs(60), || {
        partial.join("forks").is_dir() && kept_forks(&partial) == [(0, 0)]
    });
    let schema = run_schema(&partial);
    let app = format!("runner worker {schema}");
    let (mut c, _) = connect(&url).unwrap();
    // The second worker in its pause: the one connection of the run's
    // workers (the first worker's has closed) that has been idle for a
    // while, which a worker timing its pairs never is (it runs a
    // statement every few hundred microseconds).
    let mut killed = 0;
    wait_for(
        "the paused worker's connection",
        Duration::from_secs(30),
        || {
            let row = c
                .query_one(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                 WHERE application_name = $1 AND state = 'idle' \
                 AND state_change < now() - interval '300 milliseconds' \
                 AND (SELECT count(*) FROM pg_stat_activity WHERE application_name = $1) = 1",
                    &[&app],
                )
                .unwrap();
            killed = row.get::<_, i64>(0);
            killed > 0
        },
    );
    let o = wait_output(child, Duration::from_secs(30));
    let err = stderr(&o);
    eprintln!("{err}");
    assert_eq!(o.status.code(), Some(1), "{err}");
    // One cell: its forks are named as forks.
    assert!(err.starts_with("error: fork 1 (job seed "), "{err}");
    assert!(err.contains("PostgreSQL"), "{err}");
    assert!(err.contains("--resume out.partial"), "{err}");
    assert_eq!(kept_forks(&partial), [(0, 0)]);
    let exists: i64 = c
        .query_one(
            "SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1",
            &[&schema],
        )
        .unwrap()
        .get(0);
    assert_eq!(exists, 0, "schema {schema} dropped");

    let jobs_before = read_json(&partial.join("run.json"))["jobs"].clone();
    let o = runner()
        .current_dir(t)
        .env("RUNNER_DATABASE_URL", &url)
        .args(printed_resume(&err))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let run = read_json(&t.join("out/run.json"));
    assert_eq!(run["jobs"], jobs_before);
    assert_eq!(run["forks"].as_array().unwrap().len(), 3);
    let exists: i64 = c
        .query_one(
            "SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1",
            &[&schema],
        )
        .unwrap()
        .get(0);
    assert_eq!(exists, 0, "schema {schema} dropped after the resumed run");
}

/// A schema named like the run's but not created by runner (here: made by
/// hand while the run waited to be resumed) is never touched: the resume
/// refuses with exit 1, the schema and its table survive, the finished fork
/// stays kept, and once the schema is gone the resume completes.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn a_foreign_schema_with_the_runs_name_is_refused_and_left_intact() {
    let url = pg_url();
    use runner_db::pg::connect::connect;
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "pg", PG_SPEC);
    let o = runner()
        .current_dir(t)
        .env("RUNNER_DATABASE_URL", &url)
        .env("RUNNER_FAULT", "exit=3@cell=0,fork=1")
        .args(["exec", spec.to_str().unwrap(), "--out", "out", "--quiet"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let partial = t.join("out.partial");
    assert_eq!(kept_forks(&partial), [(0, 0)]);
    let schema = run_schema(&partial);
    let (mut c, _) = connect(&url).unwrap();
    c.batch_execute(&format!(
        "CREATE SCHEMA {schema}; CREATE TABLE {schema}.keep_me (v int); INSERT INTO {schema}.keep_me VALUES (42);"
    ))
    .unwrap();

    let resume = |with_db: bool| {
        let mut cmd = runner();
        cmd.current_dir(t).env_remove("RUNNER_FAULT");
        if with_db {
            cmd.env("RUNNER_DATABASE_URL", &url);
        }
        cmd.args(printed_resume(&err)).output().unwrap()
    };
    let o = resume(true);
    let refused = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{refused}");
    assert!(refused.contains(&schema), "{refused}");
    let v: i32 = c
        .query_one(&format!("SELECT v FROM {schema}.keep_me"), &[])
        .unwrap()
        .get(0);
    assert_eq!(v, 42, "the foreign schema's table is untouched");
    assert_eq!(kept_forks(&partial), [(0, 0)]);

    c.batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .unwrap();
    let o = resume(true);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        read_json(&t.join("out/run.json"))["forks"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

/// A run started on the embedded SQLite does not resume on PostgreSQL (or the
/// other way round): its cells would mix forks of two systems.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn a_run_does_not_resume_on_another_database() {
    let url = pg_url();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let sqlite_spec = PG_SPEC.replace(
        "backend = \"postgres\"\nurl = \"postgres://bench:bench@127.0.0.1:1/bench\"",
        "backend = \"auto\"",
    );
    assert_ne!(sqlite_spec, PG_SPEC);
    let spec = write_spec(t, "lite", &sqlite_spec);
    let o = exec(t, &spec, "out", Some("exit=3@cell=0,fork=1"), &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let o = runner()
        .current_dir(t)
        .env("RUNNER_DATABASE_URL", &url)
        .args(printed_resume(&err))
        .output()
        .unwrap();
    let refused = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{refused}");
    assert!(
        refused.contains("this run started on sqlite but would resume on postgres at 127.0.0.1"),
        "{refused}"
    );
    assert_eq!(kept_forks(&t.join("out.partial")), [(0, 0)]);
    // Resumed as it started, it completes.
    let o = runner()
        .current_dir(t)
        .args(printed_resume(&err))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Another session holds a lock on the run's table. Before, the
/// worker waited for as long as the lock was held and runner ignored
/// Ctrl-C. Now the worker is stopped at once, a second Ctrl-C cuts the
/// schema's clean-up short (lock_timeout bounds it otherwise), and once the
/// lock is gone the run resumes.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn a_lock_held_on_the_runs_table_does_not_make_runner_ignore_ctrl_c() {
    let url = pg_url();
    use runner_db::pg::connect::connect;
    let (_tmp, child, partial) = paused_run(&url, "pause=1500@cell=0,fork=0,pair=5");
    wait_for("the run's folder", Duration::from_secs(30), || {
        partial.join("run.json").exists()
    });
    let schema = run_schema(&partial);
    let (mut c, _) = connect(&url).unwrap();
    // Lock the fork's table (the parent made it before the fork: cell 0,
    // fork 0, the A/A instance's slot `b`) while the worker pauses between
    // two previews.
    wait_for("the worker's table", Duration::from_secs(30), || {
        c.query_one(
            "SELECT to_regclass($1)::text",
            &[&format!("{schema}.model_field_c0_f0_b")],
        )
        .unwrap()
        .get::<_, Option<String>>(0)
        .is_some()
    });
    let mut tx = c.transaction().unwrap();
    tx.batch_execute(&format!(
        "LOCK TABLE {schema}.model_field_c0_f0_b IN ACCESS EXCLUSIVE MODE"
    ))
    .unwrap();
    let (mut watcher, _) = connect(&url).unwrap();
    wait_for(
        "the worker to wait for the lock",
        Duration::from_secs(30),
        || {
            let waiting: i64 = watcher
                .query_one("SELECT count(*) FROM pg_locks WHERE NOT granted", &[])
                .unwrap()
                .get(0);
            waiting > 0
        },
    );
    common::leftovers::send_signal(child.id() as i32, libc::SIGINT);
    // The first Ctrl-C cancels the worker's query; runner then drops the
    // run's schema, which waits on the same lock: the second Ctrl-C cuts
    // that short, as a user's would.
    wait_for(
        "runner's DROP SCHEMA to wait for the lock",
        Duration::from_secs(30),
        || {
            let waiting: i64 = watcher
                .query_one(
                    "SELECT count(*) FROM pg_stat_activity \
                     WHERE query LIKE 'DROP SCHEMA%' AND wait_event_type = 'Lock'",
                    &[],
                )
                .unwrap()
                .get(0);
            waiting > 0
        },
    );
    common::leftovers::send_signal(child.id() as i32, libc::SIGINT);
    let o = wait_output(child, Duration::from_secs(30));
    let err = stderr(&o);
    eprintln!("{err}");
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("interrupted (Ctrl-C or a termination signal) during fork 0"),
        "{err}"
    );
    // The worker's query, stuck on the lock, was cancelled on the server,
    // and the message says which lock it waited for and who held it.
    assert!(
        err.contains("on the database server, runner cancelled the query that PostgreSQL backend"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "on relation {schema}.model_field_c0_f0_b, held by backend"
        )),
        "{err}"
    );
    let drop = format!("DROP SCHEMA {schema} CASCADE");
    assert!(
        err.contains(&format!("drop it yourself with {drop}"))
            || err.contains("could not drop the run's schema"),
        "{err}"
    );
    // No fork had finished: nothing is kept that would block the next exec.
    assert!(!partial.exists(), "{err}");
    tx.rollback().unwrap();
    // What the message says to do works (the abandoned DROP may have
    // finished by itself once the lock was released).
    c.batch_execute(&drop.replace("DROP SCHEMA", "DROP SCHEMA IF EXISTS"))
        .unwrap();
}

/// The URL's password (`bench:bench@` in PG_SPEC
/// and in RUNNER_DATABASE_URL) is in no file of the run.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn the_servers_password_is_in_no_file() {
    let url = pg_url();
    let password = url
        .split("://")
        .nth(1)
        .and_then(|rest| rest.split('@').next())
        .and_then(|user_info| user_info.split_once(':'))
        .map(|(user, pw)| format!("{user}:{pw}@"))
        .expect("RUNNER_DATABASE_URL has a password");
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(
        t,
        "pg",
        &PG_SPEC.replace("postgres://bench:bench@127.0.0.1:1/bench", &url),
    );
    let o = runner()
        .current_dir(t)
        .env("RUNNER_DATABASE_URL", &url)
        .args(["exec", spec.to_str().unwrap(), "--out", "out", "--quiet"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    for (path, bytes) in tree(&t.join("out")) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(&password),
            "{password} in {}",
            path.display()
        );
    }
    let run = std::fs::read_to_string(t.join("out/run.json")).unwrap();
    assert!(run.contains(":***@"), "the URL is recorded, redacted");
}
