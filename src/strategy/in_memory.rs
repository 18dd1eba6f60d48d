//! `in-memory`: the preview with no database, the reference every other
//! strategy must agree with bit for bit.

use super::{Outcome, Strategy};
use crate::spec::WorkloadParams;
use crate::workload::{Calculator, Model, Overrides};

/// Loads the model once; each run copies it into a scratch model (reusing
/// its allocation), applies the overrides to the copy and calculates, so no
/// run can see another's overrides.
pub struct InMemory {
    model: Model,
    scratch: Model,
    calculator: Calculator,
}

impl InMemory {
    pub fn new(workload: WorkloadParams) -> InMemory {
        let model = Model::new(workload.plans);
        InMemory {
            scratch: model.clone(),
            model,
            calculator: Calculator::new(workload.months),
        }
    }
}

impl Strategy for InMemory {
    fn run(&mut self, input: &Overrides) -> anyhow::Result<Outcome> {
        self.scratch.copy_from(&self.model);
        input.apply(&mut self.scratch);
        Ok(Outcome::Preview(self.calculator.calculate(&self.scratch)))
    }
}
