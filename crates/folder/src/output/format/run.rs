//! run.json's table of steps. Each step fills what runners of its version
//! left out with the value that version read it as, written here as a
//! literal: a default that changes later must not change what an old run
//! means, so no step reads today's constants.

use super::json::{absent, each, object, Object};
use super::{Argv, Step, StepError};
use serde_json::Value;

/// Row `n` brings a version `n` run.json to `n + 1`.
pub(super) const STEPS: &[Step<Argv>] = &[
    Step {
        from: 0,
        introduced: &["format_version"],
        apply: v0,
    },
    Step {
        from: 1,
        introduced: &[
            "stop_method",
            "spec.experiment.gate.max_retry_factor",
            "spec.experiment.gate.allow_overrides",
            "environment.code",
            "spec.experiment.design.runs_per_fork",
            "spec.experiment.design.counting",
            "spec.experiment.gate.metric",
            "environment.counters",
            "forks[].counted",
        ],
        apply: v1,
    },
];

/// 1 to 2: the round in which one interval decides, a fork's counts come
/// from the command's length, the user's code is recorded, and
/// instructions may be counted beside time.
///
/// - A sequential design of version 1 stopped on Lai's confidence
///   sequence over the forks' median D (`stop_method`); a gate had no cap
///   on its retry's cost and took every `--set`; `statistic` chose its
///   interval, and is read no more.
/// - Runners of version 1 did not record the user's code
///   (`environment.code`, run.json's and each merged shard's).
/// - A version 1 runner filled a `warmup_pairs` or `pairs` the file left
///   out with fixed defaults (80 and 300, which the recorded experiment
///   holds); a spec validated now leaves them to the trial runs, so the
///   record says which were left out and that the defaults of that time
///   chose them (`spec.experiment.design.runs_per_fork`).
/// - Version 1 runs counted no instructions: a run without
///   `spec.experiment.design.counting` timed alone, a gate without
///   `metric` judged time, and nothing is filled (absent says so).
fn v1(run: &mut Object, _: &Argv) -> Result<(), StepError> {
    v1_code(run);
    if let Some(merged) = object(run, "merged") {
        for shard in each(merged, "shards") {
            v1_code(shard);
        }
    }
    v1_runs_per_fork(run);
    let experiment = object(run, "spec").and_then(|s| object(s, "experiment"));
    let Some(experiment) = experiment else {
        return Ok(());
    };
    let sequential = object(experiment, "design").is_some_and(|d| d.contains_key("stop"));
    if let Some(gate) = object(experiment, "gate") {
        absent(gate, "max_retry_factor", Value::Null);
        absent(gate, "allow_overrides", true.into());
        gate.remove("statistic");
    }
    if sequential {
        absent(run, "stop_method", "sequence-on-difference".into());
    }
    Ok(())
}

/// 0 to 1: a file written before `format_version` existed. Runners of
/// that time left out keys that did not exist yet, and wrote the command
/// as the raw argv (`command_line`).
fn v0(run: &mut Object, argv: &Argv) -> Result<(), StepError> {
    v0_invocation(run, *argv)?;
    v0_build(run);
    v0_environment(run);
    if let Some(merged) = object(run, "merged") {
        for shard in each(merged, "shards") {
            v0_invocation(shard, *argv)?;
            v0_build(shard);
            v0_environment(shard);
        }
    }
    for fork in each(run, "forks") {
        super::fork::v0(fork);
    }
    if let Some(experiment) = object(run, "spec").and_then(|s| object(s, "experiment")) {
        if let Some(design) = object(experiment, "design") {
            // Version 0's default placement: the worker pinned, its
            // database backend on the same core.
            absent(design, "placement", "same-core".into());
        }
        if let Some(gate) = object(experiment, "gate") {
            // Version 0's default: inconclusive above a 10 % false-block
            // share.
            absent(gate, "max_false_block", 0.1.into());
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
fn v0_invocation(holder: &mut Object, argv: Argv) -> Result<(), StepError> {
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
            // Before the clock's step was an argument of analyze: none.
            absent(inv, "clock_resolution_ns", 0.into());
        }
    }
    Ok(())
}

/// The binary that made the folder (run.json's, or a merged shard's):
/// runners that did not record how they were launched were started with
/// cargo.
fn v0_build(holder: &mut Object) {
    if let Some(build) = object(holder, "build") {
        absent(build, "launched_as", "cargo run --release --".into());
    }
}

/// The machine (run.json's, or a merged shard's): runners before the
/// machine checks recorded none, and no busiest processes.
fn v0_environment(holder: &mut Object) {
    if let Some(env) = object(holder, "environment") {
        absent(env, "checks", Value::Array(Vec::new()));
        absent(env, "busiest_processes", Value::Array(Vec::new()));
    }
}

/// The user's code, not recorded by version 1 (run.json's, or a merged
/// shard's).
fn v1_code(holder: &mut Object) {
    if let Some(env) = object(holder, "environment") {
        absent(env, "code", serde_json::json!({"state": "not-recorded"}));
    }
}

/// The counts `spec.toml` leaves out, marked as chosen by the defaults of
/// the runner that ran it.
fn v1_runs_per_fork(run: &mut Object) {
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
    absent(
        design,
        "runs_per_fork",
        serde_json::json!({"warmup_pairs": warmup, "pairs": pairs, "chosen": {"by": "defaults"}}),
    );
}
