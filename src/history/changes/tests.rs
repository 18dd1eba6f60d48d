//! The rule on hand-made versions: which steps it marks, and why not.

use super::*;
use crate::history::version::{ForkPoint, Machine};

fn cell(label: &str, fork_d: &[f64], base: f64) -> CellPoint {
    use runner_analysis::effect::{Effect, IntervalKind};
    let m = fork_d.iter().sum::<f64>() / fork_d.len() as f64;
    let ci = [m - 10.0, m + 10.0];
    CellPoint {
        label: label.into(),
        treatment: "n".into(),
        delay_ns: 0,
        effect: Effect::new(
            IntervalKind::Forks,
            base,
            (
                (base + m) / base,
                [(base + ci[0]) / base, (base + ci[1]) / base],
            ),
            [0, 0],
            fork_d.len() as u32,
        ),
        baseline_ns: base,
        treatment_ns: base + m,
        forks: fork_d
            .iter()
            .map(|&d| ForkPoint {
                median_ns: d,
                baseline_ns: base,
                treatment_ns: base + d,
            })
            .collect(),
        instructions: None,
    }
}

fn version(cells: Vec<CellPoint>, host: &str, forks: u32) -> Version {
    let toml = format!(
        "[strategies.n]\nkind = \"noop\"\n[design]\nbaseline = \"n\"\ntreatment = \"n\"\nforks = {forks}\n"
    );
    let exp = runner_spec::parse_recorded("h.toml", &toml, &Default::default()).unwrap();
    Version {
        run_id: "r".into(),
        machine: Machine::named(host),
        experiment: exp,
        confidence: 0.95,
        gate: None,
        cells,
    }
}

/// Steps of consecutive versions, marked as a history marks them.
fn marked(versions: &[Version]) -> (Vec<Step>, Rule) {
    let mut steps: Vec<Step> = versions.windows(2).map(|w| step(&w[0], &w[1])).collect();
    let rule = mark(&mut steps.iter_mut().collect::<Vec<_>>(), 0.95);
    (steps, rule)
}

const FLAT: [f64; 8] = [-3.0, 1.0, 2.0, 0.0, 4.0, -1.0, 2.5, -2.0];
const SLOW: [f64; 8] = [900.0, 950.0, 880.0, 910.0, 905.0, 890.0, 930.0, 940.0];

#[test]
fn a_change_is_marked_where_the_forks_moved_one_way() {
    let v = [
        version(vec![cell("d = 0", &FLAT, 1000.0)], "a", 8),
        version(vec![cell("d = 0", &FLAT.map(|x| x + 0.5), 1000.0)], "a", 8),
        version(vec![cell("d = 0", &SLOW, 1000.0)], "a", 8),
    ];
    let (steps, rule) = marked(&v);
    assert_eq!(rule.comparisons, 2);
    assert!((rule.each - 0.025).abs() < 1e-12);
    assert!(!steps[0].marked());
    let c = &steps[1].cells[0];
    assert_eq!(c.side(), Some(Side::Above));
    assert!((c.p() - 2.0 / 12870.0).abs() < 1e-15);
    assert!(c.marked && c.change_ns.lo > 0.0);
}

#[test]
fn one_outlying_fork_does_not_hide_a_change() {
    // One earlier fork beyond two later ones: U = 62 of 64, p = 2 x
    // (1 + 1 + 2) / 12870, still under 0.05.
    let mut before = FLAT;
    before[0] = 895.0;
    let v = [
        version(vec![cell("d = 0", &before, 1000.0)], "a", 8),
        version(vec![cell("d = 0", &SLOW, 1000.0)], "a", 8),
    ];
    let (steps, _) = marked(&v);
    assert_eq!(steps[0].cells[0].ns.u, 62.0);
    assert!(steps[0].marked());
}

#[test]
fn forks_apart_with_an_interval_of_the_change_over_zero_mark_nothing() {
    // Every fork moved by 6 ns, but each version's interval is ±10 ns:
    // the run as a whole cannot tell.
    let v = [
        version(vec![cell("d = 0", &FLAT, 1000.0)], "a", 8),
        version(vec![cell("d = 0", &FLAT.map(|x| x + 6.5), 1000.0)], "a", 8),
    ];
    let (steps, _) = marked(&v);
    let c = &steps[0].cells[0];
    assert!(c.p() < 0.05 && c.side() == Some(Side::Above), "{c:?}");
    assert!(c.change_ns.lo < 0.0);
    assert!(!c.marked);
}

#[test]
fn too_few_forks_mark_nothing() {
    // 3 and 3 forks: all apart has a chance of 1 in 10, above 5 %.
    let v = [
        version(vec![cell("d = 0", &[0.0, 1.0, 2.0], 1000.0)], "a", 3),
        version(vec![cell("d = 0", &[900.0, 950.0, 880.0], 1000.0)], "a", 3),
    ];
    let (steps, _) = marked(&v);
    assert_eq!(steps[0].cells[0].side(), Some(Side::Above));
    assert_eq!(steps[0].cells[0].smallest_p(), 0.1);
    assert!(!steps[0].marked());
}

#[test]
fn a_machine_or_spec_change_is_a_boundary_not_a_mark() {
    let before = version(vec![cell("d = 0", &FLAT, 1000.0)], "a", 8);
    let moved = version(vec![cell("d = 0", &SLOW, 1000.0)], "b", 8);
    let (steps, rule) = marked(&[before.clone(), moved]);
    assert!(matches!(&steps[0].boundaries[..], [Boundary::Machine(w)] if w[0].0 == "host"));
    assert_eq!(steps[0].cells[0].side(), Some(Side::Above));
    assert!(!steps[0].marked());
    assert_eq!(rule.comparisons, 0);
    let mut respec = version(vec![cell("d = 0", &SLOW, 1000.0)], "a", 8);
    respec.experiment.design.ordering = runner_spec::Ordering::Blocked;
    let (steps, _) = marked(&[before.clone(), respec]);
    assert!(
        matches!(&steps[0].boundaries[..], [Boundary::Spec(k)] if k == &["design.ordering".to_string()])
    );
    assert!(!steps[0].marked());
    // The arms moved as separate runs (the baseline's median is the
    // same, the treatment's 900 ns higher in every fork).
    let (steps, _) = marked(&[
        before.clone(),
        version(vec![cell("d = 0", &SLOW, 1000.0)], "a", 8),
    ]);
    assert_eq!(steps[0].cells[0].arms_moved, [false, true]);
    // More forks only make a run more precise: compared as code.
    let bigger = version(vec![cell("d = 0", &SLOW, 1000.0)], "a", 9);
    let (steps, _) = marked(&[before, bigger]);
    assert!(steps[0].boundaries.is_empty() && steps[0].marked());
}

#[test]
fn an_injected_delay_adds_and_does_not_scale() {
    // d = 500 in both; the baseline twice as fast in the second run:
    // D / baseline doubles, (D - d) / baseline and D - d stay near 0.
    let mut before = cell("d = 500", &FLAT.map(|x| 500.0 + x), 1000.0);
    let mut after = cell("d = 500", &FLAT.map(|x| 500.0 - x / 2.0), 500.0);
    before.delay_ns = 500;
    after.delay_ns = 500;
    let (steps, _) = marked(&[version(vec![before], "a", 8), version(vec![after], "a", 8)]);
    assert!(!steps[0].marked(), "{steps:?}");
}

#[test]
fn the_ratio_decides_and_d_alone_marks_nothing() {
    // Both arms 2x slower in the second run and D with them: the share
    // of the baseline stays 10 %, only the ns moved: not a change of the
    // effect.
    let ten = FLAT.map(|x| 100.0 + x);
    let twenty = FLAT.map(|x| 200.0 + 2.0 * x);
    let (steps, _) = marked(&[
        version(vec![cell("d = 0", &ten, 1000.0)], "a", 8),
        version(vec![cell("d = 0", &twenty, 2000.0)], "a", 8),
    ]);
    assert_eq!(steps[0].cells[0].ns.side(), Some(Side::Above));
    assert_eq!(steps[0].cells[0].side(), None);
    assert!(!steps[0].marked());
    // The same D on a baseline twice as long: the effect, the speed
    // ratio, fell from 1.10 to 1.05, and that is what the reports say.
    let (steps, _) = marked(&[
        version(vec![cell("d = 0", &ten, 1000.0)], "a", 8),
        version(vec![cell("d = 0", &ten, 2000.0)], "a", 8),
    ]);
    assert_eq!(steps[0].cells[0].side(), Some(Side::Below));
    assert!(steps[0].marked(), "{steps:?}");
}

#[test]
fn a_move_too_few_forks_cannot_mark_is_told_apart_and_sized() {
    let v = [
        version(vec![cell("d = 0", &[0.0, 1.0, 2.0], 1000.0)], "a", 3),
        version(vec![cell("d = 0", &[900.0, 950.0, 880.0], 1000.0)], "a", 3),
        version(vec![cell("d = 0", &[905.0, 940.0, 890.0], 1000.0)], "a", 3),
    ];
    let (steps, rule) = marked(&v);
    // Two comparisons: each must reach 0.025; 3 and 3 forks give 0.1 at best.
    let (moved, flat) = (&steps[0].cells[0], &steps[1].cells[0]);
    assert!(!moved.can_mark(rule.each) && !flat.can_mark(rule.each));
    assert!(moved.all_apart() && moved.unjudged_move(rule.each));
    // The ratio less the delay: (1000 + 910) / 1000 over (1000 + 1) / 1000.
    let r = moved.change_ratio.unwrap();
    assert!((r.estimate - 1910.0 / 1001.0).abs() < 1e-9, "{r:?}");
    assert!(r.lo > 1.0 && r.hi > r.estimate);
    assert!(!flat.unjudged_move(rule.each));
    // 2 / C(10, 5) = 1 / 126 reaches 0.025; 2 / C(8, 4) = 1 / 35 does not.
    assert_eq!(forks_needed(rule.each), Some(5));
    assert_eq!(forks_needed(0.05), Some(4));
    assert_eq!(forks_needed(0.0), None);
}
