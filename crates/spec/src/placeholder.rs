//! `{name}` placeholders in argv, env values, paths and SQL (docs/guide/own-code.md).
//!
//! Syntax: `{` + a name of ASCII letters, digits and `_` (not starting with
//! a digit) + `}` is a placeholder; `{{` is a literal `{`. Every other brace
//! is literal, so `awk '{print $1}'` or a JSON literal in SQL needs no
//! escaping. Values are filled in three steps, each by [`substitute`]:
//!
//! 1. per cell, in the parent: grid values (`{rows}`, `{delay_us}`), with
//!    the inserted text escaped so it can never form a placeholder itself;
//! 2. per fork, in the worker: `{scratch}` (commands only);
//! 3. per run: `{input}`, through a compiled [`Template`].

use std::ops::Range;

/// The pair's input: the same number for both arms of a pair.
pub const INPUT: &str = "input";
/// The client's number, 0 to N - 1, in an `sql` arm with `clients = N`.
pub const CLIENT: &str = "client";
/// A private directory the worker makes for each command strategy of a fork.
pub const SCRATCH: &str = "scratch";

/// One piece of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Text to copy as is (byte range of the source).
    Literal(Range<usize>),
    /// `{{`: one literal `{` (the range covers both braces).
    Escape(Range<usize>),
    /// `{name}`: the range covers the braces.
    Name(&'a str, Range<usize>),
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_name_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Splits `text` into literals, escapes and placeholders.
pub fn scan(text: &str) -> Vec<Piece<'_>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut literal_start = 0;
    let mut i = 0;
    let flush = |out: &mut Vec<Piece<'_>>, start: usize, end: usize| {
        if end > start {
            out.push(Piece::Literal(start..end));
        }
    };
    while i < bytes.len() {
        if bytes[i] != b'{' {
            i += 1;
            continue;
        }
        if bytes.get(i + 1) == Some(&b'{') {
            flush(&mut out, literal_start, i);
            out.push(Piece::Escape(i..i + 2));
            i += 2;
            literal_start = i;
            continue;
        }
        let name_start = i + 1;
        let mut j = name_start;
        if bytes.get(j).copied().is_some_and(is_name_start) {
            while bytes.get(j).copied().is_some_and(is_name_char) {
                j += 1;
            }
            if bytes.get(j) == Some(&b'}') {
                flush(&mut out, literal_start, i);
                out.push(Piece::Name(&text[name_start..j], i..j + 1));
                i = j + 1;
                literal_start = i;
                continue;
            }
        }
        i += 1;
    }
    flush(&mut out, literal_start, bytes.len());
    out
}

/// The placeholders of `text` with their byte offsets, in order.
pub fn names(text: &str) -> Vec<(&str, usize)> {
    scan(text)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Name(n, r) => Some((n, r.start)),
            _ => None,
        })
        .collect()
}

/// What [`substitute`] does with one placeholder.
pub enum Fill {
    /// Replace it with this text.
    With(String),
    /// Leave `{name}` in place for a later step.
    Keep,
}

/// A substituted text and where each of its bytes came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Substituted {
    pub text: String,
    /// (offset in `text`, offset in the source), at every piece boundary.
    map: Vec<(usize, usize)>,
}

impl Substituted {
    /// The source offset of byte `at` of the substituted text: exact inside
    /// copied text, the placeholder's `{` inside an inserted value.
    pub(crate) fn source_offset(&self, at: usize) -> usize {
        let i = self.map.partition_point(|&(out, _)| out <= at);
        match i.checked_sub(1).map(|k| self.map[k]) {
            Some((out, src)) => {
                let next_out = self.map.get(i).map_or(usize::MAX, |m| m.0);
                let next_src = self.map.get(i).map_or(usize::MAX, |m| m.1);
                // Copied text keeps its length; an inserted value does not.
                if next_src.saturating_sub(src) == next_out.saturating_sub(out) {
                    src + (at - out)
                } else {
                    src
                }
            }
            None => at,
        }
    }
}

/// Fills placeholders through `fill`; `escapes` says whether `{{` becomes
/// `{` (final step) or stays `{{` (an intermediate step, so the next one
/// still reads it as a literal brace).
pub fn substitute(text: &str, escapes: bool, mut fill: impl FnMut(&str) -> Fill) -> Substituted {
    let mut out = String::with_capacity(text.len());
    let mut map = Vec::new();
    for piece in scan(text) {
        map.push((out.len(), piece_start(&piece)));
        match piece {
            Piece::Literal(r) => out.push_str(&text[r]),
            Piece::Escape(r) if escapes => {
                out.push('{');
                // Resynchronise after the shortened escape.
                map.push((out.len(), r.end));
            }
            Piece::Escape(r) => out.push_str(&text[r]),
            Piece::Name(name, r) => match fill(name) {
                Fill::With(v) => {
                    out.push_str(&v);
                    map.push((out.len(), r.end));
                }
                Fill::Keep => out.push_str(&text[r]),
            },
        }
    }
    map.push((out.len(), text.len()));
    Substituted { text: out, map }
}

fn piece_start(p: &Piece<'_>) -> usize {
    match p {
        Piece::Literal(r) | Piece::Escape(r) | Piece::Name(_, r) => r.start,
    }
}

/// How a value is written into the text that receives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quoting {
    /// As is: an argv element, an env value, a path, SQL.
    Raw,
    /// Quoted for `/bin/sh` (the `shell` key): a value is always one word,
    /// and `;`, `$(...)`, quotes or spaces in it are never shell syntax.
    Shell,
}

impl Quoting {
    pub fn quote(self, value: &str) -> String {
        match self {
            Quoting::Raw => value.to_string(),
            // shlex refuses only a NUL byte, which no command line can
            // hold: the spawn fails on it, so nothing runs either way.
            Quoting::Shell => shlex::try_quote(value)
                .map(|q| q.into_owned())
                .unwrap_or_else(|_| value.to_string()),
        }
    }
}

/// Where in a `/bin/sh` text byte `offset` stands, when that is a place a
/// quoted value would not be one word: inside single, double or back
/// quotes (the value's own quotes would close them), or after a
/// here-document operator (whose body expands `$(...)` whatever the
/// quotes). `None`: bare, where the quoted value is exactly one word.
/// A comment is skipped, so an apostrophe in it opens nothing.
pub(crate) fn shell_context(text: &str, offset: usize) -> Option<&'static str> {
    #[derive(PartialEq)]
    enum Q {
        Bare,
        Single,
        Double,
        Back,
    }
    let b = text.as_bytes();
    let mut q = Q::Bare;
    let mut i = 0;
    while i < offset.min(b.len()) {
        let c = b[i];
        match q {
            Q::Bare => match c {
                b'\\' => i += 1,
                b'\'' => q = Q::Single,
                b'"' => q = Q::Double,
                b'`' => q = Q::Back,
                b'<' if b.get(i + 1) == Some(&b'<') => return Some("a here-document"),
                b'#' if i == 0 || b" \t\n;&|()".contains(&b[i - 1]) => {
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                    continue;
                }
                _ => {}
            },
            Q::Single if c == b'\'' => q = Q::Bare,
            Q::Double | Q::Back if c == b'\\' => i += 1,
            Q::Double if c == b'"' => q = Q::Bare,
            Q::Back if c == b'`' => q = Q::Bare,
            _ => {}
        }
        i += 1;
    }
    match q {
        Q::Bare => None,
        Q::Single => Some("single quotes"),
        Q::Double => Some("double quotes"),
        Q::Back => Some("backquotes"),
    }
}

/// `value` written so that a later step copies it literally.
pub fn escape(value: &str) -> String {
    value.replace('{', "{{")
}

/// `text` (other placeholders already filled, escapes still `{{`) with
/// each `{input}` written as `param` and each `{{` as `{`: the text and,
/// per `{input}`, (its offset in the result, its offset in `text`).
pub(crate) fn inputs_as(text: &str, param: &str) -> (String, Vec<(usize, usize)>) {
    let mut out = String::with_capacity(text.len());
    let mut at = Vec::new();
    for piece in scan(text) {
        match piece {
            Piece::Literal(r) => out.push_str(&text[r]),
            Piece::Escape(_) => out.push('{'),
            Piece::Name(INPUT, r) => {
                at.push((out.len(), r.start));
                out.push_str(param);
            }
            Piece::Name(_, r) => out.push_str(&text[r]),
        }
    }
    (out, at)
}

/// A text whose only remaining placeholder is `{input}`, compiled once per
/// fork so each run only concatenates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pieces: Vec<TemplatePiece>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum TemplatePiece {
    Text(String),
    Input,
}

/// A placeholder that nothing filled: validation makes this impossible for
/// a spec it accepted, so it means a bug or a hand-made job.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("placeholder {{{0}}} has no value here")]
pub struct Unbound(pub String);

impl Template {
    pub fn compile(text: &str) -> Result<Template, Unbound> {
        let mut pieces: Vec<TemplatePiece> = Vec::new();
        let push_text = |pieces: &mut Vec<TemplatePiece>, s: &str| match pieces.last_mut() {
            Some(TemplatePiece::Text(t)) => t.push_str(s),
            _ => pieces.push(TemplatePiece::Text(s.to_string())),
        };
        for piece in scan(text) {
            match piece {
                Piece::Literal(r) => push_text(&mut pieces, &text[r]),
                Piece::Escape(_) => push_text(&mut pieces, "{"),
                Piece::Name(INPUT, _) => pieces.push(TemplatePiece::Input),
                Piece::Name(other, _) => return Err(Unbound(other.to_string())),
            }
        }
        Ok(Template { pieces })
    }

    /// The text for one run's input, written into `out` (cleared first).
    pub fn render_into(&self, input: u64, out: &mut String) {
        out.clear();
        for p in &self.pieces {
            match p {
                TemplatePiece::Text(t) => out.push_str(t),
                TemplatePiece::Input => {
                    use std::fmt::Write;
                    let _ = write!(out, "{input}");
                }
            }
        }
    }

    /// The text with each `{input}` written as `param(k)` for the k-th
    /// (from 0), and where each was written.
    pub fn with_inputs<'p>(&self, mut param: impl FnMut(usize) -> &'p str) -> (String, Vec<usize>) {
        let mut out = String::new();
        let mut at = Vec::new();
        for p in &self.pieces {
            match p {
                TemplatePiece::Text(t) => out.push_str(t),
                TemplatePiece::Input => {
                    at.push(out.len());
                    out.push_str(param(at.len() - 1));
                }
            }
        }
        (out, at)
    }

    pub fn render(&self, input: u64) -> String {
        let mut s = String::new();
        self.render_into(input, &mut s);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_braces_and_escapes() {
        let text = "a {rows} {{x}} awk '{print $1}' {1a} {_b2}{input}";
        let found: Vec<&str> = names(text).into_iter().map(|(n, _)| n).collect();
        assert_eq!(found, ["rows", "_b2", "input"]);
        assert_eq!(names("{rows}")[0], ("rows", 0));
        assert!(names("{ rows }").is_empty());
        assert!(names("{rows").is_empty());
        assert!(names("{}").is_empty());
    }

    #[test]
    fn substitution_keeps_later_placeholders_and_escapes() {
        let step1 = substitute("x={rows} y={input} z={{rows}", false, |n| match n {
            "rows" => Fill::With(escape("1{0}")),
            _ => Fill::Keep,
        });
        assert_eq!(step1.text, "x=1{{0} y={input} z={{rows}");
        let t = Template::compile(&step1.text).unwrap();
        assert_eq!(t.render(42), "x=1{0} y=42 z={rows}");
        assert_eq!(
            t.with_inputs(|_| "$1"),
            ("x=1{0} y=$1 z={rows}".to_string(), vec![9])
        );
        assert_eq!(
            inputs_as(&step1.text, "$1"),
            ("x=1{0} y=$1 z={rows}".to_string(), vec![(9, 10)])
        );
        assert_eq!(
            Template::compile("{scratch}/f"),
            Err(Unbound("scratch".into()))
        );
    }

    #[test]
    fn shell_values_are_one_quoted_word() {
        assert_eq!(Quoting::Shell.quote("a; touch pwn"), "'a; touch pwn'");
        assert_eq!(Quoting::Shell.quote("b$(touch x)"), "'b$(touch x)'");
        assert_eq!(Quoting::Shell.quote("plain"), "plain");
        assert_eq!(Quoting::Shell.quote(""), "''");
        assert_eq!(Quoting::Raw.quote("a; b"), "a; b");
    }

    #[test]
    fn shell_contexts_where_a_quoted_value_is_not_one_word() {
        let at = |t: &str| shell_context(t, t.find("{x}").unwrap());
        assert_eq!(at("echo {x}"), None);
        assert_eq!(at("echo a'b'\"c\" {x} # it's"), None);
        assert_eq!(at("# don't\necho {x}"), None);
        assert_eq!(at("echo \\' {x}"), None);
        assert_eq!(at("echo '{x}'"), Some("single quotes"));
        assert_eq!(at("echo \"a {x}\""), Some("double quotes"));
        assert_eq!(at("echo \"\\\" {x}\""), Some("double quotes"));
        assert_eq!(at("echo `cat {x}`"), Some("backquotes"));
        assert_eq!(at("cat <<EOF\n{x}\nEOF"), Some("a here-document"));
        assert_eq!(at("a=b#c'; echo {x}"), Some("single quotes"));
    }

    #[test]
    fn source_offsets_map_back_through_values_and_escapes() {
        let src = "SELECT {n} FROM t; {{ COMMIT";
        let s = substitute(src, true, |_| Fill::With("12345".into()));
        assert_eq!(s.text, "SELECT 12345 FROM t; { COMMIT");
        let commit = s.text.find("COMMIT").unwrap();
        assert_eq!(s.source_offset(commit), src.find("COMMIT").unwrap());
        let from = s.text.find("FROM").unwrap();
        assert_eq!(s.source_offset(from), src.find("FROM").unwrap());
        // Inside the inserted value: the placeholder's brace.
        assert_eq!(s.source_offset(s.text.find("234").unwrap()), 7);
        assert_eq!(s.source_offset(0), 0);
    }
}
