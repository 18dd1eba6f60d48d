//! Typed readers for single TOML values. Each failure is one sentence that
//! names the key, what was found and what would be valid, so every rule in
//! `validate` reads as one line.

use super::location::{KeyPath, Problem};
use toml::Value;

/// A value as the user would recognise it, short and on one line.
pub(crate) fn describe(v: &Value) -> String {
    let text = match v {
        Value::String(s) => format!("{s:?}"),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => format!("{f:?}"),
        Value::Boolean(b) => b.to_string(),
        Value::Datetime(d) => d.to_string(),
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(describe).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Table(_) => return "a table".into(),
    };
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    } else {
        text
    }
}

pub(crate) fn got(path: &KeyPath, what: &str, v: &Value) -> Problem {
    Problem::value(path, format!("{path} must be {what}, got {}", describe(v)))
}

pub(crate) fn string(
    v: Option<&Value>,
    path: &KeyPath,
    what: &str,
) -> Result<Option<String>, Problem> {
    match v {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(got(path, what, other)),
    }
}

pub(crate) fn boolean(v: Option<&Value>, path: &KeyPath, default: bool) -> Result<bool, Problem> {
    match v {
        None => Ok(default),
        Some(Value::Boolean(b)) => Ok(*b),
        Some(other) => Err(got(
            path,
            &format!("true or false (default {default})"),
            other,
        )),
    }
}

/// An integer in `min..=max`; `what` describes the valid range in words.
pub(crate) fn integer(
    v: &Value,
    path: &KeyPath,
    min: i64,
    max: i64,
    what: &str,
) -> Result<i64, Problem> {
    match v {
        Value::Integer(i) if (min..=max).contains(i) => Ok(*i),
        other => Err(got(path, what, other)),
    }
}

/// One of a fixed set of spellings, mapped to its enum value.
pub(crate) fn choice<T: Copy>(
    v: Option<&Value>,
    path: &KeyPath,
    options: &[(&str, T)],
) -> Result<Option<T>, Problem> {
    let Some(v) = v else { return Ok(None) };
    if let Value::String(s) = v {
        if let Some((_, t)) = options.iter().find(|(name, _)| name == s) {
            return Ok(Some(*t));
        }
    }
    let names: Vec<String> = options.iter().map(|(n, _)| format!("\"{n}\"")).collect();
    let mut p = got(path, &format!("one of {}", names.join(", ")), v);
    if let Value::String(s) = v {
        let hint = super::suggest::did_you_mean(s, options.iter().map(|(n, _)| *n));
        if !hint.is_empty() {
            p.message = format!("{};{hint}", p.message);
        }
    }
    Err(p)
}

/// A CPU placement (`design.placement`, `grid.placement[i]`).
pub(crate) fn placement(
    v: &Value,
    path: &KeyPath,
) -> Result<runner_os::placement::Placement, Problem> {
    match v {
        Value::String(s) => runner_os::placement::Placement::parse(s),
        _ => None,
    }
    .ok_or_else(|| got(path, runner_os::placement::VALID, v))
}

/// A memory layout (`design.layout`, `grid.layout[i]`).
pub(crate) fn layout(
    v: &Value,
    path: &KeyPath,
) -> Result<runner_os::memory_layout::Layout, Problem> {
    match v {
        Value::String(s) => runner_os::memory_layout::Layout::parse(s),
        _ => None,
    }
    .ok_or_else(|| got(path, runner_os::memory_layout::VALID, v))
}

/// A duration in microseconds as written (integer or float, fractions
/// allowed) and in whole nanoseconds, rounded: the harness times in ns.
pub(crate) fn micros(v: &Value, path: &KeyPath) -> Result<(f64, u64), Problem> {
    let what = "a non-negative number of microseconds (e.g. 0, 5 or 0.1)";
    let too_big = || {
        Problem::value(
            path,
            format!(
                "{path} must be at most {} microseconds, got {}",
                u64::MAX / 1000,
                describe(v)
            ),
        )
    };
    match v {
        Value::Integer(i) if *i >= 0 => {
            let ns = u64::try_from(*i)
                .ok()
                .and_then(|i| i.checked_mul(1000))
                .ok_or_else(too_big)?;
            Ok((*i as f64, ns))
        }
        Value::Float(f) if f.is_finite() && *f >= 0.0 => {
            let ns = (f * 1000.0).round();
            if ns >= u64::MAX as f64 {
                return Err(too_big());
            }
            Ok((*f, ns as u64))
        }
        other => Err(got(path, what, other)),
    }
}

/// A non-empty array, each element read by `item`; the index goes into the
/// key path so the error points at the element.
pub(crate) fn array<T>(
    v: &Value,
    path: &KeyPath,
    what: &str,
    item: impl Fn(&Value, &KeyPath) -> Result<T, Problem>,
) -> Result<Vec<T>, Problem> {
    match v {
        Value::Array(a) if !a.is_empty() => a
            .iter()
            .enumerate()
            .map(|(i, e)| item(e, &path.at(i)))
            .collect(),
        other => Err(got(path, &format!("a non-empty array of {what}"), other)),
    }
}

/// The first repeated element, as (earlier index, later index).
pub(crate) fn first_duplicate<T: PartialEq>(items: &[T]) -> Option<(usize, usize)> {
    (0..items.len()).find_map(|j| (0..j).find(|&i| items[i] == items[j]).map(|i| (i, j)))
}

/// A JSON number that prints as an integer when it is one (5, not 5.0).
pub fn number(x: f64) -> serde_json::Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        serde_json::Value::from(x as i64)
    } else {
        serde_json::Value::from(x)
    }
}

/// The text a `{name}` placeholder becomes for a cell's value: a string as
/// is, a number as JSON prints it (`1000`, `0.5`), a boolean as `true`/`false`.
pub fn param_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> KeyPath {
        KeyPath::root().child("grid").child("delay_us")
    }

    #[test]
    fn micros_round_to_whole_nanoseconds() {
        assert_eq!(micros(&Value::Integer(5), &p()).unwrap(), (5.0, 5000));
        assert_eq!(micros(&Value::Float(0.1), &p()).unwrap(), (0.1, 100));
        assert_eq!(micros(&Value::Float(0.0004), &p()).unwrap().1, 0);
        assert_eq!(micros(&Value::Float(0.0005), &p()).unwrap().1, 1);
        assert_eq!(micros(&Value::Float(2.5), &p()).unwrap().1, 2500);
    }

    #[test]
    fn micros_reject_negative_nan_huge_and_non_numbers() {
        let err = |v| micros(&v, &p()).unwrap_err().message;
        assert!(err(Value::Integer(-1)).contains("grid.delay_us must be a non-negative number"));
        assert!(err(Value::Float(-0.5)).contains("got -0.5"));
        assert!(err(Value::Float(f64::NAN)).contains("got NaN"));
        assert!(err(Value::Float(f64::INFINITY)).contains("non-negative"));
        assert!(err(Value::Integer(i64::MAX)).contains("at most"));
        assert!(err(Value::Float(1e300)).contains("at most"));
        assert!(err(Value::String("5".into())).contains("got \"5\""));
    }

    #[test]
    fn describe_stays_on_one_short_line() {
        assert_eq!(describe(&Value::String("a\nb".into())), "\"a\\nb\"");
        let long = Value::String("x".repeat(100));
        assert_eq!(describe(&long).chars().count(), 60);
        let arr = Value::Array(vec![Value::Integer(1), Value::Float(2.0)]);
        assert_eq!(describe(&arr), "[1, 2.0]");
    }

    #[test]
    fn duplicates_report_both_positions() {
        assert_eq!(first_duplicate(&[1, 2, 3]), None);
        assert_eq!(first_duplicate(&[1, 2, 1, 2]), Some((0, 2)));
        assert_eq!(first_duplicate::<u8>(&[]), None);
    }

    #[test]
    fn choices_list_the_valid_spellings() {
        let opts = [("a", 1), ("b", 2)];
        assert_eq!(
            choice(Some(&Value::String("b".into())), &p(), &opts).unwrap(),
            Some(2)
        );
        let e = choice(Some(&Value::String("c".into())), &p(), &opts).unwrap_err();
        assert_eq!(
            e.message,
            "grid.delay_us must be one of \"a\", \"b\", got \"c\""
        );
    }
}
