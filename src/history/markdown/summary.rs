//! The top of `history.md`: the versions where a change was marked,
//! the machine and spec changes, and the arms that moved between separate
//! runs, in words.

use super::{code, commit_ref, one_in};
use crate::history::changes::{Boundary, CellStep};
use crate::history::version::{CellPoint, Version};
use crate::history::History;
use crate::report::effect as words;
use crate::report::format;
use crate::stats::apart::{Bounded, Side};

/// A change in points of the baseline's median: `+61 [+46, +76]`.
fn points(r: Bounded) -> String {
    let [m, lo, hi] = [r.estimate * 100.0, r.lo * 100.0, r.hi * 100.0];
    let c = format::Column::plain(&[format::Entry::Estimate(m, lo, hi)], 3);
    format!(
        "{} [{}, {}]",
        c.bare(m, true),
        c.bare(lo, true),
        c.bare(hi, true)
    )
}

/// The change of a cell in words: `**slower**: +61 [+46, +76] points of
/// the baseline's median; D moved by 9.6 [7.4, 12.1] ms per run`. The
/// word is the rule's; D is signed beside it, since a baseline that moved
/// too can make it point the other way.
pub(super) fn change_words(c: &CellStep) -> String {
    let word = match c.side() {
        Some(Side::Below) => "**faster**",
        Some(Side::Above) => "**slower**",
        None => "moved",
    };
    let share = c.change_relative.map_or(String::new(), |r| {
        format!(" {} points of the baseline's median;", points(r))
    });
    let d = c.change_ns;
    format!(
        "{word}:{share} D moved by {} per run",
        format::estimate(d.estimate, d.lo, d.hi)
    )
}

/// A version's effect in one phrase: `slower (1.53x [1.41, 1.64] slower,
/// +53 % [+41, +64] run time, 8.4 [6.5, 10.0] ms slower per run)`.
fn effect_phrase(v: &Version, c: &CellPoint) -> String {
    let t = words::text(
        &c.effect,
        &c.treatment,
        &v.experiment.design.baseline,
        v.confidence,
    );
    format!("{} ({})", t.direction, t.sizes)
}

fn boundary_words(b: &Boundary) -> String {
    match b {
        Boundary::Spec(keys) => {
            let shown: Vec<String> = keys.iter().take(6).map(|k| code(k)).collect();
            let more = keys.len().saturating_sub(6);
            format!(
                "the spec changed ({}{})",
                format::list(&shown, "and"),
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

/// The summary's bullets: per version, every marked change (one line per
/// cell beneath), or the machine or spec change; none when nothing moved.
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
        for c in step.cells.iter().filter(|c| c.marked) {
            let (Some(before), Some(now)) = (
                prev.cells.iter().find(|p| p.label == c.label),
                v.cells.iter().find(|p| p.label == c.label),
            ) else {
                continue;
            };
            lines.push(format!(
                "{}: {}. The effect went from {} to {}; of the {} × {} fork comparisons, {} point this way (chance with nothing changed: {}). Medians: baseline {} {} → {}, treatment {} {} → {}.",
                code(&c.label),
                change_words(c),
                effect_phrase(prev, before),
                effect_phrase(v, now),
                c.forks().0,
                c.forks().1,
                agreeing(c),
                one_in(c.p()),
                code(&v.experiment.design.baseline),
                format::duration(before.baseline_ns),
                format::duration(now.baseline_ns),
                code(&now.treatment),
                format::duration(before.treatment_ns),
                format::duration(now.treatment_ns),
            ));
        }
        match lines.len() {
            0 => {}
            1 => out.push(format!("Version {n}, {}, {}", commit_ref(d), lines[0])),
            k => out.push(format!(
                "Version {n}, {}: changes in {k} cells:\n{}",
                commit_ref(d),
                lines
                    .iter()
                    .map(|l| format!("  - {l}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            )),
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
            let (Some(before), Some(now)) = (
                prev.cells.iter().find(|p| p.label == first.label),
                v.cells.iter().find(|p| p.label == first.label),
            ) else {
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
                format::duration(b),
                format::duration(a)
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
    if items.is_empty() {
        return format!("{}\n", nothing_moved(h));
    }
    items.iter().map(|i| format!("- {i}\n")).collect()
}

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
