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
use runner_analysis::gate::Verdict;
use runner_core::error::Result;

/// What a retry would do: run again, or not, because its design costs
/// more than the gate allows.
#[derive(Debug)]
pub enum Retry {
    Run(Box<ExecArgs>),
    /// The retry's forks x runs per fork over the first run's, and the
    /// gate's `max_retry_factor`.
    TooCostly {
        sets: Vec<String>,
        factor: f64,
        cap: f64,
    },
}

/// What runs again, if anything: the first run's arguments plus the
/// retry's `--set` overrides, into the first run's folder; none when the
/// first run was not an inconclusive gate asked to retry, and
/// [`Retry::TooCostly`] when the retry's design would cost more than the
/// gate's `max_retry_factor` times the first run (a CI job's time is
/// bounded; an inconclusive answer in it is better than none).
pub fn retry_args(args: &ExecArgs, first: &ExecOutcome) -> Option<Retry> {
    let inconclusive = first.exit_code == Verdict::Inconclusive.exit_code();
    if !inconclusive || !(args.retry_inconclusive || args.bisect) {
        return None;
    }
    let sets = retry_sets(args, first);
    let exp = &first.info.spec().experiment;
    let cap = exp
        .gate
        .and_then(|g| g.max_retry_factor)
        .unwrap_or(f64::INFINITY);
    let factor = cost_factor(&exp.design, &sets);
    if factor > cap {
        return Some(Retry::TooCostly { sets, factor, cap });
    }
    let mut set = args.set.clone();
    set.extend(sets);
    Some(Retry::Run(Box::new(ExecArgs {
        out: Some(first.dir.clone()),
        resume: None,
        set,
        retry_inconclusive: false,
        ..args.clone()
    })))
}

/// The retry's forks x (warm-up + measured pairs) per cell over the first
/// run's design, with `sets` (`design.forks=N`, `design.pairs=M`) applied.
fn cost_factor(design: &runner_spec::Design, sets: &[String]) -> f64 {
    let value = |key: &str| {
        sets.iter()
            .filter_map(|s| s.strip_prefix(key)?.strip_prefix('=')?.parse::<f64>().ok())
            .next_back()
    };
    let forks = f64::from(
        design
            .stop
            .map_or(design.forks.get(), |s| s.max_forks.get()),
    );
    let (warmup, pairs) = (
        f64::from(design.warmup_pairs),
        f64::from(design.pairs.get()),
    );
    let new_forks = value("design.forks").unwrap_or(forks);
    let new_pairs = value("design.pairs").unwrap_or(pairs);
    (new_forks * (warmup + new_pairs)) / (forks * (warmup + pairs))
}

/// The design of the retry: for `--retry-inconclusive` the one the verdict
/// names (forks, pairs or both), else twice the forks that ran; for
/// `--bisect` always twice the forks.
fn retry_sets(args: &ExecArgs, first: &ExecOutcome) -> Vec<String> {
    if args.retry_inconclusive && !args.bisect && !first.advice.is_empty() {
        return first.advice.clone();
    }
    let design = &first.info.spec().experiment.design;
    let forks = design
        .stop
        .map_or(design.forks.get(), |s| s.max_forks.get());
    forks_sets(design, forks.saturating_mul(2))
}

/// `design.forks=N`, and with `[design.stop]` its `max_forks` too (the
/// two must agree when both are given).
pub fn forks_sets(design: &runner_spec::Design, forks: u32) -> Vec<String> {
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
    runner_core::console::out(&first.summary);
    let again = match retry_args(args, &first) {
        None => return Ok(first.exit_code),
        Some(Retry::Run(again)) => again,
        Some(Retry::TooCostly { sets, factor, cap }) => {
            runner_core::console::err(&format!(
                "gate: inconclusive, and not retried: the retry it names (--set {}) would cost {factor:.1} times the first run, more than gate.max_retry_factor = {cap}; the verdict stays inconclusive",
                sets.join(" --set ")
            ));
            return Ok(first.exit_code);
        }
    };
    let added: Vec<String> = again.set[args.set.len()..]
        .iter()
        .map(|s| format!("--set {s}"))
        .collect();
    runner_core::console::err(&format!(
        "gate: inconclusive; running it once more with {} (into {})",
        added.join(" "),
        first.dir.display()
    ));
    let second = super::exec(&again)?;
    runner_core::console::out(&second.summary);
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

    /// Twice the forks costs 2; four times the pairs of 30 with 3 warm-up
    /// pairs costs (3 + 120) / 33 = 3.7; both together 7.5.
    #[test]
    fn a_retry_is_costed_against_the_first_run() {
        let text = "[strategies.a]\nkind = \"noop\"\n[design]\nbaseline = \"a\"\ntreatment = \"a\"\nforks = 5\nwarmup_pairs = 3\npairs = 30\n";
        let e = runner_spec::parse_recorded("x.toml", text, &Default::default()).unwrap();
        let d = &e.design;
        assert_eq!(cost_factor(d, &["design.forks=10".into()]), 2.0);
        let pairs = cost_factor(d, &["design.pairs=120".into()]);
        assert!((pairs - 123.0 / 33.0).abs() < 1e-12, "{pairs}");
        let both = cost_factor(d, &["design.forks=10".into(), "design.pairs=120".into()]);
        assert!((both - 2.0 * 123.0 / 33.0).abs() < 1e-12, "{both}");
        assert_eq!(cost_factor(d, &[]), 1.0);
    }

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
