//! Version 0 to 1: a file written before `format_version` existed. Runners
//! of that time left out keys that did not exist yet, and wrote run.json's
//! command as the raw argv (`command_line`); each key is added here with
//! the value reading such a file always gave, so the structs need no
//! default for it. Every step adds only what is absent: a key a version 0
//! file does hold is kept as it is.

use super::StepError;
use serde_json::{Map, Value};

type Object = Map<String, Value>;

/// Adds `key` as `value` where `object` lacks it.
fn absent(object: &mut Object, key: &str, value: Value) {
    object.entry(key).or_insert(value);
}

/// The object at `key` of `object`, if it is one.
fn object<'a>(object: &'a mut Object, key: &str) -> Option<&'a mut Object> {
    object.get_mut(key).and_then(Value::as_object_mut)
}

/// Every object in the list at `key` of `object`.
fn each<'a>(object: &'a mut Object, key: &str) -> impl Iterator<Item = &'a mut Object> {
    object
        .get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

/// run.json.
pub(super) fn run(
    run: &mut Object,
    argv: &dyn Fn(&[String]) -> Result<Value, StepError>,
) -> Result<(), StepError> {
    invocation(run, argv)?;
    build(run);
    environment(run);
    if let Some(merged) = object(run, "merged") {
        for shard in each(merged, "shards") {
            invocation(shard, argv)?;
            build(shard);
            environment(shard);
        }
    }
    for fork in each(run, "forks") {
        self::fork(fork);
    }
    if let Some(experiment) = object(run, "spec").and_then(|s| object(s, "experiment")) {
        if let Some(design) = object(experiment, "design") {
            let placement =
                serde_json::to_value(crate::placement::DEFAULT).expect("a placement serializes");
            absent(design, "placement", placement);
        }
        if let Some(gate) = object(experiment, "gate") {
            absent(gate, "max_false_block", max_false_block());
            // Runs made before the half-threshold self-check cell have
            // none in their plan.
            absent(gate, "within_check", false.into());
        }
    }
    Ok(())
}

/// The command that made the folder (run.json's, or a merged shard's):
/// older runners recorded the raw argv as `command_line`, parsed here
/// once, with the command line's own definitions, into `invocation`.
fn invocation(
    holder: &mut Object,
    argv: &dyn Fn(&[String]) -> Result<Value, StepError>,
) -> Result<(), StepError> {
    if !holder.contains_key("invocation") {
        if let Some(line) = holder.remove("command_line") {
            let words: Vec<String> = match line {
                Value::Array(words) => words
                    .into_iter()
                    .map(|w| match w {
                        Value::String(s) => Ok(s),
                        other => Err(StepError::WordNotText(other.to_string())),
                    })
                    .collect::<Result<_, _>>()?,
                other => return Err(StepError::ArgvNotAList(other.to_string())),
            };
            holder.insert("invocation".into(), argv(&words)?);
        }
    }
    if let Some(inv) = object(holder, "invocation") {
        if inv.get("command").and_then(Value::as_str) == Some("analyze") {
            absent(inv, "clock_resolution_ns", 0.into());
        }
    }
    Ok(())
}

/// The binary that made the folder (run.json's, or a merged shard's):
/// runners that did not record how they were launched were started with
/// cargo.
fn build(holder: &mut Object) {
    if let Some(build) = object(holder, "build") {
        absent(build, "launched_as", "cargo run --release --".into());
    }
}

/// The machine (run.json's, or a merged shard's): runners before the
/// machine checks recorded none, and no busiest processes.
fn environment(holder: &mut Object) {
    if let Some(env) = object(holder, "environment") {
        absent(env, "checks", Value::Array(Vec::new()));
        absent(env, "busiest_processes", Value::Array(Vec::new()));
    }
}

/// A fork's record (in run.json's `forks`, or `DIR.partial/forks/`).
pub(super) fn fork(fork: &mut Object) {
    absent(fork, "resource_usage", false.into());
    // Runners before the backends' CPU was sampled recorded none of it.
    if let Some(placement) = object(fork, "placement") {
        absent(placement, "backend_cpus", Value::Array(Vec::new()));
        absent(placement, "backend_ticks", 0.into());
    }
    if let Some(checks) = object(fork, "checks") {
        absent(checks, "matches_in_memory", Value::Null);
    }
}

/// analysis.json.
pub(super) fn analysis(analysis: &mut Object) {
    for cell in each(analysis, "cells") {
        if let Some(pooled) = object(cell, "pooled") {
            absent(pooled, "share_tied", 0.0.into());
        }
        if let Some(cross) = object(cell, "cross_runs") {
            absent(cross, "faster", 0.into());
        }
    }
    let Some(gate) = object(analysis, "gate") else {
        return;
    };
    absent(gate, "max_false_block", max_false_block());
    absent(gate, "advice", Value::Null);
    power(gate);
    self_checks(gate);
    for group in each(gate, "groups") {
        power(group);
        self_checks(group);
    }
}

/// `power`: a file written before the power was computed holds there the
/// share of forks a cell at twice the threshold caught, which is not this
/// number; it becomes null (`runner report` computes the power again from
/// the data).
fn power(holder: &mut Object) {
    let computed = holder
        .get("power")
        .and_then(Value::as_object)
        .is_some_and(|p| {
            ["cell", "power", "slowdown_ns", "spread_ns"]
                .iter()
                .all(|k| p.contains_key(*k))
        });
    if !computed {
        holder.insert("power".into(), Value::Null);
    }
}

/// The self-check's shares: the 0.5x cell's is null in runs made before
/// it existed, and a share's lower bound is 0 where it was not kept.
fn self_checks(holder: &mut Object) {
    absent(holder, "false_blocks", Value::Null);
    for key in ["false_alarms", "false_blocks"] {
        if let Some(share) = object(holder, key) {
            absent(share, "lower_bound", 0.0.into());
        }
    }
}

/// The gate's `max_false_block` before it could be set.
fn max_false_block() -> Value {
    crate::spec::DEFAULT_MAX_FALSE_BLOCK.into()
}
