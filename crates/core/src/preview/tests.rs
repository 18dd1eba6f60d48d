use super::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// plans = 1, months = 2, by hand (price 29, growth 0.04, churn 0.012, subs 120):
/// m0: intake = 120 x 0.04 = 4.8; subs = 124.8; cohort0 = 4.8 x 0.988 = 4.7424;
///     mrr = 4.7424 x 29 = 137.5296
/// m1: intake = 124.8 x 0.04 = 4.992; cohort0 = 4.7424 x 0.988 = 4.6854912;
///     cohort1 = 4.992 x 0.988 = 4.932096; active = 9.6175872;
///     mrr = 9.6175872 x 29 = 278.9100288 = ending_mrr
/// lifetime = 137.5296 + 278.9100288 = 416.4396288
/// cash: each month += 416.4396288 / 2 - 65000 = -64791.7801856;
///     900000 -> 835208.2198144 -> 770416.4396288; never negative: runway -1
#[test]
fn hand_checked_small_case() {
    let p = calculate(&Model::new(1), 2);
    assert!(close(p.ending_mrr, 278.9100288), "{p:?}");
    assert!(close(p.lifetime_revenue, 416.4396288), "{p:?}");
    assert!(close(p.ending_cash, 770416.4396288), "{p:?}");
    assert_eq!(p.runway_month, -1);
}

/// With one plan the burn dominates: revenue is ~20 x 1.6k over 20 months, so
/// cash drops by ~63k a month and 900k runs out in month 15 (1-based).
#[test]
fn runway_is_first_negative_month_one_based() {
    let p = calculate(&Model::new(1), 20);
    let mut cash = 900000.0;
    let mut expected = -1;
    for m in 1..=20 {
        cash += p.lifetime_revenue / 20.0 - 65000.0;
        if cash < 0.0 && expected < 0 {
            expected = m;
        }
    }
    assert_eq!(p.runway_month, expected);
    assert_eq!(p.runway_month, 15);
    assert_eq!(p.ending_cash, cash);
}

#[test]
fn deterministic_and_buffer_reuse_is_invisible() {
    let model = Model::new(40);
    let fresh = calculate(&model, 60);
    let mut calc = Calculator::new(60);
    for _ in 0..3 {
        assert_eq!(calc.calculate(&model), fresh);
    }
}

#[test]
fn overrides_change_growth_and_burn_only() {
    let base = Model::new(5);
    let mut model = base.clone();
    Overrides { delta: 0.02 }.apply(&mut model);
    assert_eq!(model.fixed_burn, 65000.0 + 2000.0);
    assert_eq!(model.growth[0], 0.04 + 0.02);
    assert_eq!(model.growth[2], 0.06 + 0.02);
    assert_eq!(model.growth[3], base.growth[3]);
    assert_eq!(
        (model.price.clone(), model.churn.clone()),
        (base.price.clone(), base.churn.clone())
    );

    let before = calculate(&base, 24);
    let after = calculate(&model, 24);
    assert!(after.lifetime_revenue > before.lifetime_revenue);
    assert_ne!(after.ending_cash, before.ending_cash);
}

#[test]
fn zero_delta_reproduces_the_seeded_model() {
    let mut model = Model::new(7);
    Overrides { delta: 0.0 }.apply(&mut model);
    assert_eq!(model, Model::new(7));
}

#[test]
fn fields_match_apply_and_cover_few_plans() {
    let o = Overrides { delta: 0.01 };
    let f = o.fields(2);
    assert_eq!(
        f,
        vec![
            ("growth_0".to_owned(), 0.04 + 0.01),
            ("growth_1".to_owned(), 0.05 + 0.01),
            ("fixed_burn".to_owned(), 65000.0 + 100000.0 * 0.01),
        ]
    );
    let mut via_names = Model::new(2);
    for (name, value) in &f {
        via_names.set(name, *value).unwrap();
    }
    let mut via_apply = Model::new(2);
    o.apply(&mut via_apply);
    assert_eq!(via_names, via_apply);
    assert_eq!(o.fields(40).len(), 4);
}

#[test]
fn loading_by_name_in_any_order_is_bit_identical() {
    let model = Model::new(12);
    let mut rows = model.fields();
    rows.reverse();
    rows.swap(3, 17);
    let mut loaded = Model::new(12);
    loaded.starting_cash = 0.0;
    loaded.subs.iter_mut().for_each(|s| *s = 0.0);
    for (name, value) in &rows {
        loaded.set(name, *value).unwrap();
    }
    let (a, b) = (calculate(&model, 30), calculate(&loaded, 30));
    assert_eq!(a.ending_mrr.to_bits(), b.ending_mrr.to_bits());
    assert_eq!(a.ending_cash.to_bits(), b.ending_cash.to_bits());
    assert_eq!(a, b);
}

#[test]
fn unknown_names_are_rejected() {
    let mut m = Model::new(2);
    for bad in ["price_2", "growth", "bogus_0", "subs_x", "", "fixed"] {
        assert!(m.set(bad, 1.0).is_err(), "{bad}");
    }
}
