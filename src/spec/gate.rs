//! `[gate]`: makes `exec` a CI regression gate (docs/reference.md and docs/guide/commands.md).
//!
//! ```toml
//! [gate]
//! max_slowdown = "2%"          # of the baseline median, or a duration: "50us", "0.5ms", "800ns"
//! statistic = "hierarchical"   # which interval decides: hierarchical (default) | pooled
//! min_power = 0.8              # below this measured power a pass is "inconclusive"
//! self_check = true            # A/A cells at d = 0 and at twice the threshold
//! ```

use super::limits::MAX_DELAY_NS;
use super::location::{KeyPath, Problem};
use super::raw::RawGate;
use super::values::{boolean, choice, describe};
use serde::{Deserialize, Serialize};
use toml::Value;

/// The validated `[gate]` table.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Gate {
    pub max_slowdown: MaxSlowdown,
    pub statistic: GateStatistic,
    /// A pass needs at least this share of the 2x self-check forks flagged.
    pub min_power: f64,
    /// Add the calibration cells (A/A of the baseline at d = 0 and at
    /// twice the threshold) to the run.
    pub self_check: bool,
}

/// The largest slowdown the gate lets pass.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum MaxSlowdown {
    /// Of the baseline's median run, measured in the same run.
    Percent(f64),
    /// A fixed duration in nanoseconds.
    Ns(u64),
}

impl MaxSlowdown {
    /// The threshold in ns for a baseline whose median run takes
    /// `baseline_median_ns`.
    pub fn threshold_ns(&self, baseline_median_ns: f64) -> f64 {
        match *self {
            MaxSlowdown::Percent(p) => p / 100.0 * baseline_median_ns,
            MaxSlowdown::Ns(ns) => ns as f64,
        }
    }
}

impl std::fmt::Display for MaxSlowdown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MaxSlowdown::Percent(p) => write!(f, "{p}%"),
            // The largest unit that holds it exactly: 50us, 0.5ms stays 500us.
            MaxSlowdown::Ns(ns) => match [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")]
                .iter()
                .find(|(u, _)| ns % u == 0)
            {
                Some((u, name)) => write!(f, "{}{name}", ns / u),
                None => write!(f, "{ns}ns"),
            },
        }
    }
}

/// Which interval of median D decides.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum GateStatistic {
    /// Forks, then pairs inside each: a fork effect widens it.
    #[default]
    Hierarchical,
    /// All pairs as one sample (narrower when forks differ, and too narrow then).
    Pooled,
}

impl std::fmt::Display for GateStatistic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            GateStatistic::Hierarchical => "hierarchical",
            GateStatistic::Pooled => "pooled",
        })
    }
}

const MAX_PERCENT: f64 = 1000.0;

const WHAT: &str = "a slowdown as a percentage of the baseline median (\"2%\") or a duration with its unit (\"50us\", \"0.5ms\", \"800ns\")";

/// Parses `"2%"`, `"50us"`, `"50 µs"`, `"0.5ms"`, `"800ns"`, `"0.1s"`.
pub(crate) fn parse_max_slowdown(text: &str) -> Result<MaxSlowdown, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = (&t[..split], t[split..].trim());
    let value: f64 = number
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v > 0.0)
        .ok_or_else(|| format!("must be {WHAT}, a positive number and a unit"))?;
    let factor = match unit {
        "%" => {
            if value > MAX_PERCENT {
                return Err(format!("must be at most {MAX_PERCENT}% (a gate allowing more than ten times the baseline guards nothing)"));
            }
            return Ok(MaxSlowdown::Percent(value));
        }
        "ns" => 1.0,
        "us" | "µs" | "μs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "" => return Err(format!("needs a unit: {WHAT}")),
        other => return Err(format!("has the unit {other:?}; it must be {WHAT}")),
    };
    let ns = (value * factor).round();
    if ns < 1.0 {
        return Err("must be at least 1 ns".into());
    }
    if 2.0 * ns > MAX_DELAY_NS as f64 {
        return Err(format!(
            "must be at most {} ms: the self-check injects twice the threshold, and delays are at most 1 s",
            MAX_DELAY_NS / 2_000_000
        ));
    }
    Ok(MaxSlowdown::Ns(ns as u64))
}

pub(crate) fn gate(raw: RawGate) -> Result<Gate, Problem> {
    let base = KeyPath::root().child("gate");
    let path = base.child("max_slowdown");
    let max_slowdown = match &raw.max_slowdown {
        None => {
            return Err(Problem::value(
                &path,
                format!("gate.max_slowdown is required in [gate]; set it to {WHAT}"),
            ))
        }
        Some(Value::String(s)) => parse_max_slowdown(s)
            .map_err(|m| Problem::value(&path, format!("gate.max_slowdown {m}, got {s:?}")))?,
        Some(other) => {
            return Err(Problem::value(
                &path,
                format!(
                    "gate.max_slowdown must be {WHAT} (a string), got {}",
                    describe(other)
                ),
            ))
        }
    };
    let statistics = [
        ("hierarchical", GateStatistic::Hierarchical),
        ("pooled", GateStatistic::Pooled),
    ];
    let statistic = choice(
        raw.statistic.as_ref(),
        &base.child("statistic"),
        &statistics,
    )?
    .unwrap_or_default();
    let power_path = base.child("min_power");
    let min_power = match &raw.min_power {
        None => 0.8,
        Some(Value::Float(f)) if *f > 0.0 && *f <= 1.0 => *f,
        Some(Value::Integer(1)) => 1.0,
        Some(other) => {
            return Err(Problem::value(
                &power_path,
                format!("gate.min_power must be a share above 0 and at most 1 (default 0.8: the 2x self-check must flag at least 80 % of its forks for a pass to count), got {}", describe(other)),
            ))
        }
    };
    Ok(Gate {
        max_slowdown,
        statistic,
        min_power,
        self_check: boolean(raw.self_check.as_ref(), &base.child("self_check"), true)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_parse_with_their_units() {
        assert_eq!(parse_max_slowdown("2%"), Ok(MaxSlowdown::Percent(2.0)));
        assert_eq!(parse_max_slowdown(" 0.5 % "), Ok(MaxSlowdown::Percent(0.5)));
        assert_eq!(parse_max_slowdown("50us"), Ok(MaxSlowdown::Ns(50_000)));
        assert_eq!(parse_max_slowdown("50 µs"), Ok(MaxSlowdown::Ns(50_000)));
        assert_eq!(parse_max_slowdown("0.5ms"), Ok(MaxSlowdown::Ns(500_000)));
        assert_eq!(parse_max_slowdown("800ns"), Ok(MaxSlowdown::Ns(800)));
        assert_eq!(parse_max_slowdown("0.1s"), Ok(MaxSlowdown::Ns(100_000_000)));
        assert_eq!(parse_max_slowdown("1.4ns"), Ok(MaxSlowdown::Ns(1)));
    }

    #[test]
    fn bad_thresholds_say_what_would_be_valid() {
        for bad in [
            "",
            "2",
            "-2%",
            "0%",
            "0us",
            "ten%",
            "5 minutes",
            "0.4ns",
            "1s",
            "2000%",
        ] {
            let e = parse_max_slowdown(bad).unwrap_err();
            assert!(!e.is_empty(), "{bad}");
        }
        assert!(parse_max_slowdown("2")
            .unwrap_err()
            .contains("needs a unit"));
        assert!(parse_max_slowdown("5 minutes")
            .unwrap_err()
            .contains("\"minutes\""));
        assert!(parse_max_slowdown("1s")
            .unwrap_err()
            .contains("at most 500 ms"));
    }

    #[test]
    fn a_percentage_scales_with_the_baseline() {
        assert_eq!(MaxSlowdown::Percent(2.0).threshold_ns(50_000.0), 1000.0);
        assert_eq!(MaxSlowdown::Ns(800).threshold_ns(50_000.0), 800.0);
        assert_eq!(MaxSlowdown::Percent(2.5).to_string(), "2.5%");
        assert_eq!(MaxSlowdown::Ns(500_000).to_string(), "500us");
        assert_eq!(MaxSlowdown::Ns(2_000_000).to_string(), "2ms");
        assert_eq!(MaxSlowdown::Ns(801).to_string(), "801ns");
    }
}
