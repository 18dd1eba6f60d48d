//! The run's database, from the parent's side: resolved, checked and (on
//! PostgreSQL) given its own schema before any fork starts; dropped at the end.

use super::error::ExecError;
use runner_core::error::Result;
use runner_db::DbTarget;
use runner_spec::Experiment;

#[derive(Clone)]
pub(crate) struct RunDatabase {
    pub target: DbTarget,
    /// `runner_db::DbInfo` as JSON, for run.json and the report.
    pub info: serde_json::Value,
    run_id: String,
}

impl RunDatabase {
    /// `None` when neither arm needs a database. A server that cannot be
    /// reached fails here, before any fork, naming host, port and database.
    ///
    /// When `resuming`, a schema of this run that survived a killed parent is
    /// dropped first (only if runner's marker says it is this run's).
    pub(crate) fn prepare(
        exp: &Experiment,
        run_id: &str,
        resuming: bool,
    ) -> Result<Option<RunDatabase>> {
        let needs = exp
            .design
            .arms()
            .iter()
            .any(|name| exp.strategies[*name].needs_database());
        if !needs {
            return Ok(None);
        }
        let target = runner_db::resolve_with(
            &exp.database,
            runner_core::settings::get().database_url.as_deref(),
            run_id,
        )
        .map_err(ExecError::Resolve)?
        .ok_or(ExecError::NoUrl)?;
        // A backend this runner was built without is refused here, before
        // anything is made.
        let info = runner_db::open::info(&target).map_err(ExecError::Database)?;
        sweep(&target);
        runner_db::open::run_schema(&target, run_id, resuming).map_err(ExecError::Database)?;
        Ok(Some(RunDatabase {
            target,
            info: serde_json::to_value(info).unwrap_or(serde_json::Value::Null),
            run_id: run_id.to_string(),
        }))
    }

    /// Drops the run's schema (PostgreSQL); a schema already gone is fine.
    pub(crate) fn cleanup(&self) {
        if let Err(e) = runner_db::open::drop_run_schema(&self.target, &self.run_id) {
            runner_core::console::warn(&format!("could not drop the run's schema: {e}"));
        }
    }
}

/// Drops the schemas that runner processes on this host left when they
/// were killed before they could (`runner_db::pg::schema::sweep`), and says so in
/// one line; a sweep that fails is said too and stops nothing, since the
/// run's own schema is another.
pub(crate) fn sweep(target: &DbTarget) {
    match runner_db::open::sweep(target) {
        Ok(dropped) if dropped.is_empty() => {}
        Ok(dropped) => runner_core::console::err(&format!(
            "note: dropped {} schema{} that runner processes killed on this host had left: {}",
            dropped.len(),
            if dropped.len() == 1 { "" } else { "s" },
            dropped
                .iter()
                .map(runner_db::owner::RunnerSchema::said)
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Err(e) => runner_core::console::warn(&format!(
            "could not look for schemas that killed runner processes left: {e}"
        )),
    }
}
