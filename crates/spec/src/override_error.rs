//! Why a `--set` flag cannot be applied: a kind per way the flag is
//! malformed or does not fit the document. `flag` is the flag as the user
//! typed it (`--set design.forks=2`); the `Display` is the sentence the
//! validator prefixes with the file name when it makes a `SpecError`.

const EXAMPLE: &str = "expected --set KEY=VALUE, e.g. --set design.forks=2";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum OverrideError {
    #[error("{flag}: no `=` in the flag; {EXAMPLE}")]
    NoEquals { flag: String },
    #[error("{flag}: the key is empty; {EXAMPLE}")]
    EmptyKey { flag: String },
    #[error("{flag}: the key `{key}` has an empty segment; {EXAMPLE}")]
    EmptySegment { flag: String, key: String },
    /// The key is not a TOML key; `why` is TOML's parser's sentence.
    #[error("{flag}: the key `{key}` is not a TOML key ({why}); quote a name that holds a space, dot or slash as the file does, e.g. --set 'strategies.\"gzip -1 -c\".compare_output=false'")]
    NotAKey {
        flag: String,
        key: String,
        why: String,
    },
    /// An override with no path at all reached `apply`.
    #[error("{flag}: the key is empty")]
    NoPath { flag: String },
    /// A key below something that is a value, not a table.
    #[error("{flag}: `{value}` is a value, not a table, so it has no key `{key}`")]
    NotATable {
        flag: String,
        value: String,
        key: String,
    },
}
