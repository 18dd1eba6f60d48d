use super::*;

const PG: SqlDialect = SqlDialect::Postgres;
const LITE: SqlDialect = SqlDialect::Sqlite;

fn pieces(sql: &str, d: SqlDialect) -> Vec<&str> {
    split(sql, d)
        .unwrap()
        .into_iter()
        .map(|r| &sql[r])
        .collect()
}

#[test]
fn splits_on_semicolons_outside_strings_comments_and_dollar_quotes() {
    let sql = "SELECT ';' AS a; -- c;\n/* x; */ SELECT 2 ;; DO $$ BEGIN PERFORM 1; END $$";
    assert_eq!(
        pieces(sql, PG),
        [
            "SELECT ';' AS a",
            "SELECT 2",
            "DO $$ BEGIN PERFORM 1; END $$"
        ]
    );
    assert_eq!(pieces("SELECT 1", LITE), ["SELECT 1"]);
    assert!(pieces("  -- only a comment\n", LITE).is_empty());
    assert_eq!(
        pieces("SELECT 'é';\nSELECT 2", LITE),
        ["SELECT 'é'", "SELECT 2"]
    );
}

#[test]
fn refuses_transaction_control_in_measured_sql() {
    // (SQL, what the message names, where the refused statement starts)
    for (sql, word, start) in [
        ("SELECT 1; COMMIT", "COMMIT", 10),
        ("UPDATE t SET a = 1;\nEND", "END", 20),
        ("BEGIN; SELECT 1", "BEGIN", 0),
        ("START TRANSACTION", "START", 0),
        ("SELECT 1;\n  ROLLBACK", "ROLLBACK", 12),
        ("SAVEPOINT s", "SAVEPOINT", 0),
        ("RELEASE SAVEPOINT s", "RELEASE", 0),
        (
            "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
            "SET TRANSACTION",
            0,
        ),
        ("abort", "ROLLBACK", 0),
        ("VACUUM", "VACUUM", 0),
    ] {
        let e = check(sql, PG, SqlRole::Run).unwrap_err();
        assert!(e.message.contains(word), "{sql}: {}", e.message);
        assert_eq!(e.offset, start, "{sql}");
    }
    assert!(check("ATTACH 'x.db' AS x", LITE, SqlRole::Run).is_err());
    assert!(check("PRAGMA journal_mode = wal", LITE, SqlRole::Run).is_err());
    assert!(check("", LITE, SqlRole::Run)
        .unwrap_err()
        .message
        .contains("no SQL statement"));
}

#[test]
fn accepts_ordinary_measured_sql_including_writes() {
    let sql = "UPDATE public.orders SET qty = qty + 1 WHERE id = 5;\n\
               SELECT count(*) FROM orders o WHERE EXISTS (SELECT 1 FROM items i WHERE i.o = o.id);\n\
               INSERT INTO other.t VALUES (1)";
    assert_eq!(check(sql, PG, SqlRole::Run), Ok(3));
    assert_eq!(check(sql, LITE, SqlRole::Run), Ok(3));
    // Not parsed by sqlparser, not transaction control: accepted.
    assert_eq!(
        check("SELECT 1 FROM t TABLESAMPLE WEIRD", PG, SqlRole::Run),
        Ok(1)
    );
}

#[test]
fn setup_is_held_to_the_rules_of_measured_sql() {
    // Writes anywhere are accepted: they are rolled back with the fork.
    let ok = "CREATE TABLE t (id int); INSERT INTO t SELECT id FROM public.src;\n\
              CREATE INDEX t_id ON t (id); ANALYZE t; UPDATE public.t SET id = id; SET LOCAL work_mem = '8MB'";
    assert_eq!(check(ok, PG, SqlRole::Setup), Ok(6));
    for bad in ["COMMIT", "VACUUM", "BEGIN", "SELECT 1; END"] {
        assert!(check(bad, PG, SqlRole::Setup).is_err(), "{bad}");
    }
    assert!(check("ATTACH 'x.db' AS x", LITE, SqlRole::Setup).is_err());
    assert!(check("VACUUM INTO '/tmp/x.db'", LITE, SqlRole::Setup).is_err());
    assert_eq!(
        check("PRAGMA foreign_keys = ON", LITE, SqlRole::Setup),
        Ok(1)
    );
    assert!(check("PRAGMA foreign_keys = ON", LITE, SqlRole::Run).is_err());
}

#[test]
fn refuses_what_postgresql_does_not_roll_back() {
    for (sql, word) in [
        ("SELECT nextval('vseq') > 0", "nextval"),
        ("SELECT setval('public.vseq', 9999)", "setval"),
        (
            "SELECT x FROM t WHERE x > pg_catalog.NEXTVAL('s')",
            "nextval",
        ),
        ("INSERT INTO t SELECT setval('s', 1)", "setval"),
        ("SELECT * FROM nextval('s')", "nextval"),
        ("COPY t TO PROGRAM 'touch /tmp/pwn'", "PROGRAM"),
        ("COPY t TO '/tmp/out.csv'", "/tmp/out.csv"),
        ("COPY t FROM '/etc/passwd'", "/etc/passwd"),
        ("SELECT lo_export(1, '/tmp/x')", "lo_export"),
        ("SELECT lo_import('/etc/passwd')", "lo_import"),
        ("SELECT pg_advisory_lock(1)", "pg_advisory_lock"),
        (
            "SELECT pg_try_advisory_xact_lock(1)",
            "pg_try_advisory_xact_lock",
        ),
        ("NOTIFY ch", "NOTIFY"),
        ("LISTEN ch", "LISTEN"),
        ("SELECT pg_notify('ch', 'x')", "pg_notify"),
        (
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity",
            "pg_terminate_backend",
        ),
        (
            "SELECT * FROM dblink('dbname=x', 'DELETE FROM v') AS t(a int)",
            "dblink",
        ),
        (
            "SELECT dblink_exec('dbname=x', 'DELETE FROM v')",
            "dblink_exec",
        ),
        ("WITH d AS (SELECT nextval('s')) SELECT * FROM d", "nextval"),
        ("SELECT pg_stat_reset()", "pg_stat_reset"),
    ] {
        let e = check(sql, PG, SqlRole::Run).unwrap_err();
        assert!(e.message.contains(word), "{sql}: {}", e.message);
        assert!(check(sql, PG, SqlRole::Setup).is_err(), "setup: {sql}");
    }
    // Reading a sequence, COPY to the client and transactional writes stay.
    for ok in [
        "SELECT currval('s')",
        "SELECT last_value FROM s",
        "COPY t TO STDOUT",
        "SELECT set_config('work_mem', '8MB', true)",
        "WITH d AS (DELETE FROM public.victim RETURNING id) INSERT INTO t SELECT id FROM d",
    ] {
        assert_eq!(check(ok, PG, SqlRole::Run), Ok(1), "{ok}");
    }
    // SQLite has no such functions; the names mean nothing there.
    assert_eq!(check("SELECT nextval FROM t", LITE, SqlRole::Run), Ok(1));
}

#[test]
fn sql_that_sets_search_path_is_refused_naming_the_statement() {
    for role in [SqlRole::Run, SqlRole::Setup] {
        for (sql, words, start) in [
            (
                "SELECT 1; SET LOCAL search_path TO public",
                "SET LOCAL search_path",
                10,
            ),
            ("SET search_path = public", "SET search_path", 0),
            ("RESET ALL", "RESET ALL", 0),
            (
                "SELECT 1;\nSELECT set_config('search_path', 'public', true)",
                "set_config('search_path', ...)",
                10,
            ),
            (
                "DO $$ BEGIN PERFORM set_config('search_path', 'public', true); END $$",
                "set_config('search_path', ...)",
                0,
            ),
        ] {
            let e = check(sql, PG, role).unwrap_err();
            assert!(e.message.starts_with(words), "{sql}: {}", e.message);
            assert!(e.message.contains("`search_path` key"), "{}", e.message);
            assert_eq!(e.offset, start, "{sql}");
        }
    }
    // SQLite has no search_path; the words mean nothing there.
    assert_eq!(check("SELECT 'SET search_path'", LITE, SqlRole::Run), Ok(1));
}
