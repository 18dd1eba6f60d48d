//! Why the SQL checker refuses one statement: a kind per way a statement
//! could escape the transaction runner never commits. The `Display` is the
//! clause the user sees after the statement's position
//! (`statements::Refusal` adds the offset at the checker's edge).

/// The sentence that ends every refusal of transaction control.
const TX_CONTROL: &str = "is transaction control; runner runs setup and every measured run inside a transaction of its own that it never commits, and a statement that ends or splits that transaction could make a write last";

/// What PostgreSQL keeps after ROLLBACK ends every refusal of a lasting effect.
const AFTER: &str = "which ROLLBACK does not undo, so runner refuses it";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refused {
    /// BEGIN, COMMIT, SAVEPOINT and the like; `words` are its first two.
    #[error("{words} {TX_CONTROL}")]
    TxControl { words: String },
    /// A statement that cannot run in, or is not undone by, the transaction.
    #[error("{why}; runner runs the SQL inside a transaction it never commits")]
    OutsideTransaction { why: &'static str },
    /// Such a statement recognised only by its leading keyword (sqlparser
    /// could not read it).
    #[error("{keyword} cannot run inside, or would reach outside, the transaction that runner runs the SQL in and never commits")]
    Keyword { keyword: String },
    #[error("COPY to or from the server file '{filename}' reaches outside the database, {AFTER}")]
    ServerFile { filename: String },
    #[error("COPY ... PROGRAM runs a program on the database server, {AFTER}")]
    Program,
    /// LISTEN, UNLISTEN, NOTIFY; `words` are its first two.
    #[error("{words} talks to other sessions (LISTEN/NOTIFY), {AFTER}")]
    OtherSessions { words: String },
    #[error("LOAD loads a library into the server process, {AFTER}")]
    Load,
    /// A call of a function whose effect outlives ROLLBACK.
    #[error("calls {name}(), {effect}, {AFTER}")]
    LastingCall { name: String, effect: &'static str },
    /// A statement that sets `search_path`; `words` say how.
    #[error("{words} sets search_path, which runner sets itself for each arm (the arm's own schema first, where its private copies and what setup makes live, then the schemas of the strategy's `search_path` key): SQL that changes it could reach your tables where the arm means its copies, so runner refuses it; name the schemas in the strategy's `search_path` key instead")]
    SearchPath { words: String },
}
