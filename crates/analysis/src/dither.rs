//! The clock's steps made continuous again before any median is taken.
//!
//! A clock that moves in steps of r ns rounds every timed region to a
//! multiple of r, so D piles up on a few values (reports/validity: one pair
//! in eight has D = 0 exactly). The median of such data sits on a tie, its
//! exact bootstrap distribution is a handful of atoms, and the interval
//! collapses onto the tie: a fork's interval almost never leaves 0 and the
//! A/A test at d = 0 falls far below its nominal false-positive rate, losing
//! power the threshold figures then do not show, while pooled intervals
//! claim a precision of zero width.
//!
//! Every D is therefore moved by its own offset drawn uniformly from
//! [-r/2, r/2), the width of the step the rounding may have hidden
//! (subtractive dither, as in an analogue-to-digital converter). The offsets
//! are symmetric, so at d = 0 D stays symmetric about 0; they are
//! continuous, so ties vanish and the exact bootstrap is that of continuous
//! data. Each fork's offsets come from its own recorded stream
//! (`analysis::streams::fork`, one draw per measured pair in pair order), so
//! an interval depends on its fork's values alone and any of them can be
//! recomputed from `run.json`. docs/guide/statistics.md ("Ties and the
//! clock's steps") has the figures that chose this over a mid-p rule,
//! triangular offsets and an interval floor (`cargo run --example ties`).
//!
//! A resolution of 0 (an imported run, whose clock is unknown) leaves the
//! values as recorded.

use rand::Rng;

/// One offset per measured pair, in pair order: uniform in [-r/2, r/2),
/// or all zero when `resolution_ns` is 0.
pub(crate) fn offsets(master: u64, cell: u32, fork: u32, resolution_ns: f64, n: usize) -> Vec<f64> {
    if resolution_ns <= 0.0 {
        return vec![0.0; n];
    }
    let mut rng = super::streams::fork(master, cell, fork);
    (0..n)
        .map(|_| resolution_ns * (rng.gen::<f64>() - 0.5))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_stay_inside_the_step_and_are_reproducible() {
        let a = offsets(7, 1, 2, 20.0, 1000);
        assert!(a.iter().all(|&x| (-10.0..10.0).contains(&x)));
        assert_eq!(a, offsets(7, 1, 2, 20.0, 1000));
        assert_ne!(
            a,
            offsets(7, 1, 3, 20.0, 1000),
            "each fork has its own stream"
        );
        let mean = a.iter().sum::<f64>() / a.len() as f64;
        assert!(
            mean.abs() < 1.0,
            "centred on the recorded value: mean {mean}"
        );
        assert_eq!(offsets(7, 1, 2, 0.0, 3), vec![0.0; 3]);
    }
}
