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
