//! `check` for a sequential design (`[design.stop]`): how many forks a
//! cell may need before its interval reaches `half_width`, and how long
//! that takes, from a short paired trial.
//!
//! The trial is one fork of the first experiment cell, shortened to the
//! pairs the arms' trial runs say fit in about two seconds, in a worker
//! started and contained exactly as exec's forks are (`spawn::Worker`):
//! its D give the spread of one pair's difference. A fork's estimate is the
//! median of its pairs' D, whose standard error is about
//! sqrt(pi / 2) sd(D) / sqrt(pairs) for roughly normal D (sd taken
//! robustly, as 1.4826 times the median absolute deviation, which is the
//! standard deviation for normal data); the rule's
//! interval after n forks is `runner_stats::spending::Spending::multiplier(n)`
//! times the forks' spread over sqrt(n) (a percentage target: the same
//! share of the baseline's median run, which is what the change's interval
//! spans at that width). The trial sees the spread of D inside one
//! process only: forks differ from each other by more (a fresh process
//! lands elsewhere in memory and on the CPU), so the count is a lower
//! bound, and `check` says so.

use super::estimate::{human, Estimate};
use super::protocol::JobRequest;
use runner_db::DbTarget;
use runner_plan::Cell;
use runner_spec::{Experiment, HalfWidth, StopRule};
use std::time::Duration;

/// The trial's pairs: as many as fit in [`TRIAL_BUDGET`] by the arms'
/// trial runs, within these bounds.
const TRIAL_PAIRS: (u64, u64) = (5, 30);
const TRIAL_BUDGET: Duration = Duration::from_secs(2);

/// The `stop` line of `check` (empty for a fixed design): the rule, and
/// the forks and time a half-width target needs if forks differ no more
/// than the trial's pairs do. `estimate` is the fixed design's.
pub(crate) fn check_line(
    exp: &Experiment,
    cells: &[Cell],
    db: Option<&DbTarget>,
    estimate: &Estimate,
) -> String {
    let Some(rule) = exp.design.stop else {
        return String::new();
    };
    let max = rule.max_forks.get();
    // The estimate is of every cell running max_forks forks.
    let per_fork_ns = estimate.total_ns / (u64::from(max) * cells.len().max(1) as u64).max(1);
    let time = |forks: u32| human(per_fork_ns * u64::from(forks) * cells.len() as u64);
    let mut out = format!(
        "stop        {}; forecast: about {} if every cell runs max_forks, {} if every cell stops at min_forks\n",
        runner_spec::describe_rule(&rule, exp.gate.is_some()),
        time(max),
        time(rule.min_forks.get())
    );
    let Some(target) = rule.half_width else {
        return out;
    };
    let cell = cells.iter().find(|c| c.role.is_experiment());
    let line = match cell.map(|c| trial(exp, c, db, estimate)) {
        Some(Ok(t)) => reach(&rule, target, &t, exp, time),
        Some(Err(why)) => format!(
            "runner could not time the arms here ({why}), so it cannot say how many forks the target needs"
        ),
        None => "no experiment cell to time".into(),
    };
    out.push_str(&format!("            half_width {target}: {line}\n"));
    out
}

/// Why the paired trial could not time the arms: the clause the estimate
/// line prints.
#[derive(Debug, thiserror::Error)]
enum Untimed {
    #[error("an arm on PostgreSQL needs the run's own schema")]
    NeedsRunSchema,
    #[error("the trial runs did not time both arms")]
    NotTimed,
    #[error("{0}")]
    ForkFailed(String),
    #[error(transparent)]
    NoPairs(#[from] runner_stats::StatsError),
}

/// What a paired trial found: the spread of D and the baseline's median.
struct Trial {
    pairs: usize,
    sd_ns: f64,
    /// The median D: what `decide` needs the interval to leave 0 by.
    centre_ns: f64,
    baseline_median_ns: f64,
}

/// The forks the rule needs and their time, in words: the first look at
/// which the rule's interval (Student's t at each look, its error rate
/// spent over the looks, `runner_stats::spending`) is narrow enough for the
/// target, or,
/// with `decide` and no gate, leaves 0 at the trial's median D.
fn reach(
    rule: &StopRule,
    target: HalfWidth,
    t: &Trial,
    exp: &Experiment,
    time: impl Fn(u32) -> String,
) -> String {
    let target_ns = target.ns_for(t.baseline_median_ns);
    let pairs = f64::from(exp.design.pairs.get());
    // A fork's estimate is the median of its pairs' D: its spread from
    // fork to fork, if forks differed no more than pairs in one process.
    let fork_se = (std::f64::consts::PI / 2.0).sqrt() * t.sd_ns / pairs.sqrt();
    let spending = runner_stats::spending::Spending::new(
        rule.min_forks.get() as usize,
        rule.max_forks.get() as usize,
        exp.analysis.confidence,
    );
    let half_width = |n: u32| match &spending {
        Ok(s) => s.multiplier(n as usize) * fork_se / f64::from(n).sqrt(),
        Err(_) => f64::INFINITY,
    };
    let decides = rule.decide && exp.gate.is_none();
    let met = |n: u32| half_width(n) <= target_ns || (decides && half_width(n) < t.centre_ns.abs());
    let seen = format!(
        "{} pairs of a shortened fork: D spreads {} (a robust standard deviation), so a fork's estimate about {}",
        t.pairs,
        runner_report::numbers::duration(t.sd_ns),
        runner_report::numbers::duration(fork_se)
    );
    match (rule.min_forks.get()..=rule.max_forks.get()).find(|&n| met(n)) {
        Some(n) => format!(
            "forecast: at least {n} forks per cell, about {} ({seen}; forks differ by more than pairs in one process, so likely more)",
            time(n)
        ),
        None => format!(
            "forecast: more than max_forks ({}) forks even if forks differed no more than pairs in one process ({seen}; the interval would be about {} wide each side at {} forks): raise max_forks or pairs, or aim wider",
            rule.max_forks,
            runner_report::numbers::duration(half_width(rule.max_forks.get())),
            rule.max_forks
        ),
    }
}

/// One shortened fork of `cell` (one warm-up pair, then the pairs that
/// fit the budget by the trial runs' medians), contained as exec's forks
/// are; each measured pair's D = treatment - baseline. Arms on PostgreSQL
/// are not run (the run's schema does not exist yet), nor arms the trial
/// runs could not time.
fn trial(
    exp: &Experiment,
    cell: &Cell,
    db: Option<&DbTarget>,
    estimate: &Estimate,
) -> Result<Trial, Untimed> {
    let d = &exp.design;
    let (b, t) = cell.arms(d);
    // The trial runs' job, to be run as a shortened fork.
    let trial_job = super::trials::request(exp, cell, db);
    if matches!(db, Some(DbTarget::Postgres { .. }))
        && (trial_job.baseline.needs_database() || trial_job.treatment.needs_database())
    {
        return Err(Untimed::NeedsRunSchema);
    }
    let timed = |name: &str| {
        estimate
            .timed
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, ns)| *ns)
    };
    let (Some(bn), Some(tn)) = (timed(b), timed(t)) else {
        return Err(Untimed::NotTimed);
    };
    let per_pair = (bn + tn).max(1);
    let pairs = (TRIAL_BUDGET.as_nanos() as u64 / per_pair).clamp(TRIAL_PAIRS.0, TRIAL_PAIRS.1);
    // One warm-up pair, then the measured pairs, recorded as a fork's are.
    let job = JobRequest {
        warmup_pairs: 1,
        pairs: pairs as u32,
        trial: false,
        // Its pairs are timed: what they estimate is time's spread.
        count: None,
        ..trial_job
    };
    let mut rows = Vec::new();
    super::spawn::Worker::start(&job, Duration::from_secs(d.fork_timeout_s))
        .and_then(|w| {
            w.run(
                |p| {
                    rows.push(p.clone());
                    Ok(())
                },
                || {},
            )
        })
        .map_err(|f| Untimed::ForkFailed(f.reason))?;
    let measured: Vec<_> = rows
        .iter()
        .filter(|p| p.phase == runner_core::record::Phase::Measure)
        .collect();
    let diffs: Vec<f64> = measured.iter().map(|p| p.diff_ns() as f64).collect();
    let baselines: Vec<u64> = measured.iter().map(|p| p.baseline_ns).collect();
    // A robust spread (1.4826 MAD, the sd for normal data): one run
    // preempted among thirty would otherwise decide the answer, and a
    // fork's estimate is a median, which such a run hardly moves.
    let centre = runner_stats::median(&diffs)?;
    let deviations: Vec<f64> = diffs.iter().map(|d| (d - centre).abs()).collect();
    let sd_ns = 1.4826 * runner_stats::median(&deviations)?;
    Ok(Trial {
        pairs: diffs.len(),
        sd_ns,
        centre_ns: centre,
        baseline_median_ns: runner_stats::median(&baselines)?,
    })
}
