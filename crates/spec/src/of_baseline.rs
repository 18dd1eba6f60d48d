//! A size set against the baseline: a duration, or a percentage of the
//! baseline's median run. The gate's `max_slowdown` and a stop rule's
//! `half_width` are both one, read from the same text ("2%", "50us") by
//! the same rules; only their bounds differ.

use serde::{Deserialize, Serialize};

use super::value_error::ValueError;

/// A duration, or a share of the baseline's median run measured in the
/// same run.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum OfBaseline {
    /// Of the baseline's median run.
    Percent(f64),
    /// A fixed duration in nanoseconds.
    Ns(u64),
}

impl OfBaseline {
    /// The size in ns for a baseline whose median run takes
    /// `baseline_median_ns`.
    pub fn ns_for(&self, baseline_median_ns: f64) -> f64 {
        match *self {
            OfBaseline::Percent(p) => p / 100.0 * baseline_median_ns,
            OfBaseline::Ns(ns) => ns as f64,
        }
    }
}

impl std::fmt::Display for OfBaseline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OfBaseline::Percent(p) => write!(f, "{p}%"),
            // The largest unit that holds it exactly: 50us, 0.5ms stays 500us.
            OfBaseline::Ns(ns) => match [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")]
                .iter()
                .find(|(u, _)| ns % u == 0)
            {
                Some((u, name)) => write!(f, "{}{name}", ns / u),
                None => write!(f, "{ns}ns"),
            },
        }
    }
}

/// Splits `"2.5us"` into (2.5, "us"): a positive finite number, then a
/// unit; `what` (what would be valid) goes into the error.
pub(crate) fn number_and_unit<'a>(
    text: &'a str,
    what: &'static str,
) -> Result<(f64, &'a str), ValueError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = (&t[..split], t[split..].trim());
    let value: f64 = number
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v > 0.0)
        .ok_or(ValueError::NotANumber { what })?;
    if unit.is_empty() {
        return Err(ValueError::NoUnit { what });
    }
    Ok((value, unit))
}

/// `value` of the time `unit` (ns, us or µs, ms, s) in whole ns, at least
/// one; `what` (what would be valid) goes into the error.
pub(crate) fn duration_ns(value: f64, unit: &str, what: &'static str) -> Result<u64, ValueError> {
    let units = [
        ("ns", 1.0),
        ("us", 1e3),
        ("µs", 1e3),
        ("μs", 1e3),
        ("ms", 1e6),
        ("s", 1e9),
    ];
    whole(value, unit, &units, what)
}

/// `value` of `unit` in whole multiples of the first of `units` (each
/// named with its size in that smallest one), at least one; `what` (what
/// would be valid) goes into the error.
pub(crate) fn whole(
    value: f64,
    unit: &str,
    units: &[(&'static str, f64)],
    what: &'static str,
) -> Result<u64, ValueError> {
    let Some(&(_, factor)) = units.iter().find(|(name, _)| *name == unit) else {
        return Err(ValueError::UnknownUnit {
            unit: unit.into(),
            what,
        });
    };
    let n = (value * factor).round();
    if n < 1.0 {
        return Err(ValueError::BelowOne {
            smallest: units[0].0,
        });
    }
    Ok(n as u64)
}
