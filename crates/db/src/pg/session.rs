//! The `sql` strategy on PostgreSQL: nothing the user's SQL does is ever
//! committed, by construction rather than by reading the SQL.
//!
//! Each strategy instance opens one transaction per fork and never commits
//! it: its schema `runner_<run id>_<slot>` (slot `b` or `t`) is created
//! inside it, setup runs inside it, and each measured run runs under a
//! savepoint that is rolled back after it. At the end of the fork the whole
//! transaction is rolled back, schema and all; a worker that dies takes it
//! with its connection. A write anywhere in the database (the user's own
//! tables included) is therefore undone, whatever statement made it.
//!
//! Two more locks on the door: a row in a guard table whose deferred
//! foreign key can never be satisfied, so a COMMIT of this transaction,
//! however it is reached, fails and rolls back instead; and after each run
//! runner checks that it is still in the transaction it opened
//! (`txid_current()` unchanged). What PostgreSQL cannot roll back is refused
//! before anything runs (`statements::lasting`) or, hidden in a function,
//! found by the fingerprint after the fork (`crate::fingerprint`).
//!
//! `setup` and the measured runs see the schema first, then the user's
//! `search_path`. A run
//! sends its statements as one simple-protocol query (one round trip; the
//! server parses and plans them every time, as psql would) between an
//! untimed `SAVEPOINT` and an untimed `ROLLBACK TO SAVEPOINT`. Values arrive
//! as text.

use super::connect::{connect, pg, statement};
use super::schema::{check_ours, comment, set_search_path, SLOTS};
use crate::names::{self, Name};
use crate::plans::{CopyMade, StatementPlan};
use crate::session::{tag, Digest, SqlSession, StatementRows};
use crate::statements::{explainable, split, SqlDialect};
use crate::DbError;
use postgres::{Client, SimpleQueryMessage};

pub struct PgSession {
    client: Client,
    /// The fork's transaction, to tell after each run that it is still open.
    xid: String,
    joined: String,
    /// The arm's schema, where its private copies are.
    schema: String,
    /// The tables it has private copies of, and what they cost.
    sources: Vec<Name>,
    copies: Vec<CopyMade>,
    /// The copied tables themselves, which the SQL must not reach.
    watch: super::copies::Watch,
}

/// The savepoint each measured run is rolled back to.
const SAVEPOINT: &str = "runner_run";

impl PgSession {
    pub fn open(
        url: &str,
        run_schema: &str,
        slot: &str,
        search_path: &[String],
        setup: Option<&str>,
        private_copies: &[String],
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
        // Left committed by a runner from before the fork transaction.
        if check_ours(&mut client, &schema)? {
            client
                .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
                .map_err(pg("drop the previous fork's schema"))?;
        }
        // The guard: a deferred foreign key that no row satisfies, checked
        // only at COMMIT, which it makes fail. PostgreSQL refuses to drop or
        // alter a table with pending trigger events, so the user's SQL
        // cannot remove it inside the transaction either.
        client
            .batch_execute(&format!(
                "SET application_name TO 'runner worker {schema}'; \
                 BEGIN; \
                 CREATE SCHEMA {schema}; \
                 COMMENT ON SCHEMA {schema} IS {comment}; \
                 CREATE TABLE {schema}.runner_never (id int PRIMARY KEY); \
                 CREATE TABLE {schema}.runner_never_commit (id int REFERENCES {schema}.runner_never \
                     DEFERRABLE INITIALLY DEFERRED); \
                 INSERT INTO {schema}.runner_never_commit VALUES (1)",
                comment = comment(&schema, run_schema.trim_start_matches("runner_"))
            ))
            .map_err(pg("open the fork's transaction and create the strategy's schema"))?;
        let xid = txid(&mut client)?;
        let (sources, copies) =
            super::copies::make(&mut client, &schema, search_path, private_copies)?;
        let watch = super::copies::Watch::start(&mut client, &sources)?;
        set_search_path(&mut client, &schema, search_path)?;
        if let Some(sql) = setup {
            let sql = &rewrite(sql, &sources, &schema);
            let statements = split(sql, SqlDialect::Postgres).map_err(|r| DbError::Postgres {
                context: "setup",
                message: r.message,
            })?;
            for r in statements {
                client.batch_execute(&sql[r]).map_err(pg("setup"))?;
            }
        }
        // Again after `setup`, which may have changed it.
        set_search_path(&mut client, &schema, search_path)?;
        let mut session = PgSession {
            client,
            xid,
            joined: String::new(),
            schema,
            sources,
            copies,
            watch,
        };
        session.still_ours("setup")?;
        session.watch.check(&mut session.client)?;
        Ok(session)
    }

    /// A client of `clients = N`: a connection that works in the arm's
    /// schema `shared` made and committed ([`super::shared`]), with a
    /// never-committed transaction of its own for the fork. Its guard
    /// against COMMIT is the same deferred foreign key, in two temporary
    /// tables (session-private, gone with the transaction): no other
    /// client can see or remove them.
    pub fn join(
        url: &str,
        shared: &super::shared::Shared,
        search_path: &[String],
    ) -> Result<PgSession, DbError> {
        let (mut client, _) = connect(url)?;
        let schema = shared.schema.clone();
        if !check_ours(&mut client, &schema)? {
            return Err(DbError::NotOurSchema(schema));
        }
        client
            .batch_execute(&format!(
                "SET application_name TO 'runner client {schema}'; \
                 BEGIN; \
                 CREATE TEMP TABLE runner_never (id int PRIMARY KEY) ON COMMIT DROP; \
                 CREATE TEMP TABLE runner_never_commit (id int REFERENCES runner_never \
                     DEFERRABLE INITIALLY DEFERRED) ON COMMIT DROP; \
                 INSERT INTO runner_never_commit VALUES (1)"
            ))
            .map_err(pg("open a client's transaction"))?;
        let xid = txid(&mut client)?;
        let watch = super::copies::Watch::start(&mut client, &shared.sources)?;
        set_search_path(&mut client, &schema, search_path)?;
        let mut session = PgSession {
            client,
            xid,
            joined: String::new(),
            schema,
            sources: shared.sources.clone(),
            copies: Vec::new(),
            watch,
        };
        session.still_ours("a client's set-up")?;
        Ok(session)
    }

    /// Fails unless the fork's transaction is still the one open.
    fn still_ours(&mut self, after: &'static str) -> Result<(), DbError> {
        match txid(&mut self.client) {
            Ok(x) if x == self.xid => Ok(()),
            _ => Err(DbError::TransactionEnded(after)),
        }
    }
}

/// `sql` with its schema-qualified references to a copied table pointed
/// at the copy in `schema`.
fn rewrite(sql: &str, sources: &[Name], schema: &str) -> String {
    if sources.is_empty() {
        sql.to_owned()
    } else {
        names::rewrite(sql, SqlDialect::Postgres, sources, schema)
    }
}

fn txid(client: &mut Client) -> Result<String, DbError> {
    let reply = client
        .simple_query("SELECT txid_current()")
        .map_err(pg("txid_current()"))?;
    first_value(&reply).ok_or(DbError::TransactionEnded("setup"))
}

/// The first column of the first row a simple query returned.
fn first_value(reply: &[SimpleQueryMessage]) -> Option<String> {
    reply.iter().find_map(|m| match m {
        SimpleQueryMessage::Row(r) => r.get(0).map(str::to_owned),
        _ => None,
    })
}

impl SqlSession for PgSession {
    /// The server process serving this connection, so the worker can pin
    /// it (docs/guide/how-a-run-works.md, placement).
    fn backend_pid(&mut self) -> Result<Option<u32>, DbError> {
        let row = self
            .client
            .query_one("SELECT pg_backend_pid()", &[])
            .map_err(pg("pg_backend_pid()"))?;
        let pid: i32 = row.try_get(0).map_err(pg("pg_backend_pid()"))?;
        Ok(u32::try_from(pid).ok())
    }

    fn begin(&mut self) -> Result<(), DbError> {
        self.client
            .batch_execute(&format!("SAVEPOINT {SAVEPOINT}"))
            .map_err(pg("savepoint"))
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
        let messages = self.client.simple_query(&self.joined).map_err(statement)?;
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
        // One round trip: back to the savepoint, and which transaction is
        // open. If the measured SQL ended runner's transaction, the
        // savepoint is gone (an error) or the transaction is another one.
        let reply = self.client.simple_query(&format!(
            "ROLLBACK TO SAVEPOINT {SAVEPOINT}; RELEASE SAVEPOINT {SAVEPOINT}; SELECT txid_current()"
        ));
        let xid = reply.ok().and_then(|r| first_value(&r));
        if xid.as_deref() == Some(self.xid.as_str()) {
            Ok(())
        } else {
            Err(DbError::TransactionEnded("a measured run"))
        }
    }

    fn rewrite(&self, sql: &str) -> String {
        rewrite(sql, &self.sources, &self.schema)
    }

    /// A `PREPARE` outlives every rollback (prepared statements belong to
    /// the session, not the transaction), so it is made once per fork.
    fn prepare(&mut self, sql: &str) -> Result<(), DbError> {
        self.client.batch_execute(sql).map_err(pg("PREPARE"))
    }

    fn copies(&self) -> Vec<CopyMade> {
        self.copies.clone()
    }

    fn copies_untouched(&mut self) -> Result<(), DbError> {
        self.watch.check(&mut self.client)
    }

    /// Each statement under `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)`
    /// where EXPLAIN takes it (else as it is), under a savepoint rolled
    /// back after the last, as a measured run is.
    fn explain(&mut self, statements: &[String]) -> Result<Vec<StatementPlan>, DbError> {
        self.begin()?;
        let mut plans = Vec::new();
        for s in statements {
            let json = if explainable(s, SqlDialect::Postgres) {
                let reply = self
                    .client
                    .simple_query(&format!("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {s}"))
                    .map_err(pg("EXPLAIN"))?;
                let text = first_value(&reply).unwrap_or_default();
                Some(serde_json::from_str(&text).map_err(|e| DbError::Postgres {
                    context: "EXPLAIN",
                    message: format!("the server's plan is not JSON: {e}"),
                })?)
            } else {
                self.client.simple_query(s).map_err(pg("EXPLAIN"))?;
                None
            };
            plans.push(StatementPlan {
                statement: s.clone(),
                json,
                query_plan: Vec::new(),
            });
        }
        SqlSession::rollback(self)?;
        Ok(plans)
    }

    /// Rolls back the fork's transaction: the schema, setup's objects and
    /// every write since are gone.
    fn close(&mut self) -> Result<(), DbError> {
        self.still_ours("the fork")?;
        self.watch.check(&mut self.client)?;
        self.client
            .batch_execute("ROLLBACK")
            .map_err(pg("roll back the fork's transaction"))
    }
}
/// One client of `clients = N`, in the arm's committed schema `shared`
/// ([`PgSession::join`]), boxed as the clients hold it.
pub fn join(
    url: &str,
    shared: &super::shared::Shared,
    search_path: &[String],
) -> Result<Box<dyn SqlSession + Send>, DbError> {
    Ok(Box::new(PgSession::join(url, shared, search_path)?))
}
