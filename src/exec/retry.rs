//! One more run of an inconclusive gate, with the design its verdict
//! names: `exec --retry-inconclusive` (a CI job that must not merge on
//! doubt, nor fail on a run that merely lacked forks), and every
//! `exec --bisect` (an inconclusive step is measured again with twice the
//! forks before `git bisect run` is told to skip the commit).
//!
//! The second run replaces the first's folder (a finished run always
//! replaces its folder); its own overrides, the first run's and the
//! retry's, are in its run.json and gate.json, so its verdict says what it
//! was reached under. Its exit code is the answer; it is not retried again.

use super::{bisect, ExecArgs, ExecOutcome};
use crate::analysis::gate::Verdict;
use crate::error::Result;

/// What runs again, if anything: the first run's arguments plus the
/// retry's `--set` overrides, into the first run's folder.
pub fn retry_args(args: &ExecArgs, first: &ExecOutcome) -> Option<ExecArgs> {
    let inconclusive = first.exit_code == Verdict::Inconclusive.exit_code();
    if !inconclusive || !(args.retry_inconclusive || args.bisect) {
        return None;
    }
    let mut set = args.set.clone();
    set.extend(retry_sets(args, first));
    Some(ExecArgs {
        out: Some(first.dir.clone()),
        resume: None,
        set,
        retry_inconclusive: false,
        ..args.clone()
    })
}

/// The design of the retry: for `--retry-inconclusive` the one the verdict
/// names (forks, pairs or both), else twice the forks that ran; for
/// `--bisect` always twice the forks.
fn retry_sets(args: &ExecArgs, first: &ExecOutcome) -> Vec<String> {
    if args.retry_inconclusive && !args.bisect && !first.advice.is_empty() {
        return first.advice.clone();
    }
    let design = &first.info.spec.experiment.design;
    let forks = design
        .stop
        .map_or(design.forks.get(), |s| s.max_forks.get());
    forks_sets(design, forks.saturating_mul(2))
}

/// `design.forks=N`, and with `[design.stop]` its `max_forks` too (the
/// two must agree when both are given).
pub fn forks_sets(design: &crate::spec::Design, forks: u32) -> Vec<String> {
    let mut out = vec![format!("design.forks={forks}")];
    if design.stop.is_some() {
        out.push(format!("design.stop.max_forks={forks}"));
    }
    out
}

/// `exec`, and once more when [`retry_args`] says so; prints each run's
/// summary and returns the last run's exit code.
pub fn exec_with_retry(args: &ExecArgs) -> Result<i32> {
    // The process's private folder is set once (`temp::set_root`): one
    // for both runs, alive until the second has finished.
    let _temp = if args.retry_inconclusive || args.bisect {
        Some(super::private_temp()?)
    } else {
        None
    };
    let first = super::exec(args)?;
    crate::console::out(&first.summary);
    let Some(again) = retry_args(args, &first) else {
        return Ok(first.exit_code);
    };
    let added: Vec<String> = again.set[args.set.len()..]
        .iter()
        .map(|s| format!("--set {s}"))
        .collect();
    crate::console::err(&format!(
        "gate: inconclusive; running it once more with {} (into {})",
        added.join(" "),
        first.dir.display()
    ));
    let second = super::exec(&again)?;
    crate::console::out(&second.summary);
    Ok(second.exit_code)
}

/// The line `exec --bisect` ends with: the verdict, what `git bisect run`
/// is told, and the exit code that tells it.
pub fn bisect_line(code: i32, verdict: &str) -> String {
    let told = match code {
        bisect::GOOD => "good",
        bisect::BAD => "bad",
        bisect::SKIP => "skip this commit",
        _ => "stop bisecting",
    };
    format!("git bisect: {verdict}: {told}, exit {code}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bisect_line_says_what_git_is_told() {
        assert_eq!(
            bisect_line(bisect::BAD, "regression"),
            "git bisect: regression: bad, exit 1"
        );
        assert_eq!(
            bisect_line(bisect::SKIP, "inconclusive"),
            "git bisect: inconclusive: skip this commit, exit 125"
        );
        assert_eq!(
            bisect_line(bisect::ABORT, "bad input"),
            "git bisect: bad input: stop bisecting, exit 128"
        );
    }
}
