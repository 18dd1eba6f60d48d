//! The effect of a version in the user's words: **slower**, **faster** or
//! **no difference resolved** (the interval covers 0), with the speed
//! ratio, the change in % of the baseline's median and the per-run
//! difference, each with its interval. A difference is printed as a
//! positive duration beside its direction word; only an unresolved one
//! keeps its sign, since its interval holds both directions.

use crate::report::format;
use crate::stats::apart::Bounded;

/// Which way an interval of D points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Slower,
    Faster,
    Unresolved,
}

impl Direction {
    pub fn of(b: Bounded) -> Direction {
        if b.lo > 0.0 {
            Direction::Slower
        } else if b.hi < 0.0 {
            Direction::Faster
        } else {
            Direction::Unresolved
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Direction::Slower => "slower",
            Direction::Faster => "faster",
            Direction::Unresolved => "no difference resolved",
        }
    }
}

/// Decimals that show two significant digits of `width` (0 to `max`).
fn decimals(width: f64, max: i32) -> usize {
    if !(width.is_finite() && width > 0.0) {
        return 1;
    }
    (1 - width.log10().floor() as i32).clamp(0, max) as usize
}

/// `+85.0`, `-3.2`, `0` (the minus as the report's numbers print it).
fn signed(v: f64, d: usize) -> String {
    let s = format!("{:+.d$}", v);
    if s[1..].chars().all(|c| c == '0' || c == '.') {
        return "0".into();
    }
    s
}

/// A fraction of the baseline as `+85.0 % [+82.4, +87.6]`.
pub fn percent(r: Bounded) -> String {
    let d = decimals((r.hi - r.lo) * 100.0, 2);
    format!(
        "{} % [{}, {}]",
        signed(r.estimate * 100.0, d),
        signed(r.lo * 100.0, d),
        signed(r.hi * 100.0, d)
    )
}

/// The speed ratio of slower over faster with its interval, `1.85x [1.82,
/// 1.88]`, given D and the baseline's median; none when an end of the
/// interval makes a run take no time at all.
pub fn ratio(effect: Bounded, baseline_ns: f64) -> Option<String> {
    let t = |d: f64| baseline_ns + d;
    if baseline_ns <= 0.0 || t(effect.lo) <= 0.0 {
        return None;
    }
    let (m, lo, hi) = match Direction::of(effect) {
        // Faster: how many times faster, so the ratio reads above 1 too.
        Direction::Faster => (
            baseline_ns / t(effect.estimate),
            baseline_ns / t(effect.hi),
            baseline_ns / t(effect.lo),
        ),
        _ => (
            t(effect.estimate) / baseline_ns,
            t(effect.lo) / baseline_ns,
            t(effect.hi) / baseline_ns,
        ),
    };
    // Two decimals, as ratios are read (`1.46x`); a third only where the
    // interval would otherwise collapse to one number.
    let d = if hi - lo < 0.01 { 3 } else { 2 };
    Some(format!("{m:.d$}x [{lo:.d$}, {hi:.d$}]"))
}

/// The per-run difference: positive beside its direction, signed when
/// unresolved.
pub fn per_run(effect: Bounded) -> String {
    match Direction::of(effect) {
        Direction::Faster => format::estimate(-effect.estimate, -effect.hi, -effect.lo),
        _ => format::estimate(effect.estimate, effect.lo, effect.hi),
    }
}

/// The whole effect in one phrase: `**slower**: 1.85x [1.82, 1.88], +85.0 %
/// [+82.4, +87.6], 5.10 [4.95, 5.27] ms per run`.
pub fn effect(effect: Bounded, relative: Option<Bounded>, baseline_ns: f64) -> String {
    let dir = Direction::of(effect);
    let mut parts = Vec::new();
    if dir != Direction::Unresolved {
        if let Some(r) = ratio(effect, baseline_ns) {
            parts.push(r);
        }
    }
    if let Some(r) = relative {
        parts.push(percent(r));
    }
    parts.push(format!("{} per run", per_run(effect)));
    let word = match dir {
        Direction::Unresolved => dir.word().to_string(),
        _ => format!("**{}**", dir.word()),
    };
    format!("{word}: {}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(estimate: f64, lo: f64, hi: f64) -> Bounded {
        Bounded { estimate, lo, hi }
    }

    #[test]
    fn slower_faster_and_unresolved_read_in_words() {
        let base = 6_000_000.0;
        let slow = b(5_100_000.0, 4_950_000.0, 5_270_000.0);
        let text = effect(slow, Some(b(0.85, 0.825, 0.878)), base);
        assert_eq!(
            text,
            "**slower**: 1.85x [1.82, 1.88], +85.0 % [+82.5, +87.8], 5.10 [4.95, 5.27] ms per run"
        );
        // Faster: a positive duration and a ratio above 1.
        let fast = b(-1_000_000.0, -1_100_000.0, -900_000.0);
        let text = effect(fast, None, base);
        assert!(text.starts_with("**faster**: 1.20x [1.18, 1.22]"), "{text}");
        assert!(text.ends_with("1.00 [0.90, 1.10] ms per run"), "{text}");
        assert!(!text.contains('-'), "{text}");
        // Unresolved: no ratio, signed numbers, no bold word.
        let none = b(20_000.0, -60_000.0, 100_000.0);
        let text = effect(none, Some(b(0.0033, -0.01, 0.0167)), base);
        assert!(
            text.starts_with("no difference resolved: +0.3 % [-1.0, +1.7], 20 [-60, 100] µs"),
            "{text}"
        );
    }

    #[test]
    fn percent_digits_follow_the_interval() {
        assert_eq!(percent(b(0.5, 0.1, 0.9)), "+50 % [+10, +90]");
        assert_eq!(percent(b(-0.0001, -0.0002, 0.0)), "-0.01 % [-0.02, 0]");
    }
}
