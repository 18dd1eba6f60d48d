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
//! - **Columns.** Every cell of a table column shares one unit and one
//!   number of decimals ([`Column`]): the unit of the column's typical
//!   entry, and the decimals that the narrowest interval of the column
//!   needs by the rule above, so a column never mixes `0 [-10, 4] µs` with
//!   `501.2 [496.5, 504.4] µs`. The functions below are the one-cell case.
//! - **Zero** is `0`, never `0.0 ns` or `-0.0`. A difference that is all
//!   zero because the measure cannot resolve it (CPU ticks, memory pages)
//!   is said in words ([`unresolved`]), not printed as `0 [0, 0] ns`.
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
    digits(v, decimals)
}

/// `v` with `decimals` decimals, zero included (`0.0`): the numbers of one
/// cell share one rule, so `0 [-10.0, 1.0]` reads `0.0 [-10.0, 1.0]`.
fn digits(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    match s.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => s,
    }
}

/// A measured duration: `245100.0` -> `245 µs`, `42.93` -> `42.9 ns`, `0` -> `0`.
pub fn duration(ns: f64) -> String {
    Column::time(&[Entry::Value(ns)]).value(ns)
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

/// An estimate with its interval, one unit: `26.3 [23.8, 29.0] µs`.
pub fn estimate(m: f64, lo: f64, hi: f64) -> String {
    Column::time(&[Entry::Estimate(m, lo, hi)]).estimate(m, lo, hi)
}

/// An interval alone: `[-0.9, 3.4] µs`.
pub fn interval(lo: f64, hi: f64) -> String {
    Column::time(&[Entry::Interval(lo, hi)]).interval(lo, hi)
}

/// A range of values (fork medians, estimates): `510 to 746 µs`.
pub fn range(lo: f64, hi: f64) -> String {
    Column::time(&[Entry::Span(lo, hi)]).range(lo, hi)
}

/// One entry of a table column: a lone value, a span (a range of values:
/// fork medians, estimates), an interval alone, or an estimate with its
/// interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Entry {
    Value(f64),
    Span(f64, f64),
    Interval(f64, f64),
    Estimate(f64, f64, f64),
}

impl Entry {
    fn numbers(&self) -> Vec<f64> {
        match *self {
            Entry::Value(v) => vec![v],
            Entry::Span(lo, hi) | Entry::Interval(lo, hi) => vec![lo, hi],
            Entry::Estimate(m, lo, hi) => vec![m, lo, hi],
        }
    }

    /// The width of its interval; none for a lone value.
    fn width(&self) -> Option<f64> {
        match *self {
            Entry::Value(_) => None,
            Entry::Span(lo, hi) | Entry::Interval(lo, hi) | Entry::Estimate(_, lo, hi) => {
                Some((hi - lo).abs())
            }
        }
    }

    fn is_finite(&self) -> bool {
        self.numbers().iter().all(|v| v.is_finite())
    }
}

/// Units of time, from ns.
const TIME_UNITS: [(&str, f64); 4] = [("ns", 1.0), ("µs", 1e3), ("ms", 1e6), ("s", 1e9)];
/// Units of size, from KiB.
const SIZE_UNITS: [(&str, f64); 3] = [("KiB", 1.0), ("MiB", 1024.0), ("GiB", 1024.0 * 1024.0)];

/// How every cell of one table column is printed: one unit and one number
/// of decimals, so the cells line up and compare at a glance.
///
/// - **Unit**: that of the column's typical entry (the median of the
///   entries' largest magnitudes, the upper one of an even count), so a column from 3 µs to 1 ms reads in
///   µs rather than in thousandths of a ms.
/// - **Decimals**: enough for the narrowest interval or range of the column
///   to show two significant digits of its width, so none collapses to one
///   number, and for the smallest end of a range to show two; when every interval has zero width the values are exact and
///   printed so; a column of lone values shows three significant digits of
///   its typical value, and at least one of its smallest, so no value that
///   is not zero prints as zero. Never finer than 0.01 ns (time) or 1 KiB (size).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Column {
    pub unit: &'static str,
    pub divisor: f64,
    pub decimals: usize,
}

impl Column {
    /// A column of durations in ns.
    pub fn time(entries: &[Entry]) -> Column {
        Column::build(entries, &TIME_UNITS, 2)
    }

    /// A column of sizes in KiB.
    pub fn size(entries: &[Entry]) -> Column {
        Column::build(entries, &SIZE_UNITS, 0)
    }

    /// A column of plain numbers (a ratio, a percentage) with at most
    /// `finest` decimals; the unit is left to the caller.
    pub fn plain(entries: &[Entry], finest: usize) -> Column {
        Column::build(entries, &[("", 1.0)], finest)
    }

    /// A plain number with this column's decimals, no unit; `+` before a
    /// positive one when `signed`.
    pub fn bare(&self, v: f64, signed: bool) -> String {
        if !v.is_finite() {
            return "n/a".into();
        }
        let s = self.number(v);
        if signed && v > 0.0 && s != "0" {
            format!("+{s}")
        } else {
            s
        }
    }

    /// `finest`: decimals that reach the finest meaningful step in the
    /// smallest unit.
    fn build(entries: &[Entry], units: &[(&'static str, f64)], finest: usize) -> Column {
        let entries: Vec<&Entry> = entries.iter().filter(|e| e.is_finite()).collect();
        let mut magnitudes: Vec<f64> = entries
            .iter()
            .map(|e| e.numbers().iter().fold(0.0f64, |m, v| m.max(v.abs())))
            .filter(|m| *m > 0.0)
            .collect();
        magnitudes.sort_by(f64::total_cmp);
        let typical = magnitudes.get(magnitudes.len() / 2).copied().unwrap_or(0.0);
        let (unit, divisor) = units
            .iter()
            .rev()
            .find(|(_, d)| typical >= *d)
            .copied()
            .unwrap_or(units[0]);
        let max = finest + (divisor / units[0].1).log10().round() as usize;
        let narrowest = entries
            .iter()
            .filter_map(|e| e.width())
            .filter(|w| *w > 0.0)
            .fold(f64::INFINITY, f64::min);
        // A range's ends are values in their own right: its smaller end
        // keeps two significant digits too.
        let smallest_end = entries
            .iter()
            .filter_map(|e| match **e {
                Entry::Span(lo, hi) => Some([lo.abs(), hi.abs()]),
                _ => None,
            })
            .flatten()
            .filter(|v| *v > 0.0)
            .fold(f64::INFINITY, f64::min);
        let decimals = if narrowest.is_finite() {
            let ends = if smallest_end.is_finite() {
                sig_decimals(smallest_end / divisor, 2, max)
            } else {
                0
            };
            sig_decimals(narrowest / divisor, 2, max).max(ends)
        } else if entries.iter().any(|e| e.width().is_some()) {
            // Zero-width intervals are exact (medians of integer ns).
            entries
                .iter()
                .flat_map(|e| e.numbers())
                .map(|v| exact_decimals(v / divisor, max))
                .max()
                .unwrap_or(0)
        } else {
            // No nonzero value may print as zero.
            let smallest = magnitudes.first().copied().unwrap_or(0.0);
            sig_decimals(typical / divisor, 3, max).max(sig_decimals(smallest / divisor, 1, max))
        };
        Column {
            unit,
            divisor,
            decimals,
        }
    }

    fn number(&self, v: f64) -> String {
        fixed(v / self.divisor, self.decimals)
    }

    /// One of several numbers in a cell (an estimate and its interval, a
    /// range): zero keeps the column's decimals like its neighbours.
    fn in_cell(&self, v: f64) -> String {
        digits(v / self.divisor, self.decimals)
    }

    /// A lone value: `2.43 ms`; zero is `0`.
    pub fn value(&self, v: f64) -> String {
        if !v.is_finite() {
            return "n/a".into();
        }
        if v == 0.0 {
            return "0".into();
        }
        format!("{} {}", self.number(v), self.unit)
    }

    /// An estimate with its interval: `26.3 [23.8, 29.0] µs`.
    pub fn estimate(&self, m: f64, lo: f64, hi: f64) -> String {
        if ![m, lo, hi].iter().all(|v| v.is_finite()) {
            return "n/a".into();
        }
        format!(
            "{} [{}, {}] {}",
            self.in_cell(m),
            self.in_cell(lo),
            self.in_cell(hi),
            self.unit
        )
    }

    /// An interval alone: `[-0.9, 3.4] µs`.
    pub fn interval(&self, lo: f64, hi: f64) -> String {
        if !lo.is_finite() || !hi.is_finite() {
            return "n/a".into();
        }
        format!("[{}, {}] {}", self.in_cell(lo), self.in_cell(hi), self.unit)
    }

    /// A range of values: `510 to 746 µs`.
    pub fn range(&self, lo: f64, hi: f64) -> String {
        if !lo.is_finite() || !hi.is_finite() {
            return "n/a".into();
        }
        format!("{} to {} {}", self.in_cell(lo), self.in_cell(hi), self.unit)
    }
}

/// An estimate and interval that are all zero because the measure cannot
/// resolve the difference, said in words: `0 (below the kernel's
/// accounting resolution)`; none when any of the three is not zero.
pub fn unresolved(m: f64, lo: f64, hi: f64, why: &str) -> Option<String> {
    (m == 0.0 && lo == 0.0 && hi == 0.0).then(|| format!("0 ({why})"))
}

/// A chance as a person says it: "1 in 462", "always" at 1, and in
/// powers of ten past a million ("1 in 1.0 × 10^9").
pub fn one_in(p: f64) -> String {
    if p >= 1.0 {
        return "always".into();
    }
    let n = (1.0 / p).round();
    if n < 1e6 {
        format!("1 in {n:.0}")
    } else {
        format!("1 in {:.1e}", n).replace("e", " × 10^")
    }
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

/// A cell's params in words, never as JSON: `{"plans": 40, "months": 60}`
/// -> `plans = 40, months = 60`; a variant by its name alone
/// (`{"treatment": "quick"}` -> `quick`); a swept strategy key without its
/// `strategies.` prefix and an argv as the command line it is
/// (`fast.argv = gzip -1 -c input`). Labels from `[grid.labels]` are
/// applied before (`spec::Grid::labelled`).
pub fn params(params: &serde_json::Map<String, serde_json::Value>) -> String {
    use serde_json::Value;
    params
        .iter()
        .map(|(k, v)| {
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Array(items) if items.iter().all(Value::is_string) => {
                    runner_core::shell::join(
                        &items.iter().filter_map(Value::as_str).collect::<Vec<_>>(),
                    )
                }
                other => other.to_string(),
            };
            match k.as_str() {
                runner_plan::TREATMENT_KEY => text,
                _ => format!("{} = {text}", k.strip_prefix("strategies.").unwrap_or(k)),
            }
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

/// How a fork's counts were chosen, in words, for `check` and the
/// report's Setup (`both chosen from trial runs: a pair took about 412
/// ms, a fork's start about 14.5 ms`); none when the file set both, or a
/// runner of old filled them in.
pub fn runs_chosen(design: &runner_spec::Design) -> Option<String> {
    let r = design.runs_per_fork?;
    let which = match (r.warmup_pairs, r.pairs) {
        (true, true) => "both",
        (true, false) => "the warm-up",
        (false, _) => "the measured pairs",
    };
    // The first look's forks, where the file left them to the pairs too.
    let look = design.stop.filter(|_| r.min_forks).map(|s| s.min_forks);
    match r.chosen {
        None => Some(format!(
            "{which} to be chosen from the trial runs before the first fork{}",
            if look.is_some() { ", and min_forks with them" } else { "" }
        )),
        Some(runner_spec::Chosen::Trials {
            pair_ns,
            fork_start_ns,
        }) => Some(format!(
            "{which} chosen from trial runs: a pair took about {}, a fork's start about {}{}",
            duration(pair_ns as f64),
            duration(fork_start_ns as f64),
            look.map_or(String::new(), |n| format!(
                "; min_forks {n} with them (a first look of at least {} measured pairs, within {} s of runs)",
                runner_plan::runs::FIRST_LOOK_PAIRS,
                runner_plan::runs::FIRST_LOOK_BUDGET_NS / 1_000_000_000
            ))
        )),
        Some(runner_spec::Chosen::Defaults) => None,
    }
}

#[cfg(test)]
mod tests;
