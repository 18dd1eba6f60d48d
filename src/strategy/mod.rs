//! Strategies: the things a pair times. One file per kind behind one trait.
//!
//! The worker builds each strategy once per fork with [`build`] (all setup,
//! connections and prepared statements happen there, outside any timed
//! region), then calls [`Strategy::run`] per input; `run` is kept free of
//! avoidable allocation so the harness measures the preview, not itself.

mod in_memory;
mod noop;
pub mod spin;
mod tx_rollback;

pub use in_memory::InMemory;
pub use noop::Noop;
pub use spin::Spin;
pub use tx_rollback::TxRollback;

use crate::db::DbTarget;
use crate::spec::{StrategyKind, WorkloadParams};
use crate::workload::{Overrides, Projection};

/// What one run of a strategy returned. Compared bit for bit between arms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// The strategy computed the preview.
    Preview(Projection),
    /// The strategy computes nothing (`spin`, `noop`); nothing to compare.
    Nothing,
}

impl Outcome {
    /// Bit-for-bit equality: `==` on f64 would call 0.0 and -0.0 equal and
    /// NaN unequal to itself, and a leaked write can be a single ulp.
    pub fn same_bits(&self, other: &Outcome) -> bool {
        match (self, other) {
            (Outcome::Nothing, Outcome::Nothing) => true,
            (Outcome::Preview(a), Outcome::Preview(b)) => {
                a.ending_mrr.to_bits() == b.ending_mrr.to_bits()
                    && a.ending_cash.to_bits() == b.ending_cash.to_bits()
                    && a.lifetime_revenue.to_bits() == b.lifetime_revenue.to_bits()
                    && a.runway_month == b.runway_month
            }
            _ => false,
        }
    }
}

/// A thing the harness can time: set up once per fork, then run per input.
pub trait Strategy {
    /// Runs one preview for the slider position in `input`.
    fn run(&mut self, input: &Overrides) -> anyhow::Result<Outcome>;

    /// Hash of the strategy's stored model as committed, for strategies that
    /// keep one in a database (`None` otherwise). The worker compares it
    /// after seeding and after the fork: a difference means a leaked write.
    fn content_hash(&mut self) -> anyhow::Result<Option<String>> {
        Ok(None)
    }
}

/// Sets up one strategy of `kind` for a fork.
///
/// `db` is the run's resolved database ([`crate::db::resolve`]); it is only
/// read for kinds that need one, and a `tx-rollback` without it is an error.
/// For PostgreSQL the target's run schema must already exist, created by the
/// parent with [`crate::db::postgres::create_run_schema`].
pub fn build(
    kind: StrategyKind,
    workload: WorkloadParams,
    db: Option<&DbTarget>,
) -> anyhow::Result<Box<dyn Strategy>> {
    Ok(match kind {
        StrategyKind::InMemory => Box::new(InMemory::new(workload)),
        StrategyKind::TxRollback => {
            let db = db.ok_or_else(|| {
                anyhow::anyhow!(
                    "strategy kind tx-rollback needs a database, and none is configured \
                     (set database.url or RUNNER_DATABASE_URL, or use backend = \"sqlite\")"
                )
            })?;
            Box::new(TxRollback::new(workload, db)?)
        }
        StrategyKind::Spin { duration_ns } => Box::new(Spin::new(duration_ns)),
        StrategyKind::Noop => Box::new(Noop),
    })
}

/// Runs `a` and `b` on each input and, per input, `a` twice: errors unless
/// all results are bit-identical. This is the worker's pre-flight check that
/// the two arms compute the same thing and that a run carries no state into
/// the next one.
pub fn check_agreement(
    a: &mut dyn Strategy,
    b: &mut dyn Strategy,
    inputs: &[Overrides],
) -> anyhow::Result<()> {
    for input in inputs {
        let first = a.run(input)?;
        let other = b.run(input)?;
        let again = a.run(input)?;
        if !first.same_bits(&other) {
            anyhow::bail!(
                "baseline and treatment disagree at delta {}: {first:?} vs {other:?}",
                input.delta
            );
        }
        if !first.same_bits(&again) {
            anyhow::bail!(
                "one strategy returned different results twice at delta {}: {first:?} vs {again:?}",
                input.delta
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
