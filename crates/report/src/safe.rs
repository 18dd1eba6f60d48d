//! What run.json says, made safe to put into Markdown.
//!
//! A report prints recorded text: paths and flags of the command that made
//! the folder, the machine's names (its CPU model, the busiest processes,
//! which may be another user's), the database server's version, strategy
//! names, grid values, table names. Any of it may come from an edited
//! run.json or from someone else on the machine, so none of it may change
//! the structure of the report: close a code span or a fence, start a
//! heading or a list, or add HTML. The context is built from a copy of the
//! record in which every string is made inert first, once, so no view can
//! forget to:
//!
//! - a control character (a newline above all: it is what starts a
//!   heading or closes a fence) becomes a space;
//! - a `<` that could open an HTML tag, comment or autolink, a backtick
//!   and a `|` become private marks ([`LT`], [`BACKTICK`], [`PIPE`]),
//!   which [`finish_markdown`] turns into what each means where it landed
//!   once the report is rendered: a `<` is `&lt;` outside code, and itself
//!   inside a code span or a fenced block (where Markdown reads no tag and
//!   shows an entity as typed, so `&lt;` would show as such); a `|` inside
//!   a table row is escaped (`\|`), so a strategy named `a|b` keeps every
//!   table's columns; a code span holding a backtick is fenced with more
//!   backticks than it holds, so an argv shows exactly as it ran; anywhere
//!   else each is itself. Text that is not Markdown (analysis.json, the
//!   terminal) gets the characters back with [`plain`], and the plots,
//!   which are XML, with [`plain_xml`].
//!
//! The exceptions are the texts that are Markdown by contract: the title
//! keeps its backticks (it is one line, without tags), the description
//! keeps its lines too (without tags, and a code fence it opens is closed),
//! and an SQL text keeps `<` (it is shown only inside a code span, as an
//! operator). The recorded command lines are shown only by
//! `shell::join`, one line in a fenced block, and are kept as they are; so
//! are the resolved spec's text and its digest, which are compared, never
//! shown.

use runner_folder::RunInfo;
use serde_json::Value;

/// The mark a recorded `|` carries through the rendering (a private-use
/// character: no text a user writes means anything by it, and one that
/// holds it has it replaced).
pub(crate) const PIPE: char = '\u{E000}';
/// The mark a recorded backtick carries through the rendering.
pub(crate) const BACKTICK: char = '\u{E001}';
/// The mark a recorded `<` that could open a tag carries through the
/// rendering.
pub(crate) const LT: char = '\u{E002}';

/// Every mark.
const MARKS: [char; 3] = [PIPE, BACKTICK, LT];

/// Rendered text that is not Markdown, with the marks made their
/// characters again.
pub(crate) fn plain(text: &str) -> String {
    if !text.contains(MARKS) {
        return text.to_string();
    }
    text.replace(PIPE, "|")
        .replace(BACKTICK, "`")
        .replace(LT, "<")
}

/// [`plain`] for XML (the plots' SVG), whose writer escaped the text it
/// drew but could not know a mark for `<`.
pub(crate) fn plain_xml(text: &str) -> String {
    plain(&text.replace(LT, "&lt;"))
}

/// Rendered Markdown with each mark made what it means where it landed
/// (module doc): inside a fenced block the character itself; in a table
/// row a pipe escaped; in a code span a `<` itself, and a span holding a
/// backtick fenced with one more backtick than its longest run; elsewhere
/// a backtick escaped and a `<` as `&lt;`.
pub(crate) fn finish_markdown(text: &str) -> String {
    if !text.contains(MARKS) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut fence: Option<String> = None;
    // Inside an HTML block (from a line that opens with a tag, such as
    // `<details><summary>`, to a blank line) Markdown reads no code span:
    // backticks there are text around HTML, so a `<` stays an entity.
    let mut html = false;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start_matches(' ');
        if fence.is_none() {
            if t.trim().is_empty() {
                html = false;
            } else if t.starts_with('<') && opens_tag(&t[1..]) {
                html = true;
            }
        }
        let marker: String = t.chars().take_while(|&c| c == '`' || c == '~').collect();
        if marker.len() >= 3
            && (marker.chars().all(|c| c == '`') || marker.chars().all(|c| c == '~'))
        {
            match &fence {
                None => fence = Some(marker),
                Some(open) if marker.starts_with(open.as_str()) => fence = None,
                Some(_) => {}
            }
            out.push_str(&plain(line));
            continue;
        }
        if fence.is_some() {
            out.push_str(&plain(line));
            continue;
        }
        let pipe = if t.starts_with('|') { "\\|" } else { "|" };
        let line = if html {
            line.replace(LT, "&lt;")
        } else {
            line.to_string()
        };
        out.push_str(&spans(&line).replace(PIPE, pipe));
    }
    out
}

/// Text outside code: a backtick mark escaped, a `<` mark an entity.
fn outside_code(text: &str) -> String {
    text.replace(BACKTICK, "\\`").replace(LT, "&lt;")
}

/// The length of the run of backticks that starts `text`.
fn backticks(text: &str) -> usize {
    text.bytes().take_while(|&b| b == b'`').count()
}

/// One line outside fenced blocks, its code spans found as CommonMark
/// finds them (a run of n backticks closed by the next run of exactly n; a
/// backtick after a backslash opens none): in a span, a `<` mark is `<`
/// and backtick marks are fenced; elsewhere both are escaped
/// ([`outside_code`]). A span that runs on to another line is taken for
/// text, which keeps every `<` an entity.
fn spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut plain_from = 0;
    let mut i = 0;
    while i < line.len() {
        let rest = &line[i..];
        if rest.starts_with("\\`") || rest.starts_with("\\\\") {
            i += 2;
            continue;
        }
        if !rest.starts_with('`') {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let n = backticks(rest);
        let after = &rest[n..];
        // The next run of exactly n backticks closes the span.
        let mut k = 0;
        let close = loop {
            match after[k..].find('`') {
                None => break None,
                Some(at) => {
                    let run = backticks(&after[k + at..]);
                    if run == n {
                        break Some(k + at);
                    }
                    k += at + run;
                }
            }
        };
        let Some(close) = close else {
            i += n;
            continue;
        };
        out.push_str(&outside_code(&line[plain_from..i]));
        let inner = after[..close].replace(LT, "<");
        let longest = inner
            .split(|c| c != BACKTICK && c != '`')
            .filter(|run| run.contains(BACKTICK))
            .map(|run| run.chars().count())
            .max()
            .unwrap_or(0);
        if longest == 0 {
            out.push_str(&rest[..n]);
            out.push_str(&inner);
            out.push_str(&rest[..n]);
        } else {
            let fence = "`".repeat(longest + 1);
            out.push_str(&format!("{fence} {} {fence}", inner.replace(BACKTICK, "`")));
        }
        i += n + close + n;
        plain_from = i;
    }
    out.push_str(&outside_code(&line[plain_from..]));
    out
}

/// How a string is made inert.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Everything above.
    Full,
    /// No line breaks or tags; Markdown otherwise (the title).
    Line,
    /// No tags, fences closed; lines kept (the description).
    Paragraphs,
    /// No line breaks or backticks; `<` kept (SQL, shown in code spans).
    Code,
    /// Left as it is.
    Keep,
}

/// A copy of `info` whose strings can go into Markdown as they are. An
/// error (a record that no longer reads once its text is inert) stops the
/// rendering rather than fall back on the raw text.
pub(crate) fn for_markdown(info: &RunInfo) -> Result<RunInfo, SafeError> {
    let mut v = serde_json::to_value(info).map_err(SafeError::Write)?;
    walk(&mut v, &mut Vec::new());
    serde_json::from_value(v).map_err(SafeError::ReadBack)
}

/// Why a record could not be made safe for Markdown: serde's error, kept
/// as the source, on the way out or on the way back.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SafeError {
    #[error("{0}")]
    Write(#[source] serde_json::Error),
    #[error("run.json does not read back once its text is made safe for Markdown ({0})")]
    ReadBack(#[source] serde_json::Error),
}

impl runner_core::error::Coded for SafeError {
    /// A recorded text that no longer reads once made inert is the
    /// folder's (exit 2), as any run.json the reader refuses is.
    fn failure(&self) -> runner_core::error::Failure {
        runner_core::error::Failure::BadInput
    }
}

fn mode(path: &[&str]) -> Mode {
    match path {
        ["spec", "toml" | "sha256"] => Mode::Keep,
        // Shown only as a command line (`shell::join`, one line with its
        // control characters escaped) in a fenced block, where neither a
        // backtick nor a tag means anything: kept, so the Reproduce
        // command is the one that ran.
        ["invocation", ..] | ["merged", "shards", _, "invocation", ..] => Mode::Keep,
        ["spec", "experiment", "title"] => Mode::Line,
        ["spec", "experiment", "description"] => Mode::Paragraphs,
        ["spec", "experiment", "strategies", _, .., "text"] => Mode::Code,
        _ => Mode::Full,
    }
}

/// `path` holds the keys down to `v` (an array's items share their
/// array's path).
fn walk<'a>(v: &'a mut Value, path: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => {
            if let Some(safe) = inert(s, mode(path)) {
                *s = safe;
            }
        }
        Value::Array(a) => {
            for x in a.iter_mut() {
                walk(x, path);
            }
        }
        Value::Object(m) => {
            // Keys are shown too (strategy names, grid keys); renamed the
            // same way wherever they appear, so lookups still agree. A
            // record of hundreds of forks has almost none to rename, so
            // the map is rebuilt only when one is.
            let renamed = m.keys().any(|k| inert(k, Mode::Full).is_some());
            if renamed {
                let entries: Vec<(String, Value)> = std::mem::take(m).into_iter().collect();
                for (k, x) in entries {
                    let k = inert(&k, Mode::Full).unwrap_or(k);
                    m.insert(k, x);
                }
            }
            let depth = path.len();
            for (k, x) in m.iter_mut() {
                path.push(k.as_str());
                walk(x, path);
                path.truncate(depth);
            }
        }
        _ => {}
    }
}

/// `<` followed by what starts a tag, a closing tag, a comment, a
/// processing instruction or an autolink.
fn opens_tag(rest: &str) -> bool {
    rest.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, '/' | '!' | '?'))
}

/// `s` made inert for `mode`; `None` when it already is.
fn inert(s: &str, mode: Mode) -> Option<String> {
    if mode == Mode::Keep {
        return None;
    }
    let needs = |(i, c): (usize, char)| match c {
        '\n' if mode == Mode::Paragraphs => false,
        c if c.is_control() => mode != Mode::Paragraphs,
        '<' => mode != Mode::Code && opens_tag(&s[i + 1..]),
        '`' => matches!(mode, Mode::Full | Mode::Code),
        '|' | PIPE | BACKTICK | LT => mode != Mode::Paragraphs,
        _ => false,
    };
    // Nearly every recorded string is already inert: no copy for those.
    if mode != Mode::Paragraphs && !s.char_indices().any(needs) {
        return None;
    }
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.char_indices() {
        match c {
            '\n' if mode == Mode::Paragraphs => out.push(c),
            c if c.is_control() && mode != Mode::Paragraphs => out.push(' '),
            '<' if mode != Mode::Code && opens_tag(&s[i + 1..]) => out.push(LT),
            '`' if matches!(mode, Mode::Full | Mode::Code) => out.push(BACKTICK),
            '|' if mode != Mode::Paragraphs => out.push(PIPE),
            PIPE | BACKTICK | LT if mode != Mode::Paragraphs => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    if mode == Mode::Paragraphs && open_fence(&out) {
        out.push_str(if out.ends_with('\n') {
            "```\n"
        } else {
            "\n```\n"
        });
    }
    (out != s).then_some(out)
}

/// Whether the Markdown `text` leaves a fenced code block open (a line
/// starting with ``` or ~~~ opens one; the same fence closes it).
fn open_fence(text: &str) -> bool {
    let mut open: Option<&str> = None;
    for line in text.lines() {
        let t = line.trim_start_matches(' ');
        if line.len() - t.len() > 3 {
            continue;
        }
        for fence in ["```", "~~~"] {
            if t.starts_with(fence) {
                match open {
                    None => open = Some(fence),
                    Some(f)
                        if f == fence
                            && t.trim_end()
                                .chars()
                                .all(|c| c == fence.as_bytes()[0] as char) =>
                    {
                        open = None
                    }
                    Some(_) => {}
                }
            }
        }
    }
    open.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_string_cannot_close_a_fence_start_a_heading_or_add_html() {
        let evil =
            "a.toml\n```\n# Injected\n<img src=x onerror=alert(1)> [x](javascript:alert(1)) `code`";
        let safe = inert(evil, Mode::Full).unwrap();
        assert!(!safe.contains('\n'), "{safe}");
        assert!(!safe.contains('`'), "{safe}");
        assert!(!safe.contains("<img"), "{safe}");
        let md = finish_markdown(&safe);
        assert!(md.contains("&lt;img") && !md.contains("<img"), "{md}");
        // Ordinary text is left alone, comparisons included.
        for fine in [
            "Intel(R) Xeon(R) CPU @ 2.20GHz",
            "v < 10",
            "p<0.05",
            "a -> b",
        ] {
            assert_eq!(inert(fine, Mode::Full), None, "{fine}");
        }
    }

    #[test]
    fn markdown_by_contract_keeps_its_markdown_but_no_html_or_open_fence() {
        assert_eq!(inert("A/A of `sort`", Mode::Line), None);
        assert_eq!(
            finish_markdown(&inert("A\n# B <b>x</b>", Mode::Line).unwrap()),
            "A # B &lt;b>x&lt;/b>"
        );
        let d = "Intro.\n\n```sh\nrunner exec x\n```\n";
        assert_eq!(inert(d, Mode::Paragraphs), None);
        let open = "Intro.\n\n```\nthe rest of the report would be code";
        assert!(inert(open, Mode::Paragraphs)
            .unwrap()
            .ends_with("code\n```\n"));
        assert_eq!(
            inert("SELECT 1 WHERE a<b\n AND `x`", Mode::Code).unwrap(),
            "SELECT 1 WHERE a<b  AND \u{E001}x\u{E001}"
        );
    }

    #[test]
    fn a_committed_record_reads_back_the_same_and_an_edited_one_reads_back_inert() {
        // A frozen copy: reports/aa is what the README's first command rewrites.
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/folders/aa/run.json"
        );
        let info = RunInfo::read(std::path::Path::new(path)).unwrap();
        let same = for_markdown(&info).unwrap();
        assert_eq!(
            serde_json::to_value(&same).unwrap(),
            serde_json::to_value(&info).unwrap()
        );
        let mut v = serde_json::to_value(&info).unwrap();
        v["environment"]["cpu_model"] = "CPU\n# x <img src=y>".into();
        v["spec"]["path"] = "a`b".into();
        let edited: RunInfo = serde_json::from_value(v).unwrap();
        let safe = for_markdown(&edited).unwrap();
        assert_eq!(
            finish_markdown(&safe.environment().cpu_model),
            "CPU # x &lt;img src=y>"
        );
        assert_eq!(safe.spec().path, "a\u{E001}b");
    }

    #[test]
    fn keys_and_their_uses_are_renamed_alike() {
        let mut v = serde_json::json!({"strategies": {"a`b": {"kind": "noop"}}, "design": {"baseline": "a`b"}});
        walk(&mut v, &mut Vec::new());
        assert_eq!(v["design"]["baseline"], "a\u{E001}b");
        assert!(v["strategies"].get("a\u{E001}b").is_some());
    }

    #[test]
    fn marks_become_what_their_place_needs() {
        let name = inert("a|b`c", Mode::Full).unwrap();
        assert!(!name.contains('|') && !name.contains('`'));
        let md =
            format!("| cell | `{name}` |\n|---|---|\nSee `{name}` and {name}.\n```\n{name}\n```\n");
        assert_eq!(
            finish_markdown(&md),
            "| cell | `` a\\|b`c `` |\n|---|---|\nSee `` a|b`c `` and a|b\\`c.\n```\na|b`c\n```\n"
        );
        assert_eq!(plain(&name), "a|b`c");
        // A mark written by someone is no mark.
        assert_eq!(inert("x\u{E000}", Mode::Full).unwrap(), "x\u{FFFD}");
        assert_eq!(inert("x\u{E002}", Mode::Full).unwrap(), "x\u{FFFD}");
    }

    #[test]
    fn a_tag_is_an_entity_outside_code_and_as_typed_in_a_code_span() {
        let v = inert("Vec<String> <b>", Mode::Full).unwrap();
        let md = format!("`{v}` and {v}\n``{v} ` x`` \\`{v}`\n```\n{v}\n```\n");
        assert_eq!(
            finish_markdown(&md),
            "`Vec<String> <b>` and Vec&lt;String> &lt;b>\n``Vec<String> <b> ` x`` \\`Vec&lt;String> &lt;b>`\n```\nVec<String> <b>\n```\n"
        );
        // Inside an HTML block backticks make no span.
        assert_eq!(
            finish_markdown(&format!("<details><summary>`{v}`</summary>\n`{v}`\n\n`{v}`\n")),
            "<details><summary>`Vec&lt;String> &lt;b>`</summary>\n`Vec&lt;String> &lt;b>`\n\n`Vec<String> <b>`\n"
        );
        // A span never closed on its line is text: its `<` stays an entity.
        assert_eq!(
            finish_markdown(&format!("`{v}\n")),
            "`Vec&lt;String> &lt;b>\n"
        );
        // The terminal and analysis.json read it as typed; the plots, as XML.
        assert_eq!(plain(&v), "Vec<String> <b>");
        assert_eq!(plain_xml(&v), "Vec&lt;String> &lt;b>");
        // The title keeps its Markdown: its code spans keep `<` too.
        let title = inert("A/A of `sort <file`, <b>", Mode::Line).unwrap();
        assert_eq!(finish_markdown(&title), "A/A of `sort <file`, &lt;b>");
    }
}
