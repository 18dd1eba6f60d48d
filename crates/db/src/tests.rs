use super::*;
use runner_core::preview::Model;

fn cfg(backend: Backend, url: Option<&str>) -> DatabaseConfig {
    DatabaseConfig {
        backend,
        url: url.map(str::to_owned),
        sqlite_file: None,
        ..DatabaseConfig::default()
    }
}

fn pg(url: &str) -> Option<DbTarget> {
    Some(DbTarget::Postgres {
        url: url.into(),
        schema: "runner_r1".into(),
    })
}

#[test]
fn resolve_follows_backend_env_and_url() {
    let (env, file) = ("postgres://e@h/db", "postgres://f@h/db");
    let r = |b, url, env| resolve_with(&cfg(b, url), env, "r1").unwrap();
    assert_eq!(r(Backend::Auto, None, None), Some(DbTarget::Sqlite));
    assert_eq!(r(Backend::Auto, None, Some("")), Some(DbTarget::Sqlite));
    assert_eq!(r(Backend::Auto, Some(file), None), pg(file));
    assert_eq!(r(Backend::Auto, Some(file), Some(env)), pg(env));
    assert_eq!(r(Backend::Auto, Some(file), Some("  ")), pg(file));
    assert_eq!(r(Backend::Postgres, None, Some(env)), pg(env));
    assert_eq!(r(Backend::Postgres, None, None), None);
    assert_eq!(
        r(Backend::Sqlite, Some(file), Some(env)),
        Some(DbTarget::Sqlite)
    );
}

#[test]
fn run_ids_must_make_plain_identifiers() {
    assert_eq!(schema_name("ab_12").unwrap(), "runner_ab_12");
    for bad in ["", "A", "a-b", "a;drop", &"x".repeat(51)] {
        assert!(
            matches!(schema_name(bad), Err(DbError::BadRunId(_))),
            "{bad}"
        );
    }
}

#[test]
fn debug_and_display_hide_the_password() {
    let t = DbTarget::Postgres {
        url: "postgres://bench:s3cret@127.0.0.1:5433/bench".into(),
        schema: "runner_x".into(),
    };
    for s in [format!("{t}"), format!("{t:?}")] {
        assert!(!s.contains("s3cret"), "{s}");
        // Only the PostgreSQL client parses the URL to name its server.
        #[cfg(feature = "postgres")]
        assert!(s.contains("127.0.0.1:5433"), "{s}");
    }
}

#[test]
fn hash_ignores_row_order_and_sees_one_ulp() {
    let rows = Model::new(3).fields();
    let mut shuffled = rows.clone();
    shuffled.reverse();
    assert_eq!(hash_rows(rows.clone()), hash_rows(shuffled));
    let mut bumped = rows.clone();
    bumped[5].1 = f64::from_bits(bumped[5].1.to_bits() + 1);
    assert_ne!(hash_rows(rows.clone()), hash_rows(bumped));
    assert_eq!(hash_rows(rows).len(), 64);
}

#[cfg(feature = "sqlite")]
#[test]
fn sqlite_preview_reads_back_the_overrides_and_rolls_back() {
    use crate::open;
    use runner_core::preview::{Calculator, Overrides};
    let model = Model::new(5);
    let mut table = open::table(&DbTarget::Sqlite, &model, None).unwrap();
    let seeded = table.content_hash().unwrap();
    assert_eq!(seeded, hash_rows(model.fields()));

    let o = Overrides { delta: 0.03 };
    let mut values = vec![0.0; Overrides::field_count(5)];
    o.write_values(5, &mut values);
    let mut read = model.clone();
    table.begin().unwrap();
    table.write_overrides(&values).unwrap();
    table.read_into(&mut read).unwrap();
    table.rollback().unwrap();

    let mut expected = model.clone();
    o.apply(&mut expected);
    assert_eq!(read, expected);
    assert_eq!(
        Calculator::new(12).calculate(&read),
        Calculator::new(12).calculate(&expected)
    );
    assert_eq!(table.content_hash().unwrap(), seeded);
}

#[cfg(feature = "sqlite")]
#[test]
fn sqlite_info_has_a_version() {
    use crate::open;
    let info = open::info(&DbTarget::Sqlite).unwrap();
    assert_eq!(info.backend, "sqlite");
    assert!(info.version.starts_with('3'), "{}", info.version);
}

#[cfg(feature = "postgres")]
#[test]
fn connect_errors_name_host_port_and_database() {
    // Port 1 on localhost: nothing listens there, so the refusal is immediate.
    let err = crate::pg::connect::connect("postgres://bench:pw@127.0.0.1:1/bench")
        .err()
        .unwrap();
    let msg = err.to_string();
    assert!(
        msg.starts_with("cannot connect to PostgreSQL at 127.0.0.1:1 database \"bench\": "),
        "{msg}"
    );
    assert!(!msg.contains("pw"), "{msg}");
}

/// The masked URL the report and messages show still parses as a
/// connection string (the masking lives in runner-core, which has no
/// PostgreSQL client to try it with).
#[cfg(feature = "postgres")]
#[test]
fn a_masked_url_still_parses() {
    let once = runner_core::redact::secrets("postgres://bench:pw@127.0.0.1:5432/bench");
    assert!(once.parse::<postgres::Config>().is_ok());
    assert!(!runner_core::redact::has_secret(&once));
}
