use super::*;

#[test]
fn a_lone_duration_has_three_significant_digits_in_its_unit() {
    assert_eq!(duration(812.5), "812 ns");
    assert_eq!(duration(42.93), "42.9 ns");
    assert_eq!(duration(5.0), "5.00 ns");
    assert_eq!(duration(245_100.0), "245 µs");
    assert_eq!(duration(26_300.0), "26.3 µs");
    assert_eq!(duration(-3_240.0), "-3.24 µs");
    assert_eq!(duration(1_400_000.0), "1.40 ms");
    assert_eq!(duration(2.5e9), "2.50 s");
    assert_eq!(duration(f64::NAN), "n/a");
}

#[test]
fn zero_is_printed_as_0_and_never_with_a_minus_sign() {
    assert_eq!(duration(0.0), "0");
    assert_eq!(duration(-0.0), "0");
    assert_eq!(delay(0.0), "0");
    assert_eq!(estimate(0.0, 0.0, 0.0), "0 [0, 0] ns");
    assert_eq!(estimate(-0.2, -6_400.0, 8_700.0), "0 [-6, 9] µs");
    assert_eq!(percent(0.0), "0 %");
    assert_eq!(correlation(-0.0001), "0.000");
}

#[test]
fn configured_delays_print_exactly() {
    assert_eq!(delay(25_000.0), "25 µs");
    assert_eq!(delay(2_500.0), "2.5 µs");
    assert_eq!(delay(100.0), "100 ns");
    assert_eq!(delay(500_000.0), "500 µs");
    assert_eq!(delay(1_000_000.0), "1 ms");
    assert_eq!(delay(1_250.0), "1.25 µs");
}

#[test]
fn an_estimate_and_its_interval_share_one_unit_written_once() {
    // Was "-470.0 ns [-1.3, 0.2] µs".
    assert_eq!(estimate(-470.0, -1_300.0, 200.0), "-0.5 [-1.3, 0.2] µs");
    assert_eq!(
        estimate(26_300.0, 23_800.0, 29_000.0),
        "26.3 [23.8, 29.0] µs"
    );
    assert_eq!(interval(-900.0, 3_400.0), "[-0.9, 3.4] µs");
    assert_eq!(interval(10.0, 20.0), "[10, 20] ns");
}

#[test]
fn precision_follows_the_interval_width_so_it_never_collapses() {
    // Was "25.1 µs [25.1, 25.1] µs".
    assert_eq!(
        estimate(25_097.0, 25_087.0, 25_109.0),
        "25.097 [25.087, 25.109] µs"
    );
    assert_eq!(
        estimate(504_000.0, 498_200.0, 510_400.0),
        "504 [498, 510] µs"
    );
    assert_eq!(estimate(171.0, 170.5, 171.5), "171.0 [170.5, 171.5] ns");
    // A zero-width interval is exact (medians of integer ns): printed so.
    assert_eq!(
        estimate(25_097.0, 25_097.0, 25_097.0),
        "25.097 [25.097, 25.097] µs"
    );
    assert_eq!(estimate(171.0, 171.0, 171.0), "171 [171, 171] ns");
    for (lo, hi) in [(1.0, 1.01), (25_000.0, 25_000.5), (999_999.0, 1_000_001.0)] {
        let s = interval(lo, hi);
        let inner = &s[1..s.find(']').unwrap()];
        let (a, b) = inner.split_once(", ").unwrap();
        assert_ne!(a, b, "{s}");
    }
}

#[test]
fn ranges_read_lo_to_hi_in_one_unit() {
    assert_eq!(range(510_000.0, 746_000.0), "510 to 746 µs");
    assert_eq!(range(531_900.0, 1_900_000.0), "0.53 to 1.90 ms");
    assert_eq!(range(-231_700.0, 217_900.0), "-232 to 218 µs");
    assert_eq!(range(0.0, 0.0), "0 to 0 ns");
    // Close ends keep the digits that tell them apart.
    assert_eq!(range(1_071.0, 1_090.0), "1.071 to 1.090 µs");
}

#[test]
fn percents_print_exact_values_exactly_and_never_round_to_all_or_none() {
    assert_eq!(percent(0.031), "3.1 %");
    assert_eq!(percent(0.95), "95 %");
    assert_eq!(percent(1.0), "100 %");
    assert_eq!(percent(0.9996), "> 99.9 %");
    assert_eq!(percent(0.0004), "< 0.1 %");
    assert_eq!(percent(0.999), "99.9 %");
}

#[test]
fn correlations_have_three_decimals_and_below_1_never_print_as_1() {
    assert_eq!(correlation(0.996), "0.996");
    assert_eq!(correlation(0.99), "0.990");
    assert_eq!(correlation(0.99991), "> 0.999");
    assert_eq!(correlation(1.0), "1.000");
    assert_eq!(correlation(-0.99995), "< -0.999");
}

#[test]
fn lists_read_as_prose() {
    let l = |v: &[&str]| list(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>(), "and");
    assert_eq!(l(&[]), "");
    assert_eq!(l(&["5 µs"]), "5 µs");
    assert_eq!(l(&["5 µs", "10 µs", "25 µs"]), "5 µs, 10 µs and 25 µs");
}

/// Recorded columns of committed reports, printed the way a column is.
fn estimates(c: &Column, rows: &[(f64, f64, f64)]) -> Vec<String> {
    rows.iter().map(|&(m, l, h)| c.estimate(m, l, h)).collect()
}

fn entries(rows: &[(f64, f64, f64)]) -> Vec<Entry> {
    rows.iter()
        .map(|&(m, l, h)| Entry::Estimate(m, l, h))
        .collect()
}

#[test]
fn a_column_of_estimates_has_one_unit_and_one_number_of_decimals() {
    // reports/command-aa, Sensitivity, pooled median: printed as
    // "-3 [-11, 4] µs" ... "501.2 [496.5, 504.9] µs", "1.0015 [0.9977, 1.0065] ms".
    let rows = [
        (-3_000.0, -11_000.0, 4_000.0),
        (251_000.0, 246_000.0, 257_000.0),
        (501_200.0, 496_500.0, 504_900.0),
        (1_001_500.0, 997_700.0, 1_006_500.0),
    ];
    let c = Column::time(&entries(&rows));
    assert_eq!(
        estimates(&c, &rows),
        [
            "-3.0 [-11.0, 4.0] µs",
            "251.0 [246.0, 257.0] µs",
            "501.2 [496.5, 504.9] µs",
            "1001.5 [997.7, 1006.5] µs",
        ]
    );
}

#[test]
fn a_column_mixing_units_and_digits_reads_in_one_style() {
    // A column as it once printed: "0 [-10, 4] µs", "-6.00 µs [-14, 0] µs",
    // "501.2 [496.5, 504.4] µs". A zero among a cell's numbers keeps the
    // column's decimals, so each cell has one digit rule.
    let rows = [
        (0.0, -10_000.0, 4_000.0),
        (-6_000.0, -14_000.0, 0.0),
        (501_200.0, 496_500.0, 504_400.0),
    ];
    let c = Column::time(&entries(&rows));
    assert_eq!(
        estimates(&c, &rows),
        [
            "0.0 [-10.0, 4.0] µs",
            "-6.0 [-14.0, 0.0] µs",
            "501.2 [496.5, 504.4] µs"
        ]
    );
    // SQLite pooled rows, "5.0060 [4.9980, 5.0070] µs" among wider ones.
    let rows = [(5_006.0, 4_998.0, 5_007.0), (25_180.0, 25_060.0, 25_320.0)];
    let c = Column::time(&entries(&rows));
    assert_eq!(
        estimates(&c, &rows),
        [
            "5.0060 [4.9980, 5.0070] µs",
            "25.1800 [25.0600, 25.3200] µs"
        ]
    );
}

#[test]
fn ranges_and_lone_values_of_a_column_share_its_style() {
    // reports/command-aa, Fork spread: "2.43 to 2.77 ms" beside "2.4 to 4.1 ms".
    let rows = [
        (2_430_000.0, 2_770_000.0),
        (2_400_000.0, 4_100_000.0),
        (2_470_000.0, 2_610_000.0),
    ];
    let c = Column::time(
        &rows
            .iter()
            .map(|&(l, h)| Entry::Span(l, h))
            .collect::<Vec<_>>(),
    );
    let printed: Vec<String> = rows.iter().map(|&(l, h)| c.range(l, h)).collect();
    assert_eq!(
        printed,
        ["2.43 to 2.77 ms", "2.40 to 4.10 ms", "2.47 to 2.61 ms"]
    );
    // Two separate runs: "-339 to 320 µs" beside "-1.6 to 1.8 ms".
    let rows = [
        (-339_000.0, 320_000.0),
        (-174_000.0, 217_000.0),
        (-1_600_000.0, 1_800_000.0),
    ];
    let spans: Vec<Entry> = rows.iter().map(|&(l, h)| Entry::Span(l, h)).collect();
    let c = Column::time(&spans);
    let printed: Vec<String> = rows.iter().map(|&(l, h)| c.range(l, h)).collect();
    assert_eq!(
        printed,
        ["-339 to 320 µs", "-174 to 217 µs", "-1600 to 1800 µs"]
    );
    // Calibration, injected − d: "-105 ns" beside "-95.0 ns".
    let values = [-105.0, -104.0, -95.0, -90.0, -79.0];
    let c = Column::time(&values.map(Entry::Value));
    let printed: Vec<String> = values.iter().map(|&v| c.value(v)).collect();
    assert_eq!(
        printed,
        ["-105.0 ns", "-104.0 ns", "-95.0 ns", "-90.0 ns", "-79.0 ns"]
    );
    // A value far below the column's typical one still shows a digit.
    let values = [1.0, 4_990.0];
    let c = Column::time(&values.map(Entry::Value));
    assert_eq!(c.value(1.0), "0.001 µs");
    assert_eq!(c.value(4_990.0), "4.990 µs");
    // Zeros say nothing about the unit.
    let values = [0.0, 16_300.0, 0.0, 3_930.0, 1_250.0];
    let c = Column::time(&values.map(Entry::Value));
    let printed: Vec<String> = values.iter().map(|&v| c.value(v)).collect();
    assert_eq!(printed, ["0", "16.30 µs", "0", "3.93 µs", "1.25 µs"]);
}

#[test]
fn a_column_of_sizes_reads_in_kib_or_mib() {
    let values = [6_656.0, 6_758.0, 6_861.0];
    let c = Column::size(&values.map(Entry::Value));
    assert_eq!(c.value(6_656.0), "6.50 MiB");
    let rows = [(0.0, -8.0, 4.0), (4.0, 0.0, 12.0)];
    let c = Column::size(&entries(&rows));
    assert_eq!(estimates(&c, &rows), ["0 [-8, 4] KiB", "4 [0, 12] KiB"]);
}

#[test]
fn an_all_zero_difference_the_measure_cannot_resolve_is_said_in_words() {
    assert_eq!(
        unresolved(0.0, 0.0, 0.0, "below the kernel's accounting resolution").as_deref(),
        Some("0 (below the kernel's accounting resolution)")
    );
    assert_eq!(
        unresolved(0.0, -4.0, 0.0, "below the kernel's page resolution"),
        None
    );
}

#[test]
fn counts_left_to_the_trial_runs_say_what_chose_them() {
    let toml = "[strategies.a]\nkind = \"noop\"\n[design]\nbaseline = \"a\"\ntreatment = \"a\"\nwarmup_pairs = 7\n";
    let mut d = runner_spec::parse_recorded("a.toml", toml, &Default::default())
        .unwrap()
        .design;
    assert_eq!(
        runs_chosen(&d).as_deref(),
        Some("the measured pairs to be chosen from the trial runs before the first fork")
    );
    let costs = runner_plan::runs::Costs {
        pair_ns: 25_000_000,
        fork_start_ns: 14_500_000,
    };
    runner_plan::runs::apply(&mut d, costs, 10);
    assert_eq!(
        runs_chosen(&d).as_deref(),
        Some("the measured pairs chosen from trial runs: a pair took about 25.0 ms, a fork's start about 14.5 ms")
    );
    d.runs_per_fork = None;
    assert_eq!(runs_chosen(&d), None);

    // A sequential design that leaves min_forks out as well.
    let toml = "[strategies.a]\nkind = \"noop\"\n[design]\nbaseline = \"a\"\ntreatment = \"a\"\n[design.stop]\ndecide = true\n";
    let mut d = runner_spec::parse_recorded("a.toml", toml, &Default::default())
        .unwrap()
        .design;
    assert_eq!(
        runs_chosen(&d).as_deref(),
        Some(
            "both to be chosen from the trial runs before the first fork, and min_forks with them"
        )
    );
    let long = runner_plan::runs::Costs {
        pair_ns: 170_000_000,
        fork_start_ns: 14_500_000,
    };
    runner_plan::runs::apply(&mut d, long, 10);
    assert_eq!(
        runs_chosen(&d).as_deref(),
        Some("both chosen from trial runs: a pair took about 170 ms, a fork's start about 14.5 ms; min_forks 6 with them (a first look of at least 30 measured pairs, within 6 s of runs)")
    );
}
