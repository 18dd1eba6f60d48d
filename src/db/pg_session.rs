//! The `sql` strategy on PostgreSQL: each strategy instance works in a
//! schema of its own, `runner_<run id>_<slot>` (slot `b` or `t`), created
//! per fork with runner's marker and dropped after it; runner refuses a
//! schema of that name it did not make.
//!
//! Setup runs statement by statement, each committed, with the search path
//! set to that schema alone, so unqualified names land there. Measured runs
//! see the schema first, then the user's `search_path` (their tables, to
//! read; a write to them is rolled back with the run). A run sends its
//! statements as one simple-protocol query (one round trip; the server
//! parses and plans them every time, as psql would) between an untimed
//! `BEGIN` and an untimed `ROLLBACK`. Values arrive as text.

use super::postgres::{check_ours, connect, marker, pg, schema_comment};
use super::session::{tag, Digest, SqlSession, StatementRows};
use super::statements::{split, SqlDialect};
use super::DbError;
use postgres::{Client, SimpleQueryMessage};

/// The slots a per-arm schema can have: baseline, treatment.
pub(super) const SLOTS: [&str; 2] = ["b", "t"];

pub struct PgSession {
    client: Client,
    schema: String,
    joined: String,
}

fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

impl PgSession {
    pub fn open(
        url: &str,
        run_schema: &str,
        slot: &str,
        search_path: &[String],
        setup: Option<&str>,
    ) -> Result<PgSession, DbError> {
        if !SLOTS.contains(&slot) {
            return Err(DbError::BadRunId(format!("{run_schema}_{slot}")));
        }
        let (mut client, _) = connect(url)?;
        if !check_ours(&mut client, run_schema)? {
            return Err(DbError::NotOurSchema(run_schema.to_owned()));
        }
        // The run schema's name is validated to [a-z0-9_], so it needs no quoting.
        let schema = format!("{run_schema}_{slot}");
        match schema_comment(&mut client, &schema)? {
            None => {}
            Some(Some(c)) if c == marker(&schema) => client
                .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
                .map_err(pg("drop the previous fork's schema"))?,
            Some(_) => return Err(DbError::NotOurSchema(schema)),
        }
        client
            .batch_execute(&format!(
                "BEGIN; CREATE SCHEMA {schema}; COMMENT ON SCHEMA {schema} IS '{}'; COMMIT; \
                 SET application_name TO 'runner worker {schema}'; SET search_path TO {schema}",
                marker(&schema)
            ))
            .map_err(pg("create the strategy's schema"))?;
        if let Some(sql) = setup {
            let statements = split(sql, SqlDialect::Postgres).map_err(|r| DbError::Postgres {
                context: "setup",
                message: r.message,
            })?;
            for r in statements {
                client.batch_execute(&sql[r]).map_err(pg("setup"))?;
            }
        }
        let path: Vec<String> = std::iter::once(schema.clone())
            .chain(search_path.iter().map(|s| ident(s)))
            .collect();
        client
            .batch_execute(&format!("SET search_path TO {}", path.join(", ")))
            .map_err(pg("set search_path"))?;
        Ok(PgSession {
            client,
            schema,
            joined: String::new(),
        })
    }
}

impl SqlSession for PgSession {
    /// The server process serving this connection, so the worker can pin
    /// it (design section 3, placement).
    fn backend_pid(&mut self) -> Result<Option<u32>, DbError> {
        let row = self
            .client
            .query_one("SELECT pg_backend_pid()", &[])
            .map_err(pg("pg_backend_pid()"))?;
        let pid: i32 = row.try_get(0).map_err(pg("pg_backend_pid()"))?;
        Ok(u32::try_from(pid).ok())
    }

    fn begin(&mut self) -> Result<(), DbError> {
        self.client.batch_execute("BEGIN").map_err(pg("begin"))
    }

    fn run(
        &mut self,
        statements: &[String],
        mut collect: Option<&mut Vec<StatementRows>>,
    ) -> Result<u64, DbError> {
        self.joined.clear();
        for s in statements {
            self.joined.push_str(s);
            self.joined.push_str(";\n");
        }
        let messages = self
            .client
            .simple_query(&self.joined)
            .map_err(pg("measured SQL"))?;
        let mut digest = Digest::default();
        let mut kept: StatementRows = Vec::new();
        for m in &messages {
            match m {
                SimpleQueryMessage::Row(row) => {
                    digest.start_row();
                    let mut as_text = Vec::new();
                    for i in 0..row.len() {
                        let v = row.try_get(i).map_err(pg("measured SQL"))?;
                        match v {
                            Some(t) => digest.value(tag::TEXT, t.as_bytes()),
                            None => digest.value(tag::NULL, &[]),
                        }
                        as_text.push(v.map(str::to_string));
                    }
                    digest.end_row();
                    if collect.is_some() {
                        kept.push(as_text);
                    }
                }
                SimpleQueryMessage::CommandComplete(_) => {
                    digest.end_statement();
                    if let Some(c) = collect.as_deref_mut() {
                        c.push(std::mem::take(&mut kept));
                    }
                }
                _ => {}
            }
        }
        Ok(digest.finish())
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        // Inside runner's transaction, now() is the time of its BEGIN, before
        // the measured SQL; outside one (the measured SQL ended it), this
        // message is its own implicit transaction and now() is the time of
        // this very statement. One round trip, like ROLLBACK alone.
        let reply = self
            .client
            .simple_query("SELECT now() < statement_timestamp(); ROLLBACK")
            .map_err(pg("rollback"))?;
        let in_tx = reply
            .iter()
            .any(|m| matches!(m, SimpleQueryMessage::Row(r) if r.get(0) == Some("t")));
        if in_tx {
            Ok(())
        } else {
            Err(DbError::TransactionEnded)
        }
    }

    fn close(&mut self) -> Result<(), DbError> {
        if check_ours(&mut self.client, &self.schema)? {
            self.client
                .batch_execute(&format!("DROP SCHEMA {} CASCADE", self.schema))
                .map_err(pg("drop the strategy's schema"))?;
        }
        Ok(())
    }
}
