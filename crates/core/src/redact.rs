//! Passwords never reach a file or a terminal: a database URL given in the
//! spec, in `--set database.url=...` or in RUNNER_DATABASE_URL is recorded
//! (run.json's resolved spec and command line, report.md) and printed
//! (messages, the resume command) with its password replaced by `***`.
//!
//! Both forms PostgreSQL accepts are covered: `scheme://user:PASSWORD@host`
//! and `password=PASSWORD` (key/value connection strings, and URL query
//! parameters). The result still parses as a connection string.
//!
//! Where a URL's password ends is decided once, by [`credentials`], the
//! way the connection code reads it (everything up to the first `@` is
//! the user and password), and both the masking here and the checks that
//! refuse a URL before it is used or shown (`runner-db`'s `pg::connect::Endpoint`, the
//! spec's `database.url`) call it. A URL whose `@` is not the only one
//! before the host ends (a password with an unencoded `@`) is ambiguous:
//! connecting would take part of the password for the host and print it.
//! It is refused, and masked here from the first `:` to its last `@`.

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

/// Ends a value in a text: a URL or a `password=` value. A comma, a
/// bracket or a slash may be part of a password, so only what quotes a
/// value or separates words ends it.
fn ends_value(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '\'' | '`')
}

/// A URL whose user name and password cannot be told apart from its host,
/// database or query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the database URL has an `@` that does not end its user name and password (a password with an unencoded `@`, or an `@` in the database name or query), so where the password ends is ambiguous; percent-encode the password (`@` as `%40`, `/` as `%2F`, `?` as `%3F`, `:` as `%3A`); runner shows no part of this URL, as it may hold a password")]
pub struct AmbiguousUrl;

/// Byte ranges of a URL's user name and (when given) password.
pub type Credentials = (std::ops::Range<usize>, Option<std::ops::Range<usize>>);

/// Where the user name and the password of `url` are, as byte ranges, the
/// way the connection code reads a `scheme://user:password@host/db?query`
/// URL: up to the first `@`. `None`: not a URL, or none given.
pub fn credentials(url: &str) -> Result<Option<Credentials>, AmbiguousUrl> {
    let Some(start) = url.find("://").map(|i| i + 3) else {
        return Ok(None);
    };
    let rest = &url[start..];
    let Some(at) = rest.find('@') else {
        return Ok(None);
    };
    // After the one `@`, up to the query, no other may follow: the
    // connection would read one as part of the host or database, and show it.
    let host_and_path = rest[at + 1..].split('?').next().unwrap_or_default();
    if host_and_path.contains('@') {
        return Err(AmbiguousUrl);
    }
    let user_end = rest[..at].find(':').unwrap_or(at);
    // A user name with `/` or `?`: the `@` belongs to a path or a query.
    if rest[..user_end].contains(['/', '?', '#']) {
        return Err(AmbiguousUrl);
    }
    let password = (user_end < at).then(|| start + user_end + 1..start + at);
    Ok(Some((start..start + user_end, password)))
}

/// `scheme://user:PASSWORD@host...` -> `scheme://user:***@host...`.
fn userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let end = tail.find(ends_value).unwrap_or(tail.len());
        let value = &tail[..end];
        // The URL alone, from its `://`: where its password is.
        let url = format!("x://{value}");
        let shift = |r: std::ops::Range<usize>| r.start - 4..r.end - 4;
        let password = match credentials(&url) {
            Ok(Some((_, password))) => password.map(shift),
            Ok(None) => None,
            // Ambiguous: everything from the first `:` before an `@` to
            // the last `@` may be password.
            Err(AmbiguousUrl) => value.find('@').and_then(|first| {
                let colon = value[..first].find(':')?;
                Some(colon + 1..value.rfind('@').unwrap_or(first))
            }),
        };
        match password {
            Some(p) => {
                out.push_str(&value[..p.start]);
                out.push_str(MASK);
                out.push_str(&value[p.end..]);
            }
            None => out.push_str(value),
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
        // '/', '?', ',' inside it: the password still ends at the `@`.
        assert_eq!(
            secrets("postgres://u:a/b?c,d@h/db x"),
            "postgres://u:***@h/db x"
        );
        assert_eq!(
            secrets("error: postgres://u:abc@def@host/db: no such host"),
            "error: postgres://u:***@host/db: no such host"
        );
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
    fn credentials_end_at_the_first_at_and_a_second_one_is_refused() {
        let url = "postgres://bench:p/w?x@127.0.0.1:5432/db?application_name=a@b";
        let (user, password) = credentials(url).unwrap().unwrap();
        assert_eq!(&url[user], "bench");
        assert_eq!(&url[password.unwrap()], "p/w?x");
        let (_, none) = credentials("postgres://u@h/db").unwrap().unwrap();
        assert_eq!(none, None);
        assert_eq!(credentials("postgres://h:5432/db"), Ok(None));
        assert_eq!(credentials("host=h password=x"), Ok(None));
        for ambiguous in [
            "postgres://u:abc@def@host/db",
            "postgres://u:a@b/c@host/db",
            "postgres://host/db?user=me@corp",
        ] {
            assert_eq!(credentials(ambiguous), Err(AmbiguousUrl), "{ambiguous}");
        }
        let said = AmbiguousUrl.to_string();
        assert!(said.contains("percent-encode"), "{said}");
    }

    #[test]
    fn masking_is_idempotent() {
        // That the masked URL still parses as a connection string is
        // tested where the PostgreSQL client is (runner-db).
        let once = secrets("postgres://bench:pw@127.0.0.1:5432/bench");
        assert_eq!(secrets(&once), once);
        assert!(!has_secret(&once));
        assert!(has_secret("password=x"));
    }
}
