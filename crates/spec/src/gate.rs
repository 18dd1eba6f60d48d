//! `[gate]`: makes `exec` a CI regression gate (docs/reference.md and docs/guide/commands.md).
//!
//! ```toml
//! [gate]
//! max_slowdown = "2%"          # of the baseline median, or a duration: "50us", "0.5ms", "800ns"
//! min_power = 0.8              # the deciding interval's computed power at twice the threshold must reach this
//! max_false_block = 0.1        # inconclusive when the self-check shows either error rate above this
//! self_check = true            # A/A cells at d = 0 and at half the threshold, a quarter of the forks each
//! max_retry_factor = 4         # a retry of an inconclusive verdict may cost at most this many times the first run
//! allow_overrides = true       # false: exec refuses --set, so the command line cannot loosen the gate
//! ```

use super::limits::MAX_DELAY_NS;
use super::location::{KeyPath, Problem};
use super::of_baseline::{duration_ns, number_and_unit, OfBaseline};
use super::raw::RawGate;
use super::value_error::ValueError;
use super::values::{boolean, describe};
use serde::{Deserialize, Serialize};
use toml::Value;

/// What a gate judges: the runs' time (the default), or the instructions
/// they executed (`metric = "instructions"`, with `design.measure`
/// counting them).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    #[default]
    Time,
    Instructions,
}

impl Metric {
    pub fn is_time(&self) -> bool {
        *self == Metric::Time
    }
}

/// The validated `[gate]` table.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Gate {
    pub max_slowdown: MaxSlowdown,
    /// What the threshold is held against; absent from the run.json of a
    /// gate on time (the default), so theirs stays as it was.
    #[serde(default, skip_serializing_if = "Metric::is_time")]
    pub metric: Metric,
    /// A pass needs the deciding interval's power at twice the threshold,
    /// computed from its width (`stats::gate::interval_power`), to reach
    /// this.
    pub min_power: f64,
    /// A verdict is inconclusive when the self-check shows its false-alarm
    /// or false-block rate, by its one-sided lower bound, above this.
    pub max_false_block: f64,
    /// Add the self-check cells (A/A of the baseline at d = 0 and at half
    /// the threshold) to the run.
    pub self_check: bool,
    /// The self-check also has a cell at half the threshold (the
    /// false-block rate); false in runs made before that cell existed
    /// (`output::format` migrates their run.json): their plan has no such
    /// cell.
    pub within_check: bool,
    /// The most a retry of an inconclusive verdict (`--retry-inconclusive`,
    /// `--bisect`) may cost, as a multiple of the first run's forks x
    /// pairs; past it the verdict stays inconclusive. None in runs made
    /// before the cap: their retries had none.
    pub max_retry_factor: Option<f64>,
    /// Whether `--set` may change the experiment: false makes exec refuse
    /// every override, so a CI command line cannot loosen the gate.
    pub allow_overrides: bool,
}

/// The default `max_retry_factor`.
pub(crate) const DEFAULT_MAX_RETRY_FACTOR: f64 = 4.0;

/// The default `max_false_block`: with 29 forks a self-check that blocks
/// none bounds the rate at 9.8 % (95 % confidence).
pub const DEFAULT_MAX_FALSE_BLOCK: f64 = 0.1;

/// The largest slowdown the gate lets pass.
pub type MaxSlowdown = OfBaseline;

const MAX_PERCENT: f64 = 1000.0;

const WHAT: &str = "a slowdown as a percentage of the baseline median (\"2%\") or a duration with its unit (\"50us\", \"0.5ms\", \"800ns\")";

/// Parses `"2%"`, `"50us"`, `"50 µs"`, `"0.5ms"`, `"800ns"`, `"0.1s"`.
pub(crate) fn parse_max_slowdown(text: &str) -> Result<MaxSlowdown, ValueError> {
    let (value, unit) = number_and_unit(text, WHAT)?;
    if unit == "%" {
        if value > MAX_PERCENT {
            return Err(ValueError::AtMost {
                limit: format!("{MAX_PERCENT}% (a gate allowing more than ten times the baseline guards nothing)"),
            });
        }
        return Ok(MaxSlowdown::Percent(value));
    }
    let ns = duration_ns(value, unit, WHAT)?;
    if ns > MAX_DELAY_NS / 2 {
        return Err(ValueError::AtMost {
            limit: format!(
                "{} ms: a threshold is at most half of runner's largest delay, 1 s",
                MAX_DELAY_NS / 2_000_000
            ),
        });
    }
    Ok(MaxSlowdown::Ns(ns))
}

/// `[gate]`; `recorded`: the table as a run recorded it, where keys a
/// runner of its time accepted are read without complaint.
pub(crate) fn gate(raw: RawGate, recorded: bool) -> Result<Gate, Problem> {
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
    // `statistic` chose the interval once; a gate now decides on the one
    // the report prints, so the key is refused where a user wrote it.
    if raw.statistic.is_some() && !recorded {
        return Err(Problem::key(
            &base.child("statistic"),
            "gate.statistic is no longer a choice: a gate decides on the interval the report prints, over the forks (the speed ratio's for a percentage, D's for a duration); remove the key".to_string(),
        ));
    }
    let power_path = base.child("min_power");
    let min_power = match &raw.min_power {
        None => 0.8,
        Some(Value::Float(f)) if *f > 0.0 && *f <= 1.0 => *f,
        Some(Value::Integer(1)) => 1.0,
        Some(other) => {
            return Err(Problem::value(
                &power_path,
                format!("gate.min_power must be a share above 0 and at most 1 (default 0.8: the deciding interval's computed power to block a slowdown of twice the threshold must be at least 80 % for a pass to count), got {}", describe(other)),
            ))
        }
    };
    let block_path = base.child("max_false_block");
    let max_false_block = match &raw.max_false_block {
        None => DEFAULT_MAX_FALSE_BLOCK,
        Some(Value::Float(f)) if *f > 0.0 && *f < 1.0 => *f,
        Some(other) => {
            return Err(Problem::value(
                &block_path,
                format!("gate.max_false_block must be a share above 0 and below 1 (default {DEFAULT_MAX_FALSE_BLOCK}: the gate is inconclusive when the self-check shows that forks' intervals block unchanged code, or a change of half the threshold, in more than 10 % of forks), got {}", describe(other)),
            ))
        }
    };
    let metric = match super::values::choice(
        raw.metric.as_ref(),
        &base.child("metric"),
        &[
            ("time", Metric::Time),
            ("instructions", Metric::Instructions),
        ],
    )? {
        Some(m) => m,
        None => Metric::Time,
    };
    if metric == Metric::Instructions {
        if let MaxSlowdown::Ns(_) = max_slowdown {
            return Err(Problem::value(
                &path,
                format!("gate.max_slowdown must be a percentage (\"2%\") with metric = \"instructions\": a gate on instructions judges their ratio, and a count has no duration, got {:?}", max_slowdown.to_string()),
            ));
        }
    }
    let self_check = boolean(raw.self_check.as_ref(), &base.child("self_check"), true)?;
    let retry_path = base.child("max_retry_factor");
    let max_retry_factor = match &raw.max_retry_factor {
        None => DEFAULT_MAX_RETRY_FACTOR,
        Some(Value::Float(f)) if (1.0..=1000.0).contains(f) => *f,
        Some(Value::Integer(i)) if (1..=1000).contains(i) => *i as f64,
        Some(other) => {
            return Err(Problem::value(
                &retry_path,
                format!("gate.max_retry_factor must be a number from 1 to 1000 (default {DEFAULT_MAX_RETRY_FACTOR}: a retry of an inconclusive verdict may cost at most 4 times the first run's forks x pairs), got {}", describe(other)),
            ))
        }
    };
    let allow_overrides = boolean(
        raw.allow_overrides.as_ref(),
        &base.child("allow_overrides"),
        true,
    )?;
    Ok(Gate {
        max_slowdown,
        metric,
        min_power,
        max_false_block,
        self_check,
        // A delay is time: on counts the half-threshold cell would be a
        // second A/A, so a gate on instructions checks at d = 0 alone.
        within_check: self_check && metric == Metric::Time,
        max_retry_factor: Some(max_retry_factor),
        allow_overrides,
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
            assert!(!e.to_string().is_empty(), "{bad}");
        }
        assert!(parse_max_slowdown("2")
            .unwrap_err()
            .to_string()
            .contains("needs a unit"));
        assert!(parse_max_slowdown("5 minutes")
            .unwrap_err()
            .to_string()
            .contains("\"minutes\""));
        assert!(parse_max_slowdown("1s")
            .unwrap_err()
            .to_string()
            .contains("at most 500 ms"));
    }

    #[test]
    fn a_percentage_scales_with_the_baseline() {
        assert_eq!(MaxSlowdown::Percent(2.0).ns_for(50_000.0), 1000.0);
        assert_eq!(MaxSlowdown::Ns(800).ns_for(50_000.0), 800.0);
        assert_eq!(MaxSlowdown::Percent(2.5).to_string(), "2.5%");
        assert_eq!(MaxSlowdown::Ns(500_000).to_string(), "500us");
        assert_eq!(MaxSlowdown::Ns(2_000_000).to_string(), "2ms");
        assert_eq!(MaxSlowdown::Ns(801).to_string(), "801ns");
    }
}
