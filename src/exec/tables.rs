//! The tables of `tx-rollback` arms on PostgreSQL, made by the exec parent
//! a fork ahead of their worker.
//!
//! A fork's table is fresh: made, seeded and committed before the fork,
//! used by no other fork, dropped after it. Making it costs a few
//! milliseconds of catalog work and a WAL flush; in the worker that sat on
//! the path to its first timed run. The parent does it instead, while the
//! previous fork finishes (`exec::upcoming`): in one transaction it drops the
//! tables of the fork before last and makes those of the fork after next,
//! so a table is always committed long before its worker starts, and no
//! table is made or dropped while a worker measures.

use super::error::ExecError;
use super::protocol::JobRequest;
use runner_core::error::Result;
use runner_core::preview::Model;
use runner_db::model::{job_table, TableMaker};
use runner_db::DbTarget;
use runner_spec::StrategyKind;

/// The slots of `job` whose instance is a `tx-rollback` on a premade table:
/// the baseline's (`b`) and, with two instances, the treatment's (`t`).
fn slots(job: &JobRequest) -> Vec<&'static str> {
    if !job.premade_tables {
        return Vec::new();
    }
    let mut out = Vec::new();
    if job.baseline == StrategyKind::TxRollback {
        out.push("b");
    }
    if !job.shared_instance && job.treatment == StrategyKind::TxRollback {
        out.push("t");
    }
    out
}

/// The premade table of the instance in `slot`, if the parent made one.
pub(super) fn premade(job: &JobRequest, slot: &str) -> Option<String> {
    slots(job)
        .contains(&slot)
        .then(|| job_table(job.cell, job.fork, slot))
}

/// Whether a run on `db` with these arms has premade tables.
pub(super) fn premade_for(
    db: Option<&DbTarget>,
    baseline: &StrategyKind,
    treatment: &StrategyKind,
) -> bool {
    matches!(db, Some(DbTarget::Postgres { .. }))
        && (*baseline == StrategyKind::TxRollback || *treatment == StrategyKind::TxRollback)
}

/// The parent's connection for making and dropping the tables.
pub(super) struct Tables {
    maker: Box<dyn TableMaker>,
}

impl Tables {
    /// A connection when the run has premade tables; none otherwise.
    pub(super) fn open(
        db: Option<&DbTarget>,
        first: Option<&JobRequest>,
    ) -> Result<Option<Tables>> {
        let (Some(db), Some(job)) = (db, first) else {
            return Ok(None);
        };
        if !job.premade_tables {
            return Ok(None);
        }
        Ok(runner_db::open::table_maker(db)
            .map_err(ExecError::Tables)?
            .map(|maker| Tables { maker }))
    }

    /// Drops the tables of the jobs `done` and makes (afresh) those of the
    /// jobs `ahead`, in one transaction.
    pub(super) fn step(&mut self, done: &[&JobRequest], ahead: &[&JobRequest]) -> Result<()> {
        let name = |job: &JobRequest, slot: &str| job_table(job.cell, job.fork, slot);
        let drop: Vec<String> = done
            .iter()
            .flat_map(|j| slots(j).into_iter().map(|s| name(j, s)))
            .collect();
        let make: Vec<(String, Vec<(String, f64)>)> = ahead
            .iter()
            .flat_map(|j| {
                let rows = Model::new(j.workload.plans).fields();
                slots(j)
                    .into_iter()
                    .map(move |s| (name(j, s), rows.clone()))
            })
            .collect();
        if drop.is_empty() && make.is_empty() {
            return Ok(());
        }
        Ok(self.maker.step(&drop, &make).map_err(ExecError::Tables)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use runner_spec::Ordering;

    fn job(
        baseline: StrategyKind,
        treatment: StrategyKind,
        shared: bool,
        premade: bool,
    ) -> JobRequest {
        JobRequest {
            cell: 3,
            fork: 7,
            seed: 1,
            delay_ns: 0,
            workload: Default::default(),
            baseline,
            treatment,
            baseline_name: "b".into(),
            treatment_name: "t".into(),
            shared_instance: shared,
            warmup_pairs: 0,
            pairs: 1,
            ordering: Ordering::PairedRandom,
            pad_baseline: true,
            database: None,
            placement: runner_os::placement::Placement::None,
            claim: None,
            premade_tables: premade,
            layout: None,
            temp_dir: None,
            trial: false,
            sql: Default::default(),
            count: None,
        }
    }

    #[test]
    fn each_tx_rollback_instance_of_a_job_has_its_own_premade_table() {
        use StrategyKind::{InMemory, TxRollback};
        // A/A: one instance, one table, in the baseline's slot.
        let aa = job(TxRollback, TxRollback, true, true);
        assert_eq!(slots(&aa), ["b"]);
        assert_eq!(premade(&aa, "b").as_deref(), Some("model_field_c3_f7_b"));
        assert_eq!(premade(&aa, "t"), None);
        // Two instances: two tables.
        let ab = job(TxRollback, TxRollback, false, true);
        assert_eq!(slots(&ab), ["b", "t"]);
        assert_eq!(premade(&ab, "t").as_deref(), Some("model_field_c3_f7_t"));
        // Only the arm that needs one.
        assert_eq!(slots(&job(InMemory, TxRollback, false, true)), ["t"]);
        assert_eq!(slots(&job(TxRollback, InMemory, false, true)), ["b"]);
        // A job whose tables the parent did not make (SQLite, `check`).
        assert!(slots(&job(TxRollback, TxRollback, true, false)).is_empty());
    }

    #[test]
    fn only_postgresql_runs_with_a_tx_rollback_arm_have_premade_tables() {
        use StrategyKind::{InMemory, TxRollback};
        let pg = DbTarget::Postgres {
            url: "postgres://u@h/d".into(),
            schema: "runner_x".into(),
        };
        assert!(premade_for(Some(&pg), &TxRollback, &InMemory));
        assert!(premade_for(Some(&pg), &InMemory, &TxRollback));
        assert!(!premade_for(Some(&pg), &InMemory, &InMemory));
        assert!(!premade_for(
            Some(&DbTarget::Sqlite),
            &TxRollback,
            &TxRollback
        ));
        assert!(!premade_for(None, &TxRollback, &TxRollback));
    }
}
