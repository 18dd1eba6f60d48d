//! How every number in a report, the terminal summary and the plots is
//! printed: one home for the rules, so a number reads the same everywhere.
//!
//! - **Unit.** Chosen by magnitude (ns below 1 µs, µs below 1 ms, ms below
//!   1 s, else s). Numbers printed together (an estimate with its interval,
//!   a range) share one unit, chosen by the largest of them, written once at
//!   the end: `26.3 [23.8, 29.0] µs`, `510 to 746 µs`.
//! - **Digits.** A lone measured value shows three significant digits. An
//!   estimate or interval is printed to the second significant digit of the
//!   interval's width, so the interval never collapses to one number and
//!   no digit is printed that the uncertainty does not support (a
//!   zero-width interval is exact and printed exactly). A range shows two
//!   significant digits of its smaller end and of its width, so its ends
//!   never collapse either. Configured values (a delay, a confidence level)
//!   print exactly, with no trailing zeros.
//! - **Zero** is `0`, never `0.0 ns` or `-0.0`.
//! - **Ranges** are `lo to hi unit`; intervals are `[lo, hi] unit`.
//! - **Correlations** have three decimals everywhere; an r below 1 never
//!   prints as 1 (`> 0.999`).

/// Unit name and divisor for a magnitude in ns.
pub fn unit_for(abs_ns: f64) -> (&'static str, f64) {
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

/// Decimals that reach 0.01 ns in the unit: finer digits are noise.
fn max_decimals(div: f64) -> usize {
    2 + div.log10().round() as usize
}

/// Decimals that give `sig` significant digits to a value of `abs` (in the
/// unit), between 0 and `max`.
fn sig_decimals(abs: f64, sig: i32, max: usize) -> usize {
    if abs == 0.0 || !abs.is_finite() {
        return 0;
    }
    let d = sig - 1 - abs.log10().floor() as i32;
    d.clamp(0, max as i32) as usize
}

/// `v` with `decimals` decimals; exact zero is `0` and a value that rounds
/// to zero loses its minus sign.
fn fixed(v: f64, decimals: usize) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let s = format!("{v:.decimals$}");
    match s.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => s,
    }
}

/// A measured duration: `245100.0` -> `245 µs`, `42.93` -> `42.9 ns`, `0` -> `0`.
pub fn duration(ns: f64) -> String {
    if !ns.is_finite() {
        return "n/a".into();
    }
    if ns == 0.0 {
        return "0".into();
    }
    let (unit, div) = unit_for(ns.abs());
    let dec = sig_decimals(ns.abs() / div, 3, max_decimals(div));
    format!("{} {unit}", fixed(ns / div, dec))
}

/// A configured duration, printed exactly: `25000` -> `25 µs`, `2500` ->
/// `2.5 µs`, `100` -> `100 ns`, `0` -> `0`.
pub fn delay(ns: f64) -> String {
    if !ns.is_finite() {
        return "n/a".into();
    }
    if ns == 0.0 {
        return "0".into();
    }
    let (unit, div) = unit_for(ns.abs());
    format!(
        "{} {unit}",
        fixed(ns / div, exact_decimals(ns / div, max_decimals(div)))
    )
}

/// The fewest decimals (up to `max`) that print `v` exactly.
fn exact_decimals(v: f64, max: usize) -> usize {
    (0..=max)
        .find(|&d| {
            let scale = 10f64.powi(d as i32);
            ((v * scale).round() / scale - v).abs() < 1e-9 * v.abs().max(1.0)
        })
        .unwrap_or(max)
}

/// Unit and decimals for numbers printed with the interval `[lo, hi]`.
fn interval_style(values: &[f64], lo: f64, hi: f64) -> (&'static str, f64, usize) {
    let biggest = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let (unit, div) = unit_for(biggest);
    let max = max_decimals(div);
    let width = (hi - lo).abs() / div;
    let dec = if width > 0.0 {
        sig_decimals(width, 2, max)
    } else {
        // A zero-width interval is exact (a median of integer ns): print it so.
        values
            .iter()
            .map(|v| exact_decimals(v / div, max))
            .max()
            .unwrap_or(0)
    };
    (unit, div, dec)
}

/// An estimate with its interval, one unit: `26.3 [23.8, 29.0] µs`.
pub fn estimate(m: f64, lo: f64, hi: f64) -> String {
    if ![m, lo, hi].iter().all(|v| v.is_finite()) {
        return "n/a".into();
    }
    let (unit, div, dec) = interval_style(&[m, lo, hi], lo, hi);
    format!(
        "{} [{}, {}] {unit}",
        fixed(m / div, dec),
        fixed(lo / div, dec),
        fixed(hi / div, dec)
    )
}

/// An interval alone: `[-0.9, 3.4] µs`.
pub fn interval(lo: f64, hi: f64) -> String {
    if !lo.is_finite() || !hi.is_finite() {
        return "n/a".into();
    }
    let (unit, div, dec) = interval_style(&[lo, hi], lo, hi);
    format!(
        "[{}, {}] {unit}",
        fixed(lo / div, dec),
        fixed(hi / div, dec)
    )
}

/// A range of values (fork medians, estimates): `510 to 746 µs`.
pub fn range(lo: f64, hi: f64) -> String {
    if !lo.is_finite() || !hi.is_finite() {
        return "n/a".into();
    }
    let (unit, div) = unit_for(lo.abs().max(hi.abs()));
    let max = max_decimals(div);
    let smaller = [lo.abs(), hi.abs()]
        .into_iter()
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    let width = (hi - lo).abs() / div;
    let dec = [
        smaller
            .is_finite()
            .then(|| sig_decimals(smaller / div, 2, max)),
        (width > 0.0).then(|| sig_decimals(width, 2, max)),
    ]
    .into_iter()
    .flatten()
    .max()
    .unwrap_or(0);
    format!(
        "{} to {} {unit}",
        fixed(lo / div, dec),
        fixed(hi / div, dec)
    )
}

/// A share: `0.031` -> `3.1 %`; exact whole percents print without
/// decimals (`95 %`, `100 %`, `0 %`), and a share that is not exactly 0 or 1
/// never prints as `0.0 %` or `100.0 %`.
pub fn percent(fraction: f64) -> String {
    if !fraction.is_finite() {
        return "n/a".into();
    }
    let p = fraction * 100.0;
    if (p - p.round()).abs() < 1e-9 {
        return format!("{} %", fixed(p.round(), 0));
    }
    let s = format!("{p:.1}");
    match s.as_str() {
        "100.0" => "> 99.9 %".into(),
        "0.0" => "< 0.1 %".into(),
        "-0.0" => "> -0.1 %".into(),
        _ => format!("{s} %"),
    }
}

/// A Pearson r with three decimals; only an exact ±1 prints as `1.000`.
pub fn correlation(r: f64) -> String {
    if !r.is_finite() {
        return "n/a".into();
    }
    let s = format!("{r:.3}");
    match s.as_str() {
        "1.000" if r < 1.0 => "> 0.999".into(),
        "-1.000" if r > -1.0 => "< -0.999".into(),
        "-0.000" => "0.000".into(),
        _ => s,
    }
}

/// `{"plans": 40, "months": 60}` -> `plans = 40, months = 60`.
pub fn params(params: &serde_json::Map<String, serde_json::Value>) -> String {
    params
        .iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k} = {s}"),
            _ => format!("{k} = {v}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `(["5 µs", "10 µs", "25 µs"], "and")` -> `5 µs, 10 µs and 25 µs`.
pub fn list(items: &[String], conjunction: &str) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} {conjunction} {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests;
