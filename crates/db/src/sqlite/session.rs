//! The `sql` strategy on SQLite: a private in-memory database per strategy
//! instance, empty or a copy of `database.sqlite_file` made with SQLite's
//! backup API from a read-only connection, so the user's file is never
//! written (not even a journal). It cannot attach another database (the
//! attach limit is 0), so it writes no file at all.
//!
//! Statements are compiled once and kept in rusqlite's statement cache
//! while their text stays the same (a statement using `{input}` is compiled
//! per run). A run steps through every row of every statement: with SQLite
//! the rows are computed as they are read, so reading them, and hashing
//! their values into the fingerprint, is part of the timed region.

use crate::plans::StatementPlan;
use crate::session::{tag, Digest, SqlSession, StatementRows};
use crate::DbError;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

fn err(context: &'static str) -> impl FnOnce(rusqlite::Error) -> DbError {
    move |cause| DbError::Sqlite { context, cause }
}

/// A measured statement's error: SQLite's refusal of the statement,
/// with its extended result code, or any other failure as it is.
fn statement(e: rusqlite::Error) -> DbError {
    match e {
        rusqlite::Error::SqliteFailure(f, message) => DbError::Statement {
            backend: "SQLite",
            code: format!("SQLITE_{}", f.extended_code),
            message: message.unwrap_or_else(|| f.to_string()),
        },
        cause => DbError::Sqlite {
            context: "measured SQL",
            cause,
        },
    }
}

pub struct SqliteSession {
    conn: Connection,
}

impl SqliteSession {
    pub fn open(copy_of: Option<&str>, setup: Option<&str>) -> Result<SqliteSession, DbError> {
        let mut conn = Connection::open_in_memory().map_err(err("open in-memory database"))?;
        if let Some(file) = copy_of {
            let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
            let src = Connection::open_with_flags(file, flags)
                .map_err(err("open database.sqlite_file read-only"))?;
            rusqlite::backup::Backup::new(&src, &mut conn)
                .and_then(|b| b.run_to_completion(1024, std::time::Duration::ZERO, None))
                .map_err(err("copy database.sqlite_file into memory"))?;
        }
        // No other database can be attached: ATTACH (and VACUUM INTO, which
        // attaches its output) fail inside SQLite itself, whatever the SQL
        // says, so the only database the user's SQL can write is this
        // private in-memory one. Extension loading stays off (rusqlite
        // never enables it), so load_extension() is refused too.
        conn.set_limit(rusqlite::limits::Limit::SQLITE_LIMIT_ATTACHED, 0);
        if let Some(sql) = setup {
            conn.execute_batch(sql).map_err(err("setup"))?;
        }
        conn.set_prepared_statement_cache_capacity(64);
        Ok(SqliteSession { conn })
    }
}

fn text(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Null => None,
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Real(f) => Some(format!("{f:?}")),
        ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Some(format!("x'{}'", runner_core::hex::hex(b))),
    }
}

impl SqlSession for SqliteSession {
    fn begin(&mut self) -> Result<(), DbError> {
        self.conn
            .prepare_cached("BEGIN")
            .and_then(|mut s| s.execute([]))
            .map(|_| ())
            .map_err(err("begin"))
    }

    fn run(
        &mut self,
        statements: &[String],
        mut collect: Option<&mut Vec<StatementRows>>,
    ) -> Result<u64, DbError> {
        let mut digest = Digest::default();
        for sql in statements {
            let mut stmt = self.conn.prepare_cached(sql).map_err(statement)?;
            let columns = stmt.column_count();
            let mut rows = stmt.raw_query();
            let mut kept: StatementRows = Vec::new();
            while let Some(row) = rows.next().map_err(statement)? {
                digest.start_row();
                let mut as_text = Vec::new();
                for i in 0..columns {
                    let v = row.get_ref(i).map_err(statement)?;
                    match v {
                        ValueRef::Null => digest.value(tag::NULL, &[]),
                        ValueRef::Integer(i) => digest.value(tag::INTEGER, &i.to_le_bytes()),
                        ValueRef::Real(f) => digest.value(tag::REAL, &f.to_bits().to_le_bytes()),
                        ValueRef::Text(t) => digest.value(tag::TEXT, t),
                        ValueRef::Blob(b) => digest.value(tag::BLOB, b),
                    }
                    if collect.is_some() {
                        as_text.push(text(v));
                    }
                }
                digest.end_row();
                if collect.is_some() {
                    kept.push(as_text);
                }
            }
            digest.end_statement();
            if let Some(c) = collect.as_deref_mut() {
                c.push(kept);
            }
        }
        Ok(digest.finish())
    }

    /// `EXPLAIN QUERY PLAN` of each statement, then the statement itself
    /// (so the next sees its effect), inside a transaction rolled back
    /// after the last.
    fn explain(&mut self, statements: &[String]) -> Result<Vec<StatementPlan>, DbError> {
        self.begin()?;
        let mut plans = Vec::new();
        for sql in statements {
            let mut query_plan = Vec::new();
            {
                let mut stmt = self
                    .conn
                    .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                    .map_err(err("EXPLAIN QUERY PLAN"))?;
                let mut rows = stmt.raw_query();
                while let Some(row) = rows.next().map_err(err("EXPLAIN QUERY PLAN"))? {
                    let detail: String = row.get(3).map_err(err("EXPLAIN QUERY PLAN"))?;
                    query_plan.push(detail);
                }
            }
            self.run(std::slice::from_ref(sql), None)?;
            plans.push(StatementPlan {
                statement: sql.clone(),
                json: None,
                query_plan,
            });
        }
        self.rollback()?;
        Ok(plans)
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        if self.conn.is_autocommit() {
            return Err(DbError::TransactionEnded("a measured run"));
        }
        self.conn
            .prepare_cached("ROLLBACK")
            .and_then(|mut s| s.execute([]))
            .map(|_| ())
            .map_err(err("rollback"))
    }
}
