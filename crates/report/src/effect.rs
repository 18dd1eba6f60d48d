//! The one home of the words for an effect, so the Finding, the terminal,
//! the tables, the plots, the gate, `compare` and `history` never disagree:
//! **faster**, **slower** or **no difference resolved**, with the size three
//! ways (the speed ratio `1.52x`, the change in run time in %, the
//! difference per run as a positive duration), each with its interval.
//!
//! A negative duration is never called "less" or "more": a faster
//! treatment's difference is printed as its size, "1.01 ms faster per run".
//! Only when the interval covers 0 (no direction) is a signed difference
//! printed, since its interval has both signs anyway.
//!
//! Digits follow `format`'s rule for intervals: two significant digits of
//! the interval's width, so no interval collapses to one number.

use crate::numbers::{self, Column, Entry};
use runner_analysis::effect::{Direction, Effect, IntervalKind};
use serde::Serialize;

/// An effect in words; every field is plain text (no Markdown).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EffectText {
    /// `faster`, `slower` or `no difference resolved`.
    pub direction: &'static str,
    /// The speed ratio: `1.521x [1.499, 1.540] faster`, `2.03x [2.01,
    /// 2.05] slower`; with no direction, treatment over baseline: `speed
    /// ratio 1.002x [0.991, 1.013]`.
    pub ratio: String,
    /// The change in run time, signed: `-34.3 % [-35.1, -33.3]`.
    pub percent: String,
    /// The difference per run: `1.01 [0.97, 1.04] ms faster per run`, or
    /// signed when no direction is resolved: `+6 [-27, 39] ns per run`.
    pub per_run: String,
    /// `faster in 3 of 3 forks`, `slower in 2 of 3 forks, faster in 1`.
    pub forks: String,
    /// The interval's name: `95 % interval over the forks`.
    pub interval: String,
    /// The three sizes in one phrase: `1.521x [1.499, 1.540] faster,
    /// -34.3 % [-35.1, -33.3] run time, 1.01 [0.97, 1.04] ms faster per run`.
    pub sizes: String,
    /// One sentence: "`quick` is faster than `base`: ...; faster in 3 of 3
    /// forks." Names in backticks.
    pub sentence: String,
    /// The same sentence with the direction and the ratio in bold, for
    /// Markdown.
    pub sentence_md: String,
}

/// The direction as a word.
pub(crate) fn direction_word(d: Direction) -> &'static str {
    match d {
        Direction::Faster => "faster",
        Direction::Slower => "slower",
        Direction::NoDifference => "no difference resolved",
    }
}

/// The interval's name at `confidence`, in words (docs/guide/statistics.md
/// says how each is made).
pub fn interval_name(kind: IntervalKind, confidence: f64) -> String {
    match kind {
        IntervalKind::Forks => format!("{} interval over the forks", numbers::percent(confidence)),
        IntervalKind::OneFork => format!(
            "{} interval of one fork's runs (it says nothing of how the next fork would differ)",
            numbers::percent(confidence)
        ),
        IntervalKind::Sequence => format!(
            "{} interval over the forks (valid where the run stopped)",
            numbers::percent(confidence)
        ),
    }
}

/// How the three sizes of a set of effects are printed: one column each
/// (a table's rows, or one effect alone), so rows line up and share their
/// decimals (`format`'s rule: two significant digits of the narrowest
/// interval).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Digits {
    ratio: Column,
    percent: Column,
    time: Column,
}

impl Digits {
    pub fn of(effects: &[&Effect]) -> Digits {
        let column = |size: fn(&Effect) -> (f64, f64, f64)| -> Vec<Entry> {
            effects
                .iter()
                .map(|e| {
                    let (m, lo, hi) = size(e);
                    Entry::Estimate(m, lo, hi)
                })
                .collect()
        };
        let ratio = column(speed_ratio);
        let percent = column(|e| {
            (
                e.change * 100.0,
                e.change_ci[0] * 100.0,
                e.change_ci[1] * 100.0,
            )
        });
        let time = column(size);
        Digits {
            ratio: ratio_column(&ratio),
            percent: Column::plain(&percent, 3),
            time: Column::time(&time),
        }
    }
}

/// A column of ratios: two significant digits of the narrowest interval,
/// and at least two decimals below 10x (`1.5x` would hide that 1.46 and
/// 1.54 differ; `66.00x` would claim digits a 66x win does not have).
fn ratio_column(entries: &[Entry]) -> Column {
    let c = Column::plain(entries, 4);
    let below_ten = entries.iter().all(|e| match e {
        Entry::Estimate(m, _, hi) => m.abs() < 10.0 && hi.abs() < 10.0,
        _ => true,
    });
    Column {
        decimals: if below_ten {
            c.decimals.max(2)
        } else {
            c.decimals
        },
        ..c
    }
}

/// The effect of `treatment` against `baseline` in words.
pub fn text(e: &Effect, treatment: &str, baseline: &str, confidence: f64) -> EffectText {
    text_in(e, treatment, baseline, confidence, &Digits::of(&[e]))
}

/// [`text`] with the digits of a table column.
pub fn text_in(
    e: &Effect,
    treatment: &str,
    baseline: &str,
    confidence: f64,
    digits: &Digits,
) -> EffectText {
    let (ratio, percent, per_run) = (ratio(e, digits), percent(e, digits), per_run(e, digits));
    let sizes = format!("{ratio}, {percent} run time, {per_run}");
    let forks = forks(e);
    // Two forks that disagree leave Student's t with one degree of
    // freedom, 12.7 standard errors wide: say that more forks are what
    // it takes, rather than let "no difference" read as an answer.
    let few = if e.direction == Direction::NoDifference
        && e.interval != IntervalKind::OneFork
        && e.forks == 2
    {
        " 2 forks cannot bound this effect (an interval over 2 forks is 12.7 of their standard errors wide); run 3 at least."
    } else {
        ""
    };
    // One sentence, plain (terminal) or with Markdown emphasis (reports).
    let say = |emphasis: fn(&str) -> String| match e.direction {
        Direction::NoDifference => format!(
            "{} between `{treatment}` and `{baseline}`: {sizes}; {forks}.{few}",
            emphasis("No difference resolved")
        ),
        d => format!(
            "`{treatment}` is {} than `{baseline}`: {}, {percent} run time, {per_run}; {forks}.",
            emphasis(direction_word(d)),
            emphasis(&ratio)
        ),
    };
    let sentence = say(|s| s.to_string());
    let sentence_md = say(|s| format!("**{s}**"));
    EffectText {
        direction: direction_word(e.direction),
        ratio,
        percent,
        per_run,
        forks,
        interval: interval_name(e.interval, confidence),
        sizes,
        sentence,
        sentence_md,
    }
}

/// A share with its interval as a signed % with one digit rule:
/// `+2.2 % [+2.0, +2.7]`.
pub fn percent_of(share: f64, ci: [f64; 2]) -> String {
    let (m, lo, hi) = (share * 100.0, ci[0] * 100.0, ci[1] * 100.0);
    if ![m, lo, hi].iter().all(|v| v.is_finite()) {
        return "n/a".into();
    }
    let c = Column::plain(&[Entry::Estimate(m, lo, hi)], 3);
    format!(
        "{} % [{}, {}]",
        c.bare(m, true),
        c.bare(lo, true),
        c.bare(hi, true)
    )
}

/// The speed ratio and its interval, as printed: faster as baseline over
/// treatment (`1.52x faster`), else treatment over baseline.
fn speed_ratio(e: &Effect) -> (f64, f64, f64) {
    oriented(e.ratio, e.ratio_ci, e.direction)
}

/// A ratio (treatment over baseline) as printed for `direction`: inverted
/// when faster, so the figure is always at least about 1.
fn oriented(ratio: f64, [lo, hi]: [f64; 2], direction: Direction) -> (f64, f64, f64) {
    match direction {
        Direction::Faster => (1.0 / ratio, 1.0 / hi, 1.0 / lo),
        _ => (ratio, lo, hi),
    }
}

/// A speed ratio (treatment over baseline) and its interval in words, on
/// its own digits: `1.93x [1.85, 2.01] faster`; with an interval over 1,
/// `speed ratio 1.006x [0.973, 1.039]` (the treatment's run time over the
/// baseline's, as everywhere).
pub(crate) fn ratio_words(ratio: f64, ci: [f64; 2]) -> String {
    let direction = Direction::of_ratio(ci);
    let (m, lo, hi) = oriented(ratio, ci, direction);
    let c = ratio_column(&[Entry::Estimate(m, lo, hi)]);
    let numbers = format!(
        "{}x [{}, {}]",
        c.bare(m, false),
        c.bare(lo, false),
        c.bare(hi, false)
    );
    match direction {
        Direction::Faster => format!("{numbers} faster"),
        Direction::Slower => format!("{numbers} slower"),
        Direction::NoDifference => format!("speed ratio {numbers}"),
    }
}

/// The difference as printed: its size for a direction, signed without.
fn size(e: &Effect) -> (f64, f64, f64) {
    let m = e.difference_ns;
    let [lo, hi] = e.difference_ci_ns;
    match e.direction {
        Direction::Faster => (-m, -hi, -lo),
        _ => (m, lo, hi),
    }
}

/// The speed ratio in words (module doc).
fn ratio(e: &Effect, digits: &Digits) -> String {
    let (m, lo, hi) = speed_ratio(e);
    let numbers = if [m, lo, hi].iter().all(|v| v.is_finite() && *v > 0.0) {
        let c = digits.ratio;
        format!(
            "{}x [{}, {}]",
            c.bare(m, false),
            c.bare(lo, false),
            c.bare(hi, false)
        )
    } else {
        "n/a".into()
    };
    match e.direction {
        Direction::Faster => format!("{numbers} faster"),
        Direction::Slower => format!("{numbers} slower"),
        Direction::NoDifference => format!("speed ratio {numbers}"),
    }
}

/// The change in run time, signed, in %: `-34.3 % [-35.1, -33.3]`.
fn percent(e: &Effect, digits: &Digits) -> String {
    let [m, lo, hi] = [
        e.change * 100.0,
        e.change_ci[0] * 100.0,
        e.change_ci[1] * 100.0,
    ];
    if ![m, lo, hi].iter().all(|v| v.is_finite()) {
        return "n/a".into();
    }
    let c = digits.percent;
    format!(
        "{} % [{}, {}]",
        c.bare(m, true),
        c.bare(lo, true),
        c.bare(hi, true)
    )
}

/// The difference per run: a size with its direction, or signed when the
/// interval covers 0.
fn per_run(e: &Effect, digits: &Digits) -> String {
    let (m, lo, hi) = size(e);
    let text = digits.time.estimate(m, lo, hi);
    match e.direction {
        Direction::Faster => format!("{text} faster per run"),
        Direction::Slower => format!("{text} slower per run"),
        Direction::NoDifference if m > 0.0 && !text.starts_with('0') => {
            format!("+{text} per run")
        }
        Direction::NoDifference => format!("{text} per run"),
    }
}

/// `n fork` / `n forks`.
pub fn forks_count(n: u32) -> String {
    format!("{n} fork{}", if n == 1 { "" } else { "s" })
}

/// How the forks, each on its own interval, split.
pub(crate) fn forks(e: &Effect) -> String {
    let n = forks_count(e.forks);
    let (faster, slower) = (e.forks_faster, e.forks_slower);
    match e.direction {
        Direction::Faster if slower == 0 => format!("faster in {faster} of {n}"),
        Direction::Faster => format!("faster in {faster} of {n}, slower in {slower}"),
        Direction::Slower if faster == 0 => format!("slower in {slower} of {n}"),
        Direction::Slower => format!("slower in {slower} of {n}, faster in {faster}"),
        Direction::NoDifference if faster == 0 && slower == 0 => {
            format!("no fork resolved a difference on its own ({n})")
        }
        Direction::NoDifference => {
            format!("faster in {faster} and slower in {slower} of {n}")
        }
    }
}

/// The forks whose own interval agrees with the cell's direction: `3/3
/// faster`; with no direction resolved over the forks, what the forks
/// said on their own (`3/3 faster`, `1/3 faster, 1/3 slower`, `0/3
/// resolved`), as the sentence's "faster in 3 of 3 forks" does.
pub(crate) fn forks_agreeing(e: &Effect) -> String {
    let n = e.forks;
    match e.direction {
        Direction::Faster => format!("{}/{n} faster", e.forks_faster),
        Direction::Slower => format!("{}/{n} slower", e.forks_slower),
        Direction::NoDifference => match (e.forks_faster, e.forks_slower) {
            (0, 0) => format!("0/{n} resolved"),
            (f, 0) => format!("{f}/{n} faster"),
            (0, s) => format!("{s}/{n} slower"),
            (f, s) => format!("{f}/{n} faster, {s}/{n} slower"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An effect whose ratio is D over `base` (what an additive change of
    /// D on a baseline of `base` gives).
    fn effect(d: f64, ci: [f64; 2], base: f64, faster: u32, slower: u32) -> Effect {
        let r = |x: f64| (base + x) / base;
        let ratio = (r(d), [r(ci[0]), r(ci[1])]);
        Effect::new(IntervalKind::Forks, base, ratio, [faster, slower], 3)
    }

    #[test]
    fn faster_is_said_with_positive_sizes() {
        let e = effect(-1_012_000.0, [-1_038_000.0, -974_000.0], 2_970_000.0, 3, 0);
        let t = text(&e, "two", "one", 0.95);
        assert_eq!(t.direction, "faster");
        assert_eq!(t.per_run, "1.012 [0.974, 1.038] ms faster per run");
        assert_eq!(t.percent, "-34.1 % [-34.9, -32.8]");
        assert_eq!(t.ratio, "1.517x [1.488, 1.537] faster");
        assert_eq!(t.forks, "faster in 3 of 3 forks");
        assert_eq!(
            t.sentence,
            "`two` is faster than `one`: 1.517x [1.488, 1.537] faster, -34.1 % [-34.9, -32.8] run time, 1.012 [0.974, 1.038] ms faster per run; faster in 3 of 3 forks."
        );
        assert!(!t.sentence.contains("less") && !t.sentence.contains("-1.0"));
    }

    #[test]
    fn slower_is_said_with_a_plus() {
        let e = effect(40_000.0, [37_000.0, 54_000.0], 1_000_000.0, 0, 2);
        let t = text(&e, "b", "a", 0.95);
        assert_eq!(t.direction, "slower");
        assert_eq!(t.per_run, "40 [37, 54] µs slower per run");
        assert_eq!(t.percent, "+4.0 % [+3.7, +5.4]");
        assert_eq!(t.ratio, "1.040x [1.037, 1.054] slower");
        assert_eq!(t.forks, "slower in 2 of 3 forks");
    }

    #[test]
    fn no_difference_keeps_the_sign_and_says_so() {
        let e = effect(6.0, [-27.0, 39.0], 1_000.0, 0, 0);
        let t = text(&e, "b", "a", 0.95);
        assert_eq!(t.direction, "no difference resolved");
        assert_eq!(t.per_run, "+6 [-27, 39] ns per run");
        assert_eq!(t.ratio, "speed ratio 1.006x [0.973, 1.039]");
        assert_eq!(
            t.forks,
            "no fork resolved a difference on its own (3 forks)"
        );
        assert!(t
            .sentence
            .starts_with("No difference resolved between `b` and `a`: "));
    }

    #[test]
    fn a_66x_win_is_a_ratio_with_positive_bounds() {
        let e = Effect::new(
            IntervalKind::Forks,
            66_000_000.0,
            (1.0 / 66.0, [1.0 / 73.0, 1.0 / 60.0]),
            [3, 0],
            3,
        );
        let t = text(&e, "idx", "noidx", 0.95);
        assert_eq!(t.ratio, "66x [60, 73] faster");
        assert_eq!(t.percent, "-98.48 % [-98.63, -98.33]");
        assert!(!t.sentence.contains("n/a"));
    }

    /// Two forks whose effects differ leave an interval 12.7 standard
    /// errors wide: the sentence says that 3 forks are what it takes, and
    /// the forks column says what the forks said on their own.
    #[test]
    fn two_forks_that_cannot_bound_an_effect_say_so() {
        let e = Effect::new(IntervalKind::Forks, 1000.0, (0.8, [0.4, 1.6]), [2, 0], 2);
        assert_eq!(e.direction, Direction::NoDifference);
        let t = text(&e, "b", "a", 0.95);
        assert!(
            t.sentence
                .ends_with("2 forks cannot bound this effect (an interval over 2 forks is 12.7 of their standard errors wide); run 3 at least."),
            "{}",
            t.sentence
        );
        assert_eq!(forks_agreeing(&e), "2/2 faster");
        let three = Effect::new(IntervalKind::Forks, 1000.0, (0.8, [0.4, 1.6]), [1, 1], 3);
        assert!(!text(&three, "b", "a", 0.95)
            .sentence
            .contains("cannot bound"));
        assert_eq!(forks_agreeing(&three), "1/3 faster, 1/3 slower");
    }

    #[test]
    fn ratio_words_follow_the_ratio_interval() {
        assert_eq!(ratio_words(0.5, [0.45, 0.55]), "2.00x [1.82, 2.22] faster");
        assert_eq!(
            ratio_words(1.5, [1.49, 1.51]),
            "1.500x [1.490, 1.510] slower"
        );
        assert_eq!(
            ratio_words(1.0, [0.9, 1.1]),
            "speed ratio 1.00x [0.90, 1.10]"
        );
    }

    #[test]
    fn interval_names_say_which() {
        assert_eq!(
            interval_name(IntervalKind::Forks, 0.95),
            "95 % interval over the forks"
        );
        assert_eq!(
            interval_name(IntervalKind::Sequence, 0.95),
            "95 % interval over the forks (valid where the run stopped)"
        );
        assert!(interval_name(IntervalKind::OneFork, 0.95)
            .starts_with("95 % interval of one fork's runs"));
    }
}
