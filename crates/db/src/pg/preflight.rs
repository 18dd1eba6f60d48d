//! Questions for the PostgreSQL catalog before anything of the user's
//! runs (`crate::preflight` asks them), for `check` and `exec` alike: does every schema of `search_path`
//! and every table of `private_copies` exist; would an INSERT take a
//! sequence default (which no rollback undoes); and which objects does the
//! experiment name at all (functions' bodies read in their turn), so the
//! guard blames only these on this run.
//!
//! Read-only: one connection, catalog queries, no transaction left open.

use super::connect::{connect, pg};
use crate::names::{self, Name};
use crate::preflight::{ArmSql, Findings, PreflightError, PRIVILEGES_DOC};
use crate::statements::SqlDialect;
use crate::DbError;
use postgres::Client;
use std::collections::BTreeSet;

const SYSTEM: &str = "n.nspname IN ('pg_catalog', 'information_schema') OR n.nspname LIKE 'pg\\_toast%' OR n.nspname LIKE 'pg\\_temp\\_%' OR n.nspname LIKE 'runner\\_%'";

pub fn check(
    url: &str,
    arms: &[ArmSql],
    private_copies: &[String],
) -> Result<Findings, PreflightError> {
    let (mut client, endpoint) = connect(url)?;
    for arm in arms {
        for schema in &arm.search_path {
            let found = client
                .query_opt("SELECT 1 FROM pg_namespace WHERE nspname = $1", &[schema])
                .map_err(pg("look up search_path"))?;
            if found.is_none() {
                return Err(PreflightError::Refused(format!(
                    "strategy `{}`: search_path names schema \"{schema}\", which does not exist in database \"{}\"; name an existing schema (`\\dn` in psql lists them)",
                    arm.strategy, endpoint.database
                )));
            }
        }
    }
    let paths: Vec<&String> = arms.iter().flat_map(|a| &a.search_path).collect();
    let mut copies = Vec::new();
    let mut copy_names: Vec<(String, String)> = Vec::new();
    for given in private_copies {
        let name = names::parse_name(given).ok_or_else(|| {
            PreflightError::Refused(format!(
                "[database] private_copies: {given:?} is not a table name"
            ))
        })?;
        let Some((key, relname, selectable)) = resolve_table(&mut client, &name, &paths)? else {
            return Err(PreflightError::Refused(format!(
                "[database] private_copies names {given:?}, but no such table is found in database \"{}\"{}; name an existing table, schema-qualified (e.g. \"public.orders\")",
                endpoint.database,
                if name.schema.is_none() { " through the arms' search_path" } else { "" }
            )));
        };
        if !selectable {
            return Err(PreflightError::Refused(format!(
                "[database] private_copies names {key}, but the run's role may not read it (SELECT), and a copy is made by reading it; grant SELECT on it (see {PRIVILEGES_DOC})"
            )));
        }
        if let Some((other, _)) = copy_names.iter().find(|(_, r)| *r == relname) {
            return Err(PreflightError::Refused(format!(
                "[database] private_copies names {other} and {key}: both copies would be called {relname} in the arm's schema; copy one of them only"
            )));
        }
        copy_names.push((key.clone(), relname));
        copies.push(key);
    }
    let texts: Vec<&String> = arms.iter().flat_map(|a| &a.texts).collect();
    let mut named = named(&mut client, &texts, &paths, &copies)?;
    named.extend(copies.iter().cloned());
    for arm in arms {
        for text in &arm.texts {
            for insert in names::inserts(text, SqlDialect::Postgres) {
                let target = resolve_table(&mut client, &insert.table, &paths_of(arm))?;
                let Some((key, _, _)) = target else {
                    // Made by setup in the arm's own schema: its sequences
                    // go with the schema.
                    continue;
                };
                if copies.contains(&key) {
                    continue;
                }
                if let Some(why) = sequence_default(&mut client, &key, &insert)? {
                    return Err(PreflightError::Refused(format!(
                        "strategy `{}`: INSERT INTO {key} {why}, which moves a sequence for good (a rollback does not undo it); add \"{key}\" to [database] private_copies, so the INSERT writes a private copy with sequences of its own, or give the column a value in the INSERT",
                        arm.strategy
                    )));
                }
            }
        }
    }
    Ok(Findings { named, copies })
}

/// How deep function bodies are read for what they name in their turn.
const BODIES: u32 = 3;

/// What the experiment names, as guard keys (`fingerprint::Blame`): every
/// relation a name in its SQL may mean, with the sequences their columns
/// own or their defaults call; every function it calls, and what those
/// functions' bodies and the triggers of the named tables name in their
/// turn; the schemas it names (its `search_path` and qualified names);
/// the keys of qualified names that do not exist yet (so their creation
/// is the run's); and `large objects` when it calls a large-object
/// function. More than the SQL touches, never less: what is named is
/// held against the run, and another session's change to anything else
/// is only noted.
fn named(
    client: &mut Client,
    texts: &[&String],
    paths: &[&String],
    copies: &[String],
) -> Result<BTreeSet<String>, DbError> {
    let mut named: BTreeSet<String> = paths
        .iter()
        .map(|s| format!("schema {}", names::quote(s)))
        .collect();
    let mut seen_functions = BTreeSet::new();
    let mut texts: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
    let mut round = 0;
    while !texts.is_empty() && round <= BODIES {
        let mut bodies = Vec::new();
        for text in &texts {
            for name in names::mentioned(text, SqlDialect::Postgres) {
                if name.name.starts_with("lo_")
                    || matches!(name.name.as_str(), "loread" | "lowrite")
                {
                    named.insert("large objects".into());
                }
                named.extend(relations_called(client, &name)?);
                for (key, body) in functions_called(client, &name)? {
                    if seen_functions.insert(key.clone()) {
                        named.insert(format!("function {key}"));
                        bodies.push(body);
                    }
                }
                match &name.schema {
                    Some(schema) => {
                        named.insert(format!("schema {}", names::quote(schema)));
                        named.insert(format!(
                            "{}.{}",
                            names::quote(schema),
                            names::quote(&name.name)
                        ));
                    }
                    None => named.extend(
                        paths
                            .iter()
                            .map(|s| format!("{}.{}", names::quote(s), names::quote(&name.name))),
                    ),
                }
            }
        }
        let tables: BTreeSet<String> = named.iter().chain(copies).cloned().collect();
        for (key, body) in trigger_functions(client, &tables)? {
            if seen_functions.insert(key.clone()) {
                named.insert(format!("function {key}"));
                bodies.push(body);
            }
        }
        texts = bodies;
        round += 1;
    }
    let tables: BTreeSet<String> = named.iter().chain(copies).cloned().collect();
    named.extend(owned_with(client, &tables)?);
    let relations: Vec<String> = named.iter().filter(|k| !k.contains(' ')).cloned().collect();
    named.extend(
        relations
            .iter()
            .filter_map(|k| k.split_once('.').map(|(s, _)| format!("schema {s}"))),
    );
    Ok(named)
}

/// The functions outside the system's schemas that `name` may call, as
/// `schema.name` keys, with their bodies (SQL or PL/pgSQL source).
fn functions_called(client: &mut Client, name: &Name) -> Result<Vec<(String, String)>, DbError> {
    let rows = client
        .query(
            &format!(
                "SELECT quote_ident(n.nspname) || '.' || quote_ident(p.proname), coalesce(p.prosrc, '') \
                 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace \
                 WHERE p.proname = $1 AND ($2::text IS NULL OR n.nspname = $2) AND NOT ({SYSTEM})"
            ),
            &[&name.name, &name.schema],
        )
        .map_err(pg("look up the functions the SQL names"))?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// The functions the triggers of `tables` (guard keys) run, with their bodies.
fn trigger_functions(
    client: &mut Client,
    tables: &BTreeSet<String>,
) -> Result<Vec<(String, String)>, DbError> {
    let keys: Vec<&String> = tables.iter().collect();
    let rows = client
        .query(
            "SELECT quote_ident(n.nspname) || '.' || quote_ident(p.proname), coalesce(p.prosrc, '') \
             FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid \
             JOIN pg_namespace cn ON cn.oid = c.relnamespace \
             JOIN pg_proc p ON p.oid = t.tgfoid JOIN pg_namespace n ON n.oid = p.pronamespace \
             WHERE NOT t.tgisinternal AND quote_ident(cn.nspname) || '.' || quote_ident(c.relname) = ANY($1)",
            &[&keys],
        )
        .map_err(pg("look up the triggers of the named tables"))?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

fn paths_of(arm: &ArmSql) -> Vec<&String> {
    arm.search_path.iter().collect()
}

/// A table (or partitioned table) by its name: qualified, or the first
/// schema of `path` that has it. Its guard key, bare name and whether
/// the role may read it.
fn resolve_table(
    client: &mut Client,
    name: &Name,
    path: &[&String],
) -> Result<Option<(String, String, bool)>, DbError> {
    let schemas: Vec<String> = match &name.schema {
        Some(s) => vec![s.clone()],
        None => path.iter().map(|s| s.to_string()).collect(),
    };
    for schema in schemas {
        let row = client
            .query_opt(
                "SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname), c.relname::text, \
                        has_table_privilege(c.oid, 'SELECT') \
                 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p')",
                &[&schema, &name.name],
            )
            .map_err(pg("look up a table"))?;
        if let Some(r) = row {
            return Ok(Some((r.get(0), r.get(1), r.get(2))));
        }
    }
    Ok(None)
}

/// Every relation outside the system's and runner's schemas that `name`
/// may mean: in its schema, or in any schema for a bare name.
fn relations_called(client: &mut Client, name: &Name) -> Result<Vec<String>, DbError> {
    let rows = client
        .query(
            &format!(
                "SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) \
                 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE c.relname = $1 AND ($2::text IS NULL OR n.nspname = $2) \
                   AND c.relkind IN ('r', 'p', 'S', 'm', 'v', 'f') AND NOT ({SYSTEM})"
            ),
            &[&name.name, &name.schema],
        )
        .map_err(pg("look up the tables the SQL names"))?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// The sequences owned by columns of `named` tables or called by their
/// defaults, and the tables whose columns own a `named` sequence.
fn owned_with(client: &mut Client, named: &BTreeSet<String>) -> Result<Vec<String>, DbError> {
    let keys: Vec<&String> = named.iter().collect();
    let rows = client
        .query(
            "WITH rel AS (SELECT c.oid, quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS key \
                          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace) \
             SELECT s.key, t.key FROM pg_depend d \
             JOIN rel s ON s.oid = d.objid JOIN rel t ON t.oid = d.refobjid \
             WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass \
               AND d.deptype IN ('a', 'i') AND (s.key = ANY($1) OR t.key = ANY($1))",
            &[&keys],
        )
        .map_err(pg("look up the sequences of the named tables"))?;
    let defaults = client
        .query(
            "WITH rel AS (SELECT c.oid, c.relkind, quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS key \
                          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace) \
             SELECT s.key FROM pg_attrdef a JOIN rel t ON t.oid = a.adrelid \
             JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = a.oid \
                 AND d.refclassid = 'pg_class'::regclass \
             JOIN rel s ON s.oid = d.refobjid AND s.relkind = 'S' \
             WHERE t.key = ANY($1)",
            &[&keys],
        )
        .map_err(pg("look up the sequences the named tables' defaults call"))?;
    Ok(rows
        .iter()
        .flat_map(|r| [r.get::<_, String>(0), r.get::<_, String>(1)])
        .chain(defaults.iter().map(|r| r.get::<_, String>(0)))
        .collect())
}

/// Why `insert` into the table `key` would call `nextval`: the first
/// column it leaves to a sequence default or an identity.
fn sequence_default(
    client: &mut Client,
    key: &str,
    insert: &names::Insert,
) -> Result<Option<String>, DbError> {
    let rows = client
        .query(
            "SELECT a.attname::text, a.attidentity::text, coalesce(pg_get_expr(d.adbin, d.adrelid), '') \
             FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
             WHERE a.attrelid = $1::text::regclass AND a.attnum > 0 AND NOT a.attisdropped \
             ORDER BY a.attnum",
            &[&key],
        )
        .map_err(pg("read the columns of an INSERT's table"))?;
    for (position, r) in rows.iter().enumerate() {
        let (column, identity, default): (String, String, String) = (r.get(0), r.get(1), r.get(2));
        if !insert.takes_default(&column, position) {
            continue;
        }
        if !identity.is_empty() {
            return Ok(Some(format!(
                "leaves identity column \"{column}\" to its sequence"
            )));
        }
        if default.contains("nextval(") {
            return Ok(Some(format!(
                "leaves column \"{column}\" to its default, {default}"
            )));
        }
    }
    Ok(None)
}
