//! Private copies on PostgreSQL (`[database] private_copies`): inside the
//! fork's transaction, which is never committed, each named table is
//! copied into the arm's own schema (structure, indexes, constraints,
//! defaults, data) with sequences of its own set past the copied keys,
//! and analysed so the planner sees it as it sees the original. The
//! arm's `search_path` puts its schema first, and schema-qualified
//! references are rewritten to it (`names::rewrite`), so the user's SQL
//! writes the copy; the user's table is only read, once, by the copy
//! (which holds an ACCESS SHARE lock on it until the fork ends, as any
//! read of it in the fork would). The copy goes with the transaction.

use super::connect::pg;
use crate::names::{self, Name};
use crate::plans::CopyMade;
use crate::DbError;
use postgres::Client;
use std::time::Instant;

/// A literal for SQL text: single quotes doubled.
fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// Copies each of `tables` (as `private_copies` gives them, found through
/// `search_path`) into `schema`; the sources, schema-qualified, and what
/// each copy cost.
pub(super) fn make(
    client: &mut Client,
    schema: &str,
    search_path: &[String],
    tables: &[String],
) -> Result<(Vec<Name>, Vec<CopyMade>), DbError> {
    let mut sources = Vec::new();
    let mut made = Vec::new();
    if tables.is_empty() {
        return Ok((sources, made));
    }
    let path: Vec<String> = search_path.iter().map(|s| names::quote(s)).collect();
    client
        .batch_execute(&format!(
            "SET LOCAL search_path TO {}",
            if path.is_empty() {
                "pg_catalog".to_string()
            } else {
                path.join(", ")
            }
        ))
        .map_err(pg("private copies: set search_path"))?;
    for given in tables {
        let started = Instant::now();
        let row = client
            .query_opt(
                "SELECT n.nspname::text, c.relname::text FROM pg_class c \
                 JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass($1)",
                &[given],
            )
            .map_err(pg("private copies: find the table"))?
            .ok_or_else(|| DbError::Postgres {
                context: "private copies",
                message: format!("no table {given} is found through the arm's search_path"),
            })?;
        let source = Name {
            schema: Some(row.get(0)),
            name: row.get(1),
        };
        let src = source.to_string();
        let dst = format!("{schema}.{}", names::quote(&source.name));
        client
            .batch_execute(&format!("CREATE TABLE {dst} (LIKE {src} INCLUDING ALL)"))
            .map_err(pg("private copies: create the copy"))?;
        let columns = client
            .query(
                "SELECT quote_ident(a.attname), a.attidentity::text, a.attgenerated::text, \
                        coalesce(pg_get_expr(d.adbin, d.adrelid), '') \
                 FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
                 WHERE a.attrelid = $1::text::regclass AND a.attnum > 0 AND NOT a.attisdropped \
                 ORDER BY a.attnum",
                &[&src],
            )
            .map_err(pg("private copies: read the columns"))?;
        let written: Vec<String> = columns
            .iter()
            .filter(|c| c.get::<_, String>(2).is_empty())
            .map(|c| c.get(0))
            .collect();
        let list = written.join(", ");
        let rows = client
            .execute(
                &format!(
                    "INSERT INTO {dst} ({list}) OVERRIDING SYSTEM VALUE SELECT {list} FROM {src}"
                ),
                &[],
            )
            .map_err(pg("private copies: copy the rows"))?;
        for c in &columns {
            let (column, identity, default): (String, String, String) =
                (c.get(0), c.get(1), c.get(3));
            let sequence = if !identity.is_empty() {
                // LIKE ... INCLUDING IDENTITY gave the copy a sequence of its own.
                None
            } else if default.contains("nextval(") {
                // A serial's default still names the user's sequence: the
                // copy gets its own.
                let seq = format!(
                    "{schema}.{}",
                    names::quote(&format!("{}_{}_seq", source.name, column.trim_matches('"')))
                );
                client
                    .batch_execute(&format!(
                        "CREATE SEQUENCE {seq} OWNED BY {dst}.{column}; \
                         ALTER TABLE {dst} ALTER COLUMN {column} SET DEFAULT nextval({})",
                        literal(&seq)
                    ))
                    .map_err(pg("private copies: give the copy its own sequence"))?;
                Some(seq)
            } else {
                continue;
            };
            let seq = match sequence {
                Some(s) => literal(&s),
                None => format!(
                    "pg_get_serial_sequence({}, {})",
                    literal(&dst),
                    literal(&column)
                ),
            };
            // Past the copied keys, as the user's sequence is past them.
            client
                .batch_execute(&format!(
                    "SELECT setval({seq}, m) FROM (SELECT max({column}) AS m FROM {dst}) x WHERE m IS NOT NULL"
                ))
                .map_err(pg("private copies: set the copy's sequence"))?;
        }
        client
            .batch_execute(&format!("ANALYZE {dst}"))
            .map_err(pg("private copies: analyse the copy"))?;
        made.push(CopyMade {
            table: src,
            rows,
            ns: started.elapsed().as_nanos() as u64,
        });
        sources.push(source);
    }
    Ok((sources, made))
}

/// The user's tables that an arm has private copies of, watched from
/// inside the arm's own transaction: whatever the SQL reaches by a way
/// the rewrite cannot point at the copy (a name inside a `DO` body or an
/// `EXECUTE` string, a function that names the table) shows in the
/// transaction's own statistics of the table, rolled-back writes and
/// subtransactions included (`pg_stat_xact_all_tables`), or in its
/// sequences, which no rollback undoes. Checked after the checks before
/// timing and again before the fork's transaction ends.
#[derive(Debug, Clone, Default)]
pub(crate) struct Watch {
    tables: Vec<u32>,
    /// The tables' own sequences and their last values when watching began.
    sequences: Vec<(String, Option<i64>)>,
}

const SEQUENCES: &str =
    "SELECT quote_ident(q.schemaname) || '.' || quote_ident(q.sequencename), q.last_value \
     FROM pg_sequences q JOIN pg_namespace n ON n.nspname = q.schemaname \
     JOIN pg_class s ON s.relnamespace = n.oid AND s.relname = q.sequencename \
     JOIN pg_depend d ON d.objid = s.oid AND d.classid = 'pg_class'::regclass \
         AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i') \
     WHERE d.refobjid = ANY($1) ORDER BY 1";

impl Watch {
    /// Starts watching `sources` (schema-qualified), as they are now.
    pub(crate) fn start(client: &mut Client, sources: &[Name]) -> Result<Watch, DbError> {
        if sources.is_empty() {
            return Ok(Watch::default());
        }
        let keys: Vec<String> = sources.iter().map(Name::to_string).collect();
        let tables: Vec<u32> = client
            .query(
                "SELECT to_regclass(k)::oid FROM unnest($1::text[]) k WHERE to_regclass(k) IS NOT NULL",
                &[&keys],
            )
            .map_err(pg("private copies: watch the tables"))?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let sequences = client
            .query(SEQUENCES, &[&tables])
            .map_err(pg("private copies: watch the tables' sequences"))?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        Ok(Watch { tables, sequences })
    }

    /// Fails, naming the table and what happened to it, when the
    /// transaction wrote a watched table or a watched sequence moved.
    pub(crate) fn check(&self, client: &mut Client) -> Result<(), DbError> {
        if self.tables.is_empty() {
            return Ok(());
        }
        let written = client
            .query(
                "SELECT quote_ident(schemaname) || '.' || quote_ident(relname), n_tup_ins, n_tup_upd, n_tup_del \
                 FROM pg_stat_xact_all_tables WHERE relid = ANY($1) AND n_tup_ins + n_tup_upd + n_tup_del > 0 \
                 ORDER BY 1",
                &[&self.tables],
            )
            .map_err(pg("private copies: read the tables' statistics"))?;
        if let Some(r) = written.first() {
            let (table, ins, upd, del): (String, i64, i64, i64) =
                (r.get(0), r.get(1), r.get(2), r.get(3));
            return Err(DbError::CopyBypassed(format!(
                "the SQL wrote your table {table} itself ({ins} rows inserted, {upd} updated, {del} deleted), not the arm's private copy of it"
            )));
        }
        let now: Vec<(String, Option<i64>)> = client
            .query(SEQUENCES, &[&self.tables])
            .map_err(pg("private copies: read the tables' sequences"))?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        for (seq, after) in &now {
            let before = self
                .sequences
                .iter()
                .find(|(s, _)| s == seq)
                .and_then(|(_, v)| *v);
            if before != *after {
                let said = |v: Option<i64>| v.map_or("never used".to_string(), |v| v.to_string());
                return Err(DbError::CopyBypassed(format!(
                    "the SQL moved sequence {seq} of your table itself (last value {} -> {}), not the private copy's own sequence",
                    said(before),
                    said(*after)
                )));
            }
        }
        Ok(())
    }
}
