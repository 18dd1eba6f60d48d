//! A sequential design's stopping rule (`[design.stop]`), looked at after
//! every fork of a cell: exec asks [`look`] whether a cell is done; the
//! analysis ([`cell`]) recomputes every look from the rows, checks that the
//! run stopped where run.json says and for the reason it gives, and reports
//! the cell's intervals at its stop (`cells[].stop`).
//!
//! The rule decides on the effect the report prints: the speed ratio, by
//! the interval over the forks' log ratios (`decide`, a percentage
//! `half_width` or a percentage gate). Only where the user asked in time
//! units (a gate of `"500us"`, a `half_width` of `"2us"`) does it judge D,
//! by the same interval over the forks' median D. Both are
//! `runner_stats::spending` intervals: Student's t at each look, with the error
//! rate spent over the design's looks so that every look's interval holds
//! at once. So the interval at the stop is valid whichever look the data
//! chose, and D's interval there (what the calibration judges: does it
//! hold the wait injected?) is valid too, though another statistic chose
//! the stop.
//!
//! Beside it, the fixed-n t interval of the same estimates, looked at
//! after every fork with the same rule ([`NaiveStop`]): what stopping on an
//! interval that assumes a fixed n would have said.
//!
//! Runs made before this rule stopped on Lai's confidence sequence over D
//! (`StopMethod::SequenceOnDifference`); their stops are checked against
//! that rule, which is what made them, and reported with the intervals
//! above, which hold at any look.

use super::{AnalysisError, AnalysisInput, CellInfo, ForkData};
use runner_core::record::PairRecord;
use runner_plan::stop::{StopMethod, StopReason, Stopped};
use runner_spec::{HalfWidth, MaxSlowdown, StopRule};
use runner_stats::gate::{decide, Decision};
use runner_stats::spending::{fixed, LookInterval, Spending};
use runner_stats::StatsError;
use serde::{Deserialize, Serialize};

/// What the analysis needs to know about a run's stopping rule.
#[derive(Debug, Clone)]
pub struct StopInput {
    pub rule: StopRule,
    /// With `decide` and a gate: the gate's threshold, whose verdict
    /// decides instead of the interval leaving no change.
    pub gate: Option<MaxSlowdown>,
    /// Where each experiment cell stopped (run.json `stops`).
    pub stops: Vec<Stopped>,
    /// The rule the run stopped by (run.json `stop_method`).
    pub method: StopMethod,
    /// The rule judges the instructions' ratio (`cells[].instructions`):
    /// the gate's metric is instructions, or the run counts and does not
    /// time. A deterministic program's counts agree in every fork, so such
    /// a cell stops at its first look.
    pub counts: bool,
}

/// Which statistic a cell's rule judges: the speed ratio, unless the user
/// gave every size in time units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopStatistic {
    Ratio,
    Difference,
    /// The instructions' ratio.
    Instructions,
}

impl StopInput {
    /// The statistic `decide` judges (the gate's unit, else the ratio);
    /// without `decide`, the one `half_width` is in.
    pub fn statistic(&self) -> StopStatistic {
        if self.counts {
            return StopStatistic::Instructions;
        }
        let in_time = |x: Option<runner_spec::OfBaseline>| matches!(x, Some(HalfWidth::Ns(_)));
        let time = if self.rule.decide {
            in_time(self.gate)
        } else {
            in_time(self.rule.half_width)
        };
        if time {
            StopStatistic::Difference
        } else {
            StopStatistic::Ratio
        }
    }

    /// The rule's looks and the error rate spent at each.
    fn spending(&self, confidence: f64) -> Result<Spending, StatsError> {
        Spending::new(
            self.rule.min_forks.get() as usize,
            self.rule.max_forks.get() as usize,
            confidence,
        )
    }
}

/// `cells[].stop` in analysis.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellStop {
    pub forks_run: u32,
    pub reason: StopReason,
    /// What `decide` judged, and what `path` shows.
    pub statistic: StopStatistic,
    /// The speed ratio at the stop (the geometric mean of the forks'
    /// ratios) and its interval: the effect's.
    pub ratio: f64,
    pub ratio_ci: [f64; 2],
    /// The instructions' ratio at the stop and its interval (the spending
    /// one, valid where the run stopped), in a run that counts; absent
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_ratio_ci: Option<[f64; 2]>,
    /// D at the stop, the mean of the forks' median D, and its interval.
    pub estimate_ns: f64,
    pub interval_ns: [f64; 2],
    pub half_width_ns: f64,
    /// A `half_width` in time units, in ns; null without one.
    pub target_ns: Option<f64>,
    /// A `half_width` in %, as the share of the baseline's run time the
    /// change's interval may span either side; null without one.
    pub target_share: Option<f64>,
    /// With a gate deciding: its threshold, in ns (a duration) or as a
    /// ratio (1 + a percentage).
    pub threshold_ns: Option<f64>,
    pub threshold_ratio: Option<f64>,
    /// The wait actually injected: median spin_ns of the forks run.
    pub injected_ns: f64,
    /// Whether D's interval holds `injected_ns` (at d = 0: whether it
    /// holds 0, i.e. is not a false positive).
    pub covers_injected: bool,
    pub naive: NaiveStop,
    /// The judged statistic's interval after each look up to the stop:
    /// the path the run took, which `stop.svg` draws.
    pub path: Vec<StopLook>,
}

/// The judged statistic's interval after the first `forks` forks (a
/// ratio, or ns).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StopLook {
    pub forks: u32,
    pub estimate: f64,
    pub interval: [f64; 2],
}

/// The same rule on the fixed-n t intervals of the same forks, looked at
/// after every fork from `min_forks` on: where it would have stopped, and
/// D's fixed-n interval there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NaiveStop {
    pub forks: u32,
    /// Whether its rule held there (else the data ran out first).
    pub met: bool,
    pub interval_ns: [f64; 2],
    pub covers_injected: bool,
}

/// Each fork's estimates, in fork order: its median D (dithered, as every
/// median of D is), its log ratio, and its measured baseline runs.
struct Estimates {
    d: Vec<f64>,
    logs: Vec<f64>,
    baselines: Vec<Vec<u64>>,
    /// The forks' instructions log ratios, when the rule judges them.
    counts: Option<Vec<f64>>,
}

impl Estimates {
    fn of(forks: &[ForkData<'_>], counts: bool) -> Result<Estimates, StatsError> {
        let mut e = Estimates {
            d: Vec::with_capacity(forks.len()),
            logs: Vec::with_capacity(forks.len()),
            baselines: Vec::with_capacity(forks.len()),
            // Counted forks get the spending interval of their counts
            // whether or not the rule judges them: it holds at whichever
            // look the run stopped, as D's does.
            counts: (counts || forks.iter().all(|f| !f.counted.is_empty()) && !forks.is_empty())
                .then(|| super::instructions::fork_logs(forks))
                .transpose()?,
        };
        for f in forks {
            e.d.push(runner_stats::median(&f.diffs())?);
            let (b, t) = f.arm_times();
            e.logs
                .push((runner_stats::median(&t)? / runner_stats::median(&b)?).ln());
            e.baselines.push(f.baselines());
        }
        Ok(e)
    }

    /// The median of the first `n` forks' baseline runs: what a
    /// percentage of the baseline is a share of.
    fn baseline_median(&self, n: usize) -> Result<f64, StatsError> {
        let runs: Vec<u64> = self.baselines[..n].iter().flatten().copied().collect();
        runner_stats::median(&runs)
    }
}

/// The intervals after the first `n` forks.
struct Intervals {
    ratio: LookInterval,
    d: LookInterval,
    /// The instructions' log ratio, when the rule judges it.
    counts: Option<LookInterval>,
}

impl Intervals {
    /// The log-ratio interval the rule judges: the instructions' when it
    /// judges counts, else the speed ratio's.
    fn judged_ratio(&self, s: &StopInput) -> &LookInterval {
        match &self.counts {
            Some(c) if s.counts => c,
            _ => &self.ratio,
        }
    }
}

/// Whether the rule holds for `intervals` (module doc).
fn met(s: &StopInput, i: &Intervals) -> Option<StopReason> {
    let decided = s.rule.decide
        && match s.gate {
            Some(MaxSlowdown::Ns(t)) => {
                i.d.bounds
                    .is_some_and(|ci| decide(i.d.mean, ci, t as f64) != Decision::Inconclusive)
            }
            Some(MaxSlowdown::Percent(p)) => i.judged_ratio(s).bounds.is_some_and(|[lo, hi]| {
                decide(0.0, [lo.exp(), hi.exp()], 1.0 + p / 100.0) != Decision::Inconclusive
            }),
            None => i.judged_ratio(s).excludes(0.0),
        };
    let reached = match s.rule.half_width {
        Some(HalfWidth::Ns(t)) => i.d.half_width() <= t as f64,
        Some(HalfWidth::Percent(p)) => ratio_half_width(i.judged_ratio(s)) <= p / 100.0,
        None => false,
    };
    if decided {
        Some(StopReason::Decided)
    } else if reached {
        Some(StopReason::Target)
    } else {
        None
    }
}

/// Half the width of a log-ratio interval as a ratio: the share of the
/// baseline's run time the change's interval spans either side.
fn ratio_half_width(i: &LookInterval) -> f64 {
    i.bounds
        .map_or(f64::INFINITY, |[lo, hi]| (hi.exp() - lo.exp()) / 2.0)
}

/// The rule runs made before this one stopped on (module doc): Lai's
/// confidence sequence over the forks' median D, a percentage taken of the
/// baseline runs' median.
fn met_before(
    s: &StopInput,
    e: &Estimates,
    n: usize,
    confidence: f64,
) -> Result<Option<StopReason>, StatsError> {
    let cs = runner_stats::sequential::confidence_sequence(&e.d[..n], confidence)?;
    let median = if matches!(s.rule.half_width, Some(HalfWidth::Percent(_)))
        || matches!(s.gate, Some(MaxSlowdown::Percent(_)))
    {
        e.baseline_median(n)?
    } else {
        0.0
    };
    let decided = match (s.rule.decide, cs.bounds(), s.gate) {
        (false, _, _) | (true, None, _) => false,
        (true, Some(ci), Some(g)) => {
            decide(cs.mean, ci, g.ns_for(median)) != Decision::Inconclusive
        }
        (true, Some(_), None) => cs.excludes_zero(),
    };
    Ok(if decided {
        Some(StopReason::Decided)
    } else if s
        .rule
        .half_width
        .is_some_and(|h| cs.half_width <= h.ns_for(median))
    {
        Some(StopReason::Target)
    } else {
        None
    })
}

/// The rule as the run applied it after the first `n` forks (from
/// `min_forks` on).
fn rule_at(
    s: &StopInput,
    e: &Estimates,
    n: usize,
    confidence: f64,
) -> Result<Option<StopReason>, StatsError> {
    match s.method {
        StopMethod::Spending => Ok(met(s, &spent(s, e, n, confidence)?)),
        StopMethod::SequenceOnDifference => met_before(s, e, n, confidence),
    }
}

/// The spending intervals after the first `n` forks.
fn spent(s: &StopInput, e: &Estimates, n: usize, confidence: f64) -> Result<Intervals, StatsError> {
    let spending = s.spending(confidence)?;
    Ok(Intervals {
        ratio: spending.interval(&e.logs[..n])?,
        d: spending.interval(&e.d[..n])?,
        counts: e
            .counts
            .as_ref()
            .map(|c| spending.interval(&c[..n]))
            .transpose()?,
    })
}

/// Whether `cell`, whose finished forks' rows are `rows`, is done: its
/// rule held at this look (from `min_forks` on), or it ran `max_forks`.
/// `None`: give it another fork. The run's time is exec's to judge.
pub fn look(
    input: &AnalysisInput,
    s: &StopInput,
    cell: &CellInfo,
    rows: &[PairRecord],
) -> Result<Option<StopReason>, AnalysisError> {
    let one = AnalysisInput {
        cells: vec![cell.clone()],
        ..input.clone()
    };
    let grouped = super::group(&one, rows)?;
    let forks = &grouped[&cell.cell];
    let stats_err = |source| AnalysisError::Stats {
        cell: cell.cell,
        source,
    };
    let n = forks.len();
    if n < s.rule.min_forks.get() as usize {
        return Ok(None);
    }
    let e = Estimates::of(forks, s.counts).map_err(stats_err)?;
    let met = rule_at(s, &e, n, input.confidence).map_err(stats_err)?;
    Ok(met.or((n >= s.rule.max_forks.get() as usize).then_some(StopReason::Max)))
}

/// One experiment cell's `cells[].stop`, checked against the stop run.json
/// records for it: the rule held at no look before it, and at it exactly
/// when the recorded reason says so (`target`, `decided`), else not at all
/// (`max`, `time`).
pub(crate) fn cell(
    input: &AnalysisInput,
    s: &StopInput,
    cell: u32,
    forks: &[ForkData<'_>],
) -> Result<CellStop, AnalysisError> {
    let bad = |what: String| AnalysisError::Stop(format!("cell {cell}: {what}"));
    let stopped = s
        .stops
        .iter()
        .find(|x| x.cell == cell)
        .ok_or_else(|| bad("run.json records no stopping point for it".into()))?;
    let k = stopped.forks_run as usize;
    let numbers: Vec<u32> = forks.iter().map(|f| f.fork).collect();
    if numbers != (0..stopped.forks_run).collect::<Vec<_>>() {
        return Err(bad(format!(
            "run.json records it stopping after {k} forks (forks 0 to {}), but its rows are of forks {numbers:?}",
            k.saturating_sub(1)
        )));
    }
    let stats_err = |source| AnalysisError::Stats { cell, source };
    let confidence = input.confidence;
    let e = Estimates::of(forks, s.counts).map_err(stats_err)?;
    let min = s.rule.min_forks.get() as usize;
    for n in min..k {
        if let Some(reason) = rule_at(s, &e, n, confidence).map_err(stats_err)? {
            return Err(bad(format!(
                "its rule held after {n} forks ({reason}), so the run would have stopped there, but run.json records it stopping after {k}"
            )));
        }
    }
    let last = rule_at(s, &e, k, confidence).map_err(stats_err)?;
    let agrees = match stopped.reason {
        StopReason::Target | StopReason::Decided => last == Some(stopped.reason),
        StopReason::Max | StopReason::Time => last.is_none(),
    };
    if !agrees {
        return Err(bad(format!(
            "run.json records it stopping after {k} forks for reason `{}`, but after {k} forks its rule says {}",
            stopped.reason,
            last.map_or("go on".to_string(), |r| format!("`{r}`"))
        )));
    }
    let spins: Vec<u64> = forks
        .iter()
        .flat_map(|f| f.measured.iter().map(|p| p.spin_ns))
        .collect();
    let injected_ns = runner_stats::median(&spins).map_err(stats_err)?;
    let at_stop = spent(s, &e, k, confidence).map_err(stats_err)?;
    let bounds = |i: &LookInterval| {
        i.bounds
            .ok_or_else(|| bad(format!("its interval after {} forks is unbounded", i.n)))
    };
    let statistic = s.statistic();
    let shown = |i: &Intervals| -> Option<StopLook> {
        let (mean, b) = match statistic {
            StopStatistic::Ratio => (
                i.ratio.mean.exp(),
                i.ratio.bounds.map(|[lo, hi]| [lo.exp(), hi.exp()])?,
            ),
            StopStatistic::Difference => (i.d.mean, i.d.bounds?),
            StopStatistic::Instructions => {
                let c = i.counts.as_ref()?;
                (c.mean.exp(), c.bounds.map(|[lo, hi]| [lo.exp(), hi.exp()])?)
            }
        };
        Some(StopLook {
            forks: i.d.n as u32,
            estimate: mean,
            interval: b,
        })
    };
    let mut path = Vec::new();
    for n in 2..=k {
        if let Some(l) = shown(&spent(s, &e, n, confidence).map_err(stats_err)?) {
            path.push(l);
        }
    }
    let naive = naive(s, &e, min, k, confidence).map_err(stats_err)?;
    let [ratio_lo, ratio_hi] = bounds(&at_stop.ratio)?;
    let counts = at_stop
        .counts
        .as_ref()
        .map(|c| bounds(c).map(|[lo, hi]| (c.mean.exp(), [lo.exp(), hi.exp()])))
        .transpose()?;
    Ok(CellStop {
        forks_run: stopped.forks_run,
        reason: stopped.reason,
        statistic,
        ratio: at_stop.ratio.mean.exp(),
        ratio_ci: [ratio_lo.exp(), ratio_hi.exp()],
        instructions_ratio: counts.map(|c| c.0),
        instructions_ratio_ci: counts.map(|c| c.1),
        estimate_ns: at_stop.d.mean,
        interval_ns: bounds(&at_stop.d)?,
        half_width_ns: at_stop.d.half_width(),
        target_ns: match s.rule.half_width {
            Some(HalfWidth::Ns(t)) => Some(t as f64),
            _ => None,
        },
        target_share: match s.rule.half_width {
            Some(HalfWidth::Percent(p)) => Some(p / 100.0),
            _ => None,
        },
        threshold_ns: match s.gate.filter(|_| s.rule.decide) {
            Some(MaxSlowdown::Ns(t)) => Some(t as f64),
            _ => None,
        },
        threshold_ratio: match s.gate.filter(|_| s.rule.decide) {
            Some(MaxSlowdown::Percent(p)) => Some(1.0 + p / 100.0),
            _ => None,
        },
        injected_ns,
        covers_injected: at_stop.d.contains(injected_ns),
        naive: NaiveStop {
            covers_injected: naive.1.contains(injected_ns),
            forks: naive.1.n as u32,
            met: naive.0,
            interval_ns: bounds(&naive.1)?,
        },
        path,
    })
}

/// Where the same rule on fixed-n t intervals, looked at after every fork
/// from `min` to `k`, would have stopped (whether it held there), and D's
/// fixed-n interval at that fork.
fn naive(
    s: &StopInput,
    e: &Estimates,
    min: usize,
    k: usize,
    confidence: f64,
) -> Result<(bool, LookInterval), StatsError> {
    let first = min.max(2);
    for n in first..=k {
        let i = Intervals {
            ratio: fixed(&e.logs[..n], confidence)?,
            d: fixed(&e.d[..n], confidence)?,
            counts: e
                .counts
                .as_ref()
                .map(|c| fixed(&c[..n], confidence))
                .transpose()?,
        };
        if met(s, &i).is_some() || n == k {
            return Ok((met(s, &i).is_some(), i.d));
        }
    }
    Ok((false, fixed(&e.d[..k], confidence)?))
}

#[cfg(test)]
mod tests;
