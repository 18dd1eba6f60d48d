//! `history.md`: what moved where at the top, then how a change is
//! marked (with its false-alarm rate for this history), one table per
//! cell, the plots, the machines and the versions that were skipped.

mod summary;

pub(super) use summary::summary_text;
use summary::{
    arm_moves, change_words, changes_in_full, nothing_moved, summary_items, unjudged_words,
};

use super::changes::Boundary;
use super::{Dated, Entry, History, Step};
use runner_report::effect as words;
use runner_report::numbers;
use runner_report::numbers::one_in;

/// Text from a commit or a recorded file, safe inside Markdown (a table
/// cell included): punctuation that Markdown reads is escaped.
fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        if "\\`*_[]<>|#!~".contains(ch) {
            out.push('\\');
        }
        out.push(if ch.is_control() { ' ' } else { ch });
    }
    out
}

/// `s` as a code span: backslashes are literal there, so only the pipe
/// (which would split a table row) is escaped and backticks are replaced.
fn code(s: &str) -> String {
    let inner: String = s
        .chars()
        .map(|c| match c {
            '`' => '\'',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect();
    format!("`{}`", inner.replace('|', "\\|"))
}

/// A commit's subject, shortened to a table's width.
pub(super) fn subject(s: &str) -> String {
    const MAX: usize = 72;
    if s.chars().count() <= MAX {
        return text(s);
    }
    let cut: String = s.chars().take(MAX - 1).collect();
    format!("{}…", text(cut.trim_end()))
}

fn commit_ref(d: &Dated) -> String {
    format!(
        "`{}` ({}, “{}”)",
        d.commit.short,
        d.commit.date,
        subject(&d.commit.subject)
    )
}

fn rule(h: &History) -> String {
    let r = h.rule;
    let confidence = 1.0 - r.alpha;
    let mut s = format!(
        "Two versions are two separate runs, and each fork of a run is a separate process, so each fork stands for a run of its own (as in a report's two-separate-runs comparison). Per cell, every fork of a version is compared with every fork of the version before it on the scale the reports decide on: the fork's speed ratio less the delay, (median treatment − delay) / median baseline, each fork on its own baseline. The fork's median D less the injected delay, in ns, is compared beside it and shown, but decides nothing (a machine uniformly slower during one run moves the ns and not the ratio); only where no ratio can be taken (a baseline median of 0) does it decide in the ratio's place. The count of comparisons that say \"higher\" is the Mann-Whitney U, whose chance with nothing changed is exact whatever the distribution, as long as separate runs on the machine vary as its forks do (a disturbance that lasts a whole run and moves all its forks together is not covered). A change is marked where the ratios point one way with a chance of at most {} divided by the number of comparisons in the history (Bonferroni), between versions on the same machine and of the same spec, and where the interval of the change excludes no change on that side: the quotient of the two versions' speed ratios less the delay (on the log scale), with an interval that combines both versions' {} intervals (MOVER, Zou & Donner 2008). So the chance that this history marks any change where none happened is at most {}; the interval also guards against a run whose forks all moved together, which the forks alone cannot see. With every fork of one version beyond every fork of the other, the chance is 2 / C(n + m, n): {} for 4 and 4 forks, {} for 6 and 6, {} for 10 and 10. A comparison with too few forks to reach the level marks nothing; the summary says so, and names a cell whose forks and intervals all moved one way there, since too few forks is not evidence that nothing changed. A run committed again (its run id listed before) is a repeat: not compared, not counted.",
        numbers::percent(r.alpha),
        numbers::percent(confidence),
        numbers::percent(r.alpha),
        one_in(runner_stats::apart::smallest_p(4, 4)),
        one_in(runner_stats::apart::smallest_p(6, 6)),
        one_in(runner_stats::apart::smallest_p(10, 10)),
    );
    let unable = h
        .runs()
        .filter_map(|(_, _, _, s)| s)
        .filter(|s| s.boundaries.is_empty())
        .flat_map(|s| &s.cells)
        .filter(|c| !c.can_mark(r.each))
        .count();
    s.push_str(&format!(
        "\n\nIn this history: {} comparison{} of a cell between versions on one machine and spec, so each is marked at a chance of {} or less.",
        r.comparisons,
        if r.comparisons == 1 { "" } else { "s" },
        level_words(r.each)
    ));
    if unable > 0 {
        s.push_str(&format!(" {unable} of them had too few forks to reach it.",));
    }
    s
}

/// A small probability: `0.025`, `7.1 × 10^-3`.
fn level_words(x: f64) -> String {
    if x >= 0.01 || x == 0.0 {
        format!("{}", (x * 1000.0).round() / 1000.0)
    } else {
        let e = x.log10().floor();
        format!("{:.1} × 10^{}", x / 10f64.powf(e), e)
    }
}

/// A block GitHub shows folded: methodology below the answer.
fn details(summary: &str, body: &str) -> String {
    format!(
        "<details>\n<summary>{summary}</summary>\n\n{}\n\n</details>\n\n",
        body.trim_end()
    )
}

/// The command that makes this history.
fn command(h: &History) -> Vec<String> {
    let mut argv = vec!["runner".to_string(), "history".into(), h.folder.clone()];
    if let Some(s) = &h.since {
        argv.push("--since".into());
        argv.push(s.clone());
    }
    argv
}

fn step_words(h: &History, step: Option<&Step>, label: &str) -> String {
    let Some(step) = step else {
        return "first version".into();
    };
    if !step.boundaries.is_empty() {
        return step
            .boundaries
            .iter()
            .map(|b| match b {
                Boundary::Spec(_) => "spec changed",
                Boundary::Machine(_) => "machine changed",
            })
            .collect::<Vec<_>>()
            .join(", ");
    }
    let Some(c) = step.cells.iter().find(|c| c.label == label) else {
        return "not in the version before".into();
    };
    if c.marked {
        return format!("change: {}", change_words(c));
    }
    if c.unjudged_move(h.rule.each) {
        return unjudged_words(c);
    }
    if !c.can_mark(h.rule.each) {
        return format!(
            "too few forks to mark a change ({} and {})",
            c.forks().0,
            c.forks().1
        );
    }
    "within what separate runs resolve".into()
}

fn machines(h: &History) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, _, v, _) in h.runs() {
        if !out.contains(&v.machine.name) {
            out.push(v.machine.name.clone());
        }
    }
    out
}

fn cell_table(h: &History, label: &str, machines: &[String]) -> String {
    let rows: Vec<_> = h
        .runs()
        .filter_map(|(n, d, v, s)| Some((n, d, v, s, v.cells.iter().find(|c| c.label == label)?)))
        .collect();
    let gated = rows.iter().any(|r| r.2.gate.is_some());
    // A column of instructions when some version counted them (a count
    // does not move with the machine: a step there is the code's).
    let counted = rows.iter().any(|r| r.4.instructions.is_some());
    let base = numbers::Column::time(
        &rows
            .iter()
            .map(|r| numbers::Entry::Value(r.4.baseline_ns))
            .collect::<Vec<_>>(),
    );
    let treat = numbers::Column::time(
        &rows
            .iter()
            .map(|r| numbers::Entry::Value(r.4.treatment_ns))
            .collect::<Vec<_>>(),
    );
    let digits = words::Digits::of(&rows.iter().map(|r| &r.4.effect).collect::<Vec<_>>());
    let mut out = format!("### {}\n\n", code(label));
    out.push_str(&format!(
        "| # | commit | date | subject | effect | speed ratio | run time | per run | baseline median | treatment median | forks |{}{} machine | vs. the version before |\n|---:|---|---|---|---|---|---:|---:|---:|---:|---:|{}{}---|---|\n",
        if counted { " instructions |" } else { "" },
        if gated { " gate |" } else { "" },
        if counted { "---:|" } else { "" },
        if gated { "---|" } else { "" }
    ));
    for (n, d, v, step, c) in rows {
        let m = machines
            .iter()
            .position(|x| *x == v.machine.name)
            .unwrap_or(0)
            + 1;
        let gate = match (gated, v.gate) {
            (false, _) => String::new(),
            (true, Some(g)) => format!(" {} |", format!("{g:?}").to_lowercase()),
            (true, None) => " none |".into(),
        };
        let instructions = match (counted, &c.instructions) {
            (false, _) => String::new(),
            (true, Some(e)) => format!(
                " {} |",
                runner_report::effect::percent_of(e.change, e.change_ci)
            ),
            (true, None) => " not counted |".into(),
        };
        let t = words::text_in(
            &c.effect,
            &c.treatment,
            &v.experiment.design.baseline,
            v.confidence,
            &digits,
        );
        let direction = match t.direction {
            "faster" | "slower" => format!("**{}**", t.direction),
            other => other.to_string(),
        };
        out.push_str(&format!(
            "| {n} | `{}` | {} | {} | {direction} | {} | {} | {} | {} | {} | {} |{instructions}{gate} M{m} | {} |\n",
            d.commit.short,
            d.commit.date,
            subject(&d.commit.subject),
            t.ratio,
            t.percent,
            t.per_run,
            base.value(c.baseline_ns),
            treat.value(c.treatment_ns),
            c.forks.len(),
            step_words(h, step, label)
        ));
    }
    out
}

fn others(h: &History) -> String {
    let mut out = String::new();
    let skipped: Vec<String> = h
        .entries
        .iter()
        .filter_map(|d| match &d.entry {
            Entry::Skipped(why) => Some(format!("- {}: {}\n", commit_ref(d), text(why))),
            Entry::Same { run_id } => Some(format!(
                "- {}: run.json edited around run {}, which is listed already; not a new measurement\n",
                commit_ref(d),
                code(run_id)
            )),
            Entry::Repeat { run_id, of } => Some(format!(
                "- {}: a repeat of version {of} (run {}), committed again; not a new measurement\n",
                commit_ref(d),
                code(run_id)
            )),
            Entry::Run { .. } => None,
        })
        .collect();
    if !skipped.is_empty() {
        out.push_str("## Skipped versions\n\nThese commits changed run.json or pairs.csv, but what they hold was not used: a version is used only when it passes the checks `runner report` makes (run.json against its spec and seeds, every fork's rows against their digests).\n\n");
        out.extend(skipped);
        out.push('\n');
    }
    out
}

/// The whole `history.md`.
pub(super) fn render(h: &History) -> String {
    let runs: Vec<_> = h.runs().collect();
    let title = runs.last().map_or(String::new(), |(_, _, v, _)| {
        format!(": {}", text(&v.experiment.title.replace('\n', " ")))
    });
    let mut out = format!("# History of {}{title}\n\n## Summary\n\n", code(&h.folder));
    let items = summary_items(h);
    let notes = summary::renamed(h);
    if items.is_empty() {
        out.push_str(&nothing_moved(h));
        out.push_str("\n\n");
    }
    if !items.is_empty() || !notes.is_empty() {
        for i in items.iter().chain(&notes) {
            out.push_str(&format!("- {i}\n"));
        }
        out.push('\n');
    }
    let skipped = h
        .entries
        .iter()
        .filter(|d| !matches!(d.entry, Entry::Run { .. }))
        .count();
    out.push_str(&format!(
        "{} version{} compared; {} comparison{} of a cell, each marked at a chance of {} or less, so at most {} that this history marks any change where none happened. Made by {}.\n\n",
        runs.len(),
        if runs.len() == 1 { "" } else { "s" },
        h.rule.comparisons,
        if h.rule.comparisons == 1 { "" } else { "s" },
        level_words(h.rule.each),
        numbers::percent(h.rule.alpha),
        code(&runner_core::shell::join(&command(h))),
    ));
    let full = changes_in_full(h);
    if !full.is_empty() {
        let body: String = full.iter().map(|l| format!("- {l}\n")).collect();
        out.push_str(&details("Each change in full", &body));
    }
    let arms = arm_moves(h);
    if !arms.is_empty() {
        let mut body = "Where an arm's fork medians moved one way between versions at the same level: separate-run comparisons, which a change of the machine's state causes as much as one of the code, so they are not marked as changes (with a fixed baseline, a baseline that moved is the machine's).\n\n".to_string();
        for a in arms {
            body.push_str(&format!("- {a}\n"));
        }
        out.push_str(&details("Arms that moved", &body));
    }
    let read = format!(
        "{} commit{} of the folder's first-parent history{} changed its run.json or pairs.csv: {} hold a run that passed its checks and {} compared below, {} {} not used (listed at the end); {} more only re-rendered the report. Every version is analysed again here from its own pairs.csv, by this runner, so all are analysed by one method.",
        h.entries.len(),
        if h.entries.len() == 1 { "" } else { "s" },
        h.since.as_deref().map_or(String::new(), |s| format!(" (the version current at {} and every later one)", code(s))),
        runs.len(),
        if runs.len() == 1 { "is" } else { "are" },
        skipped,
        if skipped == 1 { "is" } else { "are" },
        h.rerendered,
    );
    out.push_str(&details(
        "The versions read, and how a change is marked",
        &format!("{read}\n\n{}\n", rule(h)),
    ));
    out.push_str("## Per cell\n\n");
    if let Some((_, _, v, _)) = runs.last() {
        let variants: Vec<String> = v
            .experiment
            .design
            .variants()
            .iter()
            .map(|t| code(t))
            .collect();
        out.push_str(&format!(
            "Baseline {}, treatment{} {}. The effect is the cell's speed ratio as its report states it (each fork's ratio of medians, combined on the log scale) with its {} interval over the forks: **slower**, **faster**, or no difference resolved when the interval covers 1, with the change in run time in % of the baseline's median (the ratio less 1) and the difference per run (the ratio in time). The medians are each arm's median run over all measured pairs.\n\n",
            code(&v.experiment.design.baseline),
            if variants.len() == 1 { "" } else { "s" },
            numbers::list(&variants, "and"),
            numbers::percent(v.confidence)
        ));
    }
    let machines = machines(h);
    for label in super::plots::labels(h) {
        out.push_str(&cell_table(h, &label, &machines));
        out.push('\n');
    }
    out.push_str("![Each version's median D less the injected delay, in % of its baseline median, with its interval and the marks](effect.svg)\n\n![Each arm's median run per version, with its fork range](medians.svg)\n\n");
    if !machines.is_empty() {
        out.push_str("## Machines\n\n");
        for (i, m) in machines.iter().enumerate() {
            let versions: Vec<String> = runs
                .iter()
                .filter(|(_, _, v, _)| v.machine.name == *m)
                .map(|(n, _, _, _)| n.to_string())
                .collect();
            out.push_str(&format!(
                "- M{}: {} (version{} {})\n",
                i + 1,
                text(m),
                if versions.len() == 1 { "" } else { "s" },
                versions.join(", ")
            ));
        }
        out.push('\n');
    }
    out.push_str(&others(h));
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_text_cannot_break_the_markdown() {
        // A subject with a table's pipe, emphasis and a link.
        assert_eq!(
            text("fix | *all* [x](y) <b>"),
            "fix \\| \\*all\\* \\[x\\](y) \\<b\\>"
        );
        // In a code span only the pipe and backticks matter.
        assert_eq!(code("a|b`c\\d"), "`a\\|b'c\\d`");
        assert_eq!(subject(&"x".repeat(80)).chars().count(), 72);
    }

    #[test]
    fn chances_and_levels_read_as_words() {
        assert_eq!(one_in(2.0 / 924.0), "1 in 462");
        assert_eq!(one_in(1.0), "always");
        assert_eq!(one_in(1e-9), "1 in 1.0 × 10^9");
        assert_eq!(level_words(0.025), "0.025");
        assert_eq!(level_words(0.05 / 7.0), "7.1 × 10^-3");
    }
}
