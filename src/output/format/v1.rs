//! Version 1 to 2 (run.json): the user's code a run measured, and the
//! counts of a fork's pairs a spec leaves out.
//!
//! - `environment.code` (run.json's, and each merged shard's): runners of
//!   version 1 did not record the user's code, so it is not recorded.
//! - `spec.experiment.design.runs_per_fork`: a version 1 runner filled a
//!   `warmup_pairs` or `pairs` the file left out with fixed defaults (80
//!   and 300, which the recorded experiment holds); a spec validated now
//!   leaves them to the trial runs, so the record says which were left
//!   out and that the defaults of that time chose them.

use serde_json::{json, Map, Value};

type Object = Map<String, Value>;

fn object<'a>(object: &'a mut Object, key: &str) -> Option<&'a mut Object> {
    object.get_mut(key).and_then(Value::as_object_mut)
}

/// run.json.
pub(super) fn run(run: &mut Object) {
    code(run);
    if let Some(shards) = object(run, "merged")
        .and_then(|m| m.get_mut("shards"))
        .and_then(Value::as_array_mut)
    {
        shards
            .iter_mut()
            .filter_map(Value::as_object_mut)
            .for_each(code);
    }
    runs_per_fork(run);
}

fn code(holder: &mut Object) {
    if let Some(env) = object(holder, "environment") {
        env.entry("code")
            .or_insert_with(|| json!({"state": "not-recorded"}));
    }
}

/// The counts `spec.toml` leaves out, marked as chosen by the defaults of
/// the runner that ran it.
fn runs_per_fork(run: &mut Object) {
    let Some(spec) = object(run, "spec") else {
        return;
    };
    let Some(text) = spec.get("toml").and_then(Value::as_str) else {
        return;
    };
    // A spec that does not parse is left for the check to refuse.
    let Ok(parsed) = text.parse::<toml::Table>() else {
        return;
    };
    let design = parsed.get("design").and_then(toml::Value::as_table);
    let left_out = |key: &str| design.is_none_or(|d| !d.contains_key(key));
    let (warmup, pairs) = (left_out("warmup_pairs"), left_out("pairs"));
    if !(warmup || pairs) {
        return;
    }
    let Some(design) = object(spec, "experiment").and_then(|e| object(e, "design")) else {
        return;
    };
    design.entry("runs_per_fork").or_insert_with(
        || json!({"warmup_pairs": warmup, "pairs": pairs, "chosen": {"by": "defaults"}}),
    );
}
