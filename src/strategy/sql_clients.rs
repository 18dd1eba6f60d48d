//! `sql` with `clients = N` (N > 1, PostgreSQL): a run is N connections
//! each executing the arm's statements once, released together; its time
//! is from the release until the last client ends (the timed region holds
//! only [`Clients::go`]). Each client works in its own never-committed
//! transaction, each run under its own savepoint rolled back after it,
//! and they share the arm's schema, which set-up committed through a gate
//! that refuses anything outside it (`db::pg::shared`). `{client}` in `run`
//! is the client's number, 0 to N - 1. Each client rolls back as soon as
//! its statements end, inside the run (`db::clients` says why).
//!
//! Each client's own time (its release to its last row) is kept per run,
//! for the report's client latencies. A run fails (when the arm allows
//! failures) when any client's statement failed; the first such client's
//! code is the run's.

use super::client_record::{for_client, ClientRecord};
use super::failure::{self, FailCode};
use super::{Observation, Outcome, Setting, Strategy};
use crate::strategy::error::{fail, Doing, Result, StrategyError};
use runner_db::clients::Clients;
use runner_db::pg::sampler::Sampler;
use runner_db::pg::shared::Shared;
use runner_db::statements::{split, SqlDialect};
use runner_db::{DbError, DbTarget};
use runner_spec::placeholder::Template;
use runner_spec::{Protocol, SqlSpec};

pub(super) struct SqlClients {
    name: String,
    url: String,
    shared: Option<Shared>,
    clients: Clients,
    /// Per client, its statements with `{client}` filled in.
    statements: Vec<Vec<Template>>,
    allow_failure: bool,
    input: u64,
    pid: Option<u32>,
    /// Every client's backend, then the wait sampler's.
    serving: Vec<u32>,
    /// Every timed run's client times, N per run, in run order.
    times: Vec<u64>,
    sampler: Sampler,
    /// Timed runs so far.
    runs: u32,
}

impl SqlClients {
    pub(super) fn new(spec: &SqlSpec, db: &DbTarget, at: &Setting<'_>) -> Result<SqlClients> {
        let DbTarget::Postgres { url, schema } = db else {
            fail!("strategy `{}`: clients = {} needs PostgreSQL (SQLite serialises its writers within one process, so concurrent clients would only take turns)", at.name, spec.clients);
        };
        let setup = spec
            .setup
            .as_ref()
            .map(|s| Template::compile(&s.text).map(|t| t.render(0)))
            .transpose()?;
        let shared = Shared::create(
            url,
            schema,
            at.slot,
            &spec.search_path,
            setup.as_deref(),
            &at.sql.private_copies,
        )
        .doing(|| format!("setting up sql strategy `{}` on {db}", at.name))?;
        let built = Self::connect(spec, url, &shared, at.name);
        match built {
            Ok((clients, statements, pids)) => {
                let sampler = Sampler::start(url, pids.clone())?;
                let serving = pids
                    .iter()
                    .map(|&p| p as u32)
                    .chain(sampler.backend_pid())
                    .collect();
                Ok(SqlClients {
                    name: at.name.to_string(),
                    url: url.clone(),
                    shared: Some(shared),
                    clients,
                    statements,
                    allow_failure: spec.allow_failure,
                    input: 0,
                    pid: pids.first().map(|&p| p as u32),
                    serving,
                    times: Vec::new(),
                    sampler,
                    runs: 0,
                })
            }
            Err(e) => {
                let _ = shared.drop_schema(url);
                Err(e)
            }
        }
    }

    #[allow(clippy::type_complexity)]
    fn connect(
        spec: &SqlSpec,
        url: &str,
        shared: &Shared,
        name: &str,
    ) -> Result<(Clients, Vec<Vec<Template>>, Vec<i32>)> {
        let text = if shared.sources.is_empty() {
            spec.run.text.clone()
        } else {
            runner_db::names::rewrite(
                &spec.run.text,
                SqlDialect::Postgres,
                &shared.sources,
                &shared.schema,
            )
        };
        let ranges = split(&text, SqlDialect::Postgres)?;
        let mut sessions = Vec::new();
        let mut statements = Vec::new();
        let mut pids = Vec::new();
        for i in 0..spec.clients as usize {
            let mut s = runner_db::pg::session::join(url, shared, &spec.search_path)
                .doing(|| format!("connecting client {i} of strategy `{name}`"))?;
            pids.extend(s.backend_pid()?.map(|p| p as i32));
            let mut mine = ranges
                .iter()
                .map(|r| Template::compile(&for_client(&text[r.clone()], i)))
                .collect::<Result<Vec<_>, _>>()?;
            if spec.protocol == Protocol::Prepared {
                mine = super::prepared::prepare(s.as_mut(), mine)?;
            }
            sessions.push(s);
            statements.push(mine);
        }
        Ok((Clients::start(sessions), statements, pids))
    }

    fn failed(&self) -> String {
        format!(
            "the SQL of strategy `{}` failed on input {}",
            self.name, self.input
        )
    }

    /// The run's fingerprint over its clients in order, and its failure:
    /// the first client's error the arm allows; any other error is the fork's.
    fn fold(&self, results: Vec<Result<u64, DbError>>) -> Result<(u64, Option<FailCode>)> {
        use std::hash::{DefaultHasher, Hasher};
        let mut h = DefaultHasher::new();
        let mut failed = None;
        for (i, r) in results.into_iter().enumerate() {
            match r {
                Ok(fp) => h.write_u64(fp),
                Err(DbError::Statement { code, .. }) if self.allow_failure => {
                    let code = FailCode::new(&code);
                    h.write_u64(failure::fingerprint(&code));
                    failed.get_or_insert(code);
                }
                Err(e) => {
                    let hint = if matches!(e, DbError::Statement { .. }) {
                        " (set allow_failure = true to time runs that fail)"
                    } else {
                        ""
                    };
                    return Err(StrategyError::While {
                        doing: format!("{}, client {i}{hint}", self.failed()),
                        source: Box::new(e.into()),
                    });
                }
            }
        }
        Ok((h.finish(), failed))
    }
}

impl Strategy for SqlClients {
    fn backend_pid(&mut self) -> Result<Option<u32>> {
        Ok(self.pid)
    }

    fn serving_pids(&mut self) -> Result<Vec<u32>> {
        Ok(self.serving.clone())
    }

    fn before(&mut self, input: u64) -> Result<()> {
        self.input = input;
        for (i, mine) in self.statements.iter().enumerate() {
            self.clients.set_statements(i, |out| {
                out.resize(mine.len(), String::new());
                for (t, o) in mine.iter().zip(out.iter_mut()) {
                    t.render_into(input, o);
                }
            });
        }
        self.clients.begin().doing(|| self.failed())
    }

    fn run(&mut self, _input: u64) -> Result<()> {
        self.sampler.begin(self.runs);
        self.clients.go();
        Ok(())
    }

    fn after(&mut self) -> Result<Outcome> {
        self.sampler.end();
        self.runs += 1;
        let runs = self.clients.take_runs();
        self.times.extend(runs.iter().map(|r| r.ns));
        let (fp, failed) = self.fold(runs.into_iter().map(|r| r.result).collect())?;
        Ok(Outcome {
            failed,
            ..Outcome::of(fp)
        })
    }

    fn observe(&mut self, input: u64) -> Result<Observation> {
        self.before(input)?;
        self.clients.go_collecting();
        let runs = self.clients.take_runs();
        let mut results = Vec::new();
        let mut first = None;
        for r in runs {
            first.get_or_insert(r.rows);
            results.push(r.result);
        }
        let (_, failed) = self.fold(results)?;
        // Client 0's rows, as one client of the same SQL returns them: the
        // check compares an arm of N clients with an arm of one.
        Ok(match failed {
            Some(code) => Observation::Failed {
                code: code.as_str().to_owned(),
            },
            None => Observation::Rows {
                rows: first.unwrap_or_default(),
                statements: self.statements[0].iter().map(|t| t.render(input)).collect(),
            },
        })
    }

    fn teardown(&mut self) -> Result<()> {
        self.clients.close()?;
        if let Some(shared) = self.shared.take() {
            shared.drop_schema(&self.url)?;
        }
        Ok(())
    }

    fn copies(&self) -> Vec<runner_db::plans::CopyMade> {
        self.shared.iter().flat_map(|s| s.copies.clone()).collect()
    }

    fn client_times(&mut self) -> Result<Option<ClientRecord>> {
        Ok(Some(ClientRecord {
            clients: self.clients.len() as u32,
            ns: std::mem::take(&mut self.times),
            waits: self.sampler.finish()?,
        }))
    }
}

impl Drop for SqlClients {
    /// A fork that failed still drops the committed schema.
    fn drop(&mut self) {
        let _ = self.clients.close();
        if let Some(shared) = self.shared.take() {
            let _ = shared.drop_schema(&self.url);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::for_client;

    #[test]
    fn client_is_filled_and_other_placeholders_and_escapes_stay() {
        assert_eq!(
            for_client("WHERE id = {client} + {input} AND j = '{{client}'", 3),
            "WHERE id = 3 + {input} AND j = '{{client}'"
        );
    }
}
