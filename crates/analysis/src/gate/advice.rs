//! The design an inconclusive gate names: the forks and pairs per fork
//! predicted, from the deciding cell's variance components, to narrow its
//! interval to the half-width that would decide (below the gap between
//! the estimate and the threshold, or small enough for the power asked
//! for). Never fewer forks or pairs than ran, and never the design that
//! ran: the advice is what to add.
//!
//! Candidates: the forks that ran, or more up to `MAX_FORKS`, at the pairs
//! that ran times 1, 2, 3, 4, 6, 8, 12 or 16; each fork costs its pairs,
//! its warm-up and [`FORK_OVERHEAD_PAIRS`] for starting a process. The
//! cheapest candidate wins, ties to fewer forks; the advice names forks
//! when only forks change, pairs when only pairs do, and both otherwise.
//! When the forks' medians spread more than their pairs (between-fork
//! variance), more pairs cannot help and forks win; when the pairs are
//! the noise, more pairs per fork are the cheaper fix.

use super::{Advice, AdviceChange};
use crate::{FORK_OVERHEAD_PAIRS, MAX_FORKS};
use runner_stats::{predicted_half_width, VarianceComponents};

/// The most pairs per fork the spec accepts (`design.pairs`).
const MAX_PAIRS: u64 = 1_000_000;

/// See the module doc. `None` when no candidate reaches `needed_ns`.
pub(crate) fn advise(
    vc: VarianceComponents,
    confidence: f64,
    ran: (u32, u32),
    warmup: u32,
    needed_ns: f64,
) -> Option<Advice> {
    let (forks_ran, pairs_ran) = (ran.0.max(2), ran.1.max(1));
    if needed_ns.is_nan() || needed_ns <= 0.0 {
        return None;
    }
    let mut best: Option<(u64, Advice)> = None;
    for factor in [1u64, 2, 3, 4, 6, 8, 12, 16] {
        let pairs = u64::from(pairs_ran) * factor;
        if pairs > MAX_PAIRS {
            break;
        }
        let pairs = pairs as u32;
        // The design that ran is no advice: the model can predict it
        // decides where its bootstrap interval did not (a skewed fork's
        // pairs), and then the least more is one fork.
        let from = if pairs > ran.1 {
            forks_ran
        } else {
            forks_ran.max(ran.0 + 1)
        };
        let Some(forks) = (from..=MAX_FORKS)
            .find(|&f| predicted_half_width(vc, confidence, f, pairs) < needed_ns)
        else {
            continue;
        };
        let cost = u64::from(forks)
            * (u64::from(pairs) + u64::from(warmup) + u64::from(FORK_OVERHEAD_PAIRS));
        if best
            .as_ref()
            .is_some_and(|(c, a)| (*c, a.forks) <= (cost, forks))
        {
            continue;
        }
        let change = match (forks > ran.0, pairs > ran.1) {
            (true, false) => AdviceChange::Forks,
            (false, _) => AdviceChange::Pairs,
            (true, true) => AdviceChange::Both,
        };
        best = Some((
            cost,
            Advice {
                change,
                forks: forks.max(ran.0),
                pairs,
                predicted_half_width_ns: Some(predicted_half_width(vc, confidence, forks, pairs)),
                needed_half_width_ns: needed_ns,
            },
        ));
    }
    best.map(|(_, a)| a)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pair noise only (no fork effect): doubling the pairs halves the
    /// variance as doubling the forks does, but costs no process starts,
    /// so the advice is pairs, and never fewer than the 30 forks that ran.
    #[test]
    fn pair_noise_asks_for_pairs_and_fork_noise_for_forks() {
        let vc = VarianceComponents {
            between: 0.0,
            within: 1.0e6,
        };
        // 30 x 12: half-width t(29) sqrt(1e6 / 360) = 2.045 x 52.7 = 107.8.
        let now = predicted_half_width(vc, 0.95, 30, 12);
        assert!((now - 107.8).abs() < 0.1, "{now}");
        let a = advise(vc, 0.95, (30, 12), 0, 60.0).unwrap();
        assert_eq!(a.change, AdviceChange::Pairs);
        assert_eq!(a.forks, 30);
        // 36 pairs reach 2.045 x 30.4 = 62.2, not enough; 48 reach 53.9.
        assert_eq!(a.pairs, 48, "{a:?}");
        assert!(a.predicted_half_width_ns.unwrap() < 60.0);
        // A fork effect: more pairs cannot narrow it below
        // 1.96 sqrt(between / 30) = 35.8, so 20 ns needs forks.
        let vc = VarianceComponents {
            between: 10_000.0,
            within: 1.0,
        };
        let a = advise(vc, 0.95, (30, 12), 0, 20.0).unwrap();
        assert_eq!(a.change, AdviceChange::Forks);
        assert!(a.forks > 30 && a.pairs == 12, "{a:?}");
        // Where the model says the design that ran already decides, the
        // advice still adds: here one fork.
        let a = advise(vc, 0.95, (30, 12), 0, 1e9).unwrap();
        assert!(a.forks == 31 && a.pairs == 12, "{a:?}");
        assert_eq!(a.change, AdviceChange::Forks);
        // No design reaches a zero half-width.
        assert_eq!(advise(vc, 0.95, (30, 12), 0, 0.0), None);
    }
}
