//! The database guard of a run's forks, from the parent's side: one
//! fingerprint before and after each fork (`db::fingerprint`).

use super::error::ExecError;
use runner_core::error::Result;
use std::time::Duration;

/// The fingerprint of the database outside runner's schemas, taken before
/// and after each fork on a PostgreSQL run whose arms run the user's SQL or
/// commands (`db::fingerprint`); nothing to do on SQLite, without a database, or
/// when both arms are runner's built-in kinds.
///
/// One fork's "after" is the next fork's "before": nothing of runner's
/// touches the database between them, a change made there by someone else
/// is still caught (by the next fork's comparison instead of by none), and
/// a fingerprint costs a few milliseconds of the run's wall time per fork.
pub(super) struct DatabaseGuard {
    guard: Option<Box<dyn runner_db::fingerprint::Fingerprinter>>,
    last: Option<runner_db::fingerprint::Fingerprint>,
    /// Who a change is held against (`db::fingerprint::Blame`).
    blame: runner_db::fingerprint::Blame,
}

/// How long the parent waits for a fork's connections to end, so their
/// statistics are in the views it reads.
const CONNECTIONS_CLOSE: Duration = Duration::from_secs(10);

impl DatabaseGuard {
    /// `named`: what the experiment names (`db::preflight`), `None`: every
    /// change is the run's; `strict`: `[database] strict`.
    pub(super) fn open(
        db: Option<&runner_db::DbTarget>,
        named: Option<std::collections::BTreeSet<String>>,
        strict: bool,
    ) -> Result<DatabaseGuard> {
        let guard = match db {
            Some(target) => runner_db::open::guard(target).map_err(ExecError::Guard)?,
            None => None,
        };
        Ok(DatabaseGuard {
            guard,
            last: None,
            blame: runner_db::fingerprint::Blame { named, strict },
        })
    }

    /// The fingerprint before a fork: the previous fork's "after" when
    /// there is one.
    pub(super) fn take(&mut self) -> Result<Option<runner_db::fingerprint::Fingerprint>> {
        if let Some(last) = self.last.take() {
            return Ok(Some(last));
        }
        let Some(g) = &mut self.guard else {
            return Ok(None);
        };
        Ok(Some(g.take().map_err(ExecError::Guard)?))
    }

    /// The fingerprint after a fork, once its connections are gone: the
    /// backends it reported when it finished (the next fork's worker is
    /// connected by then), or every worker connection of the run when it
    /// failed (its next worker has been stopped).
    pub(super) fn compare(
        &mut self,
        before: Option<runner_db::fingerprint::Fingerprint>,
        backends: Option<&[u32]>,
    ) -> Result<Option<runner_db::fingerprint::GuardRecord>> {
        let (Some(g), Some(before)) = (&mut self.guard, before) else {
            return Ok(None);
        };
        let after = g
            .wait_for_workers(backends, CONNECTIONS_CLOSE)
            .and_then(|()| g.take())
            .map_err(ExecError::Guard)?;
        let record = before.compare(&after, &self.blame);
        self.last = Some(after);
        Ok(Some(record))
    }

    /// The sentence a run fails with when the guard did not hold during
    /// `during`; none when it held.
    pub(super) fn failure(
        &self,
        during: &str,
        record: Option<&runner_db::fingerprint::GuardRecord>,
    ) -> Option<String> {
        record
            .filter(|g| !g.held)
            .map(|g| self.blame.failure(during, g))
    }
}

/// The database server processes that served a finished fork.
pub(super) fn backend_pids(summary: &runner_folder::ForkSummary) -> Vec<u32> {
    summary.placement.as_ref().map_or_else(Vec::new, |p| {
        p.database.backends().iter().map(|b| b.pid).collect()
    })
}
