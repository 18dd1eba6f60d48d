//! Taking the fingerprint ([`crate::fingerprint`]) on the server: a
//! connection of the parent's own, open for the whole run.

use super::connect::{connect, pg};
use crate::fingerprint::{Fingerprint, State};
use crate::DbError;
use postgres::{Client, Statement};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Every schema runner made carries its marker (see `schema::marker`).
const OURS: &str = super::schema::OURS_SQL;
const SYSTEM: &str = "n.nspname IN ('pg_catalog', 'information_schema') OR n.nspname LIKE 'pg\\_toast%' OR n.nspname LIKE 'pg\\_temp\\_%'";

/// A connection of the parent's own, open for the whole run, with the
/// fingerprint's queries prepared once: planned per fork, they were a
/// share of every fork's wall time.
pub struct Guard {
    client: Client,
    run_schema: String,
    relations: Statement,
    others: Statement,
    large_objects: Statement,
}

impl Guard {
    pub fn connect(url: &str, run_schema: &str) -> Result<Guard, DbError> {
        let (mut client, _) = connect(url)?;
        client
            .batch_execute("SET application_name TO 'runner guard'")
            .map_err(pg("guard"))?;
        let relations = client
            .prepare(&format!(
                "SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname), c.relkind::text, c.xmin::text, \
                        s.n_mod_since_analyze, s.n_live_tup, \
                        s.vacuum_count + s.autovacuum_count + s.analyze_count + s.autoanalyze_count, \
                        q.last_value::text, s.n_dead_tup, \
                        CASE WHEN c.relkind IN ('r', 'm') THEN pg_total_relation_size(c.oid) - pg_relation_size(c.oid, 'fsm') - pg_relation_size(c.oid, 'vm') END \
                 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                 LEFT JOIN pg_stat_all_tables s ON s.relid = c.oid \
                 LEFT JOIN pg_sequences q ON q.schemaname = n.nspname AND q.sequencename = c.relname \
                 WHERE c.relkind IN ('r', 'p', 'S', 'm', 'v', 'f') AND NOT ({SYSTEM}) AND NOT ({OURS})"
            ))
            .map_err(pg("guard: read the relations"))?;
        let others = client
            .prepare(&format!(
                "SELECT 'schema', quote_ident(n.nspname), n.xmin::text FROM pg_namespace n \
                 WHERE NOT ({SYSTEM}) AND NOT ({OURS}) \
                 UNION ALL \
                 SELECT 'function', quote_ident(n.nspname) || '.' || quote_ident(p.proname) || '(' || pg_get_function_identity_arguments(p.oid) || ')', p.xmin::text \
                 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace \
                 WHERE NOT ({SYSTEM}) AND NOT ({OURS})"
            ))
            .map_err(pg("guard: read the schemas and functions"))?;
        let large_objects = client
            .prepare("SELECT count(*) FROM pg_largeobject_metadata")
            .map_err(pg("guard: count large objects"))?;
        Ok(Guard {
            client,
            run_schema: run_schema.to_owned(),
            relations,
            others,
            large_objects,
        })
    }

    /// Waits (up to `limit`) until the given server processes (`None`:
    /// every connection of this run's workers) are gone, so their
    /// statistics have reached the views.
    pub fn wait_for_workers(
        &mut self,
        backends: Option<&[u32]>,
        limit: Duration,
    ) -> Result<(), DbError> {
        let pattern = format!("runner worker {}%", self.run_schema);
        let pids: Vec<i32> = backends
            .unwrap_or_default()
            .iter()
            .filter_map(|&p| i32::try_from(p).ok())
            .collect();
        let start = Instant::now();
        loop {
            let row = match backends {
                Some(_) => self.client.query_one(
                    "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1)",
                    &[&pids],
                ),
                None => self.client.query_one(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE $1 AND pid <> pg_backend_pid()",
                    &[&pattern],
                ),
            }
            .map_err(pg("guard: wait for the fork's connections"))?;
            let n: i64 = row.get(0);
            if n == 0 || start.elapsed() > limit {
                return Ok(());
            }
            // A worker's backend is usually gone within a millisecond of
            // the worker's exit; this wait is in every fork's wall time.
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    pub fn take(&mut self) -> Result<Fingerprint, DbError> {
        let mut tx = self.client.transaction().map_err(pg("guard"))?;
        // A fresh statistics snapshot for this transaction.
        tx.batch_execute("SELECT pg_stat_clear_snapshot()")
            .map_err(pg("guard"))?;
        let mut objects = BTreeMap::new();
        let relations = tx
            .query(&self.relations, &[])
            .map_err(pg("guard: read the relations"))?;
        for r in relations {
            let relkind: String = r.get(1);
            let kind = match relkind.as_str() {
                "S" => "sequence",
                "v" => "view",
                "m" => "materialized view",
                "f" => "foreign table",
                _ => "table",
            };
            objects.insert(
                r.get::<_, String>(0),
                State {
                    kind,
                    xmin: r.get(2),
                    changes: r.get(3),
                    live: r.get(4),
                    maintenance: r.get(5),
                    last_value: r.get(6),
                    dead: r.get(7),
                    bytes: r.get(8),
                },
            );
        }
        let others = tx
            .query(&self.others, &[])
            .map_err(pg("guard: read the schemas and functions"))?;
        for r in others {
            let kind = if r.get::<_, &str>(0) == "schema" {
                "schema"
            } else {
                "function"
            };
            objects.insert(
                format!("{kind} {}", r.get::<_, String>(1)),
                State {
                    kind,
                    xmin: r.get(2),
                    changes: None,
                    live: None,
                    maintenance: None,
                    last_value: None,
                    dead: None,
                    bytes: None,
                },
            );
        }
        let large_objects: i64 = tx
            .query_one(&self.large_objects, &[])
            .map_err(pg("guard: count large objects"))?
            .get(0);
        tx.rollback().map_err(pg("guard"))?;
        Ok(Fingerprint {
            objects,
            large_objects,
        })
    }
}

impl crate::fingerprint::Fingerprinter for Guard {
    fn take(&mut self) -> Result<Fingerprint, DbError> {
        Guard::take(self)
    }

    fn wait_for_workers(
        &mut self,
        backends: Option<&[u32]>,
        limit: Duration,
    ) -> Result<(), DbError> {
        Guard::wait_for_workers(self, backends, limit)
    }
}
