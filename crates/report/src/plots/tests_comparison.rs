//! The plots of a comparison, and a study's A/B cells, from analysed pairs.

use super::tests::{count, measured, study_input, FixtureCell};
use super::*;
use serde_json::json;

/// Every label's text, joined by spaces (so a wrapped title reads whole).
fn words(svg: &str) -> String {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| Some(t.split_once('>')?.1.split("</text>").next()?.trim()))
        .collect::<Vec<_>>()
        .join(" ")
}

fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// Three variants against one baseline: 0.7 (faster), 1.25 (slower) and
/// 1.0 (the same) times its run time.
const VARIANTS: [(&str, f64); 3] = [("quick", 0.7), ("slow", 1.25), ("same", 1.0)];

fn variants(forks: u32) -> (Analysis, Vec<PairRecord>) {
    let cells: Vec<FixtureCell> = VARIANTS
        .iter()
        .map(|(name, scale)| FixtureCell {
            params: json!({ "delay_us": 0, "treatment": name }),
            delay_ns: 0,
            scale: *scale,
        })
        .collect();
    measured(&cells, forks)
}

fn comparison<'a>(a: &'a Analysis, pairs: &'a [PairRecord]) -> Input<'a> {
    Input {
        analysis: a,
        kind: Kind::Comparison,
        aa: false,
        baseline: "base".into(),
        panels: a
            .cells
            .iter()
            .zip(VARIANTS)
            .map(|(c, (name, _))| Panel {
                cell: c,
                title: name.into(),
                compares: true,
                treatment: name.into(),
            })
            .collect(),
        groups: VARIANTS.iter().map(|(n, _)| n.to_string()).collect(),
        pairs,
        clients: Vec::new(),
    }
}

#[test]
fn the_kind_follows_the_design_and_names_the_files() {
    assert_eq!(Kind::of(true, false), Kind::Study);
    assert_eq!(Kind::of(false, true), Kind::Study);
    assert_eq!(Kind::of(false, false), Kind::Comparison);
    assert_eq!(Kind::Study.files(), runner_folder::output::STUDY_PLOTS);
    assert_eq!(
        Kind::Comparison.files(),
        runner_folder::output::COMPARISON_PLOTS
    );
    let (a, pairs) = variants(3);
    let names: Vec<&str> = render_all(&comparison(&a, &pairs))
        .unwrap()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, ["effect.svg", "distributions.svg"]);
}

#[test]
fn the_effect_plot_says_faster_and_slower_in_the_effects_words() {
    let (a, pairs) = variants(3);
    let input = comparison(&a, &pairs);
    let plots: std::collections::BTreeMap<_, _> = render_all(&input).unwrap().into_iter().collect();
    let svg = &plots["effect.svg"];
    assert!(
        !svg.contains("NaN") && !svg.contains('{'),
        "no JSON, no NaN"
    );
    // Seen and reversed are a delay's words, not an effect's.
    assert!(!svg.contains("saw") && !svg.contains("reversed"));
    let directions: Vec<Direction> = a.cells.iter().map(|c| c.effect().direction).collect();
    assert_eq!(
        directions,
        [
            Direction::Faster,
            Direction::Slower,
            Direction::NoDifference
        ]
    );
    for (c, (name, _)) in a.cells.iter().zip(VARIANTS) {
        let t = crate::effect::text(&c.effect(), name, "base", a.confidence);
        assert!(svg.contains(&format!("\n{name}\n</text>")), "{name}");
        assert!(
            svg.contains(&format!("\n{}\n</text>", t.ratio)),
            "{}",
            t.ratio
        );
        // Wrapped as the panel's width needs.
        let rest = format!("{} run time, {}", t.percent, t.forks);
        assert!(words(svg).contains(&rest), "{rest}");
    }
    for legend in ["faster", "slower", "no difference resolved"] {
        assert!(svg.contains(&format!("\n{legend}\n</text>")), "{legend}");
    }
    assert!(svg.contains("(log axis)") && svg.contains("ratio\n</text>"));
    // Every fork in its direction's colour (plus each legend sample).
    let circles = |c: RGBColor| {
        svg.lines()
            .filter(|l| l.contains("<circle") && l.contains(&format!("fill=\"{}\"", hex(c))))
            .count()
    };
    use runner_analysis::effect::Direction;
    let forks = |d: Direction| {
        a.cells
            .iter()
            .flat_map(|c| &c.forks)
            .filter(|f| Direction::of_ratio(f.ratio_ci) == d)
            .count()
    };
    assert!(forks(Direction::Faster) >= 3);
    assert_eq!(circles(FASTER), forks(Direction::Faster) + 1);
    assert_eq!(circles(SLOWER), forks(Direction::Slower) + 1);
    assert_eq!(circles(GREY), forks(Direction::NoDifference) + 1);
    // The ratio axis under each panel, and the title.
    assert_eq!(
        count(svg, "speed ratio, treatment over baseline (log axis)"),
        3 + 1
    );
    // The canvas, a band per panel and the legend's sample.
    assert_eq!(count(svg, "<rect"), 1 + 3 + 1);
}

#[test]
fn the_distributions_draw_both_arms_of_every_cell() {
    let (a, pairs) = variants(2);
    let plots: std::collections::BTreeMap<_, _> = render_all(&comparison(&a, &pairs))
        .unwrap()
        .into_iter()
        .collect();
    let svg = &plots["distributions.svg"];
    let line = |c: RGBColor| {
        svg.lines()
            .filter(|l| l.contains("<polyline") && l.contains(&format!("stroke=\"{}\"", hex(c))))
            .count()
    };
    // One curve per arm per panel, and one sample of each in the legend.
    assert_eq!(line(BLUE), 3 + 1);
    assert_eq!(line(VERMILLION), 3 + 1);
    assert!(svg.contains("baseline: base"));
    assert!(svg.contains("treatment: the variant in the panel&apos;s title"));
    // Each panel in the unit of its own runs: the slower variant's in ms.
    assert_eq!(count(svg, "run time (µs)"), 2);
    assert_eq!(count(svg, "run time (ms)"), 1);
    // 2 forks x 60 pairs of each arm.
    assert!(svg.contains("; 120 runs each"));
    assert!(!svg.contains("NaN"));
}

#[test]
fn an_ecdf_rises_at_each_run_to_the_share_at_or_below_it() {
    let e = distributions::ecdf(&[1, 2, 2, 3, 10], 0.0, 5.0);
    assert_eq!(
        e,
        [
            (0.0, 0.0),
            (1.0, 0.0),
            (1.0, 0.2),
            (2.0, 0.2),
            (2.0, 0.6),
            (3.0, 0.6),
            (3.0, 0.8),
            (5.0, 0.8)
        ]
    );
    // Runs below the axis count in its first level.
    let e = distributions::ecdf(&[1, 2, 3, 4], 2.5, 10.0);
    assert_eq!(
        e,
        [
            (2.5, 0.5),
            (3.0, 0.5),
            (3.0, 0.75),
            (4.0, 0.75),
            (4.0, 1.0),
            (10.0, 1.0)
        ]
    );
    // Many runs: at most 200 steps, each at an order statistic.
    let many: Vec<u64> = (0..10_000).collect();
    let e = distributions::ecdf(&many, -1.0, 20_000.0);
    assert!(e.len() <= 2 * 200 + 2, "{}", e.len());
    assert_eq!(e.last(), Some(&(20_000.0, 1.0)));
    assert!(e.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
    assert!(distributions::ecdf(&[], 0.0, 1.0).is_empty());
}

#[test]
fn a_studys_ab_cells_say_faster_or_slower_and_its_aa_cells_seen() {
    // The same code at two delays, and a faster version at the same two.
    let cells: Vec<FixtureCell> = [(1.0, "same"), (0.7, "quick")]
        .iter()
        .flat_map(|&(scale, name)| {
            [0u64, 50_000].map(|d| FixtureCell {
                params: json!({ "delay_us": d / 1000, "treatment": name }),
                delay_ns: d,
                scale,
            })
        })
        .collect();
    let (a, pairs) = measured(&cells, 3);
    let mut input = study_input(&a, &pairs);
    input.aa = false;
    for (p, c) in input.panels.iter_mut().zip(&cells) {
        p.compares = c.scale != 1.0;
    }
    let plots: std::collections::BTreeMap<_, _> = render_all(&input).unwrap().into_iter().collect();
    let forest = &plots["forest.svg"];
    for label in [
        "CI above 0: saw the delay",
        "CI below 0: reversed",
        "CI below 0: faster",
        "CI above 0: slower",
    ] {
        assert!(forest.contains(label), "{label}");
    }
    // The faster version is faster at d = 0 and at 50 µs (0.7 x 800 µs +
    // 50 µs): its panels count faster forks, the A/A ones seen forks.
    assert_eq!(count(forest, "faster in 3 of 3 forks"), 2);
    assert!(forest.contains("d = 50 µs: 3/3 saw it"));
    let faster = count(forest, &format!("fill=\"{}\"", hex(FASTER)));
    assert_eq!(faster, 6 + 1);
}

#[test]
fn a_comparison_without_cells_still_draws() {
    let (mut a, _) = variants(1);
    a.cells.clear();
    a.headline.groups.clear();
    let mut input = comparison(&a, &[]);
    input.panels.clear();
    for (_, svg) in render_all(&input).unwrap() {
        assert!(svg.starts_with("<svg") && !svg.contains("NaN"));
        assert!(!svg.contains(", ."), "an empty interval name");
    }
}

/// The runs a distributions panel leaves off its axis are counted on the
/// side they lie: strictly below its low end, strictly above its high end.
#[test]
fn runs_beyond_the_axis_are_counted_on_their_side() {
    assert_eq!(
        distributions::beyond(&[1, 2, 5, 9, 50, 80], 2.0, 9.0),
        (1, 2)
    );
    assert_eq!(distributions::beyond(&[3, 4], 2.0, 9.0), (0, 0));
    assert_eq!(distributions::beyond(&[], 2.0, 9.0), (0, 0));
}

/// A comparison swept over clients gets `clients.svg`: one point per cell
/// at its level, labelled by the levels, in one series; without the sweep
/// (or in a study) no such file.
#[test]
fn a_clients_sweep_plots_the_ratio_against_the_levels() {
    let (mut a, pairs) = variants(3);
    // One treatment at three levels: the cells differ only in clients.
    for (c, n) in a.cells.iter_mut().zip([1u32, 4, 8]) {
        c.params.remove("treatment");
        c.params.insert("clients".into(), n.into());
    }
    let names = |input: &Input<'_>| -> Vec<&'static str> {
        render_all(input)
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect()
    };
    let plain = comparison(&a, &pairs);
    assert!(!names(&plain).contains(&runner_folder::output::CLIENTS_PLOT));
    let mut swept = comparison(&a, &pairs);
    swept.clients = vec![1, 4, 8];
    for p in &mut swept.panels {
        p.treatment = "new".into();
    }
    assert!(names(&swept).contains(&runner_folder::output::CLIENTS_PLOT));
    let svg = render_all(&swept)
        .unwrap()
        .into_iter()
        .find(|(n, _)| *n == runner_folder::output::CLIENTS_PLOT)
        .unwrap()
        .1;
    let text = words(&svg);
    assert!(text.contains("concurrent clients per arm"), "{text}");
    assert!(text.contains("new against base"), "{text}");
    let labels: Vec<&str> = text.split(' ').collect();
    for level in ["1", "4", "8"] {
        assert!(labels.contains(&level), "level {level} in {text}");
    }
    // Three points (one per cell) in one series: its legend's marker.
    assert_eq!(svg.matches("<circle").count(), 3 + 1, "{svg}");
    swept.kind = Kind::Study;
    assert!(!names(&swept).contains(&runner_folder::output::CLIENTS_PLOT));
}
