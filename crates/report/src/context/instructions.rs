//! A run that counts instructions (`design.measure`) in the report: the
//! Finding's line per cell ("`new` runs 4.8 % [4.7, 4.9] more
//! instructions"), the Instructions section's tables, and what counted
//! and what a count leaves out. Absent for a run that times alone, so
//! its report is unchanged.

use crate::numbers::{self, Column, Entry};
use runner_analysis::instructions::{CountDirection, CountEffect, Instructions};
use runner_analysis::{Analysis, CellAnalysis};
use runner_folder::RunInfo;
use serde::Serialize;

/// The context's `instructions`.
#[derive(Debug, Serialize)]
pub struct InstructionsView {
    /// One Markdown sentence per experiment cell with counts: the
    /// Finding's line (with the cell's label first when there are several).
    pub findings: Vec<String>,
    pub rows: Vec<InstructionsRow>,
    /// With a simulated cache: its misses and estimated cycles per cell;
    /// empty without one.
    pub cache_rows: Vec<CacheRow>,
    /// How the counts were made, in one sentence.
    pub counted_with: String,
    /// What the counted runs cost against the timed ones.
    pub cost: String,
    /// The run counted alone (`measure = ["instructions"]`): what its
    /// times are; none when it timed too.
    pub counted_alone: Option<String>,
}

/// One cell of the Instructions table.
#[derive(Debug, Serialize)]
pub struct InstructionsRow {
    pub label: String,
    /// Each arm's median count per run: `6.46 M`.
    pub baseline: String,
    pub treatment: String,
    /// `more`, `fewer` or `no difference resolved`.
    pub direction: &'static str,
    /// The ratio with its interval: `1.0476 [1.0476, 1.0476]`.
    pub ratio: String,
    /// The change in %: `+4.76 % [+4.76, +4.76]`.
    pub change: String,
    /// `more in 3 of 3 forks`.
    pub forks: String,
}

/// One cell of the cache table.
#[derive(Debug, Serialize)]
pub struct CacheRow {
    pub label: String,
    /// `12.3 k / 12.5 k`: baseline / treatment medians.
    pub l1_misses: String,
    pub ll_misses: String,
    pub cycles: String,
    /// The estimated cycles' change in % with its interval.
    pub cycles_change: String,
}

/// A count in three significant digits with k, M or G: `6.46 M`; whole
/// below ten thousand.
pub fn count(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    let a = v.abs();
    let (div, unit) = [(1e9, " G"), (1e6, " M"), (1e4, " k")]
        .into_iter()
        .find(|(d, _)| a >= *d)
        .map(|(d, u)| (if d == 1e4 { 1e3 } else { d }, u))
        .unwrap_or((1.0, ""));
    if div == 1.0 {
        return format!("{}", v.round());
    }
    let x = v / div;
    let decimals = if x.abs() >= 100.0 {
        0
    } else if x.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{x:.decimals$}{unit}")
}

/// A change with its interval, unsigned in the effect's direction:
/// `4.8 % [4.7, 4.9]`; signed when the interval covers no change.
fn magnitude(e: &CountEffect) -> String {
    let [lo, hi] = e.change_ci;
    match e.direction {
        CountDirection::Fewer => unsigned(-e.change, [-hi, -lo]),
        CountDirection::More => unsigned(e.change, [lo, hi]),
        CountDirection::NoDifference => crate::effect::percent_of(e.change, e.change_ci),
    }
}

fn unsigned(m: f64, [lo, hi]: [f64; 2]) -> String {
    let (m, lo, hi) = (m * 100.0, lo * 100.0, hi * 100.0);
    let c = Column::plain(&[Entry::Estimate(m, lo, hi)], 3);
    format!(
        "{} % [{}, {}]",
        c.bare(m, false),
        c.bare(lo, false),
        c.bare(hi, false)
    )
}

/// `more in 3 of 3 forks`, `fewer in 2 of 3 forks`, `no fork resolved a
/// difference`.
fn forks(e: &CountEffect) -> String {
    let n = crate::effect::forks_count(e.forks);
    match e.direction {
        CountDirection::More => format!("more in {} of {n}", e.forks_more),
        CountDirection::Fewer => format!("fewer in {} of {n}", e.forks_fewer),
        CountDirection::NoDifference if e.forks_fewer + e.forks_more == 0 => {
            format!("no fork of {n} resolved a difference")
        }
        CountDirection::NoDifference => format!(
            "more in {}, fewer in {} of {n}",
            e.forks_more, e.forks_fewer
        ),
    }
}

fn direction(d: CountDirection) -> &'static str {
    match d {
        CountDirection::More => "more",
        CountDirection::Fewer => "fewer",
        CountDirection::NoDifference => "no difference resolved",
    }
}

/// The Finding's sentence for one cell.
fn finding(c: &Instructions, treatment: &str, baseline: &str) -> String {
    let e = &c.effect;
    let ratio = ratio_text(e);
    let per_run = count(e.difference.abs());
    match e.direction {
        CountDirection::NoDifference => format!(
            "**No difference in instructions resolved** between `{treatment}` and `{baseline}`: {} instructions, a ratio of {ratio}; {}.",
            magnitude(e),
            forks(e)
        ),
        d => format!(
            "`{treatment}` runs **{} {} instructions** than `{baseline}`: a ratio of {ratio}, {per_run} {} per run ({} against {} per run); {}.",
            magnitude(e),
            direction(d),
            direction(d),
            count(c.treatment_median),
            count(c.baseline_median),
            forks(e)
        ),
    }
}

/// The ratio with its interval, four significant digits at least.
fn ratio_text(e: &CountEffect) -> String {
    let [lo, hi] = e.ratio_ci;
    let c = Column::plain(&[Entry::Estimate(e.ratio, lo, hi)], 4);
    let c = Column {
        decimals: c.decimals.max(4),
        ..c
    };
    format!(
        "{} [{}, {}]",
        c.bare(e.ratio, false),
        c.bare(lo, false),
        c.bare(hi, false)
    )
}

/// The view; none when no cell counted.
pub(super) fn view(
    info: &RunInfo,
    analysis: &Analysis,
    label: impl Fn(&CellAnalysis) -> String,
) -> Option<InstructionsView> {
    let exp = &info.spec().experiment;
    let counting = exp.design.counting?;
    let counted: Vec<(&CellAnalysis, &Instructions)> = analysis
        .cells
        .iter()
        .filter_map(|c| Some((c, c.instructions.as_ref()?)))
        .collect();
    if counted.is_empty() {
        return None;
    }
    let many = counted.len() > 1;
    let findings = counted
        .iter()
        .map(|(c, i)| {
            let s = finding(
                i,
                &super::comparison::treatment_of(info, c.cell),
                &super::comparison::baseline_of(info, c.cell),
            );
            if many {
                format!("**{}.** {s}", label(c))
            } else {
                s
            }
        })
        .collect();
    let rows = counted
        .iter()
        .map(|(c, i)| InstructionsRow {
            label: label(c),
            baseline: count(i.baseline_median),
            treatment: count(i.treatment_median),
            direction: direction(i.effect.direction),
            ratio: ratio_text(&i.effect),
            change: crate::effect::percent_of(i.effect.change, i.effect.change_ci),
            forks: forks(&i.effect),
        })
        .collect();
    let pair = |a: runner_analysis::instructions::ArmMedians| {
        format!("{} / {}", count(a.baseline), count(a.treatment))
    };
    let cache_rows = counted
        .iter()
        .filter_map(|(c, i)| {
            let k = i.cache.as_ref()?;
            Some(CacheRow {
                label: label(c),
                l1_misses: pair(k.l1_misses),
                ll_misses: pair(k.ll_misses),
                cycles: pair(k.cycles),
                cycles_change: crate::effect::percent_of(
                    k.cycles_effect.change,
                    k.cycles_effect.change_ci,
                ),
            })
        })
        .collect();
    let version = info
        .environment()
        .counters
        .as_ref()
        .and_then(|c| c.valgrind.as_ref())
        .map_or("valgrind".to_string(), |v| v.version.clone());
    let sim = if counting.cache_sim {
        "--cache-sim=yes"
    } else {
        "--cache-sim=no"
    };
    let which = if counting.time {
        format!(
            "{} counted pair{} per fork after its timed pairs, never a timed run, drawn from the fork's stream in the same seeded order",
            counting.pairs,
            if counting.pairs == 1 { "" } else { "s" }
        )
    } else {
        "every measured pair counted, nothing timed without the counter".to_string()
    };
    let counted_with = format!(
        "Counted by {version}'s cachegrind (`valgrind --tool=cachegrind {sim} --trace-children=yes`, each run's processes summed), in {which}. The ratio and its interval are the speed ratio's method on the counts: each fork's median count of the treatment over its own baseline's, combined across forks on the log scale. A count is the instructions the commands executed, not their time: it leaves out I/O and waits, the real caches, branch predictors and memory, and the clock's frequency; a simulated cache models caches, not this machine's."
    );
    let counted_ns: Vec<f64> = counted.iter().map(|(_, i)| i.counted_run_ns).collect();
    let counted_ns = runner_stats::median(&counted_ns).unwrap_or(f64::NAN);
    let cost = if counting.time {
        let timed: Vec<f64> = counted
            .iter()
            .map(|(c, _)| (c.pooled.baseline_median_ns + c.pooled.treatment_median_ns) / 2.0)
            .collect();
        let timed = runner_stats::median(&timed).unwrap_or(f64::NAN);
        format!(
            "A counted run took {} (the median over both arms), {:.0} times a timed run's {}: the counter's cost, paid outside every timed run.",
            numbers::duration(counted_ns),
            counted_ns / timed,
            numbers::duration(timed)
        )
    } else {
        format!(
            "A counted run took {} (the median over both arms), the counter's cost included.",
            numbers::duration(counted_ns)
        )
    };
    Some(InstructionsView {
        findings,
        rows,
        cache_rows,
        counted_with,
        cost,
        counted_alone: (!counting.time).then(|| {
            "This run counted instructions alone (`design.measure = [\"instructions\"]`): every time in this report is that of a run under valgrind, which says what counting cost and nothing about the commands' own speed.".to_string()
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use runner_analysis::effect::IntervalKind;

    #[test]
    fn counts_print_in_three_significant_digits() {
        assert_eq!(count(6_463_853.0), "6.46 M");
        assert_eq!(count(31_103_853.0), "31.1 M");
        assert_eq!(count(123_456.0), "123 k");
        assert_eq!(count(12_345.0), "12.3 k");
        assert_eq!(count(9_999.0), "9999");
        assert_eq!(count(2.5e9), "2.50 G");
    }

    /// The Finding's line reads as the example: the size of the
    /// change in its direction, with its interval.
    #[test]
    fn the_finding_says_more_or_fewer_instructions() {
        let more = CountEffect::new(
            IntervalKind::Forks,
            1_000_000.0,
            (1.048, [1.047, 1.049]),
            [0, 3],
            3,
        );
        let i = Instructions {
            n: 9,
            baseline_median: 1_000_000.0,
            treatment_median: 1_048_000.0,
            baseline_spread: 0.0,
            counted_run_ns: 1e8,
            effect: more,
            forks: vec![],
            cache: None,
        };
        let s = finding(&i, "new", "old");
        assert!(
            s.starts_with("`new` runs **4.80 % [4.70, 4.90] more instructions** than `old`"),
            "{s}"
        );
        assert!(s.contains("more in 3 of 3 forks"), "{s}");
        let fewer = Instructions {
            effect: CountEffect::new(
                IntervalKind::Forks,
                1_000_000.0,
                (0.9, [0.89, 0.91]),
                [3, 0],
                3,
            ),
            ..i.clone()
        };
        let s = finding(&fewer, "new", "old");
        assert!(
            s.contains("**10.0 % [9.0, 11.0] fewer instructions**"),
            "{s}"
        );
        let same = Instructions {
            effect: CountEffect::new(IntervalKind::Forks, 1e6, (1.0, [1.0, 1.0]), [0, 0], 3),
            ..i
        };
        assert!(
            finding(&same, "new", "old").starts_with("**No difference in instructions resolved**")
        );
    }
}
