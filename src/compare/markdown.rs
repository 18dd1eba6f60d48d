//! The Markdown `runner compare` prints: the two runs, whether the machines
//! match, one row per cell and arm, and the warning about separate runs.

use super::{Arm, CountRow, EffectRow, Row, Run};
use runner_folder::RunInfo;
use runner_report::numbers;

fn machine(info: &RunInfo) -> String {
    if info.imported().is_some() {
        return "unknown (imported data)".into();
    }
    let e = &info.environment();
    format!(
        "`{}` ({}, {} logical cores, {} kernel {})",
        e.hostname, e.cpu_model, e.logical_cores, e.os, e.kernel
    )
}

/// A sentence when the machines (or their setup) differ, else that they match.
fn machines(a: &RunInfo, b: &RunInfo) -> String {
    let (ea, eb) = (&a.environment(), &b.environment());
    if a.imported().is_some() || b.imported().is_some() {
        return "Machines: at least one run was imported from another harness, so runner cannot say where it ran; a change may be the machine's as much as the code's.".into();
    }
    let same_host = ea.hostname == eb.hostname
        && ea.cpu_model == eb.cpu_model
        && ea.logical_cores == eb.logical_cores
        && ea.memory_bytes == eb.memory_bytes;
    if !same_host {
        return format!(
            "**Machines differ**: A ran on {}, B on {}. A change below may be the machine's, not the code's.",
            machine(a),
            machine(b)
        );
    }
    let mut other = Vec::new();
    if ea.kernel != eb.kernel {
        other.push(format!("the kernel ({} vs {})", ea.kernel, eb.kernel));
    }
    let db = |i: &RunInfo| {
        i.database().as_ref().map(|d| {
            format!(
                "{} {}",
                d["backend"].as_str().unwrap_or(""),
                d["version"].as_str().unwrap_or("")
            )
        })
    };
    if db(a) != db(b) {
        other.push("the database server".into());
    }
    if ea.git_commit != eb.git_commit {
        other.push(format!(
            "runner's build ({} vs {})",
            &ea.git_commit[..ea.git_commit.len().min(12)],
            &eb.git_commit[..eb.git_commit.len().min(12)]
        ));
    }
    if other.is_empty() {
        format!("Machines: both ran on {}.", machine(a))
    } else {
        format!(
            "Machines: both ran on {}, but {} differ{}.",
            machine(a),
            numbers::list(&other, "and"),
            if other.len() == 1 { "s" } else { "" }
        )
    }
}

fn run_line(label: &str, r: &Run) -> String {
    let i = &r.info;
    let forks = i
        .cells()
        .iter()
        .filter(|c| c.role.is_experiment())
        .map(|c| {
            i.forks()
                .iter()
                .filter(|f| f.summary.cell == c.cell)
                .count()
        })
        .max()
        .unwrap_or(0);
    format!(
        "- {label}: `{}`, run `{}`, {} to {}, {forks} forks per cell, master seed {}\n",
        r.dir.display(),
        i.run_id(),
        i.started_at(),
        i.finished_at().as_deref().unwrap_or("unfinished"),
        i.seeds().master
    )
}

/// What an interval drawn from one run reads as: one value is no
/// interval, and a point printed as `[x, x]` would claim an exactness the
/// data cannot have.
const ONE_RUN: &str = "n/a (one run)";

/// One of the two runs measured the arm only once in the cell.
fn row_one_run(r: &Row) -> bool {
    r.n_runs.0 < 2 || r.n_runs.1 < 2
}

/// One of the two runs measured the cell's pairs only once.
fn effect_one_run(e: &EffectRow) -> bool {
    e.n_pairs.0 < 2 || e.n_pairs.1 < 2
}

/// A lone factor by the digit rule of a lone value: `2.73x`.
fn lone_factor(x: f64) -> String {
    let c = numbers::Column::plain(&[numbers::Entry::Value(x)], 4);
    format!("{}x", c.bare(x, false))
}

/// A column entry of an estimate, or of its value alone when one run
/// gives it no interval.
fn entry(m: f64, lo: f64, hi: f64, one_run: bool) -> numbers::Entry {
    if one_run {
        numbers::Entry::Value(m)
    } else {
        numbers::Entry::Estimate(m, lo, hi)
    }
}

/// An estimate in its column, or its value and [`ONE_RUN`].
fn estimate_in(c: &numbers::Column, m: f64, lo: f64, hi: f64, one_run: bool) -> String {
    if one_run {
        format!("{}, {ONE_RUN}", c.value(m))
    } else {
        c.estimate(m, lo, hi)
    }
}

/// The column entry of a run's fork medians: one fork's median is a value,
/// not a range.
fn fork_medians((lo, hi): (f64, f64), forks: usize) -> numbers::Entry {
    if forks < 2 {
        numbers::Entry::Value(lo)
    } else {
        numbers::Entry::Span(lo, hi)
    }
}

fn verdict(r: &Row) -> &'static str {
    if row_one_run(r) {
        ONE_RUN
    } else if r.change.ci.lo > 0.0 {
        "slower in B"
    } else if r.change.ci.hi < 0.0 {
        "faster in B"
    } else {
        "no change resolved"
    }
}

fn half_width(r: &Row) -> f64 {
    (r.change.median - r.change.ci.lo).max(r.change.ci.hi - r.change.median)
}

/// What separate runs can and cannot resolve, from the runs' own spread.
fn separate_runs(run: &Run, rows: &[Row], confidence: f64) -> String {
    let spread = |r: &Row| (r.forks_a.1 - r.forks_a.0).max(r.forks_b.1 - r.forks_b.0);
    let widest = rows.iter().max_by(|x, y| spread(x).total_cmp(&spread(y)));
    let loosest = rows
        .iter()
        .filter(|r| !row_one_run(r))
        .max_by(|x, y| half_width(x).total_cmp(&half_width(y)));
    let Some(w) = widest else {
        return String::new();
    };
    let single = rows.iter().any(|r| r.n_forks.0 < 2 || r.n_forks.1 < 2);
    if single {
        return format!(
            "**What separate runs can resolve.** At least one run has a single fork per cell, so there is no fork-to-fork spread to measure: its interval only reflects the pairs inside one process and understates how far two separate runs differ with nothing changed. Run more forks (`design.forks`) before reading a change from two runs, or measure both versions in one paired run. {}",
            match loosest {
                Some(h) => format!(
                    "The widest half-interval here is {} ({} confidence).",
                    numbers::duration(half_width(h)),
                    numbers::percent(confidence)
                ),
                None => "With one run of each arm per cell, no interval could be drawn at all.".into(),
            }
        );
    }
    let Some(h) = loosest else {
        return String::new();
    };
    let arm = |r: &Row| match r.arm {
        Arm::Baseline => "baseline",
        Arm::Treatment => "treatment",
    };
    format!(
        "**What separate runs can resolve.** Two runs share no process, so only the spread between forks tells a change from chance. Within one run, the {} fork medians at {} already spread over {} (A: {}; B: {}): one process of each run could differ by that much with nothing changed. Over all their forks these two runs resolve a change larger than about {} (the widest half-interval above, {} at {}, at {} confidence); a smaller change cannot be told from chance, so \"no change resolved\" does not mean \"no change\". To see smaller ones, measure both versions as the two arms of one paired run (as `[gate]` does), which cancels the spread between processes.",
        arm(w),
        cell_label(run, w.cell),
        numbers::duration((w.forks_a.1 - w.forks_a.0).max(w.forks_b.1 - w.forks_b.0)),
        numbers::range(w.forks_a.0, w.forks_a.1),
        numbers::range(w.forks_b.0, w.forks_b.1),
        numbers::duration(half_width(h)),
        arm(h),
        cell_label(run, h.cell),
        numbers::percent(confidence)
    )
}

/// The two runs' machine checks that differ: `load average (A OK, B WARN)`.
fn checks_differ(a: &RunInfo, b: &RunInfo) -> Option<String> {
    if a.imported().is_some() || b.imported().is_some() {
        return None;
    }
    let (ca, cb) = (&a.environment().checks, &b.environment().checks);
    let differ: Vec<String> = ca
        .iter()
        .filter_map(|x| {
            let y = cb.iter().find(|y| y.check == x.check)?;
            (x.status != y.status).then(|| {
                format!(
                    "{} (A {}, B {})",
                    x.check.label(),
                    x.status.tag(),
                    y.status.tag()
                )
            })
        })
        .collect();
    (!differ.is_empty()).then(|| {
        format!(
            "**Machine checks differ**: {}. A check that warns in one run only can move that run's timings; read a change with it in mind.",
            numbers::list(&differ, "and")
        )
    })
}

/// A cell by its params (its delay only when the grid has several), or by
/// its treatment when nothing else tells cells apart.
fn cell_label(r: &Run, cell: u32) -> String {
    let exp = &r.info.spec().experiment;
    let Some(c) = r.info.cells().iter().find(|c| c.cell == cell) else {
        return cell.to_string();
    };
    let mut params = exp.grid.labelled(&c.params);
    if exp.grid.delay_ns.len() < 2 {
        params = runner_plan::group_params(&params);
    }
    if params.is_empty() {
        format!("`{}`", c.arms(&exp.design).1)
    } else {
        numbers::params(&params)
    }
}

/// `10 forks x (80 + 300 pairs)`.
fn size(info: &RunInfo) -> String {
    let d = &info.spec().experiment.design;
    format!(
        "{} x ({} warm-up + {} measured pairs)",
        runner_report::effect::forks_count(d.forks.get()),
        d.warmup_pairs,
        d.pairs
    )
}

/// How the effect moved from A to B, in words: judged on the speed
/// ratio (B's over A's), each run's on its own baseline.
fn effect_change(e: &EffectRow) -> &'static str {
    if effect_one_run(e) {
        ONE_RUN
    } else if e.ratio_change.lo > 1.0 {
        "the treatment lost ground: slower against the baseline in B"
    } else if e.ratio_change.hi < 1.0 {
        "the treatment gained: faster against the baseline in B"
    } else {
        "no change of the effect resolved"
    }
}

/// A factor with its interval: `1.50 [1.47, 1.53]`.
fn factor(r: runner_stats::apart::Bounded) -> String {
    let c = numbers::Column::plain(&[numbers::Entry::Estimate(r.estimate, r.lo, r.hi)], 4);
    let c = numbers::Column {
        decimals: c.decimals.max(2),
        ..c
    };
    format!(
        "{}x [{}, {}]",
        c.bare(r.estimate, false),
        c.bare(r.lo, false),
        c.bare(r.hi, false)
    )
}

/// The baseline's median moved by more than this share between the runs
/// (one way or the other): the machine's speed or load changed, and D in
/// ms moved with it.
const BASELINE_MOVED: f64 = 0.2;

/// A sentence when a cell's baseline median differs by more than 20 %
/// between the runs, naming the cell that moved most.
fn baselines_differ(a: &Run, rows: &[Row]) -> Option<String> {
    let moved = |r: &Row| r.median_a.max(r.median_b) / r.median_a.min(r.median_b);
    let r = rows
        .iter()
        .filter(|r| r.arm == Arm::Baseline && r.median_a > 0.0 && r.median_b > 0.0)
        .max_by(|x, y| moved(x).total_cmp(&moved(y)))?;
    (moved(r) > 1.0 + BASELINE_MOVED).then(|| {
        format!(
            "**The baselines differ**: `{}` ran at {} in A and {} in B ({}), more than 20 % apart, so the machine's speed or load changed between the runs. D in ms moves with it; the change of the effect below is judged on the speed ratio, each run's on its own baseline.",
            a.info.spec().experiment.design.baseline,
            numbers::duration(r.median_a),
            numbers::duration(r.median_b),
            cell_label(a, r.cell),
        )
    })
}

fn effect_section(a: &Run, effects: &[EffectRow], confidence: f64) -> String {
    let exp = &a.info.spec().experiment;
    let mut out = format!(
        "## The effect in each run

The paired effect of each cell's treatment against `{}`, in each run on its own (intervals: {}), and how it changed: B's speed ratio over A's, each run's ratio on its own baseline, with the {} interval that combines both runs' intervals on the log scale (MOVER, Zou & Donner 2008), which the verdict judges; and median D in B − median D in A, from a hierarchical bootstrap over each run's forks (forks, then pairs inside each), which moves with the machine's load as much as with the code.

",
        exp.design.baseline,
        runner_report::effect::interval_name(
            effects.first().map_or(runner_analysis::effect::IntervalKind::Forks, |e| e.a.interval),
            confidence
        ),
        numbers::percent(confidence)
    );
    out.push_str(&format!(
        "| cell | in A | in B | speed ratio, B / A [{} CI] | change of D, B − A | |\n|---|---|---|---:|---:|---|\n",
        numbers::percent(confidence)
    ));
    let change = numbers::Column::time(
        &effects
            .iter()
            .map(|e| {
                entry(
                    e.change.median,
                    e.change.ci.lo,
                    e.change.ci.hi,
                    effect_one_run(e),
                )
            })
            .collect::<Vec<_>>(),
    );
    let all: Vec<&runner_analysis::effect::Effect> = effects
        .iter()
        .flat_map(|e| [(&e.a, e.n_pairs.0), (&e.b, e.n_pairs.1)])
        .filter(|(_, n)| *n > 1)
        .map(|(x, _)| x)
        .collect();
    let digits = runner_report::effect::Digits::of(&all);
    for e in effects {
        let words = |x: &runner_analysis::effect::Effect, pairs: usize| {
            if pairs < 2 {
                return format!("{}, {ONE_RUN}", lone_factor(x.ratio));
            }
            let t = runner_report::effect::text_in(
                x,
                &e.treatment,
                &exp.design.baseline,
                confidence,
                &digits,
            );
            match x.direction {
                runner_analysis::effect::Direction::NoDifference => {
                    format!("{} ({})", t.direction, t.ratio)
                }
                _ => t.ratio,
            }
        };
        let label = cell_label(a, e.cell);
        let one_run = effect_one_run(e);
        out.push_str(&format!(
            "| {label} | {} | {} | {} | {} | {} |\n",
            words(&e.a, e.n_pairs.0),
            words(&e.b, e.n_pairs.1),
            if one_run {
                format!("{}, {ONE_RUN}", lone_factor(e.ratio_change.estimate))
            } else {
                factor(e.ratio_change)
            },
            estimate_in(
                &change,
                e.change.median,
                e.change.ci.lo,
                e.change.ci.hi,
                one_run
            ),
            effect_change(e)
        ));
    }
    let with_interval = effects.iter().filter(|e| !effect_one_run(e));
    if let Some(widest) = with_interval.max_by(|x, y| {
        let w = |e: &EffectRow| e.change.ci.hi - e.change.ci.lo;
        w(x).total_cmp(&w(y))
    }) {
        out.push_str(&format!(
            "\nEach run's own intervals are as narrow as pairs inside one process make them; the change between two runs is not, since separate runs share no process. Here the change is resolved only beyond about ± {} (the widest half-interval above): a smaller change of the effect cannot be told from the difference between two runs on this machine, so \"no change resolved\" does not mean \"no change\".\n\n",
            numbers::duration((widest.change.ci.hi - widest.change.ci.lo) / 2.0)
        ));
    } else if !effects.is_empty() {
        out.push_str("\nA run that measured one pair of a cell gives that cell no interval, so no change of its effect can be told from chance here: each such cell reads n/a (one run).\n\n");
    }
    out
}

/// Two runs that counted instructions: each run's instructions ratio and
/// B's over A's, which load cannot move the way it moves time.
fn instructions_section(a: &Run, counts: &[CountRow], confidence: f64) -> String {
    let exp = &a.info.spec().experiment;
    let mut out = format!(
        "## Instructions in each run

Each run counted instructions beside its pairs: the instructions ratio of each cell's treatment against `{}` in each run (its median count over the baseline's, combined across forks as the speed ratio is), and B's ratio over A's with the {} MOVER interval. A count does not move with the machine's load, so a change here is the code's or the toolchain's.

| cell | in A | in B | instructions ratio, B / A [{} CI] | |
|---|---:|---:|---:|---|
",
        exp.design.baseline,
        numbers::percent(confidence),
        numbers::percent(confidence)
    );
    for c in counts {
        let each = |e: &runner_analysis::instructions::CountEffect| {
            format!(
                "{} instructions",
                runner_report::effect::percent_of(e.change, e.change_ci)
            )
        };
        let moved = if c.change.lo > 1.0 {
            "more instructions against the baseline in B"
        } else if c.change.hi < 1.0 {
            "fewer instructions against the baseline in B"
        } else {
            "no change resolved"
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {moved} |\n",
            cell_label(a, c.cell),
            each(&c.a),
            each(&c.b),
            factor(c.change)
        ));
    }
    out.push('\n');
    out
}

pub(super) fn render(
    a: &Run,
    b: &Run,
    effects: &[EffectRow],
    rows: &[Row],
    counts: &[CountRow],
) -> String {
    let exp = &a.info.spec().experiment;
    let confidence = exp.analysis.confidence;
    let mut out = format!("# Compare: {}\n\n", exp.title.replace('\n', " "));
    out.push_str(&run_line("A", a));
    out.push_str(&run_line("B", b));
    let (size_a, size_b) = (size(&a.info), size(&b.info));
    let sized = if size_a == size_b {
        String::new()
    } else {
        format!("; A ran {size_a} per cell, B {size_b}")
    };
    out.push_str(&format!(
        "- Spec: the same experiment (`{}`; `{}` as baseline, {} as treatment){sized}.\n- {}\n",
        a.info.spec().path,
        exp.design.baseline,
        exp.design
            .variants()
            .iter()
            .map(|t| format!("`{t}`"))
            .collect::<Vec<_>>()
            .join(", "),
        machines(&a.info, &b.info)
    ));
    if let Some(c) = checks_differ(&a.info, &b.info) {
        out.push_str(&format!("- {c}\n"));
    }
    if let Some(c) = baselines_differ(a, rows) {
        out.push_str(&format!("- {c}\n"));
    }
    out.push('\n');
    out.push_str(&effect_section(a, effects, confidence));
    if !counts.is_empty() {
        out.push_str(&instructions_section(a, counts, confidence));
    }
    out.push_str(&format!(
        "## How each arm moved\n\nChange = median run in B − median run in A, per arm, with its {} interval from a hierarchical bootstrap over each run's forks (forks, then runs inside each). An arm moves with the machine as much as with the code; the effect above is what the pairs measure.\n\n",
        numbers::percent(confidence)
    ));
    out.push_str(&format!(
        "| cell | arm | A median | B median | change [{} CI] | relative | fork medians A | fork medians B | |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n",
        numbers::percent(confidence)
    ));
    // Each column of the table in one style.
    let column = |entry: fn(&Row) -> numbers::Entry| {
        numbers::Column::time(&rows.iter().map(entry).collect::<Vec<_>>())
    };
    let median_a = column(|r| numbers::Entry::Value(r.median_a));
    let median_b = column(|r| numbers::Entry::Value(r.median_b));
    let change = column(|r| {
        entry(
            r.change.median,
            r.change.ci.lo,
            r.change.ci.hi,
            row_one_run(r),
        )
    });
    let forks_a = column(|r| fork_medians(r.forks_a, r.n_forks.0));
    let forks_b = column(|r| fork_medians(r.forks_b, r.n_forks.1));
    let range_in = |c: &numbers::Column, (lo, hi): (f64, f64), forks: usize| {
        if forks < 2 {
            format!("{} (one fork)", c.value(lo))
        } else {
            c.range(lo, hi)
        }
    };
    for r in rows {
        let cell = a.info.cells().iter().find(|c| c.cell == r.cell);
        let treatment = cell.map_or(exp.design.treatment.as_str(), |c| c.arms(&exp.design).1);
        let arm = match r.arm {
            Arm::Baseline => format!("`{}` (baseline)", exp.design.baseline),
            Arm::Treatment => format!("`{treatment}` (treatment)"),
        };
        out.push_str(&format!(
            "| {} | {arm} | {} | {} | {} | {} | {} | {} | {} |\n",
            cell_label(a, r.cell),
            median_a.value(r.median_a),
            median_b.value(r.median_b),
            estimate_in(
                &change,
                r.change.median,
                r.change.ci.lo,
                r.change.ci.hi,
                row_one_run(r)
            ),
            if r.median_a > 0.0 {
                numbers::percent(r.change.median / r.median_a)
            } else {
                "n/a".into()
            },
            range_in(&forks_a, r.forks_a, r.n_forks.0),
            range_in(&forks_b, r.forks_b, r.n_forks.1),
            verdict(r)
        ));
    }
    out.push('\n');
    out.push_str(&separate_runs(a, rows, confidence));
    let mut seeds: Vec<String> = effects
        .iter()
        .map(|e| format!("cell {} effect: {}", e.cell, e.seed))
        .collect();
    seeds.extend(
        rows.iter()
            .map(|r| format!("cell {} arm {}: {}", r.cell, r.arm.index(), r.seed)),
    );
    out.push_str(&format!(
        "\n\nBootstrap: {} resamples per interval; the seed of cell c and stream a (0 baseline, 1 treatment, 2 the effect) is derived from both master seeds (`seed::derive(A, compare, [B, c, a])`), so the same two folders give the same intervals: {}.\n",
        exp.analysis.resamples,
        seeds.join(", ")
    ));
    out
}
