//! The checks before any timing, as the worker runs them: the agreement
//! check of `strategy::agreement` on this fork's arms (one instance for
//! both in an A/A fork), and how the input is shown in its messages.

use super::{Arms, JobRequest};
use crate::exec::protocol::CheckReport;
use crate::strategy::agreement::{check_agreement, check_arms_agree, Side};
use crate::strategy::error::Result;
use runner_core::preview::Overrides;
use runner_spec::StrategyKind;

/// `input 123`, and for the preview the slider position it maps to.
pub(super) fn shown_input(job: &JobRequest, input: u64) -> String {
    if job.baseline.computes_preview() || job.treatment.computes_preview() {
        format!(
            "input {input}, delta = {}",
            Overrides::from_input(input).delta
        )
    } else {
        format!("input {input}")
    }
}

fn side<'a>(name: &'a str, kind: &StrategyKind) -> Side<'a> {
    Side {
        name,
        label: kind.label().to_string(),
        observed: !matches!(kind, StrategyKind::Command(c) if !c.compare_output),
    }
}

/// The agreement check (`strategy::agreement`) on this fork's arms, and
/// the seeded table's hash, for run.json's `checks`.
pub(super) fn check(job: &JobRequest, arms: &mut Arms, input: u64) -> Result<CheckReport> {
    let seeded_hash = arms.content_hash()?;
    let shown = shown_input(job, input);
    let found = check_agreement(
        arms,
        &side(&job.baseline_name, &job.baseline),
        &side(&job.treatment_name, &job.treatment),
        job.workload,
        input,
        &shown,
    )?;
    Ok(CheckReport {
        arms_agree: found.arms_agree,
        matches_in_memory: found.matches_in_memory,
        repeatable: true,
        seeded_hash,
    })
}

/// The checks before timing on the inputs after the first, when an arm
/// runs SQL (`[database] check_inputs`, `draws::check_inputs`): the arms'
/// rows must agree on each.
pub(super) fn check_more(job: &JobRequest, arms: &mut Arms, first: u64) -> Result<()> {
    let sql = |k: &StrategyKind| matches!(k, StrategyKind::Sql(_));
    if !sql(&job.baseline) && !sql(&job.treatment) {
        return Ok(());
    }
    let (b, t) = (
        side(&job.baseline_name, &job.baseline),
        side(&job.treatment_name, &job.treatment),
    );
    for input in super::draws::check_inputs(first, job.sql.check_inputs)
        .into_iter()
        .skip(1)
    {
        check_arms_agree(arms, &b, &t, input, &shown_input(job, input))?;
    }
    Ok(())
}
