//! tx-rollback through the real binary: on the embedded SQLite that needs
//! nothing installed, and on a real PostgreSQL when RUNNER_DATABASE_URL is set
//! (ignored otherwise and counted so by `cargo test`; a failure under
//! RUNNER_REQUIRE_POSTGRES=1).

use crate::common;
use common::*;

const ROLLBACK_AA: &str = r#"
seed = 5
[workload]
plans = 6
months = 12
[strategies.rb]
kind = "tx-rollback"
[design]
baseline = "rb"
treatment = "rb"
forks = 2
warmup_pairs = 3
pairs = 30
[grid]
delay_us = [0, 100]
[analysis]
resamples = 200
"#;

/// Every fork's table hash after the last preview equals the seeded one, and
/// the checks found the preview equal to the in-memory calculation.
fn assert_clean_forks(run: &serde_json::Value) {
    let forks = run["forks"].as_array().unwrap();
    assert_eq!(forks.len(), 4);
    for f in forks {
        assert!(f["seeded_hash"].is_string(), "{f}");
        assert_eq!(f["seeded_hash"], f["final_hash"], "{f}");
        assert_eq!(f["checks"]["matches_in_memory"], true, "{f}");
    }
}

#[test]
fn tx_rollback_runs_on_embedded_sqlite_without_any_setup() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "rb", ROLLBACK_AA);
    let out = exec_ok(tmp.path(), &spec, "out", &[]);
    let run = read_json(&out.join("run.json"));
    assert_eq!(run["database"]["backend"], "sqlite");
    assert_clean_forks(&run);
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("- Database: embedded SQLite 3."),
        "{report}"
    );
    assert!(report.contains("equals the in-memory calculation bit for bit; they agreed"));
}

#[test]
#[cfg_attr(not(runner_postgres), ignore = "SKIPPED: RUNNER_DATABASE_URL not set")]
fn tx_rollback_on_postgres_leaves_the_table_unchanged_and_drops_its_schema() {
    let url = pg_url();
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "rb", ROLLBACK_AA);
    let out = tmp.path().join("out");
    runner()
        .current_dir(tmp.path())
        .env("RUNNER_DATABASE_URL", &url)
        .args(["exec", spec.to_str().unwrap(), "--quiet", "--out"])
        .arg(&out)
        .assert()
        .success();
    let run = read_json(&out.join("run.json"));
    assert_eq!(run["database"]["backend"], "postgres");
    assert!(run["database"]["version"]
        .as_str()
        .unwrap()
        .starts_with("PostgreSQL"));
    assert_clean_forks(&run);
    // runner's own tx-rollback runs only runner's statements: the database
    // guard, which checks what the user's SQL or commands did, is not run.
    for f in run["forks"].as_array().unwrap() {
        assert!(f.get("database_guard").is_none(), "{f}");
    }
    assert!(
        !serde_json::to_string(&run).unwrap().contains(&url),
        "the URL (and its password) must not be recorded"
    );
    let schema = format!("runner_{}", run["run_id"].as_str().unwrap());
    let (mut c, _) = runner_db::pg::connect::connect(&url).unwrap();
    let n: i64 = c
        .query_one(
            "SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1",
            &[&schema],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 0, "schema {schema} was left behind");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("- Database: PostgreSQL "), "{report}");
    // The Reproduce command names the server (never its password).
    let ep = runner_db::pg::connect::Endpoint::parse(&url).unwrap();
    let user = ep.user.as_deref().unwrap_or("");
    assert!(
        report.contains(&format!(
            "RUNNER_DATABASE_URL=postgres://{user}@{}:{}/{} {} exec",
            ep.host,
            ep.port,
            ep.database,
            assert_cmd::cargo::cargo_bin("runner").display()
        )),
        "{report}"
    );
}
