//! `check`'s trial runs: what exec's forks would meet, found before the run.
//!
//! The arms run in trial workers (`exec::trials`), contained exactly as
//! exec's forks are. On PostgreSQL they run in a schema `check` makes for
//! them and drops after, and (like every fork) in transactions that are
//! rolled back, so `check` leaves nothing on the server. What they find is
//! said before any run: arms whose outputs differ are bad input (exit 2,
//! naming what to change); any other failure (a `setup` that cannot see a
//! table, a command that cannot start yet) is printed with the plan, and
//! the estimate is then a guess.

use super::error::{CheckError, NoTrialSchema};
use crate::exec::trials::{self, Stopped};
use runner_core::error::Result;
use runner_db::fingerprint::GuardRecord;
use runner_db::DbTarget;
use runner_os::interrupt;
use runner_plan::Cell;
use runner_spec::Experiment;
use std::collections::BTreeSet;
use std::time::Duration;

/// The trials and what `check` prints about them.
pub(super) struct CheckTrials {
    pub outcome: trials::Outcome,
    /// What the database guard found around the trials (PostgreSQL, arms
    /// that run the user's code): the same before/after fingerprint as a
    /// fork's.
    pub guard: Option<GuardRecord>,
    /// The sentence `check` fails with when the guard did not hold.
    pub guard_failure: Option<String>,
}

/// A schema of `check`'s own, dropped when it goes (or said, if it cannot be).
struct Throwaway {
    target: DbTarget,
    run_id: String,
}

impl Drop for Throwaway {
    fn drop(&mut self) {
        let (target, run_id) = (self.target.clone(), self.run_id.clone());
        // A second Ctrl-C cuts the drop short, as at the end of exec.
        let dropped = interrupt::run(interrupt::count(), move || {
            runner_db::open::drop_run_schema(&target, &run_id)
        });
        if !matches!(dropped, Ok(Ok(()))) {
            runner_core::console::warn(&format!(
                "could not drop the schema check made for its trial runs; drop it yourself with DROP SCHEMA runner_{} CASCADE",
                self.run_id
            ));
        }
    }
}

/// The target the trials run against: PostgreSQL in a fresh schema of
/// `check`'s own (the name exec would give a run, with a random id).
fn trial_target(
    target: Option<&DbTarget>,
) -> std::result::Result<(Option<DbTarget>, Option<Throwaway>), NoTrialSchema> {
    let Some(db @ DbTarget::Postgres { url, .. }) = target else {
        return Ok((target.cloned(), None));
    };
    let run_id = format!("check_{:016x}", rand::random::<u64>());
    let (t, id) = (db.clone(), run_id.clone());
    let made = interrupt::run(interrupt::count(), move || {
        crate::exec::database::sweep(&t);
        runner_db::open::run_schema(&t, &id, false)
    })
    .map_err(NoTrialSchema::Interrupted)?
    .map_err(NoTrialSchema::Db)?;
    // A server has schemas, so `run_schema` named one; without one the
    // trials run on the target as it is.
    let Some(schema) = made else {
        return Ok((target.cloned(), None));
    };
    let trial = DbTarget::Postgres {
        url: url.clone(),
        schema,
    };
    Ok((
        Some(trial.clone()),
        Some(Throwaway {
            target: trial,
            run_id,
        }),
    ))
}

/// Runs the trials of `cells` against `target`. Arms that disagree are
/// bad input, a signal stops `check` (exit 1); anything else is kept in
/// the outcome for the plan to print.
pub(super) fn run(
    exp: &Experiment,
    cells: &[Cell],
    target: Option<&DbTarget>,
    named: Option<BTreeSet<String>>,
) -> Result<CheckTrials> {
    let (outcome, guard, guard_failure) = match trial_target(target) {
        Err(why) if interrupt::interrupted() => return Err(why.into()),
        Err(why) => (
            (
                trials::Trials::default(),
                Some(Stopped::Failed(why.to_string())),
            ),
            None,
            None,
        ),
        Ok((db, _schema)) => guarded(exp, cells, db.as_ref(), named)?,
    };
    match &outcome.1 {
        Some(Stopped::Interrupted) => {
            Err(CheckError::TrialsInterrupted(interrupt::Interrupted).into())
        }
        Some(Stopped::Disagreement(why)) => Err(CheckError::TrialsDisagree(why.clone()).into()),
        _ => Ok(CheckTrials {
            outcome,
            guard,
            guard_failure,
        }),
    }
}

/// The trials inside the database guard, when they run the user's code on
/// PostgreSQL: a fingerprint of everything outside runner's schemas
/// before, and after their connections are gone; with the sentence it
/// fails with when it did not hold.
#[allow(clippy::type_complexity)]
fn guarded(
    exp: &Experiment,
    cells: &[Cell],
    db: Option<&DbTarget>,
    named: Option<BTreeSet<String>>,
) -> Result<(trials::Outcome, Option<GuardRecord>, Option<String>)> {
    let user_code = exp
        .design
        .arms()
        .iter()
        .any(|n| exp.strategies[*n].runs_user_code());
    let guard = match db.filter(|_| user_code) {
        Some(target) => runner_db::open::guard(target).map_err(CheckError::Guard)?,
        None => None,
    };
    let Some(mut guard) = guard else {
        return Ok((trials::run(exp, cells, db), None, None));
    };
    let before = guard.take().map_err(CheckError::Guard)?;
    let outcome = trials::run(exp, cells, db);
    let after = guard
        .wait_for_workers(None, Duration::from_secs(10))
        .and_then(|()| guard.take())
        .map_err(CheckError::Guard)?;
    let blame = runner_db::fingerprint::Blame {
        named,
        strict: exp.database.strict,
    };
    let record = before.compare(&after, &blame);
    let failure = (!record.held).then(|| blame.failure("check's trial runs", &record));
    Ok((outcome, Some(record), failure))
}
