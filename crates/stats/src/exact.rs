//! The percentile bootstrap of a median without resampling: the bootstrap
//! distribution of the median of n i.i.d. draws from a sample is known in
//! closed form (Maritz & Jarrett 1978; Efron 1982, sec. 10), so the
//! interval a Monte-Carlo bootstrap only approaches as its resamples grow is
//! computed directly, with no random numbers and no resample count.
//!
//! Let v_1 < ... < v_m be the distinct values, C_j how many observations are
//! <= v_j, p_j = C_j / n, and N_j the number of the n draws <= v_j, so
//! N_j ~ Binomial(n, p_j).
//!
//! - Odd n, k = (n + 1) / 2: the resample median is X*_(k), and
//!   X*_(k) <= v_j iff N_j >= k, so P(median = v_j) = T_j - T_{j-1} with
//!   T_j = P(Bin(n, p_j) >= k). Ties are one atom.
//! - Even n, h = n / 2: the median is (L + U) / 2 with L = X*_(h),
//!   U = X*_(h+1). L = v_i and U = v_j > v_i happen together iff exactly h
//!   draws are <= v_i, at least one of them equal to v_i, none lies
//!   strictly between v_i and v_j, and at least one equals v_j; that is
//!   C(n, h) (p_i^h - p_{i-1}^h) ((1 - p_{j-1})^h - (1 - p_j)^h), a product
//!   of a factor of i and one of j. P(L = v_i) = T_i - T_{i-1} (with k = h),
//!   and P(L = U = v_i) is that minus the sum over j > i, which is
//!   C(n, h) (p_i^h - p_{i-1}^h) (1 - p_i)^h.
//!
//! Numerics (n up to millions without overflow): binomial probabilities by
//! Loader's saddle-point form (Loader 2000, "Fast and accurate computation
//! of binomial probabilities", as in R's `dbinom`), relative error ~1e-14;
//! tails by summing the terms from the starting one away from the mean
//! (they shrink geometrically) until they no longer change the sum;
//! differences of tails taken on the side below 1/2, so neither overflows
//! nor cancels; powers as exp(h ln_1p(..)) and expm1. For even n the pairs
//! (i, j) whose joint mass is below 1e-300, or whose remaining mass for a
//! given i is below 1e-20 of it, are skipped, and so are the distinct
//! values whose tails are within 1e-21 of 0 or 1 (found by binary search,
//! the tails rising with the value): in total less than 1e-14, far below
//! the quantile rule's tolerance, and a pooled cell of tens of thousands
//! of distinct values costs a few thousand tails instead of one each.
//!
//! Two quantiles: the interval needs only the distribution's 2.5 % and
//! 97.5 % points, and for even n the distribution function has a closed
//! form per lower value: the pairs (v_i, v_j) with j <= J carry
//! split_i (1 - ((1 - p_J) / (1 - p_i))^h) together, the terms of j
//! telescoping. [`exact_median`] therefore finds each end by a binary
//! search over the distinct values and lists only the atoms between the
//! two values it lands on (`Even`), instead of the dozens of pair atoms of
//! every live value and a sort of all of them; the ends are the same
//! (a test compares them on tied, distinct and dithered data).
//! [`median_distribution`] still lists every atom.
//!
//! The interval is read from that distribution by [`atom_quantile`]: the
//! inverse distribution function, which is what numpy's linear-interpolated
//! quantile of B resampled medians converges to as B grows, except at a
//! quantile level that falls exactly on the boundary between two atoms
//! (within [`BOUNDARY_TOLERANCE`]), where the Monte-Carlo value keeps
//! jumping between the two atoms and the midpoint, its limiting mean, is
//! taken.

use super::bootstrap::{Interval, MedianEstimate};
use super::quantile::mid;
use super::{to_finite_vec, StatsError, Value};

/// One value of the bootstrap distribution and its probability.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Atom {
    pub value: f64,
    pub probability: f64,
}

/// How close the cumulative probability must come to a quantile level to
/// count as falling on it: far below anything a Monte-Carlo bootstrap of any
/// practical size could resolve, far above the computation's rounding.
pub const BOUNDARY_TOLERANCE: f64 = 1e-9;

/// The sample median of `data` and the exact percentile bootstrap interval
/// of the median at `confidence` (module doc); what `bootstrap_median`
/// converges to with infinitely many resamples.
pub fn exact_median<T: Value>(data: &[T], confidence: f64) -> Result<MedianEstimate, StatsError> {
    if !(confidence > 0.0 && confidence < 1.0) {
        return Err(StatsError::BadConfidence(confidence));
    }
    let mut sorted = to_finite_vec(data)?;
    sorted.sort_unstable_by(f64::total_cmp);
    let n = sorted.len();
    let (lo_q, hi_q) = ((1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0);
    let (median, ci) = if n % 2 == 1 {
        let atoms = distribution_sorted(&sorted);
        let ci = Interval {
            lo: atom_quantile(&atoms, lo_q),
            hi: atom_quantile(&atoms, hi_q),
        };
        (sorted[n / 2], ci)
    } else {
        let d = Even::new(&sorted);
        let ci = Interval {
            lo: d.quantile(lo_q),
            hi: d.quantile(hi_q),
        };
        (mid(sorted[n / 2 - 1], sorted[n / 2]), ci)
    };
    Ok(MedianEstimate { median, ci })
}

/// The bootstrap distribution of the median of `data`: its atoms ascending
/// by value, each with positive probability, the probabilities summing to 1
/// (within 1e-12).
pub fn median_distribution<T: Value>(data: &[T]) -> Result<Vec<Atom>, StatsError> {
    let mut sorted = to_finite_vec(data)?;
    sorted.sort_unstable_by(f64::total_cmp);
    Ok(distribution_sorted(&sorted))
}

/// The mean and variance of the bootstrap distribution of the median of
/// `data`: the same atoms as [`median_distribution`], summed as they are
/// made instead of listed and sorted. A ratio's interval needs only these
/// two moments, once per arm per fork, and listing the even-n pair atoms
/// (dozens per live value) and sorting them was most of an analysis's time.
/// For even n the pair masses of a lower value v_i fall geometrically with
/// v_j, each step by ((1 - p_j) / (1 - p_{j-1}))^h, a factor of j alone, so
/// the pairs of every lower value are summed by one recurrence over the
/// values: linear in the values instead of in the pairs.
pub fn median_moments<T: Value>(data: &[T]) -> Result<(f64, f64), StatsError> {
    let mut sorted = to_finite_vec(data)?;
    sorted.sort_unstable_by(f64::total_cmp);
    let l = Lower::new(&sorted);
    // Sums of p, p x and p x^2, centred on the sample median so that the
    // variance does not cancel (E[x^2] - E[x]^2 of values far from 0).
    let centre = sorted[sorted.len() / 2];
    let (mut p0, mut p1, mut p2) = (0.0, 0.0, 0.0);
    if l.n % 2 == 1 {
        for i in l.live() {
            let (x, p) = (l.values[i] - centre, l.masses.lower[i]);
            p0 += p;
            p1 += p * x;
            p2 += p * x * x;
        }
    } else {
        // Per live i the pairs (v_i, v_j), j > i, weigh split_i R_ij
        // (1 - q_j), with q_j = ((1 - p_j) / (1 - p_{j-1}))^h and R_ij the
        // product of q_k for i < k < j. So T_i = sum_j R_ij (1 - q_j) x_j^k
        // (x = v - centre) obeys T_i = (1 - q_{i+1}) x_{i+1}^k + q_{i+1}
        // T_{i+1}, summed once from the top. Past the live window every q
        // is below e^-1/2 (h draws, half of n, above a value above the
        // median), so 80 values above it leave out less than e^-40.
        let (first, last) = (*l.live().start(), *l.live().end());
        let top = (last + 80).min(l.values.len() - 1);
        let mut t = [0.0f64; 3];
        let mut below = vec![[0.0f64; 3]; last + 1 - first];
        for j in (first + 1..=top).rev() {
            let q = l.ln_left(j - 1, j).exp();
            let x = l.values[j] - centre;
            t = [
                (1.0 - q) + q * t[0],
                (1.0 - q) * x + q * t[1],
                (1.0 - q) * x * x + q * t[2],
            ];
            if j - 1 <= last {
                below[j - 1 - first] = t;
            }
        }
        for (k, i) in l.live().enumerate() {
            let x = l.values[i] - centre;
            let (tie, split) = (l.masses.tie[k], l.masses.split[k]);
            let [t0, t1, t2] = below[k];
            p0 += tie + split * t0;
            p1 += tie * x + split * (x / 2.0 * t0 + t1 / 2.0);
            p2 += tie * x * x + split * (x * x / 4.0 * t0 + x / 2.0 * t1 + t2 / 4.0);
        }
    }
    let mean = p1 / p0;
    Ok((centre + mean, (p2 / p0 - mean * mean).max(0.0)))
}

/// The q-quantile of a discrete distribution given by ascending atoms: the
/// smallest value whose cumulative probability reaches q; if that
/// cumulative probability equals q (within [`BOUNDARY_TOLERANCE`]), the
/// midpoint between that value and the next one that carries probability
/// beyond q (module doc).
pub fn atom_quantile(atoms: &[Atom], q: f64) -> f64 {
    let mut cum = 0.0;
    for (k, a) in atoms.iter().enumerate() {
        cum += a.probability;
        if cum >= q - BOUNDARY_TOLERANCE {
            if cum <= q + BOUNDARY_TOLERANCE {
                let mut beyond = cum;
                for b in &atoms[k + 1..] {
                    beyond += b.probability;
                    if beyond > q + BOUNDARY_TOLERANCE {
                        return mid(a.value, b.value);
                    }
                }
            }
            return a.value;
        }
    }
    atoms.last().map_or(f64::NAN, |a| a.value)
}

/// Distinct values ascending with C_j (module doc), from ascending data.
fn distinct(sorted: &[f64]) -> (Vec<f64>, Vec<u64>) {
    let (mut values, mut cum) = (Vec::new(), Vec::new());
    for (i, &x) in sorted.iter().enumerate() {
        if values.last() == Some(&x) {
            *cum.last_mut().expect("pushed with the value") = i as u64 + 1;
        } else {
            values.push(x);
            cum.push(i as u64 + 1);
        }
    }
    (values, cum)
}

fn distribution_sorted(sorted: &[f64]) -> Vec<Atom> {
    distribution_of(&Lower::new(sorted))
}

fn distribution_of(l: &Lower) -> Vec<Atom> {
    let mut atoms: Vec<Atom> = if l.n % 2 == 1 {
        l.values[l.live()]
            .iter()
            .zip(&l.masses.lower[l.live()])
            .map(|(&value, &probability)| Atom { value, probability })
            .collect()
    } else {
        even_atoms(l)
    };
    atoms.retain(|a| a.probability > 0.0);
    atoms
}

/// The distinct values, their C_j, the live window and P(L = v_j) on it
/// (the median itself for odd n): what both parities start from.
struct Lower {
    n: u64,
    values: Vec<f64>,
    cum: Vec<u64>,
    /// What the distribution owes to the counts alone, the live window
    /// among it.
    masses: std::sync::Arc<Masses>,
}

/// The part of a sample's median distribution that depends on its counts
/// C_j alone, not on its values: which distinct values are live, P(L = v_j)
/// and, for even n, each live value's split and tie.
struct Masses {
    first: usize,
    last: usize,
    /// P(L = v_j) at j in first..=last, 0 elsewhere.
    lower: Vec<f64>,
    /// For even n, per live i (from `first`): P(L = U = v_i) and split_i
    /// (see `Even`); empty for odd n.
    tie: Vec<f64>,
    split: Vec<f64>,
}

/// Up to this many values, the masses of a sample without ties are kept
/// for the next sample of the same size (see [`shared_masses`]).
const SHARED_MAX: u64 = 1 << 16;

impl Lower {
    fn new(sorted: &[f64]) -> Lower {
        let n = sorted.len() as u64;
        let (values, cum) = distinct(sorted);
        let masses = if values.len() as u64 == n && n <= SHARED_MAX {
            shared_masses(n, &cum)
        } else {
            std::sync::Arc::new(Masses::new(n, &cum))
        };
        Lower {
            n,
            values,
            cum,
            masses,
        }
    }

    /// The live window: the distinct values whose P(L = v_j) counts.
    fn live(&self) -> std::ops::RangeInclusive<usize> {
        self.masses.first..=self.masses.last
    }

    /// For even n and a <= b: h ln((1 - p_b) / (1 - p_a)), the log of the
    /// chance that h draws, all above v_a, are all above v_b too. Every
    /// power of the even-n atoms is one of these (module doc).
    fn ln_left(&self, a: usize, b: usize) -> f64 {
        let h = (self.n / 2) as f64;
        let rest = self.n as f64 - self.cum[a] as f64;
        h * (-((self.cum[b] - self.cum[a]) as f64) / rest).ln_1p()
    }

    /// For even n and a <= b: 1 - exp([`Self::ln_left`]`(a, b)`), the
    /// share of h draws above v_a that are not all above v_b. Most pairs
    /// a distribution function sums are far apart, and there the power is
    /// below e^-40 < 2^-57, so 1 minus it is 1 in f64 (what `exp_m1`
    /// returns): 1 without a logarithm. ln(1 - r) <= -r, so h r > 41
    /// (room for rounding) means ln_left < -40.
    fn gone(&self, a: usize, b: usize) -> f64 {
        let h = (self.n / 2) as f64;
        let rest = self.n as f64 - self.cum[a] as f64;
        if h * ((self.cum[b] - self.cum[a]) as f64 / rest) > 41.0 {
            return 1.0;
        }
        -self.ln_left(a, b).exp_m1()
    }

    /// For even n and j > i: ((1 - p_{j-1}) / (1 - p_i))^h, the mass of
    /// L = v_i (given exactly h draws <= v_i) left for U >= v_j.
    fn remaining(&self, i: usize, j: usize) -> f64 {
        self.ln_left(i, j - 1).exp()
    }

    /// For even n and j > 0: 1 - ((1 - p_j) / (1 - p_{j-1}))^h, the share
    /// of the mass left for U >= v_j that has U = v_j.
    fn some_at(&self, j: usize) -> f64 {
        -self.ln_left(j - 1, j).exp_m1()
    }
}

impl Masses {
    fn new(n: u64, cum: &[u64]) -> Masses {
        let k = if n % 2 == 1 { n.div_ceil(2) } else { n / 2 };
        // Only the distinct values whose tails are not yet 0 or 1 to within
        // NEGLIGIBLE carry mass (module doc, "Numerics"); T_j rises with j, so
        // two binary searches find them. A pooled cell of 60,000 distinct
        // (dithered) values keeps a few thousand.
        let ratios = Ratios::new(n, k);
        let (first, last) = live(&ratios, cum);
        // P(L = v_j) (the median itself for odd n), from the tails at C_j.
        let mut below = match first {
            0 => Tail::ZERO,
            j => tail_with(&ratios, cum[j - 1]),
        };
        let mut lower = vec![0.0; cum.len()];
        for j in first..=last {
            let t = tail_with(&ratios, cum[j]);
            let p = if below.upper >= 0.5 {
                below.lower - t.lower
            } else {
                t.upper - below.upper
            };
            below = t;
            lower[j] = p.max(0.0);
        }
        let (mut tie, mut split) = (Vec::new(), Vec::new());
        if n.is_multiple_of(2) {
            for (i, &p) in (first..).zip(&lower[first..=last]) {
                let s = split_at(n, cum, i);
                tie.push((p - s).max(0.0));
                split.push(s);
            }
        }
        Masses {
            first,
            last,
            lower,
            tie,
            split,
        }
    }
}

/// The masses of a sample of `n` distinct values (`cum` = 1..=n), made
/// once per size and shared: every fork of a run has the same number of
/// pairs, and its dithered values are distinct, so hundreds of forks'
/// intervals share one set of masses and differ only in their values.
/// The masses are computed as [`Masses::new`] computes them for any
/// sample, so sharing them changes no bit of any interval.
fn shared_masses(n: u64, cum: &[u64]) -> std::sync::Arc<Masses> {
    use std::sync::{Arc, Mutex};
    /// The last few sizes asked for (a run has a size or two per cell).
    static SHARED: Mutex<Vec<(u64, Arc<Masses>)>> = Mutex::new(Vec::new());
    const KEEP: usize = 8;
    let found = SHARED
        .lock()
        .ok()
        .and_then(|cache| cache.iter().find(|(m, _)| *m == n).map(|(_, a)| a.clone()));
    if let Some(masses) = found {
        return masses;
    }
    let masses = Arc::new(Masses::new(n, cum));
    if let Ok(mut cache) = SHARED.lock() {
        if !cache.iter().any(|(m, _)| *m == n) {
            if cache.len() == KEEP {
                cache.remove(0);
            }
            cache.push((n, masses.clone()));
        }
    }
    masses
}

/// For even n, from n and the counts: P(exactly h draws <= v_i, at least
/// one of them = v_i), the part of P(L = v_i) with U > v_i (module doc);
/// the rest of P(L = v_i) has U = v_i.
fn split_at(n: u64, cum: &[u64], i: usize) -> f64 {
    let nf = n as f64;
    let h = (n / 2) as f64;
    let ci = cum[i] as f64;
    let c_prev = if i == 0 { 0.0 } else { cum[i - 1] as f64 };
    let at_least_one = -(h * (-(ci - c_prev) / ci).ln_1p()).exp_m1();
    dbinom(n / 2, n, ci / nf, (nf - ci) / nf) * at_least_one
}

/// Below this, a tail counts as 0 (and above 1 - this, as 1): summed over
/// every distinct value left out, less than 1e-15 of probability for a
/// million values, far below [`BOUNDARY_TOLERANCE`].
const NEGLIGIBLE: f64 = 1e-21;

/// The first and last distinct value j with P(L = v_j) beyond
/// [`NEGLIGIBLE`]: the first j whose upper tail T_j reaches it, and the
/// first j whose lower tail 1 - T_j falls below it (T_j rises with j).
fn live(ratios: &Ratios, cum: &[u64]) -> (usize, usize) {
    let end = cum.len() - 1;
    let first = cum
        .partition_point(|&c| tail_with(ratios, c).upper < NEGLIGIBLE)
        .min(end);
    let last = cum
        .partition_point(|&c| tail_with(ratios, c).lower >= NEGLIGIBLE)
        .clamp(first, end);
    (first, last)
}

/// The atoms of (L + U) / 2 for even n (module doc), merged by value.
fn even_atoms(l: &Lower) -> Vec<Atom> {
    let mut atoms = Vec::with_capacity(l.values.len() * 2);
    for (k, i) in l.live().enumerate() {
        let split = l.masses.split[k];
        atoms.push(Atom {
            value: l.values[i],
            probability: l.masses.tie[k],
        });
        if split < 1e-300 {
            continue;
        }
        for j in i + 1..l.values.len() {
            let remaining = l.remaining(i, j);
            if remaining < 1e-20 || split * remaining < 1e-300 {
                break;
            }
            atoms.push(Atom {
                value: mid(l.values[i], l.values[j]),
                probability: split * remaining * l.some_at(j),
            });
        }
    }
    atoms.sort_by(|a, b| a.value.total_cmp(&b.value));
    let mut merged: Vec<Atom> = Vec::with_capacity(atoms.len());
    for a in atoms {
        match merged.last_mut() {
            Some(last) if last.value == a.value => last.probability += a.probability,
            _ => merged.push(a),
        }
    }
    merged
}

/// The bootstrap distribution of the median for even n, read through its
/// distribution function instead of its atoms (module doc, "Two
/// quantiles"): F(x) sums, per live i with v_i <= x, P(L = U = v_i) and the
/// pairs (v_i, v_j) with mid <= x, whose masses telescope to
/// split_i (1 - ((1 - p_J) / (1 - p_i))^h) for the largest such J.
struct Even {
    l: Lower,
}

impl Even {
    fn new(sorted: &[f64]) -> Even {
        Even {
            l: Lower::new(sorted),
        }
    }

    /// P(median <= x).
    fn cdf(&self, x: f64) -> f64 {
        let v = &self.l.values;
        let mut total = 0.0;
        // One past the last u with mid(v_i, u) <= x. The midpoint rises
        // with v_i, so this end never rises with i: it is walked down once
        // per call instead of searched for per i.
        let mut end = v.len();
        for (k, i) in self.l.live().enumerate() {
            if v[i] > x {
                break;
            }
            total += self.l.masses.tie[k];
            let s = self.l.masses.split[k];
            end = end.max(i + 1);
            while end > i + 1 && mid(v[i], v[end - 1]) > x {
                end -= 1;
            }
            let above = end - (i + 1);
            if above > 0 && s > 0.0 {
                // 1 - ((1 - p_J) / (1 - p_i))^h, J = i + above.
                total += s * self.l.gone(i, i + above);
            }
        }
        total
    }

    /// The smallest atom value x with `reaches(F(x))`, for `reaches`
    /// monotone in F; None if even F at the largest value does not.
    ///
    /// First a binary search over the distinct values finds the first v_j
    /// that reaches; then the atoms in (v_{j-1}, v_j] (the tie at v_j and the
    /// pairs whose midpoint falls there) are listed, sorted and walked from
    /// F(v_{j-1}). A bracket holds about two pairs per live i, where the
    /// full distribution holds dozens.
    fn first_reaching(&self, reaches: impl Fn(f64) -> bool) -> Option<f64> {
        let v = &self.l.values;
        // F is 0 below the first live value: the search starts there
        // unless 0 already reaches.
        let start = if reaches(0.0) { 0 } else { self.l.masses.first };
        // median = (L + U) / 2 >= L, so F(x) <= P(L <= x): the first value
        // where L's distribution function (cheap: the sum of `lower`)
        // reaches is where the search starts. Any start gives the same
        // answer; this one saves most of the evaluations of F.
        let mut hint = start;
        let mut lower = 0.0;
        for j in self.l.live() {
            lower += self.l.masses.lower[j];
            if reaches(lower) {
                hint = j.max(start);
                break;
            }
        }
        let j = first_true(start, v.len(), hint, |j| reaches(self.cdf(v[j])));
        if j == v.len() {
            return None;
        }
        let (floor, mut base) = match j {
            0 => (f64::NEG_INFINITY, 0.0),
            _ => (v[j - 1], self.cdf(v[j - 1])),
        };
        let top = v[j];
        let mut atoms: Vec<Atom> = Vec::new();
        for (k, i) in self.l.live().enumerate() {
            if v[i] > top {
                break;
            }
            if i == j {
                atoms.push(Atom {
                    value: v[i],
                    probability: self.l.masses.tie[k],
                });
            }
            let s = self.l.masses.split[k];
            if s == 0.0 {
                continue;
            }
            let rest = &v[i + 1..];
            let from = i + 1 + rest.partition_point(|&u| mid(v[i], u) <= floor);
            let to = i + 1 + rest.partition_point(|&u| mid(v[i], u) <= top);
            for jj in from..to {
                atoms.push(Atom {
                    value: mid(v[i], v[jj]),
                    probability: s * self.l.remaining(i, jj) * self.l.some_at(jj),
                });
            }
        }
        atoms.sort_unstable_by(|a, b| a.value.total_cmp(&b.value));
        let mut at = 0;
        while at < atoms.len() {
            let value = atoms[at].value;
            while at < atoms.len() && atoms[at].value == value {
                base += atoms[at].probability;
                at += 1;
            }
            if reaches(base) {
                return Some(value);
            }
        }
        // F(top) reaches, so the walk does too but for rounding: top.
        Some(top)
    }

    /// [`atom_quantile`] of this distribution.
    fn quantile(&self, q: f64) -> f64 {
        let Some(a) = self.first_reaching(|c| c >= q - BOUNDARY_TOLERANCE) else {
            return *self.l.values.last().expect("non-empty");
        };
        if self.cdf(a) <= q + BOUNDARY_TOLERANCE {
            if let Some(b) = self.first_reaching(|c| c > q + BOUNDARY_TOLERANCE) {
                return mid(a, b);
            }
        }
        a
    }
}

/// The first index in `from..len` where `pred` holds (`len` if none), for
/// a `pred` that is false and then true along the range: what a binary
/// search over the range returns, found by galloping from `hint` (in
/// `from..len`), which costs about 2 log2 of the distance instead of
/// log2 of the range.
fn first_true(from: usize, len: usize, hint: usize, pred: impl Fn(usize) -> bool) -> usize {
    let hint = hint.clamp(from, len.saturating_sub(1).max(from));
    if hint >= len {
        return len;
    }
    // Every index below `lo` is false; `hi` is true or `len`.
    let (mut lo, mut hi) = if pred(hint) {
        (from, hint)
    } else {
        let (mut lo, mut step) = (hint + 1, 1);
        loop {
            let probe = lo + step - 1;
            if probe >= len {
                break (lo, len);
            }
            if pred(probe) {
                break (lo, probe);
            }
            lo = probe + 1;
            step *= 2;
        }
    };
    while lo < hi {
        let m = lo + (hi - lo) / 2;
        if pred(m) {
            hi = m;
        } else {
            lo = m + 1;
        }
    }
    lo
}

/// P(X >= k) and P(X < k) of a binomial, each accurate on its own.
#[derive(Debug, Clone, Copy)]
struct Tail {
    upper: f64,
    lower: f64,
}

impl Tail {
    const ZERO: Tail = Tail {
        upper: 0.0,
        lower: 1.0,
    };
}

/// The neighbour ratios of binomial terms, (n - x) / (x + 1) for x >= k and
/// x / (n - x + 1) for x < k, near k: what every tail at k multiplies by,
/// whatever c is. A distribution of the median sums hundreds of tails of
/// one n and k, so the divisions are made once. Only the first [`Ratios::new`]
/// of each side are kept (a tail that reaches further divides, with the
/// same result), so a million values cost no million-entry table.
struct Ratios {
    n: u64,
    k: u64,
    /// At x = k + i.
    up: Vec<f64>,
    /// At x = k - 1 - i.
    down: Vec<f64>,
}

impl Ratios {
    fn new(n: u64, k: u64) -> Ratios {
        // Tails sum until the terms fall 1e-20 below their sum, about ten
        // standard deviations (at most sqrt(n) / 2) from k.
        let width = 64 + 6 * (n as f64).sqrt() as u64;
        let up = (k..=n.min(k + width)).map(|x| up_ratio(n, x)).collect();
        let down = (k.saturating_sub(width)..k)
            .rev()
            .map(|x| down_ratio(n, x))
            .collect();
        Ratios { n, k, up, down }
    }

    /// [`up_ratio`] at x >= k, from the table where it reaches.
    #[inline]
    fn up(&self, x: u64) -> f64 {
        match self.up.get((x - self.k) as usize) {
            Some(&r) => r,
            None => up_ratio(self.n, x),
        }
    }

    /// [`down_ratio`] at x < k, from the table where it reaches.
    #[inline]
    fn down(&self, x: u64) -> f64 {
        match self.down.get((self.k - 1 - x) as usize) {
            Some(&r) => r,
            None => down_ratio(self.n, x),
        }
    }
}

/// P(X = x + 1) / P(X = x) of Bin(n, p) without p / q: (n - x) / (x + 1).
/// One expression for the table and past it, so both give the same bits.
#[inline]
fn up_ratio(n: u64, x: u64) -> f64 {
    (n as f64 - x as f64) / (x as f64 + 1.0)
}

/// P(X = x - 1) / P(X = x) of Bin(n, p) without q / p: x / (n - x + 1).
#[inline]
fn down_ratio(n: u64, x: u64) -> f64 {
    x as f64 / (n as f64 - x as f64 + 1.0)
}

/// The tails at k of Binomial(n, c / n) (1 <= c <= n): the smaller side is
/// summed term by term from k outwards, the other is 1 minus it.
#[cfg(test)]
fn tail(n: u64, k: u64, c: u64) -> Tail {
    tail_with(&Ratios::new(n, k), c)
}

/// [`tail`] at the n and k of `ratios`.
fn tail_with(ratios: &Ratios, c: u64) -> Tail {
    let (n, k) = (ratios.n, ratios.k);
    if k == 0 {
        return Tail {
            upper: 1.0,
            lower: 0.0,
        };
    }
    let (nf, cf) = (n as f64, c as f64);
    let (p, q) = (cf / nf, (nf - cf) / nf);
    let sum = |mut x: u64, up: bool| {
        let mut term = dbinom(x, n, p, q);
        let mut s = 0.0;
        loop {
            s += term;
            if up {
                if x == n {
                    break;
                }
                term *= ratios.up(x) * (p / q);
                x += 1;
            } else {
                if x == 0 {
                    break;
                }
                term *= ratios.down(x) * (q / p);
                x -= 1;
            }
            if term <= s * 1e-20 || term == 0.0 {
                break;
            }
        }
        s.min(1.0)
    };
    if k as f64 > cf {
        // k is above the mean np = c: the upper tail is the small side.
        let upper = sum(k, true);
        Tail {
            upper,
            lower: 1.0 - upper,
        }
    } else {
        let lower = sum(k - 1, false);
        Tail {
            upper: 1.0 - lower,
            lower,
        }
    }
}

const LN_2PI: f64 = 1.837_877_066_409_345_5;

/// P(X = x) for X ~ Binomial(n, p), q = 1 - p given separately so that a p
/// near 1 keeps its precision (Loader 2000, R's `dbinom_raw`).
fn dbinom(x: u64, n: u64, p: f64, q: f64) -> f64 {
    if p == 0.0 {
        return if x == 0 { 1.0 } else { 0.0 };
    }
    if q == 0.0 {
        return if x == n { 1.0 } else { 0.0 };
    }
    let (xf, nf) = (x as f64, n as f64);
    if x == 0 {
        if n == 0 {
            return 1.0;
        }
        let lc = if p < 0.1 {
            -bd0(nf, nf * q) - nf * p
        } else {
            nf * q.ln()
        };
        return lc.exp();
    }
    if x == n {
        let lc = if q < 0.1 {
            -bd0(nf, nf * p) - nf * q
        } else {
            nf * p.ln()
        };
        return lc.exp();
    }
    let lc =
        stirlerr(nf) - stirlerr(xf) - stirlerr(nf - xf) - bd0(xf, nf * p) - bd0(nf - xf, nf * q);
    let lf = LN_2PI + xf.ln() + (-xf / nf).ln_1p();
    (lc - 0.5 * lf).exp()
}

/// ln(n!) - ln(sqrt(2 pi n) (n / e)^n) for a positive integer n: directly
/// for small n, else the Stirling series (as R's `stirlerr`).
fn stirlerr(n: f64) -> f64 {
    if n <= 15.0 {
        let ln_fact: f64 = (2..=n as u64).map(|i| (i as f64).ln()).sum();
        return ln_fact - (n + 0.5) * n.ln() + n - 0.5 * LN_2PI;
    }
    const S0: f64 = 1.0 / 12.0;
    const S1: f64 = 1.0 / 360.0;
    const S2: f64 = 1.0 / 1260.0;
    const S3: f64 = 1.0 / 1680.0;
    const S4: f64 = 1.0 / 1188.0;
    let nn = n * n;
    if n > 500.0 {
        (S0 - S1 / nn) / n
    } else if n > 80.0 {
        (S0 - (S1 - S2 / nn) / nn) / n
    } else if n > 35.0 {
        (S0 - (S1 - (S2 - S3 / nn) / nn) / nn) / n
    } else {
        (S0 - (S1 - (S2 - (S3 - S4 / nn) / nn) / nn) / nn) / n
    }
}

/// x ln(x / m) + m - x, without cancellation when x is near m (Loader 2000).
fn bd0(x: f64, m: f64) -> f64 {
    if (x - m).abs() < 0.1 * (x + m) {
        let mut v = (x - m) / (x + m);
        let mut s = (x - m) * v;
        let mut ej = 2.0 * x * v;
        v *= v;
        for j in 1..1000 {
            ej *= v;
            let s1 = s + ej / f64::from(2 * j + 1);
            if s1 == s {
                return s1;
            }
            s = s1;
        }
        return s;
    }
    x * (x / m).ln() + m - x
}

#[cfg(test)]
mod tests;
