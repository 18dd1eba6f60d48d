use super::*;
use crate::workload::{calculate, Model};
use std::time::{Duration, Instant};

const W: WorkloadParams = WorkloadParams {
    plans: 8,
    months: 24,
};

fn deltas() -> Vec<Overrides> {
    [0.0, 0.001, 0.0123, 0.025, 0.0375, 0.049_999]
        .into_iter()
        .map(|delta| Overrides { delta })
        .collect()
}

#[test]
fn in_memory_matches_the_calculator_and_forgets_each_input() {
    let mut s = build(StrategyKind::InMemory, W, None).unwrap();
    for o in deltas() {
        let mut model = Model::new(W.plans);
        o.apply(&mut model);
        let expected = Outcome::Preview(calculate(&model, W.months));
        assert!(s.run(&o).unwrap().same_bits(&expected));
    }
    assert_eq!(s.content_hash().unwrap(), None);
}

#[test]
fn sqlite_tx_rollback_agrees_with_in_memory_bit_for_bit() {
    let mut mem = build(StrategyKind::InMemory, W, None).unwrap();
    let mut tx = build(StrategyKind::TxRollback, W, Some(&DbTarget::Sqlite)).unwrap();
    check_agreement(mem.as_mut(), tx.as_mut(), &deltas()).unwrap();
    check_agreement(tx.as_mut(), mem.as_mut(), &deltas()).unwrap();
}

#[test]
fn sqlite_content_hash_survives_100_previews() {
    let mut tx = build(StrategyKind::TxRollback, W, Some(&DbTarget::Sqlite)).unwrap();
    let seeded = tx.content_hash().unwrap().unwrap();
    assert_eq!(seeded, crate::db::hash_rows(Model::new(W.plans).fields()));
    for i in 0..100 {
        let o = Overrides {
            delta: i as f64 * 0.0005,
        };
        assert!(matches!(tx.run(&o).unwrap(), Outcome::Preview(_)));
    }
    assert_eq!(tx.content_hash().unwrap().unwrap(), seeded);
}

#[test]
fn tx_rollback_without_a_database_is_a_clear_error() {
    let err = build(StrategyKind::TxRollback, W, None).err().unwrap();
    assert!(err.to_string().contains("needs a database"), "{err}");
}

#[test]
fn spin_waits_at_least_its_duration() {
    let mut s = build(
        StrategyKind::Spin {
            duration_ns: 200_000,
        },
        W,
        None,
    )
    .unwrap();
    for _ in 0..5 {
        let start = Instant::now();
        assert_eq!(s.run(&Overrides { delta: 0.0 }).unwrap(), Outcome::Nothing);
        assert!(start.elapsed() >= Duration::from_micros(200));
    }
    assert!(spin::spin_for(Duration::from_micros(50)) >= Duration::from_micros(50));
}

#[test]
fn noop_returns_nothing() {
    let mut s = build(StrategyKind::Noop, W, None).unwrap();
    assert_eq!(s.run(&Overrides { delta: 0.01 }).unwrap(), Outcome::Nothing);
}

#[test]
fn same_bits_is_stricter_than_eq() {
    let p = calculate(&Model::new(1), 2);
    let mut q = p;
    q.ending_cash = f64::from_bits(p.ending_cash.to_bits() + 1);
    assert!(!Outcome::Preview(p).same_bits(&Outcome::Preview(q)));
    assert!(!Outcome::Preview(p).same_bits(&Outcome::Nothing));
    assert!(Outcome::Nothing.same_bits(&Outcome::Nothing));
}
