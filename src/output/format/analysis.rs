//! analysis.json's table of steps. analysis.json has a version of its own:
//! a change to run.json's shape does not make every analysis.json older,
//! nor the other way round. As for run.json, each step fills literals, the
//! values of its version, never today's constants.

use super::json::{absent, each, object, Object};
use super::Step;
use serde_json::Value;

/// Row `n` brings a version `n` analysis.json to `n + 1`.
pub(super) const STEPS: &[Step<()>] = &[Step {
    from: 0,
    introduced: &["format_version"],
    apply: |analysis, _| {
        v0(analysis);
        Ok(())
    },
}];

/// 0 to 1: a file written before `format_version` existed.
fn v0(analysis: &mut Object) {
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
    // Version 0's default: inconclusive above a 10 % false-block share.
    absent(gate, "max_false_block", 0.1.into());
    absent(gate, "advice", Value::Null);
    v0_power(gate);
    v0_self_checks(gate);
    for group in each(gate, "groups") {
        v0_power(group);
        v0_self_checks(group);
    }
}

/// `power`: a file written before the power was computed holds there the
/// share of forks a cell at twice the threshold caught, which is not this
/// number; it becomes null (`runner report` computes the power again from
/// the data).
fn v0_power(holder: &mut Object) {
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
fn v0_self_checks(holder: &mut Object) {
    absent(holder, "false_blocks", Value::Null);
    for key in ["false_alarms", "false_blocks"] {
        if let Some(share) = object(holder, key) {
            absent(share, "lower_bound", 0.0.into());
        }
    }
}
