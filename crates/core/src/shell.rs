//! Quoting for every command line runner prints (resume, reproduce), so a
//! printed command pastes into a POSIX shell as the same argv, on one line.

/// `args` joined into one shell line, each argument quoted only when it
/// needs to be. An argument with a control character (a newline in a
/// path) is written `$'...'` with escapes (bash, zsh and ksh read it; a
/// plain POSIX sh does not): a printed command must stay one line, so
/// that it can neither run as two nor end the code block of a report.
pub fn join<S: AsRef<str>>(args: &[S]) -> String {
    args.iter()
        .map(|a| {
            let a = a.as_ref();
            if a.chars().any(char::is_control) {
                ansi_c(a)
            } else {
                // shlex refuses only NUL bytes, which `ansi_c` took.
                shlex::try_quote(a).map_or_else(|_| ansi_c(a), |q| q.into_owned())
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `$'...'`: every control character, quote and backslash escaped.
fn ansi_c(a: &str) -> String {
    let mut out = String::from("$'");
    for c in a.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_printed_command_is_one_line_whatever_its_arguments_hold() {
        assert_eq!(
            join(&["runner", "exec", "a b.toml", "--set", "x=1"]),
            "runner exec 'a b.toml' --set 'x=1'"
        );
        let line = join(&["runner", "exec", "a.toml\n```\n# Injected", "it's"]);
        assert!(!line.contains('\n'), "{line}");
        assert_eq!(line, "runner exec $'a.toml\\n```\\n# Injected' \"it's\"");
        // What bash reads back is the argument itself.
        let out = std::process::Command::new("bash")
            .args(["-c", &format!("printf '%s' {}", ansi_c("a\nb'c\\d\te"))])
            .output();
        if let Ok(o) = out {
            assert_eq!(o.stdout, b"a\nb'c\\d\te");
        }
    }
}
