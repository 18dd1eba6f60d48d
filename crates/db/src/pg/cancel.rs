//! Stopping what a fork's connections run on the server.
//!
//! Killing a worker does not stop its queries: PostgreSQL notices a
//! vanished client only when it next reads from it, and a backend busy
//! with `pg_sleep(100)` or `generate_series(1, 1e11)` reads nothing until
//! the query ends, holding its transaction and its locks all along. So
//! every worker says which server processes it connected to, as soon as
//! it has connected and before any SQL of the user's runs there
//! (`connect::announce_backends`), and when a fork has to be stopped (its timeout,
//! Ctrl-C, SIGTERM) the parent, from a connection of its own, first cancels
//! their queries (`pg_cancel_backend`), then ends their sessions
//! (`pg_terminate_backend`), and waits until they are gone
//! ([`stop_backends`]), all within a budget so that runner still exits
//! promptly when the server does not answer.

use super::connect::{connect, pg};
use crate::DbError;
use postgres::Client;
use std::time::{Duration, Instant};

/// How long a cancelled query gets to end before its session is ended.
const CANCEL_GRACE: Duration = Duration::from_millis(300);

/// Cancels the queries of the server processes `pids`, ends their
/// sessions and waits until they are gone, within `budget` in all.
/// Returns one sentence per process that was running a query, saying
/// which and what was done to it (an idle session is ended without a
/// word: its client was going anyway). A server that cannot be reached in
/// time is an error; the caller goes on stopping the worker either way.
pub fn stop_backends(url: &str, pids: &[u32], budget: Duration) -> Result<Vec<String>, DbError> {
    if pids.is_empty() {
        return Ok(Vec::new());
    }
    let (url, pids) = (url.to_owned(), pids.to_vec());
    let (tx, rx) = std::sync::mpsc::channel();
    let deadline = Instant::now() + budget;
    // On a thread of its own, so a server that never answers costs the
    // budget and no more (the thread is abandoned with its connection).
    std::thread::spawn(move || {
        let _ = tx.send(stop(&url, &pids, deadline));
    });
    rx.recv_timeout(budget).unwrap_or_else(|_| {
        Err(DbError::Postgres {
            context: "cancel the fork's queries",
            message: format!(
                "the server did not answer within {:.1} s",
                budget.as_secs_f64()
            ),
        })
    })
}

/// One backend as `pg_stat_activity` shows it.
struct Seen {
    pid: u32,
    state: String,
    query: String,
    running_s: f64,
}

fn activity(client: &mut Client, pids: &[i32]) -> Result<Vec<Seen>, DbError> {
    let rows = client
        .query(
            "SELECT pid, coalesce(state, ''), coalesce(left(query, 200), ''), \
                    coalesce(extract(epoch FROM clock_timestamp() - query_start)::float8, 0) \
             FROM pg_stat_activity WHERE pid = ANY($1) ORDER BY pid",
            &[&pids],
        )
        .map_err(pg("read pg_stat_activity"))?;
    Ok(rows
        .iter()
        .map(|r| Seen {
            pid: r.get::<_, i32>(0) as u32,
            state: r.get(1),
            query: r.get(2),
            running_s: r.get(3),
        })
        .collect())
}

fn stop(url: &str, pids: &[u32], deadline: Instant) -> Result<Vec<String>, DbError> {
    let (mut client, _) = connect(url)?;
    client
        .batch_execute("SET application_name TO 'runner cancel'")
        .map_err(pg("cancel the fork's queries"))?;
    let pids: Vec<i32> = pids.iter().filter_map(|&p| i32::try_from(p).ok()).collect();
    let found = activity(&mut client, &pids)?;
    // Which lock a query waited for, said with what was cancelled.
    let u32s: Vec<u32> = pids.iter().map(|&p| p as u32).collect();
    let locked = super::locks::waits(&mut client, &u32s, Duration::ZERO).unwrap_or_default();
    let active: Vec<i32> = found
        .iter()
        .filter(|s| s.state == "active")
        .map(|s| s.pid as i32)
        .collect();
    if !active.is_empty() {
        client
            .execute(
                "SELECT pg_cancel_backend(p) FROM unnest($1::int[]) AS p",
                &[&active],
            )
            .map_err(pg("pg_cancel_backend"))?;
        let until = (Instant::now() + CANCEL_GRACE).min(deadline);
        while Instant::now() < until
            && activity(&mut client, &active)?
                .iter()
                .any(|s| s.state == "active")
        {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    // Every session of the fork ends now: the worker is about to be
    // killed, and a session whose client is gone would otherwise wait, in
    // its transaction and with its locks, until it next reads from it.
    let present: Vec<i32> = found.iter().map(|s| s.pid as i32).collect();
    client
        .execute(
            "SELECT pg_terminate_backend(p) FROM unnest($1::int[]) AS p",
            &[&present],
        )
        .map_err(pg("pg_terminate_backend"))?;
    let mut gone = false;
    while Instant::now() < deadline {
        if activity(&mut client, &present)?.is_empty() {
            gone = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(found
        .iter()
        .filter(|s| s.state == "active")
        .map(|s| {
            let mut said = describe(s, gone);
            if let Some(w) = locked.iter().find(|w| w.pid == s.pid) {
                said.push_str(&format!(
                    "; it had waited {:.1} s for {}",
                    w.waited_s,
                    w.what()
                ));
            }
            said
        })
        .collect())
}

/// `cancelled the query that PostgreSQL backend 4242 had run for 9.8 s
/// (`SELECT pg_sleep(100)`) and ended its session`.
fn describe(s: &Seen, gone: bool) -> String {
    let query: String = s.query.split_whitespace().collect::<Vec<_>>().join(" ");
    let query = if query.chars().count() > 80 {
        format!("{}...", query.chars().take(77).collect::<String>())
    } else {
        query
    };
    let ended = if gone {
        "ended its session"
    } else {
        "asked the server to end its session, which had not ended when runner stopped waiting"
    };
    format!(
        "cancelled the query that PostgreSQL backend {} had run for {:.1} s (`{}`) and {ended}",
        s.pid,
        s.running_s,
        runner_core::redact::secrets(&query)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_was_stopped_is_said_with_its_query() {
        let s = Seen {
            pid: 4242,
            state: "active".into(),
            query: "SELECT  pg_sleep(100)\n".into(),
            running_s: 9.84,
        };
        assert_eq!(
            describe(&s, true),
            "cancelled the query that PostgreSQL backend 4242 had run for 9.8 s (`SELECT pg_sleep(100)`) and ended its session"
        );
        assert!(describe(&s, false).contains("had not ended when runner stopped waiting"));
    }
}
