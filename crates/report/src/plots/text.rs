//! How much room a label takes, without a font: the viewer draws the SVG
//! `<text>` in its own `sans-serif`, so layouts reserve what the widest
//! common one needs. plotters writes a style of size `s` as `font-size`
//! `s / 1.24` px; at 0.6 em per character that is at least what DejaVu Sans
//! (about 0.58 em per character of running text) or Arial draws.
//!
//! Layouts measure with [`width`] and break or shorten what does not fit
//! with [`wrap`], so no label runs into another or off the canvas at any
//! panel count (`tests/suite/plots.rs` checks the drawn SVGs with the same rule).

/// The pixel height of a style of size `size` (plotters' scale).
pub(super) fn px(size: u32) -> f64 {
    f64::from(size) / 1.24
}

/// The width, in pixels, that `text` takes in a style of size `size`.
pub(super) fn width(text: &str, size: u32) -> i32 {
    (text.chars().count() as f64 * 0.6 * px(size)).ceil() as i32
}

/// `text` broken at spaces into lines of at most `max` pixels, at most
/// `max_lines` of them: a word longer than a line is cut with `…`, and so
/// is the last line when more text would follow it.
pub(super) fn wrap(text: &str, size: u32, max: i32, max_lines: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let joined = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if line.is_empty() || width(&joined, size) <= max {
            line = joined;
        } else {
            lines.push(std::mem::replace(&mut line, word.to_string()));
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    let cut = lines.len() > max_lines.max(1);
    lines.truncate(max_lines.max(1));
    if let (true, Some(last)) = (cut, lines.last_mut()) {
        // End at a whole word where one fits before the mark.
        while width(&format!("{last} …"), size) > max {
            match last.rfind(' ') {
                Some(i) => last.truncate(i),
                None => break,
            }
        }
        last.push_str(" …");
    }
    lines.iter().map(|l| shorten(l, size, max)).collect()
}

/// `text` cut so that it fits `max` pixels, ending with `…` when cut.
fn shorten(text: &str, size: u32, max: i32) -> String {
    if width(text, size) <= max {
        return text.to_string();
    }
    let mut chars: Vec<char> = text.chars().collect();
    while !chars.is_empty() && width(&format!("{}…", chars.iter().collect::<String>()), size) > max
    {
        chars.pop();
    }
    let kept: String = chars.into_iter().collect();
    format!("{}…", kept.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_are_six_tenths_of_an_em_per_character() {
        // Size 15 is drawn at 12.1 px: 7.26 px per character.
        assert_eq!(width("abcdefghij", 15), 73);
        assert_eq!(width("", 15), 0);
        assert_eq!(width("µs ←", 15), 30);
    }

    #[test]
    fn wrap_breaks_at_spaces_and_marks_what_it_cut() {
        let w = |n: usize| width(&"x".repeat(n), 15);
        assert_eq!(wrap("one two three", 15, w(7), 3), ["one two", "three"]);
        assert_eq!(wrap("one two three", 15, w(20), 3), ["one two three"]);
        assert_eq!(wrap("one two three four", 15, w(7), 1), ["one …"]);
        assert_eq!(wrap("abcdefghijkl", 15, w(6), 2), ["abcde…"]);
        assert_eq!(wrap("ab abcdefghijkl", 15, w(6), 2), ["ab", "abcde…"]);
        for line in wrap("a very long label that goes on and on", 15, w(9), 2) {
            assert!(width(&line, 15) <= w(9), "{line}");
        }
    }
}
