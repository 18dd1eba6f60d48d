//! The top of `history.md`, and what the terminal prints: the versions
//! where a change was marked, the moves too few forks could not judge,
//! the machine and spec changes, the repeats, and what the history could
//! not read; then the details of each change and the arms that moved.

use super::{code, commit_ref, one_in, subject};
use crate::history::changes::{forks_needed, Boundary, CellStep};
use crate::history::version::{CellPoint, Version};
use crate::history::{Commit, Dated, Entry, History};
use runner_report::effect as words;
use runner_report::numbers;
use runner_stats::apart::{Bounded, Side};

/// A factor with its interval: `×1.50 [1.47, 1.53]`.
fn factor(r: Bounded) -> String {
    let c = numbers::Column::plain(&[numbers::Entry::Estimate(r.estimate, r.lo, r.hi)], 4);
    let c = numbers::Column {
        decimals: c.decimals.max(2),
        ..c
    };
    format!(
        "×{} [{}, {}]",
        c.bare(r.estimate, false),
        c.bare(r.lo, false),
        c.bare(r.hi, false)
    )
}

/// A change of D in words, as a positive duration: `rose by 5.0 [4.8,
/// 5.2] ms`, `fell by 80 [53, 109] ns`; signed when its interval covers 0.
fn moved_by(d: Bounded) -> String {
    if d.lo > 0.0 {
        format!("rose by {}", numbers::estimate(d.estimate, d.lo, d.hi))
    } else if d.hi < 0.0 {
        format!("fell by {}", numbers::estimate(-d.estimate, -d.hi, -d.lo))
    } else {
        format!("moved by {}", numbers::estimate(d.estimate, d.lo, d.hi))
    }
}

/// "the per-run difference" or, with an injected delay, "the per-run
/// difference less the 5 µs delay" (the delay is the same in both
/// versions, so D and D less the delay move alike).
fn difference_name(c: &CellStep) -> String {
    if c.delay_ns == 0 {
        "the per-run difference".into()
    } else {
        format!(
            "the per-run difference less the {} delay",
            numbers::delay(c.delay_ns as f64)
        )
    }
}

fn ratio_name(c: &CellStep) -> &'static str {
    if c.delay_ns == 0 {
        "the speed ratio"
    } else {
        "the speed ratio less the delay"
    }
}

/// The change of a cell in a table's few words: `**slower**: the speed
/// ratio ×1.50 [1.47, 1.53]; the per-run difference rose by 5.0 [4.8,
/// 5.2] ms`. The word is the rule's: the deciding scale (the ratio) moved
/// that way.
pub(super) fn change_words(c: &CellStep) -> String {
    let word = match c.side() {
        Some(Side::Below) => "**faster**",
        Some(Side::Above) => "**slower**",
        None => "moved",
    };
    let ratio = c.change_ratio.map_or(String::new(), |r| {
        format!(" {} {};", ratio_name(c), factor(r))
    });
    format!(
        "{word}:{ratio} {} {} per run",
        difference_name(c),
        moved_by(c.change_ns)
    )
}

/// A version's effect by its direction and speed ratio: `slower (1.53x
/// [1.41, 1.64] slower)`.
fn effect_phrase(v: &Version, c: &CellPoint) -> String {
    let t = words::text(
        &c.effect,
        &c.treatment,
        &v.experiment.design.baseline,
        v.confidence,
    );
    format!("{} ({})", t.direction, t.ratio)
}

/// The speed ratio as each report states it, now over before: with an
/// injected delay it includes the delay, so it can move the other way
/// than the code did when the baseline moved.
fn whole_ratio(c: &CellPoint) -> f64 {
    c.effect.ratio
}

/// One marked change, plainly: what the per-run difference did, what the
/// speed ratio did, and why they differ when they do.
fn mark_line(
    c: &CellStep,
    prev: &Version,
    before: &CellPoint,
    v: &Version,
    now: &CellPoint,
) -> String {
    let mut s = format!(
        "{}: {}: {} {} per run",
        code(&c.label),
        match c.side() {
            Some(Side::Below) => "**faster**",
            _ => "**slower**",
        },
        difference_name(c),
        moved_by(c.change_ns)
    );
    if let Some(r) = c.change_ratio {
        s.push_str(&format!(" and {} changed by {}", ratio_name(c), factor(r)));
    }
    s.push_str(&format!(
        "; the effect went from {} to {}",
        effect_phrase(prev, before),
        effect_phrase(v, now)
    ));
    let rose = whole_ratio(now) > whole_ratio(before);
    let against = match c.side() {
        Some(Side::Below) => rose,
        _ => !rose,
    };
    if c.delay_ns > 0 && against {
        s.push_str(&format!(
            ": that ratio {} while the per-run difference {}, since it includes the {} injected delay, which weighs {} against a baseline whose median went from {} to {}",
            if rose { "rose" } else { "fell" },
            if rose { "fell" } else { "rose" },
            numbers::delay(c.delay_ns as f64),
            if now.baseline_ns < before.baseline_ns { "more" } else { "less" },
            numbers::duration(before.baseline_ns),
            numbers::duration(now.baseline_ns),
        ));
    }
    s.push('.');
    s
}

/// A move too few forks could not judge: its size, and what would judge it.
fn unjudged_line(
    h: &History,
    c: &CellStep,
    prev: &Version,
    before: &CellPoint,
    v: &Version,
    now: &CellPoint,
) -> String {
    let (n, m) = c.forks();
    let forks = if n == m {
        format!("{n} forks a version")
    } else {
        format!("{n} and {m} forks")
    };
    format!(
        "{}: moved from {} to {}{}, every fork beyond every fork before; {forks} cannot reach this history's level (at best {}, against {}){}.",
        code(&c.label),
        effect_phrase(prev, before),
        effect_phrase(v, now),
        c.change_ratio.map_or(String::new(), |r| format!(", {} {}", ratio_name(c), factor(r))),
        one_in(c.smallest_p()),
        one_in(h.rule.each),
        forks_needed(h.rule.each).map_or(String::new(), |k| format!("; {k} would"))
    )
}

/// The cells of two versions a step compares.
fn cells<'a>(
    prev: &'a Version,
    v: &'a Version,
    label: &str,
) -> Option<(&'a CellPoint, &'a CellPoint)> {
    Some((
        prev.cells.iter().find(|p| p.label == label)?,
        v.cells.iter().find(|p| p.label == label)?,
    ))
}

/// The table's words for a move too few forks could not judge.
pub(super) fn unjudged_words(c: &CellStep) -> String {
    format!(
        "too few forks to mark this move ({} and {}): {}",
        c.forks().0,
        c.forks().1,
        c.change_ratio.map_or_else(
            || format!("{} {}", difference_name(c), moved_by(c.change_ns)),
            |r| format!("{} {}", ratio_name(c), factor(r))
        )
    )
}

/// One bullet for a version with one line, or its lines beneath.
fn version_bullet(n: u32, d: &Dated, lines: &[String]) -> Option<String> {
    match lines {
        [] => None,
        [one] => Some(format!("Version {n}, {}: {one}", commit_ref(d))),
        more => Some(format!(
            "Version {n}, {}: {} cells:\n{}",
            commit_ref(d),
            more.len(),
            more.iter()
                .map(|l| format!("  - {l}"))
                .collect::<Vec<_>>()
                .join("\n")
        )),
    }
}

/// The commits that can have made a marked change (`history::code`),
/// ready for `git bisect`: after the bullet, on lines of their own.
fn code_words(commits: &[Commit], before: &Commit, d: &Dated) -> String {
    const SHOWN: usize = 10;
    if commits.is_empty() {
        return format!(
            "\n  - No commit since {} touched files outside the reports: the change is not in the code (the machine, or what the code reads)",
            code(&before.short)
        );
    }
    let mut out = format!(
        "\n  - Code commits since {} (files outside the reports), any of which can have made it; `git bisect start {} {}` walks them:",
        code(&before.short),
        d.commit.short,
        before.short
    );
    for c in commits.iter().take(SHOWN) {
        out.push_str(&format!(
            "\n    - {} {} {}",
            code(&c.short),
            c.date,
            subject(&c.subject)
        ));
    }
    if commits.len() > SHOWN {
        out.push_str(&format!("\n    - and {} more", commits.len() - SHOWN));
    }
    out
}

fn boundary_words(b: &Boundary) -> String {
    match b {
        Boundary::Spec(keys) => {
            let shown: Vec<String> = keys.iter().take(6).map(|k| code(k)).collect();
            let more = keys.len().saturating_sub(6);
            format!(
                "the spec changed ({}{})",
                numbers::list(&shown, "and"),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            )
        }
        Boundary::Machine(what) => format!(
            "the machine changed ({})",
            what.iter()
                .map(|(w, b, a)| format!("{w} {} → {}", code(b), code(a)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The comparisons a rule judged (same machine and spec) that could not
/// reach its level, and the forks of the first.
fn unable(h: &History) -> (usize, Option<(usize, usize, f64)>) {
    let cells: Vec<&CellStep> = h
        .runs()
        .filter_map(|(_, _, _, s)| s)
        .filter(|s| s.boundaries.is_empty())
        .flat_map(|s| &s.cells)
        .filter(|c| !c.can_mark(h.rule.each))
        .collect();
    let first = cells
        .first()
        .map(|c| (c.forks().0, c.forks().1, c.smallest_p()));
    (cells.len(), first)
}

/// Commits that hold a run listed before: named, never counted.
fn repeats(h: &History) -> Option<String> {
    let found: Vec<(&Dated, u32)> = h
        .entries
        .iter()
        .filter_map(|d| match &d.entry {
            Entry::Repeat { of, .. } => Some((d, *of)),
            _ => None,
        })
        .collect();
    match found.as_slice() {
        [] => None,
        [(d, of)] => Some(format!(
            "{} commits version {of}'s run again: a repeat, not a new measurement, so it is neither compared nor counted.",
            commit_ref(d)
        )),
        many => {
            let shown: Vec<String> = many
                .iter()
                .take(4)
                .map(|(d, of)| format!("`{}` (version {of})", d.commit.short))
                .collect();
            let more = many.len().saturating_sub(4);
            Some(format!(
                "{} commits hold a run listed before, committed again: {}{}. Repeats are not new measurements, so they are neither compared nor counted.",
                many.len(),
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            ))
        }
    }
}

/// Where the folder had another name, and where its line may begin with
/// a rename git did not pair: bullets after the summary's, which say
/// where the versions were read, not what moved.
pub(super) fn renamed(h: &History) -> Vec<String> {
    let mut out: Vec<String> = h
        .renames
        .iter()
        .map(|(from, to, c)| {
            format!(
                "The folder was {} until `{}` ({}, “{}”), which renamed it {}: the versions before that commit were read from {} (git's rename detection).",
                super::code(from),
                c.short,
                c.date,
                super::subject(&c.subject),
                super::code(to),
                super::code(from),
            )
        })
        .collect();
    if let Some(crate::history::Start::BesideRemoval { commit, removed }) = &h.start {
        let first = h.renames.first().map_or(&h.folder, |(from, _, _)| from);
        out.push(format!(
            "This history starts at `{}` ({}, “{}”), which added {} and removed {}, without git pairing the two as a rename (run.json changed as it moved); if that was this folder before, its older versions are in {}.",
            commit.short,
            commit.date,
            super::subject(&commit.subject),
            super::code(first),
            super::code(removed),
            super::code(&format!("runner history {removed}")),
        ));
    }
    out
}

/// The summary's bullets: per version, every marked change and every
/// move too few forks could not judge (one line per cell beneath), or the
/// machine or spec change; then the repeats, the comparisons that could
/// not mark anything, and a shallow clone. None when every comparison
/// could have marked a change and none did.
pub(super) fn summary_items(h: &History) -> Vec<String> {
    let mut out = Vec::new();
    let runs: Vec<_> = h.runs().collect();
    for (i, (n, d, v, step)) in runs.iter().enumerate() {
        let Some(step) = step else { continue };
        let prev = runs[i - 1].2;
        if !step.boundaries.is_empty() {
            let what: Vec<String> = step.boundaries.iter().map(boundary_words).collect();
            out.push(format!(
                "Version {n}, {}: {}; not compared as a change of the code.",
                commit_ref(d),
                what.join("; ")
            ));
            continue;
        }
        let mut lines = Vec::new();
        for c in &step.cells {
            let Some((before, now)) = cells(prev, v, &c.label) else {
                continue;
            };
            if c.marked {
                lines.push(mark_line(c, prev, before, v, now));
            } else if c.unjudged_move(h.rule.each) {
                lines.push(unjudged_line(h, c, prev, before, v, now));
            }
        }
        let code = match (&d.code, lines.is_empty()) {
            (Some(commits), false) => code_words(commits, &runs[i - 1].1.commit, d),
            _ => String::new(),
        };
        out.extend(version_bullet(*n, d, &lines).map(|b| b + &code));
    }
    out.extend(repeats(h));
    let (k, first) = unable(h);
    if let Some((n, m, best)) = first {
        out.push(format!(
            "{} had too few forks to mark a change, whatever moved (with {n} and {m} forks, at best {}, against this history's level of {}){}: too few forks is not evidence that nothing changed.",
            if k == h.rule.comparisons {
                format!("Every one of the {k} comparisons")
            } else {
                format!("{k} of the {} comparisons", h.rule.comparisons)
            },
            one_in(best),
            one_in(h.rule.each),
            forks_needed(h.rule.each).map_or(String::new(), |f| format!("; {f} forks a version would reach it"))
        ));
    }
    if h.shallow {
        let read = h.runs().count();
        out.push(format!(
            "This repository is a shallow clone: {read} version{} read from the commits it holds, and older ones may exist. Fetch the whole history (`git fetch --unshallow`; in GitHub Actions, `actions/checkout` with `fetch-depth: 0`) and run again.",
            if read == 1 { " was" } else { "s were" }
        ));
    }
    out
}

/// Each marked change in full: the fork comparisons, their chance, and
/// both arms' medians.
pub(super) fn changes_in_full(h: &History) -> Vec<String> {
    let mut out = Vec::new();
    let runs: Vec<_> = h.runs().collect();
    for (i, (n, _, v, step)) in runs.iter().enumerate() {
        let Some(step) = step else { continue };
        let prev = runs[i - 1].2;
        for c in step.cells.iter().filter(|c| c.marked) {
            let Some((before, now)) = cells(prev, v, &c.label) else {
                continue;
            };
            out.push(format!(
                "Version {n}, {}: {}. Of the {} × {} fork comparisons, {} point this way (chance with nothing changed: {}). Medians: baseline {} {} → {}, treatment {} {} → {}.",
                code(&c.label),
                change_words(c),
                c.forks().0,
                c.forks().1,
                agreeing(c),
                one_in(c.p()),
                code(&v.experiment.design.baseline),
                numbers::duration(before.baseline_ns),
                numbers::duration(now.baseline_ns),
                code(&now.treatment),
                numbers::duration(before.treatment_ns),
                numbers::duration(now.treatment_ns),
            ));
        }
    }
    out
}

/// Versions where an arm's fork medians moved one way at the rule's
/// level, per version: what the machine's state moves as much as the code.
pub(super) fn arm_moves(h: &History) -> Vec<String> {
    let mut out = Vec::new();
    let runs: Vec<_> = h.runs().collect();
    for (i, (n, d, v, step)) in runs.iter().enumerate() {
        let Some(step) = step else { continue };
        if !step.boundaries.is_empty() {
            continue;
        }
        let prev = runs[i - 1].2;
        let mut parts = Vec::new();
        for (k, name) in [(0, &v.experiment.design.baseline), (1, &String::new())] {
            let moved: Vec<&CellStep> = step.cells.iter().filter(|c| c.arms_moved[k]).collect();
            let Some(first) = moved.first() else { continue };
            let Some((before, now)) = cells(prev, v, &first.label) else {
                continue;
            };
            let (name, b, a) = if k == 0 {
                (name.clone(), before.baseline_ns, now.baseline_ns)
            } else {
                (now.treatment.clone(), before.treatment_ns, now.treatment_ns)
            };
            let way = match first.arms[k].side() {
                Some(Side::Below) => "faster",
                _ => "slower",
            };
            parts.push(format!(
                "{} {} {way} in {} of {} cells (e.g. {}: {} → {})",
                if k == 0 { "baseline" } else { "treatment" },
                code(&name),
                moved.len(),
                step.cells.len(),
                code(&first.label),
                numbers::duration(b),
                numbers::duration(a)
            ));
        }
        if !parts.is_empty() {
            out.push(format!(
                "Version {n}, {}: {}.",
                commit_ref(d),
                parts.join("; ")
            ));
        }
    }
    out
}

/// The summary as the terminal prints it.
pub(in crate::history) fn summary_text(h: &History) -> String {
    let items = summary_items(h);
    let notes: String = renamed(h).iter().map(|i| format!("- {i}\n")).collect();
    if items.is_empty() {
        return format!("{}\n{notes}", nothing_moved(h));
    }
    items.iter().map(|i| format!("- {i}\n")).collect::<String>() + &notes
}

/// What the summary says when it has no bullet: every comparison could
/// have marked a change, and none did.
pub(super) fn nothing_moved(h: &History) -> String {
    match h.runs().count() {
        0 => "No version could be read (see Skipped versions).".into(),
        1 => "One version: nothing to compare it with.".into(),
        _ => "No version differs from the one before it by more than separate runs on its machine resolve, and no machine or spec changed.".into(),
    }
}

/// How many of the n x m fork comparisons point the way the change does.
fn agreeing(c: &CellStep) -> String {
    let (n, m) = c.forks();
    let u = match c.side() {
        Some(Side::Below) => (n * m) as f64 - c.ns.u,
        _ => c.ns.u,
    };
    if u.fract() == 0.0 {
        format!("{u:.0}")
    } else {
        format!("{u:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use runner_analysis::effect::{Effect, IntervalKind};
    use runner_stats::apart::Comparison;

    /// A 5 µs delay cell whose D fell by 80 ns while its baseline went from
    /// 53.9 µs to 36.1 µs: the ratio, which includes the delay, rose.
    fn point(d: f64, base: f64) -> CellPoint {
        let r = (base + d) / base;
        CellPoint {
            label: "delay_us = 5".into(),
            treatment: "preview".into(),
            delay_ns: 5_000,
            effect: Effect::new(
                IntervalKind::Forks,
                base,
                (r, [r - 0.0005, r + 0.0005]),
                [0, 10],
                10,
            ),
            baseline_ns: base,
            treatment_ns: base + d,
            forks: Vec::new(),
            instructions: None,
        }
    }

    #[test]
    fn a_mark_says_what_the_difference_and_the_ratio_each_did() {
        let toml =
            "[strategies.p]\nkind = \"noop\"\n[design]\nbaseline = \"p\"\ntreatment = \"p\"\n";
        let exp = runner_spec::parse_recorded("h.toml", toml, &Default::default()).unwrap();
        let version = |cells| Version {
            run_id: "r".into(),
            machine: crate::history::version::Machine::named("a"),
            experiment: exp.clone(),
            confidence: 0.95,
            gate: None,
            cells,
        };
        let (before, now) = (point(5_080.0, 53_900.0), point(5_000.0, 36_100.0));
        let below = Comparison {
            n: 10,
            m: 10,
            u: 8.0,
            p: 1e-3,
        };
        let step = CellStep {
            label: before.label.clone(),
            delay_ns: 5_000,
            ns: below,
            ratio: Some(below),
            change_ns: Bounded {
                estimate: -80.0,
                lo: -109.0,
                hi: -53.0,
            },
            change_ratio: Some(Bounded {
                estimate: 0.9985,
                lo: 0.9979,
                hi: 0.9991,
            }),
            marked: true,
            arms: [below; 2],
            arms_moved: [false; 2],
        };
        let (prev, v) = (version(vec![before.clone()]), version(vec![now.clone()]));
        let line = mark_line(&step, &prev, &before, &v, &now);
        assert!(line.starts_with("`delay_us = 5`: **faster**: the per-run difference less the 5 µs delay fell by 80 [53, 109] ns per run"), "{line}");
        assert!(
            line.contains("the speed ratio less the delay changed by ×0.9985"),
            "{line}"
        );
        assert!(
            line.contains("the effect went from slower (1.0942x"),
            "{line}"
        );
        assert!(line.contains("to slower (1.1385x"), "{line}");
        assert!(
            line.contains("that ratio rose while the per-run difference fell, since it includes the 5 µs injected delay"),
            "{line}"
        );
        assert!(line.contains("53.9 µs to 36.1 µs"), "{line}");
    }
}
