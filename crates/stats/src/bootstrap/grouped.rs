//! The two-level draws of the hierarchical bootstraps, sampled through a
//! window of ranks (see the module doc of `bootstrap`, "Speed").
//!
//! All values of all groups are ranked together. A window [lo, hi) of global
//! ranks around the middle splits each group f of n_f values into b_f
//! values below the window, i_f inside and a_f above. One chosen group's n_f
//! draws with replacement fall (below, inside, above) with counts
//! Multinomial(n_f; b_f/n_f, i_f/n_f, a_f/n_f), drawn as two binomials
//! (below ~ Bin(n_f, b_f/n_f), then above ~ Bin(n_f - below,
//! a_f/(n_f - b_f))); only the `inside` draws are drawn as values, each
//! uniform among the group's i_f values in the window. Conditional on the
//! counts, the values of each category are independent and uniform within
//! the category, so drawing the inside ones first and the others only when
//! needed leaves the joint distribution of the resample unchanged.
//!
//! When the pooled median's rank lies inside the window, the window's
//! counts hold it. When it does not (rare with the default window), the
//! category holding it is drawn for every slot, from the counts recorded
//! per slot, and the median found among all counts: the result is the
//! median of a full resample, exactly, whatever the window.

use super::Ranked;
use crate::resample::IndexSampler;
use crate::{StatsError, Value};
use rand::RngCore;

/// The default window's width as a share of all values (at least
/// [`MIN_WINDOW`] ranks): wide enough that the median of a resample lies
/// outside it rarely, narrow enough that most draws are skipped.
pub(crate) const WINDOW_SHARE: f64 = 0.1;

/// Below this many values the window is all ranks: every draw is a value
/// and the draws are those of a plain two-level resample.
pub(crate) const MIN_WINDOW: u32 = 64;

/// Groups of values ranked together: laid out group by group, each group
/// sorted, so an index into a group's sorted values finds its rank.
pub(crate) struct Grouped {
    pub(crate) ranked: Ranked,
    offsets: Vec<usize>,
    sizes: Vec<u32>,
    /// The window [lo, hi) of global ranks.
    lo: u32,
    hi: u32,
    forks: Vec<ForkWindow>,
    /// 1 / j at j.
    recip: Vec<f64>,
}

/// One group against the window.
struct ForkWindow {
    below: u32,
    inside: u32,
    /// Bin(n_f, b_f / n_f): how many of n_f draws fall below.
    first: Fixed,
    /// Bin(m, a_f / (n_f - b_f)): how many of the m draws not below fall above.
    then: Binomials,
}

/// Per-resample scratch space of a [`Grouped`].
pub(crate) struct Scratch {
    /// Draws per rank of the window (rank lo at 0).
    counts: Vec<u32>,
    /// Per slot: the group, how many draws fell below and above.
    slots: Vec<(u32, u32, u32)>,
    below: u32,
    inside: u32,
    above: u32,
    /// Draws per global rank, only when the median left the window.
    full: Vec<u32>,
}

impl Grouped {
    /// Refuses no groups, an empty group and NaN. The default window.
    pub(crate) fn new<T: Value>(groups: &[&[T]]) -> Result<Self, StatsError> {
        Self::with_window(groups, default_window)
    }

    /// With the window `window(n)` = (lo, hi), lo <= hi <= n, for n values.
    pub(crate) fn with_window<T: Value>(
        groups: &[&[T]],
        window: impl Fn(u32) -> (u32, u32),
    ) -> Result<Self, StatsError> {
        let (ranked, offsets) = Ranked::of_groups(groups)?;
        let sizes: Vec<u32> = groups.iter().map(|g| g.len() as u32).collect();
        let (lo, hi) = window(ranked.len() as u32);
        let ln_fact = ln_factorials(sizes.iter().copied().max().unwrap_or(0));
        assert!(
            lo <= hi && hi as usize <= ranked.len(),
            "window out of range"
        );
        let forks = offsets
            .iter()
            .zip(&sizes)
            .map(|(&at, &n)| {
                let [below, inside, above] = ranked.against_window(at, at + n as usize, lo, hi);
                ForkWindow {
                    below,
                    inside,
                    first: Fixed::new(below, n, &ln_fact),
                    then: Binomials::new(above, n - below, 0..=n, &ln_fact),
                }
            })
            .collect();
        let recip = (0..ln_fact.len() + 1)
            .map(|j| 1.0 / j.max(1) as f64)
            .collect();
        Ok(Grouped {
            ranked,
            offsets,
            sizes,
            lo,
            hi,
            forks,
            recip,
        })
    }

    /// How many groups.
    pub(crate) fn groups(&self) -> u32 {
        self.sizes.len() as u32
    }

    pub(crate) fn scratch(&self) -> Scratch {
        Scratch {
            counts: vec![0; (self.hi - self.lo) as usize],
            slots: Vec::new(),
            below: 0,
            inside: 0,
            above: 0,
            full: Vec::new(),
        }
    }

    /// Empties `sc` for the next resample.
    #[inline]
    pub(crate) fn start(&self, sc: &mut Scratch) {
        sc.counts.fill(0);
        sc.slots.clear();
        (sc.below, sc.inside, sc.above) = (0, 0, 0);
    }

    /// Resamples group `g` (its n draws with replacement) into `sc`.
    #[inline]
    pub(crate) fn draw<R: RngCore>(&self, g: usize, s: &mut IndexSampler<'_, R>, sc: &mut Scratch) {
        let (n, f) = (self.sizes[g], &self.forks[g]);
        let below = f.first.sample(s);
        let above = f.then.sample(n - below, s, &self.recip);
        let inside = n - below - above;
        if inside > 0 {
            let at = self.offsets[g] + f.below as usize;
            let rank = &self.ranked.rank[at..at + f.inside as usize];
            let (lo, counts) = (self.lo, &mut sc.counts);
            s.for_each_below(f.inside, inside, |i| {
                counts[(rank[i as usize] - lo) as usize] += 1
            });
        }
        if below + above > 0 {
            sc.slots.push((g as u32, below, above));
        }
        sc.below += below;
        sc.inside += inside;
        sc.above += above;
    }

    /// The median of the resample drawn into `sc` since [`Self::start`];
    /// draws the values of a category outside the window if it holds the
    /// median.
    pub(crate) fn median<R: RngCore>(&self, s: &mut IndexSampler<'_, R>, sc: &mut Scratch) -> f64 {
        let slots = &sc.slots;
        self.ranked.window_median(
            &sc.counts,
            self.lo as usize,
            [sc.below, sc.inside, sc.above],
            &mut sc.full,
            |low, full| {
                for &(g, b, a) in slots {
                    let (g, f) = (g as usize, &self.forks[g as usize]);
                    // The side's values of group g, and how many were drawn.
                    let (at, values, drawn) = if low {
                        (self.offsets[g], f.below, b)
                    } else {
                        let inner = (f.below + f.inside) as usize;
                        (
                            self.offsets[g] + inner,
                            self.sizes[g] - f.below - f.inside,
                            a,
                        )
                    };
                    if drawn > 0 {
                        let rank = &self.ranked.rank[at..];
                        s.for_each_below(values, drawn, |i| full[rank[i as usize] as usize] += 1);
                    }
                }
            },
        )
    }
}

/// The central `WINDOW_SHARE` of n ranks, at least `MIN_WINDOW` wide; all
/// ranks when n is small.
pub(super) fn default_window(n: u32) -> (u32, u32) {
    let width = ((f64::from(n) * WINDOW_SHARE).ceil() as u32).max(MIN_WINDOW);
    if width >= n {
        return (0, n);
    }
    let lo = (n - width) / 2;
    (lo, lo + width)
}

/// Bin(n, hits / n) for one n, by inversion of its tabulated distribution
/// function with a guide table (Chen & Asau 1974): the guide sends a
/// uniform u to the first outcome whose cumulative probability can exceed
/// it, so a draw costs one uniform and about one comparison. p = 0 and
/// p = 1 draw nothing.
struct Fixed {
    /// 0 when p = 0, 1 when p = 1, else 2.
    kind: u8,
    n: u32,
    /// P(X <= k); the last is infinite, so the search ends.
    cdf: Vec<f64>,
    /// Per j < n + 1: the first k with cdf[k] > j / (n + 1).
    guide: Vec<u32>,
}

impl Fixed {
    fn new(hits: u32, n: u32, ln_fact: &[f64]) -> Self {
        let kind = if hits == 0 {
            0
        } else if hits == n {
            1
        } else {
            2
        };
        let mut f = Fixed {
            kind,
            n,
            cdf: Vec::new(),
            guide: Vec::new(),
        };
        if kind != 2 {
            return f;
        }
        let p = f64::from(hits) / f64::from(n);
        let q = f64::from(n - hits) / f64::from(n);
        let mode = ((f64::from(n + 1) * p).floor() as u32).min(n) as usize;
        let nn = n as usize;
        let mut pmf = vec![0.0; nn + 1];
        pmf[mode] = (ln_fact[nn] - ln_fact[mode] - ln_fact[nn - mode]
            + mode as f64 * p.ln()
            + (nn - mode) as f64 * q.ln())
        .exp();
        for k in mode..nn {
            pmf[k + 1] = pmf[k] * (nn - k) as f64 / (k + 1) as f64 * (p / q);
        }
        for k in (1..=mode).rev() {
            pmf[k - 1] = pmf[k] * k as f64 / (nn - k + 1) as f64 * (q / p);
        }
        let mut acc = 0.0;
        f.cdf = pmf
            .iter()
            .map(|x| {
                acc += x;
                acc
            })
            .collect();
        f.cdf[nn] = f64::INFINITY;
        let slots = nn + 1;
        let mut k = 0;
        f.guide = (0..slots)
            .map(|j| {
                let at = j as f64 / slots as f64;
                while f.cdf[k] <= at {
                    k += 1;
                }
                k as u32
            })
            .collect();
        f
    }

    #[inline]
    fn sample<R: RngCore>(&self, s: &mut IndexSampler<'_, R>) -> u32 {
        match self.kind {
            0 => return 0,
            1 => return self.n,
            _ => {}
        }
        let u = s.unit();
        let mut k = self.guide[(u * self.guide.len() as f64) as usize] as usize;
        while self.cdf[k] <= u {
            k += 1;
        }
        k as u32
    }
}

/// Bin(m, p) for one p = hits / pool and every m <= max_m, by inversion:
/// a uniform u in [0, 1) is compared with the probabilities of mode,
/// mode + 1, mode - 1, mode + 2, ... in turn (any fixed order of the
/// outcomes is an inversion), each from its neighbour by the pmf's ratio.
/// The mode's probability is tabulated per m. p = 0 and p = 1 (and m = 0)
/// draw nothing, so a window of all ranks draws exactly the plain
/// resample's random numbers.
struct Binomials {
    /// 0 when p = 0, 1 when p = 1, else 2.
    kind: u8,
    /// p / q and q / p.
    up: f64,
    down: f64,
    /// Per m from `min_m`: the mode and its probability.
    min_m: u32,
    modes: Vec<(u32, f64)>,
}

/// ln j! for j <= n.
fn ln_factorials(n: u32) -> Vec<f64> {
    let mut acc = 0.0;
    std::iter::once(0.0)
        .chain((1..=n).map(|j| {
            acc += f64::from(j).ln();
            acc
        }))
        .collect()
}

impl Binomials {
    /// For the m in `ms`; `ln_fact` reaches the largest.
    fn new(hits: u32, pool: u32, ms: std::ops::RangeInclusive<u32>, ln_fact: &[f64]) -> Self {
        let kind = if hits == 0 {
            0
        } else if hits == pool {
            1
        } else {
            2
        };
        let mut b = Binomials {
            kind,
            up: 0.0,
            down: 0.0,
            min_m: *ms.start(),
            modes: Vec::new(),
        };
        if kind != 2 {
            return b;
        }
        let p = f64::from(hits) / f64::from(pool);
        let q = f64::from(pool - hits) / f64::from(pool);
        (b.up, b.down) = (p / q, q / p);
        let (ln_p, ln_q) = (p.ln(), q.ln());
        b.modes = ms
            .map(|m| {
                let mode = ((f64::from(m + 1) * p).floor() as u32).min(m);
                let (k, mf) = (mode as usize, m as usize);
                let ln_pmf = ln_fact[mf] - ln_fact[k] - ln_fact[mf - k]
                    + f64::from(mode) * ln_p
                    + f64::from(m - mode) * ln_q;
                (mode, ln_pmf.exp())
            })
            .collect();
        b
    }

    /// `recip[j]` = 1 / j up to m + 1.
    #[inline]
    fn sample<R: RngCore>(&self, m: u32, s: &mut IndexSampler<'_, R>, recip: &[f64]) -> u32 {
        match self.kind {
            0 => return 0,
            1 => return m,
            _ if m == 0 => return 0,
            _ => {}
        }
        let (mode, p_mode) = self.modes[(m - self.min_m) as usize];
        let mut u = s.unit() - p_mode;
        if u < 0.0 {
            return mode;
        }
        let (mut lo, mut p_lo, mut hi, mut p_hi) = (mode, p_mode, mode, p_mode);
        loop {
            let mut moved = false;
            if hi < m {
                p_hi *= f64::from(m - hi) * recip[(hi + 1) as usize] * self.up;
                hi += 1;
                u -= p_hi;
                if u < 0.0 {
                    return hi;
                }
                moved = true;
            }
            if lo > 0 {
                p_lo *= f64::from(lo) * recip[(m - lo + 1) as usize] * self.down;
                lo -= 1;
                u -= p_lo;
                if u < 0.0 {
                    return lo;
                }
                moved = true;
            }
            if !moved {
                // u within rounding of 1: the probabilities summed short of it.
                return mode;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64;

    /// Every outcome's frequency over many draws against the binomial pmf.
    #[test]
    fn binomial_draws_follow_the_pmf() {
        let mut rng = Pcg64::seed_from_u64(3);
        let mut s = IndexSampler::new(&mut rng);
        for (hits, pool, m) in [
            (1, 3, 5),
            (2, 5, 12),
            (9, 10, 7),
            (30, 300, 270),
            (4, 9, 9),
            (135, 300, 300),
        ] {
            let ln_fact = ln_factorials(m.max(pool));
            let recip: Vec<f64> = (0..m + 2).map(|j| 1.0 / f64::from(j.max(1))).collect();
            let b = Binomials::new(hits, pool, 0..=m, &ln_fact);
            let fixed = (m == pool).then(|| Fixed::new(hits, m, &ln_fact));
            let p = f64::from(hits) / f64::from(pool);
            let draws = 200_000;
            let mut seen = vec![0u32; m as usize + 1];
            for _ in 0..draws {
                seen[b.sample(m, &mut s, &recip) as usize] += 1;
            }
            let mut fixed_seen = vec![0u32; m as usize + 1];
            if let Some(f) = &fixed {
                for _ in 0..draws {
                    fixed_seen[f.sample(&mut s) as usize] += 1;
                }
            }
            let mut pmf = (1.0 - p).powi(m as i32);
            for (k, &c) in seen.iter().enumerate() {
                let share = f64::from(c) / f64::from(draws);
                // 5 standard errors of a share, plus a floor for tiny ones.
                let tol = 5.0 * (pmf * (1.0 - pmf) / f64::from(draws)).sqrt() + 1e-4;
                assert!(
                    (share - pmf).abs() <= tol,
                    "Bin({m}, {p}) at {k}: {share} vs {pmf}"
                );
                if fixed.is_some() {
                    let share = f64::from(fixed_seen[k]) / f64::from(draws);
                    assert!((share - pmf).abs() <= tol, "fixed Bin({m}, {p}) at {k}");
                }
                let k = k as f64;
                pmf *= (f64::from(m) - k) / (k + 1.0) * p / (1.0 - p);
            }
        }
    }

    #[test]
    fn certain_outcomes_draw_nothing() {
        let mut r1 = Pcg64::seed_from_u64(1);
        let mut s = IndexSampler::new(&mut r1);
        let ln_fact = ln_factorials(5);
        let recip = [1.0; 8];
        assert_eq!(
            Binomials::new(0, 5, 0..=5, &ln_fact).sample(5, &mut s, &recip),
            0
        );
        assert_eq!(
            Binomials::new(5, 5, 0..=5, &ln_fact).sample(4, &mut s, &recip),
            4
        );
        assert_eq!(
            Binomials::new(2, 5, 0..=5, &ln_fact).sample(0, &mut s, &recip),
            0
        );
        assert_eq!(Fixed::new(0, 5, &ln_fact).sample(&mut s), 0);
        assert_eq!(Fixed::new(5, 5, &ln_fact).sample(&mut s), 5);
        let mut r2 = Pcg64::seed_from_u64(1);
        assert_eq!(s.below(1000), IndexSampler::new(&mut r2).below(1000));
    }

    #[test]
    fn default_window_is_central_or_everything() {
        assert_eq!(default_window(10), (0, 10));
        assert_eq!(default_window(64), (0, 64));
        assert_eq!(default_window(100), (18, 82));
        assert_eq!(default_window(60_000), (27_000, 33_000));
    }
}
