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

use crate::strategy::error::{Doing, Result};
use runner_db::session::SqlSession;
use runner_db::statements::{places, preparable, unpreparable, Place, SqlDialect};
use runner_spec::placeholder::Template;

/// The prepared statement's name for statement `i` of a run; one session
/// serves one arm, so the names need only be unique within it.
fn name(i: usize) -> String {
    format!("runner_p{i}")
}

/// The `PREPARE` for `t` as statement `i`, and the template a run sends
/// instead; `None` for a statement PostgreSQL does not prepare. Only an
/// `{input}` in the statement's code becomes `$1`; one in a comment stays
/// the text `{input}` (the server skips it either way); one inside a
/// string, a dollar quote or a quoted name cannot be a parameter, and the
/// statement is refused (the experiment file's check refuses it first,
/// with its line and column).
/// Why a statement cannot be prepared: an `{input}` inside quotes, in the
/// db crate's words.
#[derive(Debug, PartialEq, thiserror::Error)]
#[error("{0}")]
pub(super) struct Unpreparable(String);

pub(super) fn plan(i: usize, t: &Template) -> Result<Option<(String, String)>, Unpreparable> {
    let (probe, at) = t.with_inputs(|_| "$1");
    if !preparable(&probe, SqlDialect::Postgres) {
        return Ok(None);
    }
    let places = places(&probe, SqlDialect::Postgres, &at);
    if let Some(what) = places.iter().find_map(|p| match p {
        Place::Quoted(what) => Some(*what),
        _ => None,
    }) {
        return Err(Unpreparable(unpreparable(what)));
    }
    let (body, _) = t.with_inputs(|k| match places[k] {
        Place::Comment => "{input}",
        _ => "$1",
    });
    let n = name(i);
    Ok(Some(if places.contains(&Place::Code) {
        (
            format!("PREPARE {n} (bigint) AS {body}"),
            format!("EXECUTE {n}({{input}})"),
        )
    } else {
        (format!("PREPARE {n} AS {body}"), format!("EXECUTE {n}"))
    }))
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
            Err(why) => Err(crate::strategy::error::StrategyError::Failed(format!(
                "protocol = \"prepared\": statement {} of run {why}",
                i + 1
            ))),
            Ok(None) => Ok(t),
            Ok(Some((prepare, execute))) => {
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
        let (p, e) = plan(2, &t).unwrap().unwrap();
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
            plan(0, &t).unwrap().unwrap(),
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
            Ok(None)
        );
    }

    #[test]
    fn input_in_quotes_is_refused_and_in_a_comment_stays_text() {
        for (sql, what) in [
            (
                "SELECT count(*) FROM t WHERE s LIKE '%{input}%'",
                "a string literal",
            ),
            ("SELECT $q${input}$q$ = s FROM t", "a dollar-quoted string"),
            ("SELECT \"c{input}\" FROM t", "a quoted identifier"),
        ] {
            let e = plan(0, &Template::compile(sql).unwrap())
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with(&format!("has {{input}} inside {what}")),
                "{sql}: {e}"
            );
        }
        let t = Template::compile("SELECT v FROM t WHERE id = {input} -- for {input}").unwrap();
        assert_eq!(
            plan(1, &t).unwrap().unwrap().0,
            "PREPARE runner_p1 (bigint) AS SELECT v FROM t WHERE id = $1 -- for {input}"
        );
        // Only in a comment: no parameter at all.
        let t = Template::compile("SELECT 1 /* {input} */").unwrap();
        assert_eq!(
            plan(0, &t).unwrap().unwrap(),
            (
                "PREPARE runner_p0 AS SELECT 1 /* {input} */".into(),
                "EXECUTE runner_p0".into()
            )
        );
        // A statement PostgreSQL does not prepare is sent as text each run,
        // its input substituted as the simple protocol does.
        assert_eq!(
            plan(
                0,
                &Template::compile("DO $$ BEGIN PERFORM '{input}'; END $$").unwrap()
            ),
            Ok(None)
        );
    }
}
