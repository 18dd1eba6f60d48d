//! The preview's table on the server: one seeded `model_field` table per
//! worker inside the run schema.
//!
//! Round trips per preview (see [`PgTable`]): 4 — `BEGIN`, one `UPDATE` that
//! writes every override field at once, one `SELECT` of the whole model,
//! `ROLLBACK`. One `UPDATE` per field would be 3 + k (7 for the usual 4
//! fields), so the write costs the same whatever the slider touches.

use super::connect::{connect, pg};
use super::schema::ours;
use crate::model::{check_row_count, hash_rows, ModelTable};
use crate::DbError;
use postgres::{Client, SimpleQueryMessage, Statement};
use runner_core::preview::{Model, Overrides};

/// In one committed transaction: drops the tables `drop` (if they exist),
/// then makes each table of `make` (schema-qualified) afresh and seeds it
/// with its rows. One commit, so one WAL flush; it stays synchronous, so no
/// flush is left to land in a fork's timed runs.
pub fn make_tables(
    client: &mut Client,
    drop: &[String],
    make: &[(String, Vec<(String, f64)>)],
) -> Result<(), DbError> {
    let mut ddl = String::from("BEGIN;");
    for t in drop.iter().chain(make.iter().map(|(t, _)| t)) {
        ddl.push_str(&format!(" DROP TABLE IF EXISTS {t};"));
    }
    for (t, _) in make {
        ddl.push_str(&format!(
            " CREATE TABLE {t} (name text PRIMARY KEY, field_value double precision NOT NULL);"
        ));
    }
    let made = client
        .batch_execute(&ddl)
        .map_err(pg("create table model_field"))
        .and_then(|()| {
            for (t, rows) in make {
                let (names, values): (Vec<&str>, Vec<f64>) =
                    rows.iter().map(|(n, v)| (n.as_str(), *v)).unzip();
                client
                    .execute(
                        &format!(
                            "INSERT INTO {t} (name, field_value) \
                             SELECT * FROM unnest($1::text[], $2::float8[])"
                        ),
                        &[&names, &values],
                    )
                    .map_err(pg("seed model_field"))?;
            }
            Ok(())
        });
    // A failed step leaves the transaction open (or aborted): roll it back
    // so the error is the step's, not the commit's.
    let done = if made.is_ok() { "COMMIT" } else { "ROLLBACK" };
    client
        .batch_execute(done)
        .map_err(pg("commit model_field"))?;
    made
}

/// A seeded `model_field` table in the run schema, with its statements
/// prepared: each strategy instance has a table of its own, so the next
/// fork's worker, which sets up while this one finishes, never touches it.
///
/// One preview = [`ModelTable::begin`] (simple query `BEGIN`, 1 round trip),
/// [`ModelTable::write_overrides`] (prepared `UPDATE ... FROM unnest($1::text[],
/// $2::float8[])`, 1), [`ModelTable::read_into`] (prepared `SELECT`, 1),
/// [`ModelTable::rollback`] (`ROLLBACK`, 1): 4 round trips. Prepared
/// statements use the extended protocol, where Bind/Execute/Sync travel in
/// one write and come back in one read. Values travel in binary, so f64s
/// arrive bit-exact.
pub struct PgTable {
    client: Client,
    /// The server process serving `client`; names the table.
    pid: u32,
    /// `<schema>.model_field_<pid>`, or the premade table's.
    table: String,
    /// Made here, so dropped here.
    owned: bool,
    update: Statement,
    select: Statement,
    names: Vec<String>,
}

impl PgTable {
    /// Connects, enters the run schema (refusing one runner did not create)
    /// and prepares the preview statements on its table: `premade` (in the
    /// run schema), made and seeded by the exec parent before the fork
    /// ([`crate::model::job_table`]), or else one it makes itself ([`make_tables`]) and
    /// drops at [`ModelTable::close`]. A table a killed worker left goes
    /// with the run schema.
    pub fn open(
        url: &str,
        schema: &str,
        model: &Model,
        premade: Option<&str>,
    ) -> Result<PgTable, DbError> {
        let (mut client, _) = connect(url)?;
        // One round trip: the settings, this connection's server process
        // (it names the table and is pinned), and whether the run schema is
        // runner's (its marker comment). The name is validated to [a-z0-9_]
        // (`schema_name`), so formatting it in is safe. application_name
        // lets an operator (or a test) find a run's worker in
        // pg_stat_activity.
        let reply = client
            .simple_query(&format!(
                "SET application_name TO 'runner worker {schema}'; \
                 SET search_path TO {schema}; \
                 SELECT pg_backend_pid(), \
                        (SELECT count(*) FROM pg_namespace WHERE nspname = '{schema}'), \
                        (SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = '{schema}')"
            ))
            .map_err(pg("look up schema"))?;
        let row = reply.iter().find_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some(r),
            _ => None,
        });
        let (pid, comment) = match row {
            Some(r) => (
                r.get(0).and_then(|p| p.parse::<u32>().ok()),
                (r.get(1) == Some("1")).then(|| r.get(2)),
            ),
            None => (None, None),
        };
        if !ours(schema, comment)? {
            return Err(DbError::NotOurSchema(schema.to_owned()));
        }
        let pid = pid.ok_or(DbError::Postgres {
            context: "pg_backend_pid()",
            message: "the server returned no process id".into(),
        })?;
        let table = match premade {
            Some(t) => format!("{schema}.{t}"),
            None => {
                let table = format!("{schema}.model_field_{pid}");
                // A table of this name is left by a killed worker whose
                // server process had the same pid: it is runner's, in
                // runner's schema.
                make_tables(&mut client, &[], &[(table.clone(), model.fields())])?;
                table
            }
        };
        let update = client
            .prepare(&format!(
                "UPDATE {table} AS m SET field_value = v.value \
                 FROM unnest($1::text[], $2::float8[]) AS v(name, value) \
                 WHERE m.name = v.name"
            ))
            .map_err(pg("prepare update"))?;
        let select = client
            .prepare(&format!("SELECT name, field_value FROM {table}"))
            .map_err(pg("prepare select"))?;
        Ok(PgTable {
            client,
            pid,
            owned: premade.is_none(),
            table,
            update,
            select,
            names: Overrides::field_names(model.plans() as u32),
        })
    }
}

impl ModelTable for PgTable {
    fn begin(&mut self) -> Result<(), DbError> {
        self.client.batch_execute("BEGIN").map_err(pg("begin"))
    }

    fn write_overrides(&mut self, values: &[f64]) -> Result<(), DbError> {
        let n = self
            .client
            .execute(&self.update, &[&self.names, &values])
            .map_err(pg("update"))?;
        if n as usize != self.names.len() {
            return Err(DbError::Model(format!(
                "update touched {n} rows, expected {}",
                self.names.len()
            )));
        }
        Ok(())
    }

    fn read_into(&mut self, model: &mut Model) -> Result<(), DbError> {
        let rows = self.client.query(&self.select, &[]).map_err(pg("select"))?;
        for row in &rows {
            let name: &str = row.try_get(0).map_err(pg("select"))?;
            let value: f64 = row.try_get(1).map_err(pg("select"))?;
            model.set(name, value).map_err(|e| DbError::Model(e.0))?;
        }
        check_row_count(model, rows.len())
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        self.client
            .batch_execute("ROLLBACK")
            .map_err(pg("rollback"))
    }

    fn content_hash(&mut self) -> Result<String, DbError> {
        let rows = self.client.query(&self.select, &[]).map_err(pg("select"))?;
        let rows = rows
            .iter()
            .map(|r| Ok((r.try_get::<_, String>(0)?, r.try_get::<_, f64>(1)?)))
            .collect::<Result<Vec<_>, postgres::Error>>()
            .map_err(pg("select"))?;
        Ok(hash_rows(rows))
    }

    /// The server process serving this connection, so the worker can pin
    /// it (docs/guide/how-a-run-works.md, placement).
    fn backend_pid(&mut self) -> Result<Option<u32>, DbError> {
        Ok(Some(self.pid))
    }

    /// Drops a table it made, after the fork's last read (its final hash);
    /// a premade table is the parent's to drop.
    fn close(&mut self) -> Result<(), DbError> {
        if !self.owned {
            return Ok(());
        }
        self.client
            .batch_execute(&format!("DROP TABLE {}", self.table))
            .map_err(pg("drop the fork's table"))
    }
}

/// The exec parent's connection that makes the forks' tables a fork ahead
/// of their workers, in the run schema.
pub struct Maker {
    client: Client,
    schema: String,
}

impl Maker {
    pub fn open(url: &str, schema: &str) -> Result<Maker, DbError> {
        let (mut client, _) = connect(url)?;
        client
            .batch_execute("SET application_name TO 'runner tables'")
            .map_err(pg("name the tables' connection"))?;
        Ok(Maker {
            client,
            schema: schema.to_owned(),
        })
    }
}

impl crate::model::TableMaker for Maker {
    fn step(
        &mut self,
        drop: &[String],
        make: &[(String, Vec<(String, f64)>)],
    ) -> Result<(), DbError> {
        let qualified = |t: &String| format!("{}.{t}", self.schema);
        let drop: Vec<String> = drop.iter().map(qualified).collect();
        let make: Vec<(String, Vec<(String, f64)>)> = make
            .iter()
            .map(|(t, rows)| (qualified(t), rows.clone()))
            .collect();
        make_tables(&mut self.client, &drop, &make)
    }
}
