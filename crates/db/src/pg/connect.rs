//! Connections to the server: the URL parsed once (every connection
//! bounded in time), the server's words turned into one sentence, and each
//! new connection announced to the worker's parent before it is used.

use crate::DbError;
use postgres::config::Host;
use postgres::{Client, Config, NoTls};
use std::fmt;
use std::sync::OnceLock;
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

pub(crate) fn pg(context: &'static str) -> impl FnOnce(postgres::Error) -> DbError {
    move |e| DbError::Postgres {
        context,
        message: message(&e),
    }
}

/// A measured statement's error, with its SQLSTATE when the server sent
/// one; a failure of the connection itself stays [`DbError::Postgres`]:
/// only the server's refusal of a statement is a run that failed.
pub(crate) fn statement(e: postgres::Error) -> DbError {
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
            watch_the_client(&mut client)?;
            // A worker's parent learns of the connection before it is used.
            announce(&mut client)?;
            Ok((client, endpoint))
        }
        Ok(Err(e)) => Err(fail(message(&e))),
        Err(_) => Err(fail(format!(
            "the server did not complete the connection within {} s (connect_timeout in the URL raises this)",
            limit.as_secs()
        ))),
    }
}

/// How often the server checks, while it runs a statement of runner's,
/// that runner is still connected (`client_connection_check_interval`).
pub const CLIENT_CHECK_MS: u32 = 1000;

/// Has the server end a statement of this session once runner is gone
/// (`kill -9` of a parent takes its worker with it, and with the worker
/// its connections): PostgreSQL otherwise notices a vanished client only
/// when it next writes to it, so a long statement would run, holding its
/// locks, until its end or `statement_timeout`. The setting exists from
/// PostgreSQL 14 on (the check itself needs a Linux server); on an older
/// server nothing is set and `statement_timeout` is the bound. A poll
/// every second of a running statement is all it costs.
fn watch_the_client(client: &mut Client) -> Result<(), DbError> {
    client
        .batch_execute(&format!(
            "SELECT set_config('client_connection_check_interval', '{CLIENT_CHECK_MS}', false) \
             WHERE current_setting('server_version_num')::int >= 140000"
        ))
        .map_err(pg("set client_connection_check_interval"))
}

/// What a worker does with the pid of each connection it opens.
type Announce = Box<dyn Fn(u32) + Send + Sync>;
static ANNOUNCE: OnceLock<Announce> = OnceLock::new();

/// Makes every PostgreSQL connection this process opens from now on call
/// `announce` with its server process id before it is used (the worker
/// sends it to the parent, which can then stop its queries: `cancel`).
/// Without it, connections say nothing.
pub fn announce_backends(announce: impl Fn(u32) + Send + Sync + 'static) {
    let _ = ANNOUNCE.set(Box::new(announce));
}

/// Called by [`connect`] on every new connection.
fn announce(client: &mut Client) -> Result<(), DbError> {
    let Some(announce) = ANNOUNCE.get() else {
        return Ok(());
    };
    let row = client
        .query_one("SELECT pg_backend_pid()", &[])
        .map_err(pg("pg_backend_pid()"))?;
    let pid: i32 = row.try_get(0).map_err(pg("pg_backend_pid()"))?;
    if let Ok(pid) = u32::try_from(pid) {
        announce(pid);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
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
