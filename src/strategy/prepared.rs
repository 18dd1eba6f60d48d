//! `protocol = "prepared"` on an `sql` arm: each statement is prepared once
//! per fork, untimed, with `{input}` as its one parameter (a `bigint`, `$1`),
//! and each run executes the prepared statements with the run's input.
//!
//! Done with SQL's own `PREPARE` and `EXECUTE` (PostgreSQL): a run still
//! sends its statements as one simple-protocol query, `EXECUTE
//! runner_p0(12345); ...`, so it keeps the one round trip of the simple
//! protocol and its results as text, and the fingerprint and the rows the
//! check compares are the same as a `simple` arm's: a prepared arm and a
//! simple arm of the same SQL agree. What the server no longer does per run
//! is parse, analyse and plan the statement (beyond the short `EXECUTE`
//! itself); its plan cache decides between custom and generic plans as for
//! any prepared statement (`plan_cache_mode`, settable in `setup`).
//!
//! PostgreSQL prepares only queries and writes (SELECT, VALUES, INSERT,
//! UPDATE, DELETE, MERGE); any other statement of `run` (a `SET LOCAL`)
//! is sent as text each run, as under `simple`.

use crate::db::session::SqlSession;
use crate::db::statements::{preparable, SqlDialect};
use crate::spec::placeholder::Template;
use crate::strategy::error::{Doing, Result};

/// The prepared statement's name for statement `i` of a run; one session
/// serves one arm, so the names need only be unique within it.
fn name(i: usize) -> String {
    format!("runner_p{i}")
}

/// The `PREPARE` for `t` as statement `i`, and the template a run sends
/// instead; `None` for a statement PostgreSQL does not prepare.
pub(super) fn plan(i: usize, t: &Template) -> Option<(String, String)> {
    let body = t.with_input_as("$1");
    if !preparable(&body, SqlDialect::Postgres) {
        return None;
    }
    let n = name(i);
    Some(if t.uses_input() {
        (
            format!("PREPARE {n} (bigint) AS {body}"),
            format!("EXECUTE {n}({{input}})"),
        )
    } else {
        (format!("PREPARE {n} AS {body}"), format!("EXECUTE {n}"))
    })
}

/// Prepares each statement it can on `session` and returns the templates
/// a run sends.
pub(super) fn prepare(
    session: &mut dyn SqlSession,
    statements: Vec<Template>,
) -> Result<Vec<Template>> {
    statements
        .into_iter()
        .enumerate()
        .map(|(i, t)| match plan(i, &t) {
            None => Ok(t),
            Some((prepare, execute)) => {
                session.prepare(&prepare).doing(|| {
                    format!(
                        "protocol = \"prepared\": preparing statement {} of run",
                        i + 1
                    )
                })?;
                Ok(Template::compile(&execute)?)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_becomes_the_one_bigint_parameter_and_other_statements_stay_text() {
        let t = Template::compile("SELECT v FROM t WHERE id = 1 + {input} % 10 OR id = {input}")
            .unwrap();
        let (p, e) = plan(2, &t).unwrap();
        assert_eq!(
            p,
            "PREPARE runner_p2 (bigint) AS SELECT v FROM t WHERE id = 1 + $1 % 10 OR id = $1"
        );
        assert_eq!(
            Template::compile(&e).unwrap().render(7),
            "EXECUTE runner_p2(7)"
        );
        let t = Template::compile("UPDATE t SET v = v + 1").unwrap();
        assert_eq!(
            plan(0, &t).unwrap(),
            (
                "PREPARE runner_p0 AS UPDATE t SET v = v + 1".into(),
                "EXECUTE runner_p0".into()
            )
        );
        assert_eq!(
            plan(
                0,
                &Template::compile("SET LOCAL work_mem = '64MB'").unwrap()
            ),
            None
        );
    }
}
