//! `tx-rollback`: the studied "rollback preview" — write the slider's
//! overrides in a transaction, read the model back, calculate, roll back.

use super::error::Result;
use super::in_memory::{fingerprint, preview};
use super::{Observation, Outcome, Strategy};
use crate::strategy::error::Doing;
use runner_core::preview::{Calculator, Model, Overrides, Projection};
use runner_db::{DbTarget, ModelTable};
use runner_spec::WorkloadParams;

/// Holds its own seeded table (own connection on PostgreSQL) and reusable
/// buffers; round trips per run are documented on `db::pg::table::PgTable`.
///
/// The calculation runs inside the transaction, as in the study, so the
/// timed region includes the time the transaction stays open.
pub struct TxRollback {
    table: Box<dyn ModelTable>,
    plans: u32,
    values: Vec<f64>,
    /// Overwritten completely by every read-back (the row count is checked).
    model: Model,
    calculator: Calculator,
    last: Option<Projection>,
}

impl TxRollback {
    /// `premade`: its table, when the exec parent made it (`Setting::table`).
    pub fn new(
        workload: WorkloadParams,
        db: &DbTarget,
        premade: Option<&str>,
    ) -> Result<TxRollback> {
        let model = Model::new(workload.plans);
        let table = runner_db::open::table(db, &model, premade)
            .doing(|| format!("setting up tx-rollback on {db}"))?;
        Ok(TxRollback {
            table,
            plans: workload.plans,
            values: vec![0.0; Overrides::field_count(workload.plans)],
            model,
            calculator: Calculator::new(workload.months),
            last: None,
        })
    }
}

impl Strategy for TxRollback {
    fn run(&mut self, input: u64) -> Result<()> {
        Overrides::from_input(input).write_values(self.plans, &mut self.values);
        self.table.begin()?;
        let preview = self
            .table
            .write_overrides(&self.values)
            .and_then(|()| self.table.read_into(&mut self.model))
            .map(|()| self.calculator.calculate(&self.model));
        // Roll back even after a failed step: the table must never keep a write.
        let rolled_back = self.table.rollback();
        let projection = preview?;
        rolled_back?;
        self.last = Some(projection);
        Ok(())
    }

    fn after(&mut self) -> Result<Outcome> {
        Ok(Outcome::of(fingerprint(self.last.take())))
    }

    fn observe(&mut self, input: u64) -> Result<Observation> {
        self.run(input)?;
        Ok(preview(self.last.take()))
    }

    fn backend_pid(&mut self) -> Result<Option<u32>> {
        Ok(self.table.backend_pid()?)
    }

    fn content_hash(&mut self) -> Result<Option<String>> {
        Ok(Some(self.table.content_hash()?))
    }

    fn teardown(&mut self) -> Result<()> {
        Ok(self.table.close()?)
    }
}
