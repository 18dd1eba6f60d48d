//! The instruction counter a run that counts needs (`design.measure`),
//! found before anything runs: valgrind on `PATH`, or a clear refusal that
//! names the Debian package. The workers are told its path in their job.

use super::error::ExecError;
use super::protocol::CountJob;
use crate::strategy::CountWith;
use runner_core::error::Result;
use runner_os::environment::counters::{self, Counters};
use runner_spec::Experiment;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The valgrind [`require`] found, for every job of this process.
static VALGRIND: OnceLock<PathBuf> = OnceLock::new();

/// The machine's counters when `exp` counts instructions (what run.json
/// records, with the one used); none when it times alone. Refused (exit
/// 2) where valgrind is missing: counting cannot start without it.
pub(crate) fn require(spec: &Path, exp: &Experiment) -> Result<Option<Counters>> {
    if exp.design.counting.is_none() {
        return Ok(None);
    }
    let mut found = counters::detect();
    let Some(v) = &found.valgrind else {
        return Err(ExecError::NoValgrind {
            spec: spec.to_path_buf(),
        }
        .into());
    };
    let _ = VALGRIND.set(v.path.clone());
    found.used = Some(CountWith::TOOL.into());
    Ok(Some(found))
}

/// What a fork of `exp` counts with; none when it times alone.
pub(crate) fn job(exp: &Experiment) -> Option<CountJob> {
    let c = exp.design.counting?;
    Some(CountJob {
        with: CountWith {
            valgrind: VALGRIND.get().cloned().unwrap_or_else(|| "valgrind".into()),
            cache_sim: c.cache_sim,
        },
        timed: c.time,
        pairs: c.pairs,
    })
}
