//! The arm's schema for `clients = N` on PostgreSQL: made once per fork
//! and committed, so that N connections see the same data (the private
//! copies and what `setup` makes). The measured runs stay in the clients'
//! never-committed transactions (`PgSession::join`); only set-up commits.
//!
//! Set-up runs the user's `setup`, so its commit is gated: inside the
//! transaction, just before COMMIT, runner reads what the transaction
//! itself did, and rolls it back instead of committing when it wrote a
//! row of any table outside the arm's schema (the transaction's own
//! statistics, `pg_stat_xact_all_tables`, count every insert, update and
//! delete, in subtransactions too) or created or changed a catalog row of
//! anything outside it: a relation (an index on your table, a column, a
//! grant, a truncate), a function, a type, a constraint, a trigger, a rule
//! or policy, a schema, a comment, a database, role setting, tablespace,
//! large object, event trigger, extension, default privilege, publication
//! or foreign server. A catalog row is the transaction's when its `xmin`
//! is the transaction's id or newer (its subtransactions; a concurrent
//! session's newer row only makes the gate refuse). What the gate cannot
//! see is what PostgreSQL does not roll back anyway (a sequence, a
//! statistics update by ANALYZE); the guard's fingerprint after the fork
//! covers those as it does for every run.

use super::connect::{connect, pg};
use super::schema::{check_ours, comment};
use crate::names::Name;
use crate::plans::CopyMade;
use crate::statements::{split, SqlDialect};
use crate::DbError;

/// The committed arm schema the clients join.
#[derive(Debug, Clone)]
pub struct Shared {
    pub schema: String,
    /// The tables copied into it, for rewriting qualified references.
    pub sources: Vec<Name>,
    pub copies: Vec<CopyMade>,
}

/// What the transaction did outside `$1` (the arm's schema), one line per
/// object; empty when the commit is safe.
const GATE: &str = r#"
WITH me AS (SELECT age(pg_current_xact_id()::xid) AS a,
                   (SELECT oid FROM pg_namespace WHERE nspname = $1::text) AS ns),
rel AS (SELECT c.oid, c.relnamespace FROM pg_class c)
SELECT 'a write to table ' || quote_ident(s.schemaname) || '.' || quote_ident(s.relname)
  FROM pg_stat_xact_all_tables s, me
 WHERE s.n_tup_ins + s.n_tup_upd + s.n_tup_del > 0
   AND s.relid NOT IN (SELECT oid FROM rel WHERE relnamespace = me.ns)
   AND s.schemaname NOT IN ('pg_catalog', 'pg_toast')
   AND s.schemaname NOT LIKE 'pg\_temp\_%' AND s.schemaname NOT LIKE 'pg\_toast\_temp\_%'
UNION ALL
SELECT 'a change to relation ' || c.oid::regclass::text FROM pg_class c, me
 WHERE age(c.xmin) <= me.a AND c.relnamespace NOT IN (me.ns, 'pg_toast'::regnamespace)
UNION ALL
SELECT 'a change to function ' || p.oid::regprocedure::text FROM pg_proc p, me
 WHERE age(p.xmin) <= me.a AND p.pronamespace <> me.ns
UNION ALL
SELECT 'a change to type ' || t.oid::regtype::text FROM pg_type t, me
 WHERE age(t.xmin) <= me.a AND t.typnamespace NOT IN (me.ns, 'pg_toast'::regnamespace)
UNION ALL
SELECT 'a change to constraint ' || k.conname FROM pg_constraint k, me
 WHERE age(k.xmin) <= me.a AND k.connamespace <> me.ns
UNION ALL
SELECT 'a change to schema ' || n.nspname FROM pg_namespace n, me
 WHERE age(n.xmin) <= me.a AND n.oid <> me.ns
UNION ALL
SELECT 'a trigger, rule or policy on ' || x.rel::regclass::text FROM (
    SELECT tgrelid AS rel, xmin FROM pg_trigger
    UNION ALL SELECT ev_class, xmin FROM pg_rewrite
    UNION ALL SELECT polrelid, xmin FROM pg_policy) x, me
 WHERE age(x.xmin) <= me.a
   AND NOT EXISTS (SELECT 1 FROM rel WHERE rel.oid = x.rel AND rel.relnamespace = me.ns)
UNION ALL
SELECT 'a comment on an object outside the arm''s schema' FROM pg_description d, me
 WHERE age(d.xmin) <= me.a
   AND NOT (d.classoid = 'pg_namespace'::regclass AND d.objoid = me.ns)
   AND NOT (d.classoid = 'pg_class'::regclass
            AND EXISTS (SELECT 1 FROM rel WHERE rel.oid = d.objoid AND rel.relnamespace = me.ns))
   AND NOT (d.classoid = 'pg_proc'::regclass
            AND EXISTS (SELECT 1 FROM pg_proc p WHERE p.oid = d.objoid AND p.pronamespace = me.ns))
UNION ALL
SELECT 'a change to ' || x.what FROM (
    SELECT 'a database' AS what, xmin FROM pg_database
    UNION ALL SELECT 'a role membership', xmin FROM pg_auth_members
    UNION ALL SELECT 'a role or database setting', xmin FROM pg_db_role_setting
    UNION ALL SELECT 'a tablespace', xmin FROM pg_tablespace
    UNION ALL SELECT 'a large object', xmin FROM pg_largeobject_metadata
    UNION ALL SELECT 'an event trigger', xmin FROM pg_event_trigger
    UNION ALL SELECT 'an extension', xmin FROM pg_extension
    UNION ALL SELECT 'default privileges', xmin FROM pg_default_acl
    UNION ALL SELECT 'a publication', xmin FROM pg_publication
    UNION ALL SELECT 'a foreign server', xmin FROM pg_foreign_server
    UNION ALL SELECT 'a shared comment', xmin FROM pg_shdescription) x, me
 WHERE age(x.xmin) <= me.a
"#;

impl Shared {
    /// Creates `<run schema>_<slot>`, makes the private copies and runs
    /// `setup` in it, and commits only if the gate finds nothing outside.
    pub fn create(
        url: &str,
        run_schema: &str,
        slot: &str,
        search_path: &[String],
        setup: Option<&str>,
        private_copies: &[String],
    ) -> Result<Shared, DbError> {
        if !super::schema::SLOTS.contains(&slot) {
            return Err(DbError::BadRunId(format!("{run_schema}_{slot}")));
        }
        let (mut client, _) = connect(url)?;
        if !check_ours(&mut client, run_schema)? {
            return Err(DbError::NotOurSchema(run_schema.to_owned()));
        }
        // Per worker process: the next fork's worker sets up while this
        // one's tears down, and a committed schema is not serialised by
        // any transaction (`postgres::drop_run_schema` sweeps them all).
        let schema = format!("{run_schema}_{slot}_p{}", std::process::id());
        if schema.len() > 63 {
            return Err(DbError::BadRunId(format!(
                "{run_schema}: with clients > 1 the run id must be short enough for schema {schema} to fit PostgreSQL's 63 bytes"
            )));
        }
        drop_if_ours(&mut client, &schema)?;
        client
            .batch_execute(&format!(
                "SET application_name TO 'runner set-up {schema}'; BEGIN; \
                 CREATE SCHEMA {schema}; COMMENT ON SCHEMA {schema} IS {}",
                comment(&schema, run_schema.trim_start_matches("runner_"))
            ))
            .map_err(pg("create the arm's shared schema"))?;
        let (sources, copies) =
            super::copies::make(&mut client, &schema, search_path, private_copies)?;
        super::schema::set_search_path(&mut client, &schema, search_path)?;
        if let Some(sql) = setup {
            let sql = &crate::names::rewrite(sql, SqlDialect::Postgres, &sources, &schema);
            let ranges = split(sql, SqlDialect::Postgres).map_err(|r| DbError::Postgres {
                context: "setup",
                message: r.message,
            })?;
            for r in ranges {
                client.batch_execute(&sql[r]).map_err(pg("setup"))?;
            }
        }
        let outside: Vec<String> = client
            .query(GATE, &[&schema])
            .map_err(pg("check set-up before its commit"))?
            .iter()
            .map(|r| r.get(0))
            .collect();
        if !outside.is_empty() {
            client
                .batch_execute("ROLLBACK")
                .map_err(pg("roll back set-up"))?;
            return Err(DbError::SetupOutside(outside.join("; ")));
        }
        client
            .batch_execute("COMMIT")
            .map_err(pg("commit the arm's shared schema"))?;
        Ok(Shared {
            schema,
            sources,
            copies,
        })
    }

    /// Drops the schema at the fork's end (committed: it is runner's own).
    pub fn drop_schema(&self, url: &str) -> Result<(), DbError> {
        let (mut client, _) = connect(url)?;
        drop_if_ours(&mut client, &self.schema)
    }
}

/// Drops `schema` when it carries runner's marker (a previous fork's);
/// refuses one that is not runner's.
fn drop_if_ours(client: &mut postgres::Client, schema: &str) -> Result<(), DbError> {
    if check_ours(client, schema)? {
        client
            .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
            .map_err(pg("drop the arm's shared schema"))?;
    }
    Ok(())
}
