//! Where a byte of SQL text stands, as the server's lexer sees it: in the
//! statement's code, inside one quoted token (a string, a dollar quote, a
//! quoted name), or in a comment. `protocol = "prepared"` asks it of each
//! `{input}`: only in code can a parameter (`$1`) stand for a value; inside
//! a string `$1` is two characters, and the prepared statement would run
//! another query than the one written.

use super::{token_range, SqlDialect};
use sqlparser::tokenizer::{Token, Tokenizer, Whitespace};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Code,
    Comment,
    /// Inside a token the lexer reads whole: what it is, for a sentence.
    Quoted(&'static str),
}

/// The place of each of `offsets` in `sql`; a text the tokenizer cannot
/// read (an unclosed string) is all code here, and refused by [`super::check`].
pub fn places(sql: &str, dialect: SqlDialect, offsets: &[usize]) -> Vec<Place> {
    let d = dialect.dialect();
    let tokens = Tokenizer::new(d.as_ref(), sql)
        .tokenize_with_location()
        .unwrap_or_default();
    offsets
        .iter()
        .map(|&at| {
            tokens
                .iter()
                .find(|t| {
                    let (start, end) = token_range(sql, t);
                    start <= at && at < end
                })
                .map_or(Place::Code, |t| place(&t.token))
        })
        .collect()
}

/// Why an `{input}` inside `what` (a string literal, ...) cannot be
/// prepared: the end of a sentence that names the statement.
pub fn unpreparable(what: &str) -> String {
    format!(
        "has {{input}} inside {what}, where a parameter ($1) would be two characters of text and the prepared statement would run another query than the one written; put the value outside the quotes ('%' || {{input}} || '%'), or use protocol = \"simple\", which sends the text with the input each run"
    )
}

fn place(t: &Token) -> Place {
    match t {
        Token::Whitespace(
            Whitespace::SingleLineComment { .. } | Whitespace::MultiLineComment(_),
        ) => Place::Comment,
        Token::DollarQuotedString(_) => Place::Quoted("a dollar-quoted string"),
        Token::Word(w) if w.quote_style.is_some() => Place::Quoted("a quoted identifier"),
        Token::SingleQuotedString(_)
        | Token::DoubleQuotedString(_)
        | Token::EscapedStringLiteral(_)
        | Token::NationalStringLiteral(_)
        | Token::UnicodeStringLiteral(_)
        | Token::HexStringLiteral(_)
        | Token::SingleQuotedByteStringLiteral(_)
        | Token::DoubleQuotedByteStringLiteral(_)
        | Token::TripleSingleQuotedString(_)
        | Token::TripleDoubleQuotedString(_) => Place::Quoted("a string literal"),
        _ => Place::Code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_strings_dollar_quotes_and_comments_are_told_apart() {
        let sql = "SELECT $1 FROM t WHERE s LIKE '%$1%' AND d = $f$x $1$f$ -- $1\n AND \"c$1\" = /* $1 */ E'$1'";
        let at: Vec<usize> = sql.match_indices("$1").map(|(i, _)| i).collect();
        assert_eq!(
            places(sql, SqlDialect::Postgres, &at),
            [
                Place::Code,
                Place::Quoted("a string literal"),
                Place::Quoted("a dollar-quoted string"),
                Place::Comment,
                Place::Quoted("a quoted identifier"),
                Place::Comment,
                Place::Quoted("a string literal"),
            ]
        );
    }
}
