//! How each treatment of the clock's ties behaves on recorded data.
//!
//! ```text
//! cargo run --release --example ties -- reports/validity reports/validity-sqlite
//! ```
//!
//! For every cell of each run folder: at d = 0 how many forks' 95 % intervals
//! exclude 0 (false positives, nominal 5 %), at d > 0 how many cover the wait
//! actually injected (the interval of D - spin_ns contains 0, nominal 95 %)
//! and how many see the delay (interval above 0), and how many intervals are
//! narrower than the clock's resolution. The treatments compared:
//!
//! - `exact`: the exact bootstrap of the recorded integers (no tie handling);
//! - `mid-p`: the same distribution, the atom at 0 split half to each side;
//! - `jitter U(r)`: each value moved by a seeded uniform draw in [-r/2, r/2);
//! - `jitter T(r)`: by a triangular draw on (-r, r) (the difference of two
//!   reads' rounding errors);
//! - `... floor`: the jittered interval widened to at least r.
//!
//! r is the resolution run.json records (`environment.clock.resolution_ns`),
//! and half of it, since the recorded one is a floor on the step between two
//! reads, which the read's own cost can exceed.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use runner_core::record::{read_pairs_csv, Phase};
use runner_stats::{exact_median, median_distribution};
use std::collections::BTreeMap;
use std::path::Path;

const CONFIDENCE: f64 = 0.95;

/// (cell, delay) -> fork -> (D, D - spin_ns), in pair order.
type Cells = BTreeMap<(u32, u64), BTreeMap<u32, (Vec<i64>, Vec<i64>)>>;

#[derive(Clone, Copy)]
enum Treatment {
    Exact,
    MidP,
    Uniform { r: f64, floor: bool },
    Triangular { r: f64 },
}

impl Treatment {
    fn name(self) -> String {
        match self {
            Treatment::Exact => "exact".into(),
            Treatment::MidP => "mid-p".into(),
            Treatment::Uniform { r, floor } => {
                format!("jitter U({r:.0}){}", if floor { " floor" } else { "" })
            }
            Treatment::Triangular { r } => format!("jitter T({r:.0})"),
        }
    }

    /// (lo, hi) of the interval, or for mid-p a pseudo-interval whose sign
    /// pattern gives the decision.
    fn interval(self, values: &[i64], rng: &mut Pcg64) -> (f64, f64) {
        match self {
            Treatment::Exact => {
                let e = exact_median(values, CONFIDENCE).unwrap();
                (e.ci.lo, e.ci.hi)
            }
            Treatment::MidP => {
                let atoms = median_distribution(values).unwrap();
                let below: f64 = atoms
                    .iter()
                    .filter(|a| a.value < 0.0)
                    .map(|a| a.probability)
                    .sum();
                let at: f64 = atoms
                    .iter()
                    .filter(|a| a.value == 0.0)
                    .map(|a| a.probability)
                    .sum();
                let tail = (1.0 - CONFIDENCE) / 2.0;
                // Above zero when the mass below zero, with half the tie, is in the tail.
                let p_below = below + at / 2.0;
                let p_above = 1.0 - below - at / 2.0;
                if p_below < tail {
                    (1.0, 1.0)
                } else if p_above < tail {
                    (-1.0, -1.0)
                } else {
                    (-1.0, 1.0)
                }
            }
            Treatment::Uniform { r, floor } => {
                let v: Vec<f64> = values
                    .iter()
                    .map(|&x| x as f64 + r * (rng.gen::<f64>() - 0.5))
                    .collect();
                let e = exact_median(&v, CONFIDENCE).unwrap();
                let (mut lo, mut hi) = (e.ci.lo, e.ci.hi);
                if floor && hi - lo < r {
                    let c = (lo + hi) / 2.0;
                    (lo, hi) = (c - r / 2.0, c + r / 2.0);
                }
                (lo, hi)
            }
            Treatment::Triangular { r } => {
                let v: Vec<f64> = values
                    .iter()
                    .map(|&x| x as f64 + r * (rng.gen::<f64>() - rng.gen::<f64>()))
                    .collect();
                let e = exact_median(&v, CONFIDENCE).unwrap();
                (e.ci.lo, e.ci.hi)
            }
        }
    }
}

fn main() {
    for dir in std::env::args().skip(1) {
        let dir = Path::new(&dir);
        let run: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
        let res = run["environment"]["clock"]["resolution_ns"]
            .as_f64()
            .unwrap_or(0.0);
        let pairs = read_pairs_csv(&dir.join("pairs.csv")).unwrap();
        let mut cells: Cells = BTreeMap::new();
        for p in pairs.iter().filter(|p| p.phase == Phase::Measure) {
            let f = cells
                .entry((p.cell, p.delay_ns))
                .or_default()
                .entry(p.fork)
                .or_default();
            f.0.push(p.diff_ns());
            f.1.push(p.diff_ns() - p.spin_ns as i64);
        }
        println!("\n{} (clock resolution {res} ns)", dir.display());
        let treatments = [
            Treatment::Exact,
            Treatment::MidP,
            Treatment::Uniform {
                r: res / 2.0,
                floor: false,
            },
            Treatment::Uniform {
                r: res,
                floor: false,
            },
            Treatment::Triangular { r: res / 2.0 },
            Treatment::Triangular { r: res },
            Treatment::Uniform {
                r: res,
                floor: true,
            },
        ];
        println!(
            "{:<18} {:>8} {:>7} {:>14} {:>12} {:>12}",
            "treatment", "delay", "forks", "false pos.", "covers inj.", "sees d"
        );
        for t in treatments {
            for (&(cell, delay), forks) in &cells {
                let mut rng = Pcg64::seed_from_u64(u64::from(cell) << 32 | 7);
                let (mut excl, mut cover, mut sees, mut narrow) = (0, 0, 0, 0);
                for (d, unwaited) in forks.values() {
                    let (lo, hi) = t.interval(d, &mut rng);
                    excl += u32::from(lo > 0.0 || hi < 0.0);
                    sees += u32::from(lo > 0.0);
                    narrow += u32::from(hi - lo < res);
                    let (ulo, uhi) = t.interval(unwaited, &mut rng);
                    cover += u32::from(ulo <= 0.0 && 0.0 <= uhi);
                }
                let n = forks.len();
                if delay == 0 {
                    println!(
                        "{:<18} {:>8} {:>7} {:>14} {:>12} {:>12}   narrower than r: {narrow}",
                        t.name(),
                        delay,
                        n,
                        format!("{excl} ({:.1} %)", 100.0 * excl as f64 / n as f64),
                        "",
                        ""
                    );
                } else {
                    println!(
                        "{:<18} {:>8} {:>7} {:>14} {:>12} {:>12}   narrower than r: {narrow}",
                        t.name(),
                        delay,
                        n,
                        "",
                        format!("{cover}/{n}"),
                        format!("{sees}/{n}")
                    );
                }
            }
        }
    }
}
