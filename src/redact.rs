//! Passwords never reach a file or a terminal: a database URL given in the
//! spec, in `--set database.url=...` or in RUNNER_DATABASE_URL is recorded
//! (run.json's resolved spec and command line, report.md) and printed
//! (messages, the resume command) with its password replaced by `***`.
//!
//! Both forms PostgreSQL accepts are covered: `scheme://user:PASSWORD@host`
//! and `password=PASSWORD` (key/value connection strings, and URL query
//! parameters). The result still parses as a connection string.

/// What a password is replaced with.
pub const MASK: &str = "***";

/// `text` with every password in it replaced by [`MASK`].
pub fn secrets(text: &str) -> String {
    key_values(&userinfo(text))
}

/// Whether `text` holds a password that [`secrets`] would hide.
pub fn has_secret(text: &str) -> bool {
    secrets(text) != text
}

/// Ends the authority part of a URL, or a value.
fn ends_value(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ',' | ']' | '}')
}

/// `scheme://user:PASSWORD@host...` -> `scheme://user:***@host...`.
fn userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| ends_value(c) || matches!(c, '/' | '?' | '#'))
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(amp) => {
                let user_info = &authority[..amp];
                match user_info.find(':') {
                    Some(colon) => {
                        out.push_str(&user_info[..=colon]);
                        out.push_str(MASK);
                        out.push_str(&authority[amp..]);
                    }
                    None => out.push_str(authority),
                }
            }
            None => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// `password=SECRET` (also `password = 'a b'`, any case) -> `password=***`.
fn key_values(text: &str) -> String {
    const KEY: &str = "password";
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while let Some(found) = lower[i..].find(KEY) {
        let key_end = i + found + KEY.len();
        out.push_str(&text[i..key_end]);
        i = key_end;
        // Only a key: preceded by nothing that makes it part of a word.
        let before = text[..key_end - KEY.len()].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let after = &text[i..];
        let spaces = after.len() - after.trim_start_matches(' ').len();
        if !after[spaces..].starts_with('=') {
            continue;
        }
        let value_at = i + spaces + 1;
        let value = &text[value_at..];
        let lead = value.len() - value.trim_start_matches(' ').len();
        out.push_str(&text[i..value_at + lead]);
        let value = &value[lead..];
        let len = if let Some(quoted) = value.strip_prefix('\'') {
            // Up to the closing quote, honouring backslash escapes.
            let mut chars = quoted.char_indices();
            let mut close = quoted.len();
            while let Some((j, c)) = chars.next() {
                match c {
                    '\\' => {
                        chars.next();
                    }
                    '\'' => {
                        close = j;
                        break;
                    }
                    _ => {}
                }
            }
            out.push('\'');
            out.push_str(MASK);
            if close < quoted.len() {
                out.push('\'');
            }
            1 + (close + 1).min(quoted.len())
        } else {
            let n = value
                .find(|c: char| ends_value(c) || c == '&')
                .unwrap_or(value.len());
            if n > 0 {
                out.push_str(MASK);
            }
            n
        };
        i = value_at + lead + len;
    }
    out.push_str(&text[i..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_passwords_are_masked_and_the_rest_kept() {
        assert_eq!(
            secrets("postgres://bench:s3cret@127.0.0.1:5432/bench"),
            "postgres://bench:***@127.0.0.1:5432/bench"
        );
        assert_eq!(
            secrets("url = \"postgresql://u:p%40ss@h/db?sslmode=disable\"\n"),
            "url = \"postgresql://u:***@h/db?sslmode=disable\"\n"
        );
        // '@' inside the password: the host starts after the last one.
        assert_eq!(secrets("postgres://u:a@b@h/db"), "postgres://u:***@h/db");
        assert_eq!(secrets("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(secrets("postgres://h:5432/db"), "postgres://h:5432/db");
        assert_eq!(
            secrets("--set=database.url=postgres://a:b@h/d x"),
            "--set=database.url=postgres://a:***@h/d x"
        );
    }

    #[test]
    fn key_value_passwords_are_masked() {
        assert_eq!(
            secrets("host=h password=s3cret user=u"),
            "host=h password=*** user=u"
        );
        assert_eq!(
            secrets("host=h password = 'a b\\' c' user=u"),
            "host=h password = '***' user=u"
        );
        assert_eq!(
            secrets("postgres://h/db?password=x&user=u"),
            "postgres://h/db?password=***&user=u"
        );
        assert_eq!(secrets("PASSWORD=x"), "PASSWORD=***");
        // Not a key: part of a word, or no '='.
        assert_eq!(secrets("my_password=x"), "my_password=x");
        assert_eq!(
            secrets("password authentication failed"),
            "password authentication failed"
        );
    }

    #[test]
    fn masking_is_idempotent_and_keeps_urls_parsable() {
        let once = secrets("postgres://bench:pw@127.0.0.1:5432/bench");
        assert_eq!(secrets(&once), once);
        assert!(once.parse::<postgres::Config>().is_ok());
        assert!(!has_secret(&once));
        assert!(has_secret("password=x"));
    }
}
