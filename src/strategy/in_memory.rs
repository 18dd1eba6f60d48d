//! `in-memory`: the preview with no database, the reference every other
//! strategy must agree with bit for bit.

use super::error::Result;
use super::{Observation, Outcome, Strategy};
use runner_core::preview::{Calculator, Model, Overrides, Projection};
use runner_spec::WorkloadParams;

/// Loads the model once; each run copies it into a scratch model (reusing
/// its allocation), applies the input's overrides to the copy and
/// calculates, so no run can see another's overrides.
pub struct InMemory {
    model: Model,
    scratch: Model,
    calculator: Calculator,
    last: Option<Projection>,
}

impl InMemory {
    pub fn new(workload: WorkloadParams) -> InMemory {
        let model = Model::new(workload.plans);
        InMemory {
            scratch: model.clone(),
            model,
            calculator: Calculator::new(workload.months),
            last: None,
        }
    }
}

impl Strategy for InMemory {
    fn run(&mut self, input: u64) -> Result<()> {
        self.scratch.copy_from(&self.model);
        Overrides::from_input(input).apply(&mut self.scratch);
        self.last = Some(self.calculator.calculate(&self.scratch));
        Ok(())
    }

    fn after(&mut self) -> Result<Outcome> {
        Ok(Outcome::of(fingerprint(self.last.take())))
    }

    fn observe(&mut self, input: u64) -> Result<Observation> {
        self.run(input)?;
        Ok(preview(self.last.take()))
    }
}

/// The fingerprint of a preview: every bit of the projection.
pub(crate) fn fingerprint(p: Option<Projection>) -> u64 {
    match p {
        Some(p) => {
            p.ending_mrr.to_bits()
                ^ p.ending_cash.to_bits().rotate_left(17)
                ^ p.lifetime_revenue.to_bits().rotate_left(31)
                ^ (p.runway_month as u64).rotate_left(47)
        }
        None => super::NOTHING,
    }
}

pub(crate) fn preview(p: Option<Projection>) -> Observation {
    p.map_or(Observation::Nothing, Observation::Preview)
}
