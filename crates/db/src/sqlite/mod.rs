//! The embedded backend: a private in-memory SQLite database per strategy
//! instance, so it needs nothing installed and no schema can be shared.

pub mod session;

use crate::model::{check_row_count, hash_rows, ModelTable};
use crate::preflight::PreflightError;
use crate::{DbError, DbInfo};
use runner_core::preview::{Model, Overrides};
use rusqlite::Connection;

const BEGIN: &str = "BEGIN";
const ROLLBACK: &str = "ROLLBACK";
const UPDATE: &str = "UPDATE model_field SET field_value = ?1 WHERE name = ?2";
const SELECT: &str = "SELECT name, field_value FROM model_field";

fn err(context: &'static str) -> impl FnOnce(rusqlite::Error) -> DbError {
    move |cause| DbError::Sqlite { context, cause }
}

/// A seeded `model_field` table in its own in-memory database.
///
/// Statements live in rusqlite's statement cache: they are compiled once in
/// [`SqliteTable::open`] and each preview only looks them up (no SQL parsing,
/// no allocation), which is what "prepared once" means with a borrowing API.
pub struct SqliteTable {
    conn: Connection,
    names: Vec<String>,
}

impl SqliteTable {
    pub fn open(model: &Model) -> Result<SqliteTable, DbError> {
        let mut conn = Connection::open_in_memory().map_err(err("open in-memory database"))?;
        conn.execute_batch(
            "CREATE TABLE model_field (name text PRIMARY KEY, field_value double precision NOT NULL)",
        )
        .map_err(err("create table model_field"))?;
        let tx = conn.transaction().map_err(err("seed model_field"))?;
        {
            let mut insert = tx
                .prepare("INSERT INTO model_field (name, field_value) VALUES (?1, ?2)")
                .map_err(err("seed model_field"))?;
            for (name, value) in model.fields() {
                insert
                    .execute(rusqlite::params![name, value])
                    .map_err(err("seed model_field"))?;
            }
        }
        tx.commit().map_err(err("seed model_field"))?;
        conn.set_prepared_statement_cache_capacity(8);
        for sql in [BEGIN, ROLLBACK, UPDATE, SELECT] {
            conn.prepare_cached(sql)
                .map_err(err("prepare statements"))?;
        }
        Ok(SqliteTable {
            conn,
            names: Overrides::field_names(model.plans() as u32),
        })
    }

    fn run(&mut self, sql: &'static str, context: &'static str) -> Result<(), DbError> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(err(context))?;
        stmt.execute([]).map_err(err(context))?;
        Ok(())
    }
}

impl ModelTable for SqliteTable {
    fn begin(&mut self) -> Result<(), DbError> {
        self.run(BEGIN, "begin")
    }

    fn write_overrides(&mut self, values: &[f64]) -> Result<(), DbError> {
        let mut stmt = self.conn.prepare_cached(UPDATE).map_err(err("update"))?;
        for (name, value) in self.names.iter().zip(values) {
            let n = stmt
                .execute(rusqlite::params![value, name])
                .map_err(err("update"))?;
            if n != 1 {
                return Err(DbError::Model(format!("no row for override field {name}")));
            }
        }
        Ok(())
    }

    fn read_into(&mut self, model: &mut Model) -> Result<(), DbError> {
        let mut stmt = self.conn.prepare_cached(SELECT).map_err(err("select"))?;
        let mut rows = stmt.query([]).map_err(err("select"))?;
        let mut count = 0;
        while let Some(row) = rows.next().map_err(err("select"))? {
            let name = row
                .get_ref(0)
                .and_then(|v| Ok(v.as_str()?))
                .map_err(err("select"))?;
            let value: f64 = row.get(1).map_err(err("select"))?;
            model.set(name, value).map_err(|e| DbError::Model(e.0))?;
            count += 1;
        }
        check_row_count(model, count)
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        self.run(ROLLBACK, "rollback")
    }

    fn content_hash(&mut self) -> Result<String, DbError> {
        let mut stmt = self.conn.prepare_cached(SELECT).map_err(err("select"))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, f64>(1)?)))
            .map_err(err("select"))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(err("select"))?;
        Ok(hash_rows(rows))
    }
}

pub(super) fn db_info() -> Result<DbInfo, DbError> {
    let conn = Connection::open_in_memory().map_err(err("open in-memory database"))?;
    let version: String = conn
        .query_row("SELECT sqlite_version()", [], |r| r.get(0))
        .map_err(err("read version"))?;
    Ok(DbInfo {
        backend: "sqlite".into(),
        version,
        postgres: None,
    })
}

/// Every table `private_copies` names is in the SQLite file (each arm
/// works in an in-memory copy of the whole file, so each already is a
/// private copy).
pub(crate) fn tables_exist(file: &str, copies: &[String]) -> Result<(), PreflightError> {
    let flags =
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn =
        Connection::open_with_flags(file, flags).map_err(|e| PreflightError::Unreadable {
            file: file.to_owned(),
            message: e.to_string(),
        })?;
    for given in copies {
        let name = crate::names::parse_name(given).ok_or_else(|| {
            PreflightError::Refused(format!(
                "[database] private_copies: {given:?} is not a table name"
            ))
        })?;
        let schema = name.schema.as_deref().unwrap_or("main");
        let found: i64 = conn
            .query_row(
                &format!(
                    "SELECT count(*) FROM \"{}\".sqlite_master WHERE type = 'table' AND lower(name) = lower(?1)",
                    schema.replace('"', "\"\"")
                ),
                [&name.name],
                |r| r.get(0),
            )
            .unwrap_or(0);
        if found == 0 {
            return Err(PreflightError::Refused(format!(
                "[database] private_copies names {given:?}, but {file} has no such table"
            )));
        }
    }
    Ok(())
}
