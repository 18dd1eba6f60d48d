//! `[design.stop]`: a sequential design (docs/guide/experiment-file.md).
//! Forks run until each cell's rule holds or its maximum is reached.
//!
//! ```toml
//! [design.stop]
//! half_width = "1us"   # stop a cell once its interval is this narrow: a duration, or "2%" of its baseline median
//! decide = true        # or once the speed ratio's interval leaves 1 (with [gate]: once the gate's verdict is decided)
//! min_forks = 3        # never fewer forks per cell (default 3)
//! max_forks = 20       # never more (default design.forks; both given must agree)
//! max_time = "10min"   # no new cell's fork starts after this much run time ("90s", "10min", "2h")
//! ```

use super::limits;
use super::location::{KeyPath, Problem};
use super::of_baseline::{duration_ns, number_and_unit, whole, OfBaseline};
use super::raw::RawStop;
use super::value_error::ValueError;
use super::values::{boolean, integer, string};
use serde::{Deserialize, Serialize};
use std::num::NonZeroU32;
use toml::Value;

/// The validated rule. `min_forks <= max_forks`, and at least one of
/// `half_width`, `decide` and `max_time` can end a cell early.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct StopRule {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub half_width: Option<HalfWidth>,
    pub decide: bool,
    pub min_forks: NonZeroU32,
    pub max_forks: NonZeroU32,
    /// Seconds of the run's time (the forks' `job_ns`, summed) after which
    /// a cell stops as soon as it has `min_forks`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_time_s: Option<u64>,
}

/// A precision target: the half-width a cell's interval must reach, a
/// duration or a share of the cell's baseline median (its measured
/// baseline runs so far).
pub type HalfWidth = OfBaseline;

const HALF_WIDTH: &str = "a duration with its unit (\"1us\", \"0.5ms\", \"800ns\") or a percentage of the cell's baseline median (\"1%\")";
const MAX_TIME: &str = "a duration with its unit (\"90s\", \"10min\", \"2h\")";

/// Parses `"1us"`, `"800ns"`, `"0.5ms"`, `"1%"`.
pub(crate) fn parse_half_width(text: &str) -> Result<HalfWidth, ValueError> {
    let (value, unit) = number_and_unit(text, HALF_WIDTH)?;
    match unit {
        "%" if value <= 100.0 => return Ok(HalfWidth::Percent(value)),
        "%" => {
            return Err(ValueError::AtMost {
                limit: "100% of the baseline median".into(),
            })
        }
        _ => {}
    }
    let ns = duration_ns(value, unit, HALF_WIDTH)?;
    if ns > limits::MAX_DELAY_NS {
        return Err(ValueError::AtMost {
            limit: "1 s".into(),
        });
    }
    Ok(HalfWidth::Ns(ns))
}

/// Parses `"90s"`, `"10min"`, `"2h"` into whole seconds (at least one).
pub(crate) fn parse_max_time(text: &str) -> Result<u64, ValueError> {
    let (value, unit) = number_and_unit(text, MAX_TIME)?;
    let s = whole(
        value,
        unit,
        &[("s", 1.0), ("min", 60.0), ("h", 3600.0)],
        MAX_TIME,
    )?;
    if s > limits::FORK_TIMEOUT_S as u64 {
        return Err(ValueError::AtMost {
            limit: "a week".into(),
        });
    }
    Ok(s)
}

/// A string key read by `parse`; its error names the key and the value.
fn text<T>(
    path: &KeyPath,
    v: Option<&Value>,
    what: &str,
    parse: fn(&str) -> Result<T, ValueError>,
) -> Result<Option<T>, Problem> {
    match string(v, path, what)? {
        None => Ok(None),
        Some(s) => parse(&s)
            .map(Some)
            .map_err(|m| Problem::value(path, format!("{path} {m}, got {s:?}"))),
    }
}

/// `[design.stop]` with `forks`, the design's own count as written: the
/// rule, and the forks every cell may reach (`design.forks` becomes it).
pub(crate) fn stop(raw: RawStop, forks: Option<&Value>) -> Result<StopRule, Problem> {
    let base = KeyPath::root().child("design").child("stop");
    let half_width = text(
        &base.child("half_width"),
        raw.half_width.as_ref(),
        HALF_WIDTH,
        parse_half_width,
    )?;
    let max_time_s = text(
        &base.child("max_time"),
        raw.max_time.as_ref(),
        MAX_TIME,
        parse_max_time,
    )?;
    let decide = boolean(raw.decide.as_ref(), &base.child("decide"), false)?;
    let count = |v: &Value, path: &KeyPath| -> Result<NonZeroU32, Problem> {
        let n = limits::count(v, path, &limits::FORKS, ", default design.forks, else 10")?;
        Ok(NonZeroU32::new(n).expect("positive by construction"))
    };
    let forks_path = KeyPath::root().child("design").child("forks");
    let max_path = base.child("max_forks");
    let max_forks = match (raw.max_forks.as_ref(), forks) {
        (Some(m), Some(f)) => {
            let (m, f) = (count(m, &max_path)?, count(f, &forks_path)?);
            if m != f {
                return Err(Problem::value(
                    &max_path,
                    format!("design.stop.max_forks = {m} but design.forks = {f}; with [design.stop], design.forks is the default max_forks, so give one of them (or the same number in both)"),
                ));
            }
            m
        }
        (Some(m), None) => count(m, &max_path)?,
        (None, Some(f)) => count(f, &forks_path)?,
        (None, None) => NonZeroU32::new(10).expect("10 > 0"),
    };
    let min_forks = match raw.min_forks.as_ref() {
        None => NonZeroU32::new(3.min(max_forks.get())).expect("positive"),
        Some(v) => {
            let path = base.child("min_forks");
            let n = integer(
                v,
                &path,
                1,
                i64::from(limits::FORKS.max),
                &format!("a positive integer, at most max_forks ({max_forks}); default 3"),
            )? as u32;
            if n > max_forks.get() {
                return Err(Problem::value(
                    &path,
                    format!("design.stop.min_forks = {n} is more than max_forks = {max_forks}; a cell cannot need more forks than it may run"),
                ));
            }
            NonZeroU32::new(n).expect("at least 1")
        }
    };
    if half_width.is_none() && !decide && max_time_s.is_none() {
        return Err(Problem::key(
            &base,
            "[design.stop] needs half_width, decide = true or max_time: without one of them no cell stops before max_forks, which is design.forks alone".to_string(),
        ));
    }
    Ok(StopRule {
        half_width,
        decide,
        min_forks,
        max_forks,
        max_time_s,
    })
}

/// The rule's interval needs two forks to be bounded at all (one value
/// has no spread): `max_forks` must allow them. `min_forks` may be 1;
/// the first look is then at 2 forks.
pub(crate) fn bounded(rule: &StopRule) -> Result<(), Problem> {
    let base = KeyPath::root().child("design").child("stop");
    if rule.max_forks.get() >= 2 {
        return Ok(());
    }
    Err(Problem::value(
        &base.child("max_forks"),
        format!("design.stop allows at most {} fork per cell, but the stopping interval is unbounded until a cell has 2 (it is Student's t over the forks); allow at least 2, and 3 for an interval worth stopping on (max_forks, or design.forks)", rule.max_forks),
    ))
}

/// The rule in words, for `check` and the report: "until the interval is
/// at most 1us wide each side or leaves 0; 3-20 forks per cell; 10 min".
pub fn describe_rule(rule: &StopRule, gate: bool) -> String {
    let mut until = Vec::new();
    if let Some(h) = rule.half_width {
        until.push(format!("its interval's half-width is at most {h}"));
    }
    if rule.decide {
        until.push(
            if gate {
                "the gate's verdict is decided"
            } else {
                "its speed ratio's interval excludes 1"
            }
            .to_string(),
        );
    }
    let mut out = if until.is_empty() {
        "each cell runs".to_string()
    } else {
        format!("each cell runs until {}", until.join(" or "))
    };
    out.push_str(&format!(
        ", with {} to {} forks",
        rule.min_forks, rule.max_forks
    ));
    if let Some(s) = rule.max_time_s {
        out.push_str(&format!(
            "; after {} of run time, cells stop once they have {} forks",
            seconds_text(s),
            rule.min_forks
        ));
    }
    out
}

/// `90` -> "90 s", `600` -> "10 min", `7200` -> "2 h".
fn seconds_text(s: u64) -> String {
    match s {
        s if s % 3600 == 0 => format!("{} h", s / 3600),
        s if s % 60 == 0 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_widths_and_times_parse_with_their_units() {
        assert_eq!(parse_half_width("1us"), Ok(HalfWidth::Ns(1000)));
        assert_eq!(parse_half_width("0.5 ms"), Ok(HalfWidth::Ns(500_000)));
        assert_eq!(parse_half_width("800ns"), Ok(HalfWidth::Ns(800)));
        assert_eq!(parse_half_width("2%"), Ok(HalfWidth::Percent(2.0)));
        assert!(parse_half_width("2")
            .unwrap_err()
            .to_string()
            .contains("needs a unit"));
        assert!(parse_half_width("150%")
            .unwrap_err()
            .to_string()
            .contains("at most 100%"));
        assert!(parse_half_width("0.1ns")
            .unwrap_err()
            .to_string()
            .contains("at least 1 ns"));
        assert!(parse_half_width("3 parsecs")
            .unwrap_err()
            .to_string()
            .contains("\"parsecs\""));
        assert_eq!(parse_max_time("90s"), Ok(90));
        assert_eq!(parse_max_time("10min"), Ok(600));
        assert_eq!(parse_max_time("1.5h"), Ok(5400));
        assert!(parse_max_time("10")
            .unwrap_err()
            .to_string()
            .contains("needs a unit"));
        assert!(parse_max_time("10ms")
            .unwrap_err()
            .to_string()
            .contains("\"ms\""));
        assert_eq!(HalfWidth::Ns(1000).to_string(), "1us");
        assert_eq!(HalfWidth::Percent(0.5).to_string(), "0.5%");
        assert_eq!(HalfWidth::Percent(2.0).ns_for(50_000.0), 1000.0);
    }

    #[test]
    fn the_rule_in_words() {
        let rule = StopRule {
            half_width: Some(HalfWidth::Ns(1000)),
            decide: true,
            min_forks: NonZeroU32::new(3).unwrap(),
            max_forks: NonZeroU32::new(20).unwrap(),
            max_time_s: Some(600),
        };
        assert_eq!(
            describe_rule(&rule, false),
            "each cell runs until its interval's half-width is at most 1us or its speed ratio's interval excludes 1, with 3 to 20 forks; after 10 min of run time, cells stop once they have 3 forks"
        );
        let gate = StopRule {
            half_width: None,
            max_time_s: None,
            ..rule
        };
        assert_eq!(
            describe_rule(&gate, true),
            "each cell runs until the gate's verdict is decided, with 3 to 20 forks"
        );
    }
}
