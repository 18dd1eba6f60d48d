//! The recorded values that change what a report says but that neither the
//! spec nor the rows derive: the command that made the folder
//! (`invocation`, printed in the Reproduce section and in resume commands)
//! and the clock's resolution (every D is dithered within one step of it,
//! so a larger one widens every interval and can turn "seen" into "not
//! seen"). A reader checks them like the rest of run.json:
//!
//! - the invocation agrees with the spec it recorded: exec's spec path is
//!   the spec's, each `--set` is one the recorded spec already reflects, a
//!   shard's `--shard` is its share; analyze's settings are the spec's;
//! - a clock resolution is within runner's bounds (at most 1 ms, as
//!   `analyze --clock-resolution-ns` allows), and no coarser than the rows
//!   allow: a clock with a step of r cannot time a run in less than r, so
//!   one above twice the shortest recorded run is not the one that timed
//!   them;
//! - both are bound by `record_sha256`, which the writer sets on every
//!   write: an edit of either is refused (a folder from before the digest
//!   has none, and gets the checks above).

use super::{FolderError, Invocation, RunInfo};
use serde_json::json;

/// The coarsest clock step runner analyses, ns (1 ms): above it no timing
/// of a single run means much, and the dithering would swamp any effect.
pub const MAX_CLOCK_RESOLUTION_NS: u64 = 1_000_000;

/// Every recorded clock resolution, with the key it is at.
fn clocks(info: &RunInfo) -> Vec<(String, u64)> {
    let mut out = vec![(
        "environment.clock.resolution_ns".to_string(),
        info.environment.clock.resolution_ns,
    )];
    if let Invocation::Analyze(z) = &info.invocation {
        out.push((
            "invocation.clock_resolution_ns".into(),
            z.clock_resolution_ns,
        ));
    }
    for (i, s) in info.merged.iter().flat_map(|m| m.shards.iter()).enumerate() {
        out.push((
            format!("merged.shards[{i}].environment.clock.resolution_ns"),
            s.environment.clock.resolution_ns,
        ));
    }
    out
}

/// The digest the writer records as `record_sha256`.
pub(crate) fn digest(info: &RunInfo) -> String {
    let bound = json!({
        "invocation": info.invocation,
        "clock_resolution_ns": clocks(info).iter().map(|(_, r)| *r).collect::<Vec<_>>(),
    });
    super::sha256_hex(&bound.to_string())
}

/// The clock bounds; the digest, when the folder has one.
pub(crate) fn check(info: &RunInfo) -> Result<(), FolderError> {
    for (key, r) in clocks(info) {
        if r > MAX_CLOCK_RESOLUTION_NS {
            return Err(FolderError::Edited(format!(
                "{key} is {r} ns, above {MAX_CLOCK_RESOLUTION_NS} ns (1 ms), the coarsest clock runner analyses: the record was edited"
            )));
        }
    }
    check_invocation(info)?;
    match &info.record_sha256 {
        Some(d) if *d != digest(info) => Err(FolderError::Edited("invocation or a recorded clock resolution is not what runner recorded (record_sha256 differs): the file was edited".into())),
        _ => Ok(()),
    }
}

/// The resolution the rows allow: at most twice the shortest positive run
/// time among them (`times`, ns). Runs runner measured only; an imported
/// file's declared resolution is the user's statement.
pub(crate) fn check_against_rows(
    info: &RunInfo,
    times: impl Iterator<Item = u64>,
) -> Result<(), FolderError> {
    if info.imported.is_some() {
        return Ok(());
    }
    let Some(shortest) = times.filter(|&t| t > 0).min() else {
        return Ok(());
    };
    for (key, r) in clocks(info) {
        if r > shortest.saturating_mul(2) {
            return Err(FolderError::Edited(format!(
                "{key} is {r} ns, but pairs.csv has a run timed at {shortest} ns; a clock that coarse could not have timed it, so the record was edited"
            )));
        }
    }
    Ok(())
}

/// The invocation against the spec and the rest of the record.
fn check_invocation(info: &RunInfo) -> Result<(), FolderError> {
    let spec = &info.spec;
    match &info.invocation {
        Invocation::Exec(e) => {
            let path = runner_core::redact::secrets(&e.spec.to_string_lossy());
            if path != runner_core::redact::secrets(&spec.path) {
                return Err(FolderError::Edited(format!(
                    "invocation.spec is {path:?}, but the recorded spec came from {:?}: the record was edited",
                    spec.path
                )));
            }
            if let (Some((i, n)), Some(s)) = (e.shard, &info.shard) {
                if (i, n) != (s.index, s.count) {
                    return Err(FolderError::Edited(format!(
                        "invocation.shard is {i}/{n}, but the folder holds shard {}/{}: the record was edited",
                        s.index, s.count
                    )));
                }
            }
            check_sets(info, &e.set)
        }
        Invocation::Analyze(z) => {
            let exp = &spec.experiment;
            if z.resamples != exp.analysis.resamples || z.confidence != exp.analysis.confidence {
                return Err(FolderError::Edited(format!(
                    "invocation has --resamples {} --confidence {}, but the recorded spec {} and {}: the record was edited",
                    z.resamples, z.confidence, exp.analysis.resamples, exp.analysis.confidence
                )));
            }
            if z.seed.is_some() == info.seeds.drawn
                || z.seed.is_some_and(|s| s != info.seeds.master)
            {
                return Err(FolderError::Edited(format!(
                    "invocation.seed is {}, but seeds.master is {} (drawn: {}): the record was edited",
                    z.seed.map_or("none".into(), |s| s.to_string()),
                    info.seeds.master,
                    info.seeds.drawn
                )));
            }
            Ok(())
        }
        Invocation::Merge(_) => Ok(()),
    }
}

/// Each `--set` of exec's invocation is one the recorded spec already
/// reflects: applying it again changes nothing. A flag the run never had
/// would change it (or not apply at all).
fn check_sets(info: &RunInfo, sets: &[String]) -> Result<(), FolderError> {
    if sets.is_empty() {
        return Ok(());
    }
    let spec = &info.spec;
    // The SQL grammar is the backend's; without a database record, either.
    let grammars: &[bool] = match &info.database {
        Some(d) => &[d["backend"] == "postgres"][..],
        None => &[false, true],
    };
    let want = serde_json::to_value(&spec.experiment).ok();
    let same = |flags: &[String]| {
        grammars.iter().any(|&postgres| {
            let recorded = runner_spec::Recorded::of(&spec.experiment, postgres);
            runner_spec::parse_recorded_with(&spec.path, &spec.toml, &recorded, flags)
                .is_ok_and(|e| serde_json::to_value(&e).ok() == want)
        })
    };
    if same(sets) {
        return Ok(());
    }
    let odd = sets
        .iter()
        .find(|s| !same(std::slice::from_ref(s)))
        .unwrap_or(&sets[0]);
    Err(FolderError::Edited(format!(
        "invocation.set has `--set {odd}`, which the recorded spec does not reflect: the run never had that flag, so the record was edited"
    )))
}
