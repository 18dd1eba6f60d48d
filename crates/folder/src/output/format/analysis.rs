//! analysis.json's table of steps. analysis.json has a version of its own:
//! a change to run.json's shape does not make every analysis.json older,
//! nor the other way round.
//!
//! analysis.json is derived: every number in it is computed from the
//! folder's run.json and pairs.csv. An older version's numbers are not a
//! reshaping of today's (version 2's intervals over the forks are Student's
//! t and its effect is the ratio's alone; version 1 had a hierarchical
//! bootstrap and a direction where D's and the ratio's agreed), so no row
//! fills an older file in: each refuses it in one sentence, and `runner
//! report` writes it anew from the data, which is what a reader of an old
//! folder wants anyway.

use super::{Step, StepError};

/// Row `n` brings a version `n` analysis.json to `n + 1`: none can.
pub(super) const STEPS: &[Step<()>] = &[
    Step {
        from: 0,
        introduced: &["format_version"],
        apply: |_, _| Err(StepError::Recomputed),
    },
    Step {
        from: 1,
        introduced: &["cells[].over_forks"],
        apply: |_, _| Err(StepError::Recomputed),
    },
];
