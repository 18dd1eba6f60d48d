//! `sql`: the user's statements, each run inside `BEGIN ... ROLLBACK`
//! (docs/guide/own-code.md). The database side lives in [`runner_db::session`].
//!
//! Timed region: executing the statements and reading every row they
//! return (hashed into the fingerprint as it is read). Untimed: filling in
//! `{input}`, `BEGIN` before, `ROLLBACK` after; setup ran once at set-up.
//!
//! With `allow_failure = true` a statement the database refuses ends the
//! run there: its time runs to the error, its transaction is rolled back
//! as any run's is, and its code (SQLSTATE) goes out in the outcome to be
//! counted. Without it the error stops the fork, as before.
//!
//! With `protocol = "prepared"` the statements are prepared at set-up
//! (`super::prepared`) and a run sends their `EXECUTE`s instead.

use super::failure::{self, FailCode};
use super::{Observation, Outcome, Setting, Strategy};
use crate::strategy::error::{Doing, Result, StrategyError};
use runner_db::session::SqlSession;
use runner_db::statements::{split, SqlDialect};
use runner_db::{DbError, DbTarget};
use runner_spec::placeholder::Template;
use runner_spec::{Protocol, SqlSpec};

pub(super) struct Sql {
    name: String,
    session: Box<dyn SqlSession>,
    statements: Vec<Template>,
    rendered: Vec<String>,
    input: u64,
    fingerprint: Option<u64>,
    allow_failure: bool,
    /// The last run's failure, when failures are allowed.
    failed: Option<FailCode>,
}

impl Sql {
    pub(super) fn new(spec: &SqlSpec, db: &DbTarget, at: &Setting<'_>) -> Result<Sql> {
        let dialect = match db {
            DbTarget::Postgres { .. } => SqlDialect::Postgres,
            _ => SqlDialect::Sqlite,
        };
        let setup = spec
            .setup
            .as_ref()
            .map(|s| Template::compile(&s.text).map(|t| t.render(0)))
            .transpose()?;
        let session =
            runner_db::open::session_with(db, at.slot, &spec.search_path, setup.as_deref(), at.sql)
                .doing(|| format!("setting up sql strategy `{}` on {db}", at.name))?;
        // Schema-qualified references to a private copy now name the copy.
        let text = &session.rewrite(&spec.run.text);
        let mut session = session;
        let mut statements = split(text, dialect)
            .map_err(StrategyError::from)?
            .into_iter()
            .map(|r| Template::compile(&super::client_record::for_client(&text[r], 0)))
            .collect::<Result<Vec<_>, _>>()?;
        if spec.protocol == Protocol::Prepared {
            statements = super::prepared::prepare(session.as_mut(), statements)
                .doing(|| format!("setting up sql strategy `{}` on {db}", at.name))?;
        }
        Ok(Sql {
            name: at.name.to_string(),
            session,
            rendered: vec![String::new(); statements.len()],
            statements,
            input: 0,
            fingerprint: None,
            allow_failure: spec.allow_failure,
            failed: None,
        })
    }

    fn failed(&self) -> String {
        format!(
            "the SQL of strategy `{}` failed on input {}",
            self.name, self.input
        )
    }
}

impl Sql {
    /// The code of a failure the arm allows; any other error as the
    /// fork's (a lost connection is never a failed run).
    fn allowed(&self, e: DbError) -> Result<FailCode> {
        match e {
            DbError::Statement { code, .. } if self.allow_failure => Ok(FailCode::new(&code)),
            DbError::Statement { .. } => Err(e).doing(|| {
                format!(
                    "{} (set allow_failure = true to time runs that fail)",
                    self.failed()
                )
            }),
            e => Err(e).doing(|| self.failed()),
        }
    }
}

impl Strategy for Sql {
    fn backend_pid(&mut self) -> Result<Option<u32>> {
        Ok(self.session.backend_pid()?)
    }

    fn before(&mut self, input: u64) -> Result<()> {
        self.input = input;
        for (t, out) in self.statements.iter().zip(&mut self.rendered) {
            t.render_into(input, out);
        }
        self.session.begin()?;
        Ok(())
    }

    fn run(&mut self, _input: u64) -> Result<()> {
        match self.session.run(&self.rendered, None) {
            Ok(fp) => {
                self.fingerprint = Some(fp);
                self.failed = None;
            }
            Err(e) => {
                let code = self.allowed(e)?;
                self.fingerprint = Some(failure::fingerprint(&code));
                self.failed = Some(code);
            }
        }
        Ok(())
    }

    fn after(&mut self) -> Result<Outcome> {
        self.session.rollback().doing(|| self.failed())?;
        let fp = self
            .fingerprint
            .take()
            .doing(|| "an SQL run's result was read twice".into())?;
        Ok(Outcome {
            failed: self.failed.take(),
            ..Outcome::of(fp)
        })
    }

    fn observe(&mut self, input: u64) -> Result<Observation> {
        self.before(input)?;
        let mut rows = Vec::new();
        let ran = self.session.run(&self.rendered, Some(&mut rows));
        let failed = match ran {
            Ok(_) => None,
            Err(e) => Some(self.allowed(e)?),
        };
        self.session.rollback().doing(|| self.failed())?;
        // Before timing: the SQL wrote the copies, not the tables copied.
        self.session
            .copies_untouched()
            .doing(|| format!("strategy `{}` on input {}", self.name, self.input))?;
        Ok(match failed {
            Some(code) => Observation::Failed {
                code: code.as_str().to_owned(),
            },
            None => Observation::Rows {
                rows,
                statements: self.rendered.clone(),
            },
        })
    }

    fn teardown(&mut self) -> Result<()> {
        self.session.close()?;
        Ok(())
    }

    fn copies(&self) -> Vec<runner_db::plans::CopyMade> {
        self.session.copies()
    }

    fn explain(&mut self, input: u64) -> Result<Option<Vec<runner_db::plans::StatementPlan>>> {
        for (t, out) in self.statements.iter().zip(&mut self.rendered) {
            t.render_into(input, out);
        }
        let plans = self
            .session
            .explain(&self.rendered)
            .doing(|| format!("EXPLAIN of strategy `{}` on input {input}", self.name))?;
        Ok(Some(plans))
    }
}
