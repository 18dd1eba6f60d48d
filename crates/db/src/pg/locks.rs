//! A fork that waits on a lock says so: which lock, held by whom, and for
//! how long, instead of running silently into `lock_timeout` or its fork
//! timeout. The usual cause is two arms that write the same rows of a
//! user's table in `setup`: each arm's writes are held, uncommitted, until
//! the fork ends, so the second arm waits for the first, which is the same
//! worker and never lets go.
//!
//! The parent watches, from a connection of its own opened only when a
//! worker has been setting up for a while, the server processes the worker
//! announced (`cancel::announce_backends`); it looks only while the worker
//! sets up and checks its arms, never while a fork is timed.

use super::connect::{connect, pg};
use crate::DbError;
use postgres::Client;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// A wait shorter than this is not said: locks are taken and given back
/// all the time.
pub const SAY_AFTER: Duration = Duration::from_secs(2);
/// How often the watch looks.
const EVERY: Duration = Duration::from_secs(1);

/// One lock a backend waits for, as the server shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Wait {
    pub pid: u32,
    /// `relation public.t`, `transaction 1234`, `tuple of public.t`.
    pub lock: String,
    pub mode: String,
    pub waited_s: f64,
    pub query: String,
    /// The processes holding it, each `backend 456 (...)`.
    pub holders: Vec<String>,
    /// A holder is one of runner's own workers: the arms block each other.
    pub by_runner: bool,
}

impl Wait {
    /// `for a ShareLock on transaction 731 (a row it wrote), held by ...`
    pub fn what(&self) -> String {
        format!(
            "a {} on {}, held by {}",
            self.mode,
            self.lock,
            if self.holders.is_empty() {
                "a process that has since let go".to_string()
            } else {
                self.holders.join(", ")
            }
        )
    }

    pub fn sentence(&self) -> String {
        let mut s = format!(
            "PostgreSQL backend {} has waited {:.1} s (`{}`) for {}",
            self.pid,
            self.waited_s,
            shorten(&self.query),
            self.what()
        );
        if self.by_runner {
            s.push_str(": the arms block each other, since each arm's writes (in `setup`, or in a transaction it opened) hold their row locks until the fork ends; let only one arm write those rows, or write them in a table of the arm's own");
        }
        s
    }
}

fn shorten(q: &str) -> String {
    let q: String = q.split_whitespace().collect::<Vec<_>>().join(" ");
    if q.chars().count() > 80 {
        format!("{}...", q.chars().take(77).collect::<String>())
    } else {
        q
    }
}

/// The lock waits of `pids` that have lasted at least `at_least`.
pub fn waits(client: &mut Client, pids: &[u32], at_least: Duration) -> Result<Vec<Wait>, DbError> {
    let pids: Vec<i32> = pids.iter().filter_map(|&p| i32::try_from(p).ok()).collect();
    let rows = client
        .query(
            "SELECT a.pid, l.locktype, l.mode, \
                    coalesce(l.relation::regclass::text, ''), coalesce(l.transactionid::text, ''), \
                    coalesce(extract(epoch FROM clock_timestamp() - coalesce(l.waitstart, a.query_start))::float8, 0), \
                    coalesce(a.query, ''), pg_blocking_pids(a.pid) \
             FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid AND NOT l.granted \
             WHERE a.pid = ANY($1) ORDER BY a.pid",
            &[&pids],
        )
        .map_err(pg("read pg_locks"))?;
    let mut out = Vec::new();
    for r in rows {
        let waited_s: f64 = r.get(5);
        if waited_s < at_least.as_secs_f64() {
            continue;
        }
        let (locktype, relation, xid): (String, String, String) = (r.get(1), r.get(3), r.get(4));
        let lock = match locktype.as_str() {
            "relation" => format!("relation {relation}"),
            "tuple" => format!("a row of {relation}"),
            "transactionid" => format!("transaction {xid} (a row it wrote)"),
            other if !relation.is_empty() => format!("{other} of {relation}"),
            other => other.to_string(),
        };
        let blockers: Vec<i32> = r.get(7);
        let holders = client
            .query(
                "SELECT pid, coalesce(application_name, ''), coalesce(state, '') \
                 FROM pg_stat_activity WHERE pid = ANY($1) ORDER BY pid",
                &[&blockers],
            )
            .map_err(pg("read pg_stat_activity"))?;
        let by_runner = holders
            .iter()
            .any(|h| h.get::<_, String>(1).starts_with("runner worker"));
        out.push(Wait {
            pid: r.get::<_, i32>(0) as u32,
            lock,
            mode: r.get(2),
            waited_s,
            query: r.get(6),
            holders: holders
                .iter()
                .map(|h| {
                    let (app, state): (String, String) = (h.get(1), h.get(2));
                    let app = if app.is_empty() {
                        "no application name".into()
                    } else {
                        format!("`{app}`")
                    };
                    format!("backend {} ({app}, {state})", h.get::<_, i32>(0))
                })
                .collect(),
            by_runner,
        });
    }
    Ok(out)
}

/// Watches a worker's backends for lock waits while it sets up.
pub struct LockWatch {
    url: Option<String>,
    client: Option<Client>,
    next: Instant,
    /// (pid, lock) pairs already said.
    said: BTreeSet<(u32, String)>,
    /// The last wait seen, for the fork's error if it fails.
    pub last: Option<Wait>,
}

impl LockWatch {
    /// A watch on the server at `url` (none: nothing to watch).
    pub fn new(url: Option<&str>) -> LockWatch {
        let now = Instant::now();
        LockWatch {
            url: url.map(str::to_owned),
            client: None,
            next: now + SAY_AFTER,
            said: BTreeSet::new(),
            last: None,
        }
    }

    /// At most once a second, and only once the worker has been at it for
    /// [`SAY_AFTER`]: the lock waits of `pids` not said before, as
    /// sentences. A server that does not answer is not an error here (the
    /// fork's own connections will say so).
    pub fn poll(&mut self, pids: &[u32]) -> Vec<String> {
        let now = Instant::now();
        if pids.is_empty() || now < self.next || self.url.is_none() {
            return Vec::new();
        }
        self.next = now + EVERY;
        if self.client.is_none() {
            let Some(url) = &self.url else {
                return Vec::new();
            };
            match connect(url) {
                Ok((mut c, _)) => {
                    let _ = c.batch_execute("SET application_name TO 'runner lock watch'");
                    self.client = Some(c);
                }
                Err(_) => {
                    self.url = None;
                    return Vec::new();
                }
            }
        }
        let Some(client) = self.client.as_mut() else {
            return Vec::new();
        };
        let Ok(found) = waits(client, pids, SAY_AFTER) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for w in found {
            if self.said.insert((w.pid, w.lock.clone())) {
                out.push(w.sentence());
            }
            self.last = Some(w);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_names_the_lock_its_holder_and_the_cure_when_the_arms_block_each_other() {
        let w = Wait {
            pid: 11,
            lock: "transaction 731 (a row it wrote)".into(),
            mode: "ShareLock".into(),
            waited_s: 2.04,
            query: "UPDATE  accounts SET v = 0".into(),
            holders: vec!["backend 10 (`runner worker runner_x_b`, idle in transaction)".into()],
            by_runner: true,
        };
        let s = w.sentence();
        assert!(s.starts_with("PostgreSQL backend 11 has waited 2.0 s (`UPDATE accounts SET v = 0`) for a ShareLock on transaction 731 (a row it wrote), held by backend 10 (`runner worker runner_x_b`, idle in transaction): the arms block each other"), "{s}");
        let other = Wait {
            by_runner: false,
            holders: Vec::new(),
            ..w
        };
        assert!(other
            .sentence()
            .ends_with("held by a process that has since let go"));
    }
}
