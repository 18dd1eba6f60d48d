//! Statistics as small pure functions: nothing here imports the rest of the crate.
//!
//! Every function refuses empty input and NaN with a [`StatsError`] instead of
//! panicking, because a report built on a silently wrong number is worse than
//! one that stops. Randomness comes in as an [`rand::RngCore`] so callers
//! decide (and record) the seed; nothing here reads a clock.
//!
//! Methods and where they are implemented:
//! - [`mod@quantile`]: numpy's default "linear" method (Hyndman & Fan 1996, type 7).
//! - [`exact`]: the percentile bootstrap of one sample's median in closed
//!   form (Maritz & Jarrett 1978; Efron 1982): binomial weights, no resampling.
//! - [`bootstrap`]: percentile bootstrap (Efron & Tibshirani 1993, ch. 13) and a
//!   two-level hierarchical bootstrap (Davison & Hinkley 1997, sec. 3.8;
//!   Ren et al. 2010), also for the shift between two separate runs; the
//!   cluster bootstrap of a two-group contrast over many forks (Field &
//!   Welsh 2007).
//! - [`changepoint`]: PELT (Killick, Fearnhead & Eckley 2012) and the
//!   steady-state classes of Barrett et al. 2017.
//! - [`variance`]: one-way random-effects variance components and the
//!   forks x pairs recommendation of Kalibera & Jones 2013.
//! - [`gate`]: the regression gate's rule (pass / regression / inconclusive),
//!   its false-alarm and power shares, and Clopper & Pearson 1934 bounds.
//! - [`nested`]: machines -> forks -> pairs: nested variance components
//!   (Searle, Casella & McCulloch 1992), a three-level bootstrap, and which
//!   of more machines or more forks narrows an interval most.
//! - [`spending`]: Student's t over the forks, for a fixed number of them
//!   and at every look of a sequential design, its error rate spent over
//!   the looks (Bonferroni; Jennison & Turnbull 2000).
//! - [`sequential`]: Lai's (1976) confidence sequence for a mean, valid
//!   at every look (Wang & Ramdas 2023): how sequential designs stopped
//!   before `spending`, kept to check runs made then.
//! - [`modes`]: whether fork medians fall into two speeds (optimal two-means
//!   split, Ashman's D).
//! - [`ratio`]: the speed ratio, median(treatment) / median(baseline),
//!   per fork with the interval of resampling its pairs together (exact
//!   per-arm spread, the quadrant correlation of two medians, Serfling
//!   1980), combined across forks on the log scale (Student's t).
//! - [`apart`]: two separate runs told apart by their forks (the extreme of
//!   Mann & Whitney 1947, an exact false-alarm rate) and the size of a
//!   change between them (MOVER, Zou & Donner 2008).

pub mod apart;
pub mod bootstrap;
pub mod changepoint;
pub mod correlation;
pub mod distributions;
pub mod exact;
pub mod gate;
pub mod modes;
pub mod nested;
pub mod pool;
pub mod quantile;
pub mod ratio;
pub mod resample;
pub mod sequential;
pub mod spending;
pub mod variance;

pub use bootstrap::{
    bootstrap_median, cluster_indices, cluster_median_diff, hierarchical_median,
    hierarchical_median_diff, hierarchical_median_shift, resamples_whole_forks, Interval,
    MedianEstimate, CLUSTER_MIN_FORKS,
};
pub use changepoint::{steady_state, Class, SteadyState};
pub use correlation::pearson;
pub use distributions::normal_quantile;
pub use exact::{atom_quantile, exact_median, median_distribution, median_moments, Atom};
pub use modes::{two_speeds, TwoSpeeds};
pub use nested::{
    lever, nested_components, nested_half_width, nested_median, nested_median_components,
    ForkMedian, Lever, NestedComponents,
};
pub use quantile::{median, median_sorted, quantile};
pub use resample::{
    hierarchical_indices, hierarchical_two_sample_indices, resample_indices, IndexSampler,
    TwoSampleSlot,
};
pub use variance::{
    median_components, predicted_half_width, recommend, variance_components, Recommendation,
    VarianceComponents,
};

/// Why a statistic could not be computed.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum StatsError {
    #[error("no observations")]
    Empty,
    #[error("an observation is NaN")]
    NotANumber,
    #[error("probability {0} is outside [0, 1]")]
    BadProbability(f64),
    #[error("confidence {0} is outside (0, 1)")]
    BadConfidence(f64),
    #[error("resamples must be at least 1")]
    NoResamples,
    #[error("a sample has more than u32::MAX observations")]
    TooLarge,
    #[error("needs at least {0} groups and more observations than groups")]
    TooFewGroups(usize),
    #[error("the two samples of pairs differ in length")]
    Unpaired,
    #[error("a run time is not positive, so it has no ratio")]
    NotPositive,
}

/// Numbers the statistics accept: integer nanoseconds or floats.
///
/// Everything is computed in f64 so that results match numpy, which converts
/// integer arrays to float64 before averaging the two middle values.
pub trait Value: Copy {
    fn to_f64(self) -> f64;
}

impl Value for f64 {
    fn to_f64(self) -> f64 {
        self
    }
}

impl Value for i64 {
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl Value for u64 {
    fn to_f64(self) -> f64 {
        self as f64
    }
}

/// Refuses a confidence level outside (0, 1).
pub(crate) fn check_confidence(confidence: f64) -> Result<(), StatsError> {
    if confidence > 0.0 && confidence < 1.0 {
        Ok(())
    } else {
        Err(StatsError::BadConfidence(confidence))
    }
}

/// Converts to f64, refusing empty input and NaN.
pub(crate) fn to_finite_vec<T: Value>(data: &[T]) -> Result<Vec<f64>, StatsError> {
    if data.is_empty() {
        return Err(StatsError::Empty);
    }
    if data.len() > u32::MAX as usize {
        return Err(StatsError::TooLarge);
    }
    let v: Vec<f64> = data.iter().map(|x| x.to_f64()).collect();
    if v.iter().any(|x| x.is_nan()) {
        return Err(StatsError::NotANumber);
    }
    Ok(v)
}
