//! Three levels: machines, forks on each machine, pairs in each fork. Used
//! when a merged run's forks ran on more than one host: then the machine is
//! a level of the experiment, and a cell's precision depends on how many
//! machines it saw as much as on how many forks.
//!
//! - [`nested_components`]: variance components of a two-stage nested
//!   random-effects design by the ANOVA method of moments, for unbalanced
//!   data (Searle, Casella & McCulloch 1992, sec. 5.6; Sokal & Rohlf,
//!   "Biometry", nested ANOVA): with a machines, B forks, N pairs,
//!   n_ij pairs in fork j of machine i and n_i. on machine i,
//!   MSA = sum n_i. (mean_i - mean)^2 / (a - 1),
//!   MSB = sum n_ij (mean_ij - mean_i)^2 / (B - a),
//!   MSE = sum (y - mean_ij)^2 / (N - B), and
//!   E[MSE] = s2_e, E[MSB] = s2_e + k1 s2_f, E[MSA] = s2_e + k2 s2_f + k3 s2_m
//!   with k1 = (N - sum_i sum_j n_ij^2 / n_i.) / (B - a),
//!   k2 = (sum_i sum_j n_ij^2 / n_i. - sum_ij n_ij^2 / N) / (a - 1),
//!   k3 = (N - sum_i n_i.^2 / N) / (a - 1); negative estimates clamp to 0.
//! - [`nested_median_components`]: the same split for fork *medians*, as
//!   `variance::median_components` does for two levels: a one-way design
//!   of the fork medians by machine gives the machines' share and, beyond
//!   the medians' own sampling noise (from their bootstrap intervals), the
//!   forks'.
//! - [`nested_half_width`] and [`lever`]: Kalibera & Jones 2013 one level
//!   up. With a machines of k forks of m pairs, Var = s2_m / a +
//!   s2_f / (a k) + s2_e / (a k m): more forks shrink the last two terms
//!   only, so once the machines' term dominates, only more machines narrow
//!   the interval.
//! - [`nested_median`]: percentile bootstrap resampling all three levels
//!   (machines with replacement, then forks inside each chosen machine, then
//!   pairs inside each chosen fork; Ren et al. 2010 recommend resampling
//!   every level), statistic the median of the pooled resample, in chunks
//!   on every core (`resample::par_resamples`, the same output for any
//!   thread count); [`nested_indices`] replays its draws.

use super::bootstrap::{check, percentile_interval, Grouped, MedianEstimate};
use super::resample::{par_resamples, replay};
use super::{normal_quantile, variance_components, StatsError, Value};
use rand::RngCore;

/// Variance of machines, of forks on one machine, and of pairs in one fork.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NestedComponents {
    pub machines: f64,
    pub forks: f64,
    pub within: f64,
}

/// ANOVA estimates (module doc) from machines -> forks -> observations.
/// Needs two machines, a machine with two forks (B > a), more observations
/// than forks, and no empty fork.
pub fn nested_components<T: Value>(machines: &[Vec<&[T]>]) -> Result<NestedComponents, StatsError> {
    let a = machines.len();
    let b: usize = machines.iter().map(Vec::len).sum();
    if a < 2 || b <= a {
        return Err(StatsError::TooFewGroups(2));
    }
    let data: Vec<Vec<Vec<f64>>> = machines
        .iter()
        .map(|m| m.iter().map(|f| super::to_finite_vec(f)).collect())
        .collect::<Result<_, _>>()?;
    let n: f64 = data.iter().flatten().map(|f| f.len() as f64).sum();
    if n <= b as f64 {
        return Err(StatsError::TooFewGroups(2));
    }
    let sum = |v: &[f64]| v.iter().sum::<f64>();
    let grand = data.iter().flatten().map(|f| sum(f)).sum::<f64>() / n;
    let (mut ssa, mut ssb, mut sse) = (0.0, 0.0, 0.0);
    let (mut sum_nij2_over_ni, mut sum_nij2, mut sum_ni2) = (0.0, 0.0, 0.0);
    for m in &data {
        let ni: f64 = m.iter().map(|f| f.len() as f64).sum();
        let mean_i = m.iter().map(|f| sum(f)).sum::<f64>() / ni;
        ssa += ni * (mean_i - grand).powi(2);
        sum_ni2 += ni * ni;
        let nij2: f64 = m.iter().map(|f| (f.len() as f64).powi(2)).sum();
        sum_nij2 += nij2;
        sum_nij2_over_ni += nij2 / ni;
        for f in m {
            let nij = f.len() as f64;
            let mean_ij = sum(f) / nij;
            ssb += nij * (mean_ij - mean_i).powi(2);
            sse += f.iter().map(|y| (y - mean_ij).powi(2)).sum::<f64>();
        }
    }
    let (af, bf) = (a as f64, b as f64);
    let (msa, msb, mse) = (ssa / (af - 1.0), ssb / (bf - af), sse / (n - bf));
    let k1 = (n - sum_nij2_over_ni) / (bf - af);
    let k2 = (sum_nij2_over_ni - sum_nij2 / n) / (af - 1.0);
    let k3 = (n - sum_ni2 / n) / (af - 1.0);
    let forks_raw = (msb - mse) / k1;
    let forks = forks_raw.max(0.0);
    Ok(NestedComponents {
        machines: ((msa - mse - k2 * forks) / k3).max(0.0),
        forks,
        within: mse,
    })
}

/// One fork's median of D, its bootstrap interval and its number of pairs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ForkMedian {
    pub median: f64,
    pub ci: [f64; 2],
    pub pairs: u32,
}

/// Components for the median (module doc): v = ((hi - lo) / 2z)^2 is a
/// fork median's sampling variance; `within` = mean(v n); the fork medians,
/// grouped by machine, give by one-way ANOVA the machines' variance and a
/// residual that holds the forks' variance plus mean(v).
pub fn nested_median_components(
    machines: &[Vec<ForkMedian>],
    confidence: f64,
) -> Result<NestedComponents, StatsError> {
    if !(confidence > 0.0 && confidence < 1.0) {
        return Err(StatsError::BadConfidence(confidence));
    }
    let all: Vec<&ForkMedian> = machines.iter().flatten().collect();
    if all
        .iter()
        .any(|f| !f.median.is_finite() || f.ci.iter().any(|x| !x.is_finite()))
    {
        return Err(StatsError::NotANumber);
    }
    let medians: Vec<Vec<f64>> = machines
        .iter()
        .map(|m| m.iter().map(|f| f.median).collect())
        .collect();
    let groups: Vec<&[f64]> = medians.iter().map(Vec::as_slice).collect();
    // One-way ANOVA of the medians by machine: `between` is the machines'
    // variance, `within` the residual mean square inside a machine.
    let one_way = variance_components(&groups)?;
    let b = all.len() as f64;
    let z = normal_quantile((1.0 + confidence) / 2.0);
    let v: Vec<f64> = all
        .iter()
        .map(|f| ((f.ci[1] - f.ci[0]) / (2.0 * z)).powi(2))
        .collect();
    let mean_v = v.iter().sum::<f64>() / b;
    let within = all
        .iter()
        .zip(&v)
        .map(|(f, v)| v * f64::from(f.pairs))
        .sum::<f64>()
        / b;
    Ok(NestedComponents {
        machines: one_way.between,
        forks: (one_way.within - mean_v).max(0.0),
        within,
    })
}

/// z sqrt(machines / a + forks / (a k) + within / (a k m)): the half-width
/// of the interval of `a` machines of `k` forks (a mean, so a design that
/// ran with unequal forks per machine can be described) of `m` pairs. NaN
/// for a confidence outside (0, 1) or a size that is not positive.
pub fn nested_half_width(c: NestedComponents, confidence: f64, a: f64, k: f64, m: f64) -> f64 {
    if !(confidence > 0.0 && confidence < 1.0) || a <= 0.0 || k <= 0.0 || m <= 0.0 {
        return f64::NAN;
    }
    let z = normal_quantile((1.0 + confidence) / 2.0);
    z * (c.machines / a + c.forks / (a * k) + c.within / (a * k * m)).sqrt()
}

/// What narrows the interval most from a design of `a` machines of `k`
/// forks of `m` pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lever {
    /// The machines' term is the larger part of the variance: more forks
    /// cannot bring the interval below z sqrt(machines / a).
    Machines,
    /// Forks and pairs hold the larger part: more forks on the machines
    /// there are narrow it about as well as more machines would.
    Forks,
}

pub fn lever(c: NestedComponents, a: f64, k: f64, m: f64) -> Lever {
    let machines = c.machines / a;
    let rest = c.forks / (a * k) + c.within / (a * k * m);
    if machines > rest {
        Lever::Machines
    } else {
        Lever::Forks
    }
}

/// Three-level percentile bootstrap of the median of everything pooled
/// (module doc). Per resample and machine slot: one draw below a picks a
/// machine; per slot of its k forks one draw below k picks a fork; then
/// that fork's n pairs are drawn below n.
pub fn nested_median<T: Value, R: RngCore>(
    machines: &[Vec<&[T]>],
    resamples: u32,
    confidence: f64,
    rng: &mut R,
) -> Result<MedianEstimate, StatsError> {
    check(resamples, confidence)?;
    if machines.iter().any(Vec::is_empty) {
        return Err(StatsError::Empty);
    }
    let forks: Vec<&[T]> = machines.iter().flatten().copied().collect();
    let grouped = Grouped::new(&forks)?;
    let mut starts = Vec::with_capacity(machines.len());
    let mut at = 0;
    for m in machines {
        starts.push(at);
        at += m.len();
    }
    let a = machines.len() as u32;
    let sizes: Vec<u32> = machines.iter().map(|m| m.len() as u32).collect();
    let medians = par_resamples(
        rng,
        resamples,
        || grouped.scratch(),
        |s, sc| {
            grouped.start(sc);
            for _ in 0..a {
                let m = s.below(a) as usize;
                let k = sizes[m];
                for _ in 0..k {
                    let f = starts[m] + s.below(k) as usize;
                    grouped.draw(f, s, sc);
                }
            }
            grouped.median(s, sc)
        },
    );
    Ok(MedianEstimate {
        median: grouped.ranked.median(),
        ci: percentile_interval(medians, confidence)?,
    })
}

/// One machine slot of a [`nested_median`] resample: the machine's
/// position, then per fork slot the fork's position in that machine and
/// indices into its sorted values.
pub type MachineSlot = (u32, Vec<(u32, Vec<u32>)>);

/// The draws of [`nested_median`] for machines whose forks have the given
/// sizes, in the same order, so every resample can be recomputed.
pub fn nested_indices<R: RngCore>(
    rng: &mut R,
    sizes: &[Vec<u32>],
    resamples: u32,
) -> Vec<Vec<MachineSlot>> {
    let a = sizes.len() as u32;
    replay(rng, resamples, |s| {
        (0..a)
            .map(|_| {
                let m = s.below(a);
                let forks = &sizes[m as usize];
                let k = forks.len() as u32;
                let chosen = (0..k)
                    .map(|_| {
                        let f = s.below(k);
                        let n = forks[f as usize];
                        (f, (0..n).map(|_| s.below(n)).collect())
                    })
                    .collect();
                (m, chosen)
            })
            .collect()
    })
}

#[cfg(test)]
mod tests;
