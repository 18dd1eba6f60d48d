//! What is wrong with one row of pairs.csv or a fork file. A kind per
//! way a field can be wrong, naming the column (and the text, where it is
//! text), so a reader can tell them apart; the `Display` is the clause the
//! user sees after the file and row, which the folder reader adds.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RowError {
    #[error("{found} fields, where the header has {expected}")]
    FieldCount { found: usize, expected: usize },
    #[error("column `{column}` is not text")]
    NotText { column: &'static str },
    #[error(
        "column `{column}` holds {text:?}, which is not a whole number from 0 to {}",
        u64::MAX
    )]
    NotANumber { column: &'static str, text: String },
    #[error("column `{column}` is larger than {}", u32::MAX)]
    TooLarge { column: &'static str },
    #[error("column `{column}` holds {text:?}, where {} would be valid", one_of(.valid))]
    NotOneOf {
        column: &'static str,
        text: String,
        valid: &'static [&'static str],
    },
}

/// `a` or `b`; `a`, `b` or `c`: the words a column may hold.
fn one_of(words: &[&str]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("`{w}`")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}
