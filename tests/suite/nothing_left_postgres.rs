//! Nothing left behind on the database server: a fork stopped by its
//! timeout, Ctrl-C or SIGTERM has its queries cancelled and its sessions
//! ended before runner exits; `check` runs its trials in a schema it drops;
//! what rolled-back writes leave in a user's table is counted and said;
//! arms that wait on each other's locks say so. Each test runs the real
//! binary against the real server, in a database of its own.

use crate::common;
use common::leftovers::*;
use common::*;
use postgres::{Client, NoTls};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn client(url: &str) -> Client {
    Client::connect(url, NoTls).expect("connect")
}

/// The schemas runner made (`runner_<run id>`, `runner_check_<id>`) still
/// in the test's database.
fn runner_schemas(c: &mut Client) -> i64 {
    c.query_one(
        "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'runner\\_%'",
        &[],
    )
    .unwrap()
    .get(0)
}

/// Sessions in the test's database other than `c`'s own that run `like`.
fn running(c: &mut Client, like: &str) -> i64 {
    c.query_one(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
         AND pid <> pg_backend_pid() AND query LIKE $1",
        &[&like],
    )
    .unwrap()
    .get(0)
}

/// One arm that sleeps on the server far longer than any test waits.
fn sleeper(timeout_s: u64) -> String {
    format!(
        r#"
[strategies.s]
kind = "sql"
run = "SELECT pg_sleep(100)"
[design]
baseline = "s"
treatment = "s"
forks = 1
warmup_pairs = 0
pairs = 1
fork_timeout_s = {timeout_s}
"#
    )
}

fn runner_on(dir: &Path, url: &str, args: &[&str]) -> std::process::Command {
    let mut cmd = runner_std();
    cmd.current_dir(dir)
        .env("RUNNER_DATABASE_URL", url)
        .env_remove("RUNNER_FAULT")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// `runner check SPEC` on `url`, run to its end.
fn check_on(dir: &Path, url: &str, spec: &Path) -> std::process::Output {
    runner_on(dir, url, &["check", spec.to_str().unwrap()])
        .output()
        .unwrap()
}

/// After `fork_timeout_s` the server went on running the query (at 99 %
/// CPU, for hours, holding its locks) and runner exited only 10-14 s later.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn a_timed_out_query_is_cancelled_on_the_server() {
    let url = pg_url();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "sleeper", &sleeper(3));
    let started = Instant::now();
    let o = runner_on(
        t,
        &url,
        &["exec", spec.to_str().unwrap(), "--out", "o", "--quiet"],
    )
    .output()
    .unwrap();
    let took = started.elapsed();
    let err = err_of(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("after the fork timeout of 3 s (design.fork_timeout_s)"),
        "{err}"
    );
    assert!(
        err.contains("on the database server, runner cancelled the query that PostgreSQL backend")
            && err.contains("(`SELECT pg_sleep(100);`) and ended its session"),
        "{err}"
    );
    assert_eq!(running(&mut client(&url), "%pg_sleep(100)%"), 0);
    // The run's start and the fork's set-up come before its timeout; the
    // margin is one a loaded machine cannot break, and far below the
    // 100 s the query would have slept.
    assert!(took < Duration::from_secs(3 + 30), "{took:?}");
}

#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn ctrl_c_and_sigterm_cancel_the_running_query() {
    let url = pg_url();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "sleeper", &sleeper(600));
    let mut c = client(&url);
    for (command, signal) in [
        ("exec", libc::SIGINT),
        ("exec", libc::SIGTERM),
        ("check", libc::SIGTERM),
    ] {
        let mut args = vec![command, spec.to_str().unwrap()];
        if command == "exec" {
            args.extend(["--out", "o", "--quiet"]);
        }
        let child = runner_on(t, &url, &args).spawn().unwrap();
        wait_until("the query to run", Duration::from_secs(60), || {
            running(&mut c, "%pg_sleep(100)%") > 0
        });
        let (o, took) = signal_and_wait(child, signal, Duration::from_secs(30));
        let err = err_of(&o);
        assert_eq!(o.status.code(), Some(1), "{command}: {err}");
        assert_eq!(running(&mut c, "%pg_sleep(100)%"), 0, "{command}");
        if command == "exec" {
            assert!(
                err.contains("runner cancelled the query that PostgreSQL backend"),
                "{err}"
            );
        }
        // Answered in the time a loaded machine needs, not the query's 100 s.
        assert!(took < Duration::from_secs(15), "{command}: {took:?}");
        assert!(!t.join("o.partial").exists(), "{err}");
    }
    let schemas = runner_schemas(&mut c);
    assert_eq!(schemas, 0, "every run dropped its schema");
}

/// `check` on PostgreSQL ran no trials ("a guess from typical per-run
/// costs") and sized a gate from a guessed baseline. Its trials now run in
/// a schema it makes and drops, in transactions that are rolled back, and
/// a trial that runs into the fork timeout has its query cancelled.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn check_runs_its_trials_on_postgres_and_leaves_nothing() {
    let url = pg_url();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let mut c = client(&url);
    c.batch_execute(
        "CREATE TABLE public.users AS SELECT g AS id, g % 10 AS grp FROM generate_series(1, 500) g",
    )
    .unwrap();
    let spec = |setup: &str, b: &str| {
        format!(
            r#"
[strategies.a]
kind = "sql"
search_path = ["public"]
setup = "{setup}"
run = "SELECT count(*) FROM mine WHERE grp = 3"
[strategies.b]
kind = "sql"
search_path = ["public"]
setup = "{setup}"
run = "{b}"
[design]
baseline = "a"
treatment = "b"
fork_timeout_s = 3
[gate]
max_slowdown = "50%"
"#
        )
    };
    let setup = "CREATE TABLE mine AS SELECT * FROM users";
    let good = write_spec(
        t,
        "good",
        &spec(setup, "SELECT count(*) FROM mine WHERE grp + 0 = 3"),
    );
    let o = check_on(t, &url, &good);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", err_of(&o));
    let trial = out
        .lines()
        .find(|l| l.starts_with("trial "))
        .unwrap_or_else(|| panic!("no trial line: {out}"));
    assert!(trial.contains("`a`") && trial.contains("`b`"), "{trial}");
    assert!(
        out.contains("trial runs per arm after a first one"),
        "{out}"
    );
    // The gate's self-check is sized from the baseline the trials measured.
    let measured = trial
        .split("`a` ")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .unwrap()
        .trim();
    assert!(
        out.contains(&format!(
            "the trial runs' median baseline run of {measured}"
        )),
        "{out}"
    );
    // Outputs that differ: exit 2 before any run.
    let differ = write_spec(
        t,
        "differ",
        &spec(setup, "SELECT count(*) FROM mine WHERE grp < 4"),
    );
    let o = check_on(t, &url, &differ);
    assert_refused(
        &o,
        &["check's trial run found that baseline `a` (sql) and treatment `b` (sql) disagree"],
    );
    // A table `setup` cannot see: said before the run.
    let missing = write_spec(
        t,
        "missing",
        &spec("CREATE TABLE mine AS SELECT * FROM nosuch", "SELECT 1"),
    );
    let o = check_on(t, &url, &missing);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("trial       failed, as exec's first fork would:")
            && out.contains("relation \"nosuch\" does not exist"),
        "{out}"
    );
    // A trial that runs into the fork timeout: its query is cancelled.
    let sleeper = write_spec(t, "sleeper", &sleeper(2));
    let o = check_on(t, &url, &sleeper);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("runner cancelled the query"), "{out}");
    assert_eq!(running(&mut c, "%pg_sleep(100)%"), 0);
    let left = runner_schemas(&mut c);
    assert_eq!(left, 0, "check dropped the schemas of its trials");
}

/// `search_path` applied to `run` but not to `setup`, which could not see
/// the user's tables ("relation ... does not exist").
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn setup_sees_the_users_tables_through_search_path() {
    let url = pg_url();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    client(&url)
        .batch_execute("CREATE SCHEMA shop; CREATE TABLE shop.users AS SELECT g AS id FROM generate_series(1, 100) g")
        .unwrap();
    let spec = write_spec(
        t,
        "setup",
        r#"
[strategies.s]
kind = "sql"
search_path = ["shop"]
setup = "CREATE TABLE mine AS SELECT id FROM users WHERE id <= 10"
run = "SELECT count(*) FROM mine JOIN users USING (id)"
[design]
baseline = "s"
treatment = "s"
forks = 1
warmup_pairs = 0
pairs = 2
"#,
    );
    let o = runner_on(
        t,
        &url,
        &["exec", spec.to_str().unwrap(), "--out", "o", "--quiet"],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", err_of(&o));
}

/// A setup that UPDATEs every row of a user's table, rolled back as
/// promised, left 400,988 dead row versions and 25 MB, and the report said
/// the database "was unchanged".
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn a_rolled_back_update_is_reported_with_its_dead_rows() {
    let url = pg_url();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let mut c = client(&url);
    c.batch_execute(
        "CREATE TABLE public.acc (id int PRIMARY KEY, v int NOT NULL) WITH (autovacuum_enabled = off);
         INSERT INTO public.acc SELECT g, 0 FROM generate_series(1, 5000) g;",
    )
    .unwrap();
    c.batch_execute("VACUUM ANALYZE public.acc").unwrap();
    let sum = |c: &mut Client| -> i64 {
        c.query_one("SELECT sum(v)::bigint FROM public.acc", &[])
            .unwrap()
            .get(0)
    };
    let spec = write_spec(
        t,
        "update",
        r#"
[strategies.s]
kind = "sql"
search_path = ["public"]
setup = "UPDATE acc SET v = v + 1"
run = "SELECT sum(v) FROM acc"
[design]
baseline = "s"
treatment = "s"
forks = 2
warmup_pairs = 0
pairs = 2
"#,
    );
    let o = runner_on(
        t,
        &url,
        &["exec", spec.to_str().unwrap(), "--out", "o", "--quiet"],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", err_of(&o));
    assert_eq!(sum(&mut c), 0, "the content is as it was");
    let run = read_json(&t.join("o/run.json"));
    for f in run["forks"].as_array().unwrap() {
        let g = &f["database_guard"];
        assert_eq!(g["held"], true, "{g}");
        let r = &g["residue"][0];
        assert_eq!(r["table"], "public.acc", "{g}");
        assert!(r["dead_rows"].as_u64().unwrap() >= 5000, "{g}");
        assert!(r["bytes"].as_u64().unwrap() > 0, "{g}");
    }
    let report = std::fs::read_to_string(t.join("o/report.md")).unwrap();
    let line = report
        .lines()
        .find(|l| l.starts_with("- Your database:"))
        .unwrap();
    assert!(!line.contains("it was unchanged"), "{line}");
    assert!(
        line.contains(
            "its content was unchanged after every one of the 2 forks, but rolled-back writes left"
        ) && line.contains("dead row versions and")
            && line.contains("in public.acc, in 2 of 2 forks")
            && line.contains("until VACUUM reclaims them"),
        "{line}"
    );
}

/// Two arms that write the same rows in `setup` waited on each other's
/// locks in silence, until `fork_timeout_s` (1800 s by default).
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn arms_that_wait_on_each_others_locks_say_which_lock() {
    let url = pg_url();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    client(&url)
        .batch_execute(
            "CREATE TABLE public.acc AS SELECT g AS id, 0 AS v FROM generate_series(1, 100) g",
        )
        .unwrap();
    let arm = r#"kind = "sql"
search_path = ["public"]
setup = "UPDATE acc SET v = v + 1"
run = "SELECT sum(v) FROM acc""#;
    let spec = write_spec(
        t,
        "locks",
        &format!(
            "[strategies.a]\n{arm}\n[strategies.b]\n{arm}\n[design]\nbaseline = \"a\"\ntreatment = \"b\"\nforks = 1\nwarmup_pairs = 0\npairs = 2\n"
        ),
    );
    let started = Instant::now();
    let o = runner_on(
        t,
        &url,
        &["exec", spec.to_str().unwrap(), "--out", "o", "--quiet"],
    )
    .output()
    .unwrap();
    let err = err_of(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let warning = err
        .lines()
        .find(|l| l.starts_with("warning: cell 0 fork 0: PostgreSQL backend"))
        .unwrap_or_else(|| panic!("no lock warning: {err}"));
    assert!(
        warning.contains("(`UPDATE acc SET v = v + 1`) for a ShareLock on transaction")
            && warning.contains("held by backend")
            && warning.contains("`runner worker runner_")
            && warning.contains("the arms block each other"),
        "{warning}"
    );
    // Ended by the connections' lock_timeout (10 s), not the fork timeout.
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "{:?}",
        started.elapsed()
    );
}

/// Polls `pred` every 50 ms until it holds or `limit` passes.
fn poll_until(limit: Duration, mut pred: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if pred() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    pred()
}

/// Waits until the workers whose pids the clients' schemas carry
/// (`..._p<pid>`) have ended, as they do once their parent is killed.
fn workers_ended(schemas: &[String]) {
    for s in schemas {
        let Some(pid) = s.rsplit("_p").next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        poll_until(Duration::from_secs(10), || {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |st| {
                st.rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with('Z'))
            })
        });
    }
}

/// Schemas of this database whose name is LIKE `like`.
fn schemas_like(url: &str, like: &str) -> Vec<String> {
    client(url)
        .query(
            "SELECT nspname::text FROM pg_namespace WHERE nspname LIKE $1 ORDER BY 1",
            &[&like],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

/// Both arms with two concurrent clients and a private copy of the user's
/// table, each run sleeping long enough to be killed in the middle.
fn clients_and_copies() -> String {
    r#"
[database]
private_copies = ["public.orders"]
[strategies.a]
kind = "sql"
clients = 2
search_path = ["public"]
run = "SELECT count(*) FROM orders, pg_sleep(0.3) WHERE customer = {input} % 100"
[strategies.b]
kind = "sql"
clients = 2
search_path = ["public"]
run = "SELECT count(*) FROM orders, pg_sleep(0.3) WHERE customer + 0 = {input} % 100"
[design]
baseline = "a"
treatment = "b"
forks = 3
warmup_pairs = 1
pairs = 20
"#
    .into()
}

/// `kill -9` of `runner check` with a clients arm and private copies left
/// three schemas, each holding a full copy of the user's table, which a
/// later check did not remove: the next check drops them, saying so in
/// one line, and the user's table is as before.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn nothing_is_left_after_kill_9_of_check_with_clients_and_copies() {
    use super::database_doors::{orders, runner_schemas, user_objects};
    let url = pg_url();
    user_objects(&url);
    let before = orders(&url);
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "clients", &clients_and_copies());
    let mut child = runner_on(t, &url, &["check", spec.to_str().unwrap()])
        .spawn()
        .unwrap();
    let copies = poll_until(Duration::from_secs(60), || {
        schemas_like(&url, "runner\\_check\\_%\\_p%").len() >= 2
    });
    child.kill().unwrap();
    let _ = child.wait();
    assert!(copies, "the check never made its clients' schemas");
    let left = runner_schemas(&url);
    assert!(left.len() >= 3, "{left:?}");
    workers_ended(&left);
    // The next command that opens the database: another check.
    let plain = write_spec(
        t,
        "plain",
        "[strategies.s]\nkind = \"sql\"\nrun = \"SELECT 1\"\n[design]\nbaseline = \"s\"\ntreatment = \"s\"\n",
    );
    let o = check_on(t, &url, &plain);
    let err = err_of(&o);
    assert!(o.status.success(), "{err}");
    let said: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("note: dropped"))
        .collect();
    assert_eq!(said.len(), 1, "{err}");
    for s in &left {
        assert!(said[0].contains(s.as_str()), "{s} not in {}", said[0]);
    }
    assert!(
        runner_schemas(&url).is_empty(),
        "{:?}",
        runner_schemas(&url)
    );
    assert_eq!(orders(&url), before);
}

/// exec's kill -9 left the clients' `_b_p<pid>`/`_t_p<pid>` schemas and
/// the run's own: `runner clean` drops all of them, says which, and leaves
/// the user's table as it was.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn runner_clean_drops_what_exec_left_after_kill_9() {
    use super::database_doors::{orders, runner_schemas, user_objects};
    let url = pg_url();
    user_objects(&url);
    let before = orders(&url);
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "clients", &clients_and_copies());
    let mut child = runner_on(
        t,
        &url,
        &["exec", spec.to_str().unwrap(), "--quiet", "--out", "o"],
    )
    .spawn()
    .unwrap();
    let copies = poll_until(Duration::from_secs(60), || {
        schemas_like(&url, "runner\\_%\\_p%").len() >= 2
    });
    child.kill().unwrap();
    let _ = child.wait();
    assert!(copies, "exec never made its clients' schemas");
    let left = runner_schemas(&url);
    assert!(left.len() >= 3, "{left:?}");
    workers_ended(&left);
    let o = runner_on(t, &url, &["clean"]).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", err_of(&o));
    for s in &left {
        assert!(
            out.lines()
                .any(|l| l.contains(s.as_str()) && l.ends_with(": dropped")),
            "{s}: {out}"
        );
    }
    assert!(
        runner_schemas(&url).is_empty(),
        "{:?}",
        runner_schemas(&url)
    );
    assert_eq!(orders(&url), before);
}

/// After `kill -9` of exec's parent a running statement went on to its
/// end on the server: with `client_connection_check_interval` the server
/// ends it within a few seconds of its client's death (the statement
/// would sleep 100 s, beyond the 60 s statement_timeout).
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn a_killed_runners_statement_ends_on_the_server() {
    let url = pg_url();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "sleeper", &sleeper(600));
    let mut child = runner_on(
        t,
        &url,
        &["exec", spec.to_str().unwrap(), "--out", "o", "--quiet"],
    )
    .spawn()
    .unwrap();
    let mut c = client(&url);
    let version: i32 = c
        .query_one("SELECT current_setting('server_version_num')::int", &[])
        .unwrap()
        .get(0);
    let sleeping = poll_until(Duration::from_secs(60), || {
        running(&mut c, "%pg_sleep(100)%") > 0
    });
    child.kill().unwrap();
    let _ = child.wait();
    assert!(sleeping, "the statement never started");
    let killed = Instant::now();
    let ended = poll_until(Duration::from_secs(30), || {
        running(&mut c, "%pg_sleep(100)%") == 0
    });
    // No such setting before PostgreSQL 14: there statement_timeout ends
    // the statement, later than this test waits.
    if version >= 140000 {
        assert!(ended, "the statement still runs");
        assert!(
            killed.elapsed() < Duration::from_secs(15),
            "{:?}",
            killed.elapsed()
        );
    }
    // The schema it left goes with the next command.
    let o = runner_on(t, &url, &["clean"]).output().unwrap();
    assert!(o.status.success(), "{}", err_of(&o));
    assert_eq!(runner_schemas(&mut c), 0);
}

/// `runner clean` drops only schemas that carry runner's marker and whose
/// owner is known to be gone on this host; it keeps one whose owner runs,
/// one made on another host and one from before owners were recorded
/// (`--schema` drops those two), refuses `--schema` of a live owner's
/// (exit 2), and never lists a schema of the user's.
#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn runner_clean_lists_and_drops_only_schemas_whose_owner_is_gone() {
    use runner_db::owner::Owner;
    let url = pg_url();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let me = Owner::me("t_alive");
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let gone_pid = gone.id();
    gone.wait().unwrap();
    let owners = [
        (
            "runner_t_gone",
            Some(Owner {
                run: "t_gone".into(),
                pid: gone_pid,
                ..me.clone()
            }),
        ),
        (
            "runner_t_reused",
            Some(Owner {
                run: "t_reused".into(),
                started: me.started + 7,
                ..me.clone()
            }),
        ),
        ("runner_t_alive", Some(me.clone())),
        (
            "runner_t_elsewhere",
            Some(Owner {
                run: "t_elsewhere".into(),
                host: "another-host".into(),
                ..me.clone()
            }),
        ),
        ("runner_t_old", None),
    ];
    let mut c = client(&url);
    for (schema, owner) in &owners {
        let comment = match owner {
            Some(o) => format!("created by runner for its run schema {schema}; owner: {o}"),
            None => format!("created by runner for its run schema {schema}"),
        };
        c.batch_execute(&format!(
            "CREATE SCHEMA {schema}; CREATE TABLE {schema}.copy (x int); COMMENT ON SCHEMA {schema} IS '{comment}'"
        ))
        .unwrap();
    }
    // The user's own: no marker, or another schema's marker.
    c.batch_execute(
        "CREATE SCHEMA runner_mine; CREATE SCHEMA runner_fake; \
         COMMENT ON SCHEMA runner_fake IS 'created by runner for its run schema runner_other'",
    )
    .unwrap();
    let clean = |args: &[&str]| {
        let mut all = vec!["clean"];
        all.extend_from_slice(args);
        runner_on(t, &url, &all).output().unwrap()
    };
    let o = clean(&["--list"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{}", err_of(&o));
    assert_eq!(out.lines().count(), 6, "{out}");
    assert!(
        !out.contains("runner_mine") && !out.contains("runner_fake"),
        "{out}"
    );
    assert_eq!(
        schemas_like(&url, "runner\\_t\\_%").len(),
        5,
        "--list drops nothing"
    );
    let o = clean(&["--schema", "runner_t_alive"]);
    assert_eq!(o.status.code(), Some(2), "{}", err_of(&o));
    assert!(
        err_of(&o).contains("its owner still runs"),
        "{}",
        err_of(&o)
    );
    let o = clean(&[]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{}", err_of(&o));
    assert!(out.contains("dropped 2 of 5"), "{out}");
    assert_eq!(
        schemas_like(&url, "runner\\_%"),
        [
            "runner_fake",
            "runner_mine",
            "runner_t_alive",
            "runner_t_elsewhere",
            "runner_t_old"
        ]
    );
    let o = clean(&["--schema", "runner_t_elsewhere", "--schema", "runner_t_old"]);
    assert!(o.status.success(), "{}", err_of(&o));
    assert_eq!(
        schemas_like(&url, "runner\\_%"),
        ["runner_fake", "runner_mine", "runner_t_alive"]
    );
    let o = clean(&["--schema", "runner_mine"]);
    assert_eq!(o.status.code(), Some(2), "{}", err_of(&o));
}
