//! A fork's record, the `DIR.partial/forks/c<cell>-f<fork>.json` a run in
//! progress keeps per finished fork (and, inside run.json, each entry of
//! `forks`). A resume may read records an older runner wrote, so they carry
//! a version of their own, migrated by this table.

use super::json::{absent, object, Object};
use super::Step;
use serde_json::Value;

/// Row `n` brings a version `n` record to `n + 1`.
pub(super) const STEPS: &[Step<()>] = &[Step {
    from: 0,
    introduced: &["format_version"],
    apply: |fork, _| {
        v0(fork);
        Ok(())
    },
}];

/// 0 to 1: a record written before fork records had a version. Runners of
/// that time could leave out what did not exist yet: usage columns (so
/// none), the backends' CPUs and their ticks (none sampled), and whether a
/// SQL arm's rows matched the in-memory run (not compared). run.json's own
/// step applies it to each of its forks.
pub(super) fn v0(fork: &mut Object) {
    absent(fork, "resource_usage", false.into());
    if let Some(placement) = object(fork, "placement") {
        absent(placement, "backend_cpus", Value::Array(Vec::new()));
        absent(placement, "backend_ticks", 0.into());
    }
    if let Some(checks) = object(fork, "checks") {
        absent(checks, "matches_in_memory", Value::Null);
    }
}
