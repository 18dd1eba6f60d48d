//! The checks of docs/guide/how-a-run-works.md and docs/guide/own-code.md, before any timing: each arm
//! gives the same output twice on one input (no state carried from run to
//! run), the arms give the same output as each other where their outputs
//! can be compared (previews, commands' stdout and exit status, rows), and
//! every preview equals the plain in-memory calculation bit for bit.

use super::{Arms, JobRequest};
use crate::exec::protocol::CheckReport;
use crate::record::Arm;
use crate::spec::StrategyKind;
use crate::strategy::{self, Observation, Setting};
use crate::workload::Overrides;
use anyhow::{bail, Result};

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

fn who(name: &str, kind: &StrategyKind) -> String {
    format!("`{name}` ({})", kind.label())
}

pub(super) fn check(job: &JobRequest, arms: &mut Arms, input: u64) -> Result<CheckReport> {
    let seeded_hash = arms.content_hash()?;
    let shown = shown_input(job, input);
    let b1 = arms.get(Arm::Baseline).observe(input)?;
    let t1 = arms.get(Arm::Treatment).observe(input)?;
    let b2 = arms.get(Arm::Baseline).observe(input)?;
    let t2 = arms.get(Arm::Treatment).observe(input)?;
    for (name, kind, first, again) in [
        (&job.baseline_name, &job.baseline, &b1, &b2),
        (&job.treatment_name, &job.treatment, &t1, &t2),
    ] {
        if let Some(d) = first.difference(again) {
            bail!(
                "strategy {} returned different results for the same input ({shown}): {d}; it carries state from one run to the next",
                who(name, kind)
            );
        }
    }
    let arms_agree = if b1.comparable(&t1) {
        if let Some(d) = b1.difference(&t1) {
            bail!(
                "baseline {} and treatment {} disagree on the same input ({shown}): {d}",
                who(&job.baseline_name, &job.baseline),
                who(&job.treatment_name, &job.treatment)
            );
        }
        Some(true)
    } else {
        None
    };
    // Every strategy that computes the preview must agree with the plain
    // in-memory calculation: a database round trip that loses a bit shows here.
    let mut matches_in_memory = None;
    if matches!(b1, Observation::Preview(_)) || matches!(t1, Observation::Preview(_)) {
        let at = Setting::new(job.workload, None);
        let expected = strategy::build(&StrategyKind::InMemory, &at)?.observe(input)?;
        for (name, kind, got) in [
            (&job.baseline_name, &job.baseline, &b1),
            (&job.treatment_name, &job.treatment, &t1),
        ] {
            if let Observation::Preview(_) = got {
                if let Some(d) = got.difference(&expected) {
                    bail!(
                        "strategy {} disagrees with the in-memory calculation on the same input ({shown}): {d}",
                        who(name, kind)
                    );
                }
                matches_in_memory = Some(true);
            }
        }
    }
    Ok(CheckReport {
        arms_agree,
        matches_in_memory,
        repeatable: true,
        seeded_hash,
    })
}
