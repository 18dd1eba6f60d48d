//! The server backend: schema lifecycle for a run, and one seeded table per
//! worker inside that schema.
//!
//! Safety rule (docs/guide/experiment-file.md): runner only touches a schema it created.
//! [`create_run_schema`] refuses an existing `runner_<id>` and marks the new
//! one with a comment; workers and [`drop_run_schema`] check that marker, so
//! nothing outside a schema runner made for this run is ever modified.
//!
//! Round trips per preview (see [`PgTable`]): 4 — `BEGIN`, one `UPDATE` that
//! writes every override field at once, one `SELECT` of the whole model,
//! `ROLLBACK`. One `UPDATE` per field would be 3 + k (7 for the usual 4
//! fields), so the write costs the same whatever the slider touches.

use super::{check_row_count, hash_rows, schema_name, DbError, DbInfo, ModelTable};
use postgres::config::Host;
use postgres::error::SqlState;
use postgres::{Client, Config, NoTls, SimpleQueryMessage, Statement};
use runner_core::preview::{Model, Overrides};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// Where a URL points, for messages and metadata; never holds the password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
    pub database: String,
    /// Unix-domain socket (host is a directory) rather than TCP.
    pub unix_socket: bool,
    /// The role the URL logs in as, when it names one.
    pub user: Option<String>,
}

impl Endpoint {
    pub fn parse(url: &str) -> Result<Endpoint, DbError> {
        parse(url).map(|(_, e)| e)
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{} database \"{}\"",
            self.host, self.port, self.database
        )
    }
}

/// Bounds on every connection runner opens, so that no wait is endless: a
/// server that accepts TCP and never answers, a statement that never ends,
/// a lock another session holds on the run's table. Each is a default the
/// URL can override: `connect_timeout=S` (which also bounds the handshake),
/// and `options=-c statement_timeout=MS` / `-c lock_timeout=MS`.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
pub const STATEMENT_TIMEOUT_MS: u64 = 60_000;
pub const LOCK_TIMEOUT_MS: u64 = 10_000;

fn parse(url: &str) -> Result<(Config, Endpoint), DbError> {
    // Where the password ends, decided as `redact` masks it: a URL that
    // would put part of it into the host is refused, never shown.
    runner_core::redact::credentials(url).map_err(|e| DbError::BadUrl(e.to_string()))?;
    let mut config: Config = url
        .parse()
        .map_err(|e: postgres::Error| DbError::BadUrl(message(&e)))?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    let mut options = config.get_options().unwrap_or_default().to_owned();
    for (setting, ms) in [
        ("statement_timeout", STATEMENT_TIMEOUT_MS),
        ("lock_timeout", LOCK_TIMEOUT_MS),
    ] {
        if !options.contains(setting) {
            options = format!("{options} -c {setting}={ms}").trim().to_owned();
        }
    }
    config.options(&options);
    let (host, unix_socket) = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => (h.clone(), false),
        Some(Host::Unix(p)) => (p.display().to_string(), true),
        None => ("(no host)".to_owned(), false),
    };
    let endpoint = Endpoint {
        host,
        port: config.get_ports().first().copied().unwrap_or(5432),
        database: config
            .get_dbname()
            .or(config.get_user())
            .unwrap_or("")
            .to_owned(),
        unix_socket,
        user: config.get_user().map(str::to_owned),
    };
    Ok((config, endpoint))
}

/// The server's own words when there are some (`password authentication
/// failed ...`), else the underlying cause (`Connection refused ...`).
fn message(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return db.message().to_owned();
    }
    let text = match std::error::Error::source(e) {
        Some(cause) => cause.to_string(),
        None => e.to_string(),
    };
    // Mid-sentence after "...database \"x\": ", so start in lower case.
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => text,
    }
}

pub(super) fn pg(context: &'static str) -> impl FnOnce(postgres::Error) -> DbError {
    move |e| DbError::Postgres {
        context,
        message: message(&e),
    }
}

/// A measured statement's error, with its SQLSTATE when the server sent
/// one; a failure of the connection itself stays [`DbError::Postgres`]:
/// only the server's refusal of a statement is a run that failed.
pub(super) fn statement(e: postgres::Error) -> DbError {
    match e.code() {
        Some(code) => DbError::Statement {
            backend: "PostgreSQL",
            code: code.code().to_owned(),
            message: message(&e),
        },
        None => pg("measured SQL")(e),
    }
}

/// Connects, turning any failure into one sentence naming host, port and
/// database. The postgres crate bounds only the TCP connect by
/// `connect_timeout`; the whole handshake is bounded here too (a server
/// that accepts and never answers would otherwise hang runner for good), by
/// running it on a thread that is abandoned at the deadline.
pub fn connect(url: &str) -> Result<(Client, Endpoint), DbError> {
    let (config, endpoint) = parse(url)?;
    let limit = config
        .get_connect_timeout()
        .copied()
        .unwrap_or(CONNECT_TIMEOUT)
        * config.get_hosts().len().max(1) as u32;
    let (tx, rx) = std::sync::mpsc::channel();
    let attempt = config.clone();
    std::thread::spawn(move || {
        let _ = tx.send(attempt.connect(NoTls));
    });
    let fail = |message: String| DbError::Connect {
        host: endpoint.host.clone(),
        port: endpoint.port,
        database: endpoint.database.clone(),
        message,
    };
    match rx.recv_timeout(limit + Duration::from_millis(500)) {
        Ok(Ok(mut client)) => {
            // A worker's parent learns of the connection before it is used.
            super::cancel::announce(&mut client)?;
            Ok((client, endpoint))
        }
        Ok(Err(e)) => Err(fail(message(&e))),
        Err(_) => Err(fail(format!(
            "the server did not complete the connection within {} s (connect_timeout in the URL raises this)",
            limit.as_secs()
        ))),
    }
}

pub(super) fn marker(schema: &str) -> String {
    format!("created by runner for its run schema {schema}")
}

/// The schema's comment, `None` when there is no such schema.
pub(super) fn schema_comment(
    client: &mut Client,
    schema: &str,
) -> Result<Option<Option<String>>, DbError> {
    let row = client
        .query_opt(
            "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1",
            &[&schema],
        )
        .map_err(pg("look up schema"))?;
    row.map(|r| r.try_get(0).map_err(pg("look up schema")))
        .transpose()
}

pub(super) fn check_ours(client: &mut Client, schema: &str) -> Result<bool, DbError> {
    ours(
        schema,
        schema_comment(client, schema)?
            .as_ref()
            .map(Option::as_deref),
    )
}

/// Whether `schema`, found with `comment` (`None`: no such schema), is one
/// runner made: false when it does not exist, an error when it exists
/// without runner's marker.
fn ours(schema: &str, comment: Option<Option<&str>>) -> Result<bool, DbError> {
    match comment {
        None => Ok(false),
        Some(Some(c)) if c == marker(schema) => Ok(true),
        Some(_) => Err(DbError::NotOurSchema(schema.to_owned())),
    }
}

/// Creates `runner_<run_id>` for a run; refuses, untouched, one that exists.
pub fn create_run_schema(url: &str, run_id: &str) -> Result<String, DbError> {
    let schema = schema_name(run_id)?;
    let (mut client, _) = connect(url)?;
    if schema_comment(&mut client, &schema)?.is_some() {
        return Err(DbError::SchemaExists(schema));
    }
    // The name is validated to [a-z0-9_], so formatting it in is safe.
    let sql = format!(
        "BEGIN; CREATE SCHEMA {schema}; COMMENT ON SCHEMA {schema} IS '{}'; COMMIT;",
        marker(&schema)
    );
    match client.batch_execute(&sql) {
        Ok(()) => Ok(schema),
        Err(e) if e.code() == Some(&SqlState::DUPLICATE_SCHEMA) => {
            Err(DbError::SchemaExists(schema))
        }
        Err(e) => Err(pg("create schema")(e)),
    }
}

/// Drops `runner_<run_id>`, and the per-arm schemas of `sql` strategies
/// (`runner_<run_id>_b`, `_t`), each only if runner made it; a missing
/// schema is fine.
pub fn drop_run_schema(url: &str, run_id: &str) -> Result<(), DbError> {
    let schema = schema_name(run_id)?;
    let (mut client, _) = connect(url)?;
    let mut arms: Vec<String> = super::pg_session::SLOTS
        .iter()
        .map(|slot| format!("{schema}_{slot}"))
        .collect();
    // The committed arm schemas of `clients = N`, one per worker
    // (`pg_shared`): normally dropped by their fork, left by a killed one.
    for slot in super::pg_session::SLOTS {
        let like = format!("{}\\_{slot}\\_p%", schema.replace('_', "\\_"));
        let rows = client
            .query(
                "SELECT nspname::text FROM pg_namespace WHERE nspname LIKE $1",
                &[&like],
            )
            .map_err(pg("list the arms' schemas"))?;
        arms.extend(rows.iter().map(|r| r.get::<_, String>(0)));
    }
    // Each schema on its own: one that is not runner's is left alone and
    // reported, and does not keep runner's own from being dropped.
    let mut first_error = None;
    for s in arms.iter().chain([&schema]) {
        let dropped = check_ours(&mut client, s).and_then(|ours| {
            if ours {
                client
                    .batch_execute(&format!("DROP SCHEMA {s} CASCADE"))
                    .map_err(pg("drop schema"))?;
            }
            Ok(())
        });
        if let Err(e) = dropped {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// The name, in the run schema, of the table the exec parent makes for one
/// strategy instance of one job (slot `b` or `t`).
pub fn job_table(cell: u32, fork: u32, slot: &str) -> String {
    format!("model_field_c{cell}_f{fork}_{slot}")
}

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
    /// ([`job_table`]), or else one it makes itself ([`make_tables`]) and
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

/// Server facts that change what a timing means: durability settings,
/// cache size, and whether the connection crosses TCP or a Unix socket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PgInfo {
    pub server_version: String,
    pub shared_buffers: String,
    pub synchronous_commit: String,
    pub fsync: String,
    pub wal_level: String,
    /// `tcp` or `unix`.
    pub transport: String,
    pub host: String,
    pub port: u16,
    pub database: String,
    /// The role the run logged in as (never the password), so a report can
    /// give the URL that reproduces it; absent in runs recorded before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The role is a superuser (absent in runs recorded before runner
    /// looked): its SQL can reach past any transaction (docs/guide/own-code.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superuser: Option<bool>,
    /// Built-in roles it is a member of that act outside the database
    /// (run programs, read or write server files, signal other sessions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_roles: Vec<String>,
}

/// Built-in roles whose members can act outside any transaction.
const SERVER_ROLES: &str = "ARRAY['pg_execute_server_program', 'pg_write_server_files', 'pg_read_server_files', 'pg_signal_backend']";

impl PgInfo {
    /// One sentence when the role can do what no rollback undoes, for
    /// `runner check` and the report's Setup.
    pub fn role_warning(&self) -> Option<String> {
        powers_warning(
            self.user.as_deref(),
            self.superuser == Some(true),
            &self.server_roles,
        )
    }
}

/// The sentence of [`PgInfo::role_warning`] for a role's powers.
fn powers_warning(user: Option<&str>, superuser: bool, server_roles: &[String]) -> Option<String> {
    let role = user.unwrap_or("the run's role");
    let power = if superuser {
        format!("role \"{role}\" is a superuser")
    } else if !server_roles.is_empty() {
        format!("role \"{role}\" is a member of {}", server_roles.join(", "))
    } else {
        return None;
    };
    Some(format!(
        "{power}: runner still rolls back every write, but such a role's SQL can also run programs, write server files or stop other sessions (from inside a function, where runner's check cannot see it), which no rollback undoes; run with a role without these privileges"
    ))
}

/// Whether the role `url` logs in as is a superuser, and the built-in
/// roles it holds that act outside the database.
fn role_powers(client: &mut Client) -> Result<(bool, Vec<String>), DbError> {
    let row = client
        .query_one(
            &format!(
                "SELECT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user), \
                        ARRAY(SELECT r FROM unnest({SERVER_ROLES}) r \
                              WHERE pg_has_role(current_user, r, 'MEMBER') ORDER BY r)"
            ),
            &[],
        )
        .map_err(pg("read the role's privileges"))?;
    let superuser: Option<bool> = row.try_get(0).map_err(pg("read the role's privileges"))?;
    let roles: Vec<String> = row.try_get(1).map_err(pg("read the role's privileges"))?;
    // A superuser is a member of everything; naming the roles adds nothing.
    let superuser = superuser.unwrap_or(false);
    Ok((superuser, if superuser { Vec::new() } else { roles }))
}

/// The warning of [`PgInfo::role_warning`] for the role of `url`, read now.
pub fn role_warning(url: &str) -> Result<Option<String>, DbError> {
    let (mut client, endpoint) = connect(url)?;
    let (superuser, server_roles) = role_powers(&mut client)?;
    Ok(powers_warning(
        endpoint.user.as_deref(),
        superuser,
        &server_roles,
    ))
}
pub(super) fn db_info(url: &str) -> Result<DbInfo, DbError> {
    let (mut client, endpoint) = connect(url)?;
    let (superuser, server_roles) = role_powers(&mut client)?;
    let mut one = |sql: &str| -> Result<String, DbError> {
        let row = client.query_one(sql, &[]).map_err(pg("read settings"))?;
        row.try_get(0).map_err(pg("read settings"))
    };
    let version = one("SELECT version()")?;
    let info = PgInfo {
        server_version: one("SHOW server_version")?,
        shared_buffers: one("SHOW shared_buffers")?,
        synchronous_commit: one("SHOW synchronous_commit")?,
        fsync: one("SHOW fsync")?,
        wal_level: one("SHOW wal_level")?,
        transport: if endpoint.unix_socket { "unix" } else { "tcp" }.to_owned(),
        host: endpoint.host,
        port: endpoint.port,
        database: endpoint.database,
        user: endpoint.user,
        superuser: Some(superuser),
        server_roles,
    };
    Ok(DbInfo {
        backend: "postgres".into(),
        version,
        postgres: Some(info),
    })
}

#[cfg(test)]
mod bounds_tests {
    use super::*;

    #[test]
    fn every_connection_is_bounded_and_the_url_can_say_otherwise() {
        let (c, _) = parse("postgres://u@h/db").unwrap();
        assert_eq!(c.get_connect_timeout(), Some(&CONNECT_TIMEOUT));
        assert_eq!(
            c.get_options(),
            Some("-c statement_timeout=60000 -c lock_timeout=10000")
        );
        let (c, _) =
            parse("postgres://u@h/db?connect_timeout=3&options=-c%20lock_timeout%3D500").unwrap();
        assert_eq!(c.get_connect_timeout(), Some(&Duration::from_secs(3)));
        assert_eq!(
            c.get_options(),
            Some("-c lock_timeout=500 -c statement_timeout=60000")
        );
    }
}
