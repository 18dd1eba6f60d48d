//! The one error type of the database crate: each variant reads as one
//! sentence, and a driver's own error stays its `source`.

use crate::Feature;

/// What can go wrong with a database; each variant reads as one sentence.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("cannot connect to PostgreSQL at {host}:{port} database \"{database}\": {message}")]
    Connect {
        host: String,
        port: u16,
        database: String,
        message: String,
    },
    #[error("invalid PostgreSQL URL: {0}")]
    BadUrl(String),
    #[error(
        "invalid run id {0:?}: use 1 to 50 characters from a-z, 0-9 and _ (it names schema runner_<id>)"
    )]
    BadRunId(String),
    #[error(
        "schema \"{0}\" already exists; runner only works in a schema it created, so it leaves it alone (drop it yourself if an interrupted run left it behind)"
    )]
    SchemaExists(String),
    #[error(
        "schema \"{0}\" was not created by runner for this run (missing or without runner's marker), so runner will not touch it"
    )]
    NotOurSchema(String),
    #[error("PostgreSQL {context}: {message}")]
    Postgres {
        context: &'static str,
        message: String,
    },
    /// SQLite's own error is in the sentence, and only there: a chain of
    /// causes (`StrategyError::chain`) would print it twice.
    #[cfg(feature = "sqlite")]
    #[error("SQLite {context}: {cause}")]
    Sqlite {
        context: &'static str,
        cause: rusqlite::Error,
    },
    /// A measured statement the database refused: `code` is its SQLSTATE
    /// (PostgreSQL) or `SQLITE_` and its extended result code (SQLite), what
    /// an arm with `allow_failure = true` counts.
    #[error("{backend} measured SQL: {message} ({})", code_label(code))]
    Statement {
        backend: &'static str,
        code: String,
        message: String,
    },
    #[error("setup of an arm with clients > 1 is committed in the arm's own schema so that its clients share it, and this one reached outside it ({0}); runner rolled it back: create what the clients share in the arm's schema (unqualified names), or list the table in [database] private_copies and change the copy")]
    SetupOutside(String),
    /// The user's SQL reached a table of `[database] private_copies`
    /// itself; the sentence says how it was seen.
    #[error("{0}: it named the table where runner cannot point the name at the copy (inside a string such as a DO body or an EXECUTE, or in a function that names it), so the arms would time your table, not the copy; runner rolls the writes back and stops the fork: name the table in the SQL itself (`schema.table`, or through the strategy's search_path)")]
    CopyBypassed(String),
    /// A feature the backend does not have; the sentence says what to do.
    #[error("{0}")]
    Unsupported(&'static str),
    /// A backend this runner was built without.
    #[error("this runner was built without {} (its `{}` feature): build it with `cargo install --path . --features {}`", .0.database(), .0.name(), .0.name())]
    NotBuilt(Feature),
    #[error("the model read back from table model_field is wrong: {0}")]
    Model(String),
    #[error("the transaction runner opened for the fork was no longer open after {0}: the SQL ended it (runner refuses transaction control, and a COMMIT of it fails by construction, so its writes were rolled back; check the SQL for a statement that ends a transaction)")]
    TransactionEnded(&'static str),
}

/// How a failure code reads in a sentence: `SQLSTATE 40P01`, or SQLite's
/// `SQLITE_1555` as it is.
pub fn code_label(code: &str) -> String {
    if code.starts_with("SQLITE_") {
        code.to_owned()
    } else {
        format!("SQLSTATE {code}")
    }
}
