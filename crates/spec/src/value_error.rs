//! Why a quantity written as text (`"2%"`, `"50us"`, `"10min"`) is not
//! one: a kind per way it can be wrong. `what` says what would be valid.
//! The `Display` is the clause the validator puts after the key and
//! before the value (`design.stop.half_width {clause}, got "…"`), which
//! becomes a spec `Problem` at the key's edge.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ValueError {
    #[error("must be {what}, a positive number and a unit")]
    NotANumber { what: &'static str },
    #[error("needs a unit: {what}")]
    NoUnit { what: &'static str },
    #[error("has the unit {unit:?}; it must be {what}")]
    UnknownUnit { unit: String, what: &'static str },
    /// Rounds to less than one of the smallest unit.
    #[error("must be at least 1 {smallest}")]
    BelowOne { smallest: &'static str },
    /// Above the key's bound; `limit` is the bound and why.
    #[error("must be at most {limit}")]
    AtMost { limit: String },
}
