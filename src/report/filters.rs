//! Template filters, so every number in a report is printed by one rule.
//!
//! Durations: the unit is chosen by magnitude (ns below 1 µs, µs below 1 ms,
//! ms below 1 s, else s) and the value printed with one decimal in that unit.
//! An interval uses one unit for both ends, chosen by the larger end.

use minijinja::{Environment, Error, ErrorKind, Value};

pub(crate) fn unit_for(abs_ns: f64) -> (&'static str, f64) {
    if abs_ns < 1e3 {
        ("ns", 1.0)
    } else if abs_ns < 1e6 {
        ("µs", 1e3)
    } else if abs_ns < 1e9 {
        ("ms", 1e6)
    } else {
        ("s", 1e9)
    }
}

fn fmt_in(ns: f64, div: f64) -> String {
    let v = ns / div;
    // Avoid "-0.0" for values that round to zero.
    let s = format!("{v:.1}");
    if s == "-0.0" {
        "0.0".into()
    } else {
        s
    }
}

/// `1234.0` -> `1.2 µs`.
pub fn duration(ns: f64) -> String {
    if !ns.is_finite() {
        return "n/a".into();
    }
    let (unit, div) = unit_for(ns.abs());
    format!("{} {unit}", fmt_in(ns, div))
}

/// `[1200, 1500]` -> `[1.2, 1.5] µs`.
pub fn interval(lo: f64, hi: f64) -> String {
    if !lo.is_finite() || !hi.is_finite() {
        return "n/a".into();
    }
    let (unit, div) = unit_for(lo.abs().max(hi.abs()));
    format!("[{}, {}] {unit}", fmt_in(lo, div), fmt_in(hi, div))
}

/// `0.031` -> `3.1 %`.
pub fn percent(fraction: f64) -> String {
    if !fraction.is_finite() {
        return "n/a".into();
    }
    format!("{:.1} %", fraction * 100.0)
}

fn number(v: &Value) -> Result<f64, Error> {
    if v.is_none() || v.is_undefined() {
        return Ok(f64::NAN);
    }
    f64::try_from(v.clone()).map_err(|_| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("expected a number, got {v}"),
        )
    })
}

/// `{"plans": 40, "months": 60}` -> `plans = 40, months = 60`.
pub fn params(v: Value) -> Result<String, Error> {
    let mut parts = Vec::new();
    if let Ok(keys) = v.try_iter() {
        for k in keys {
            let val = v.get_item(&k).unwrap_or_default();
            parts.push(format!("{k} = {val}"));
        }
    }
    Ok(parts.join(", "))
}

/// Registers `duration`, `interval` (takes `[lo, hi]`), `percent`,
/// `sqrt_duration` (a variance in ns² as a standard deviation), `params` and
/// `pad(width)` (left-aligned, for terminal tables).
pub fn register(env: &mut Environment<'_>) {
    env.add_filter("sqrt_duration", |v: Value| -> Result<String, Error> {
        Ok(duration(number(&v)?.max(0.0).sqrt()))
    });
    env.add_filter("params", params);
    env.add_filter("pad", |v: Value, width: usize| -> String {
        format!("{:<width$}", v.to_string())
    });
    env.add_filter("duration", |v: Value| -> Result<String, Error> {
        Ok(duration(number(&v)?))
    });
    env.add_filter("interval", |v: Value| -> Result<String, Error> {
        let lo = v.get_item_by_index(0).unwrap_or_default();
        let hi = v.get_item_by_index(1).unwrap_or_default();
        Ok(interval(number(&lo)?, number(&hi)?))
    });
    env.add_filter("percent", |v: Value| -> Result<String, Error> {
        Ok(percent(number(&v)?))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_pick_their_unit() {
        assert_eq!(duration(812.5), "812.5 ns");
        assert_eq!(duration(245_100.0), "245.1 µs");
        assert_eq!(duration(-3_240.0), "-3.2 µs");
        assert_eq!(duration(1_234_567.0), "1.2 ms");
        assert_eq!(duration(2.5e9), "2.5 s");
        assert_eq!(duration(-0.01), "0.0 ns");
        assert_eq!(duration(f64::NAN), "n/a");
    }

    #[test]
    fn intervals_share_one_unit() {
        assert_eq!(interval(-900.0, 3_400.0), "[-0.9, 3.4] µs");
        assert_eq!(interval(10.0, 20.0), "[10.0, 20.0] ns");
    }

    #[test]
    fn percents() {
        assert_eq!(percent(0.031), "3.1 %");
    }
}
