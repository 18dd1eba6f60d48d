//! A connection for the `sql` strategy: its own space to set up in (a
//! PostgreSQL schema, a private SQLite database), then measured runs each
//! inside `BEGIN ... ROLLBACK`.
//!
//! The fingerprint of a run is computed from every row of every statement:
//! per statement, the number of rows and the wrapping sum of a 64-bit hash
//! of each row (so row order does not enter it: formulations without ORDER
//! BY may return rows in any order), folded over the statements in order.
//! A row's hash covers each value's type and bytes (SQLite) or its text
//! (PostgreSQL's simple protocol), NULL distinct from any text.

use crate::plans::{CopyMade, StatementPlan};
use crate::DbError;
use std::hash::{DefaultHasher, Hasher};

/// Rows as text per statement (`None` is NULL), for the checks.
pub type StatementRows = Vec<Vec<Option<String>>>;

/// A strategy's connection. `run` is the timed part.
pub trait SqlSession {
    fn begin(&mut self) -> Result<(), DbError>;
    /// Executes the statements and reads every row; `collect` also keeps
    /// them as text. Returns the run's fingerprint.
    fn run(
        &mut self,
        statements: &[String],
        collect: Option<&mut Vec<StatementRows>>,
    ) -> Result<u64, DbError>;
    fn rollback(&mut self) -> Result<(), DbError>;
    /// Drops what set-up created, where the backend keeps it (PostgreSQL).
    fn close(&mut self) -> Result<(), DbError> {
        Ok(())
    }
    /// The pid of a database server process serving this session; none
    /// for an embedded database.
    fn backend_pid(&mut self) -> Result<Option<u32>, DbError> {
        Ok(None)
    }
    /// `sql` as this session runs it: references to a private copy
    /// pointed at the copy.
    fn rewrite(&self, sql: &str) -> String {
        sql.to_owned()
    }
    /// Runs runner's own `PREPARE` once, untimed (`protocol = "prepared"`);
    /// only PostgreSQL has it.
    fn prepare(&mut self, _sql: &str) -> Result<(), DbError> {
        Err(DbError::Unsupported(
            "protocol = \"prepared\" needs PostgreSQL (SQLite already compiles a statement once while its text stays the same); use protocol = \"simple\" on SQLite",
        ))
    }
    /// Fails when the SQL reached a table that the arm has a private copy
    /// of (PostgreSQL: `pg::copies::Watch`); runs between measured runs,
    /// never inside one.
    fn copies_untouched(&mut self) -> Result<(), DbError> {
        Ok(())
    }
    /// The private copies set-up made.
    fn copies(&self) -> Vec<CopyMade> {
        Vec::new()
    }
    /// Runs `statements` once more, untimed and rolled back, each under
    /// EXPLAIN where the backend takes it, and returns their plans.
    fn explain(&mut self, statements: &[String]) -> Result<Vec<StatementPlan>, DbError>;
}

/// Folds rows into a run's fingerprint, statement by statement.
#[derive(Default)]
pub struct Digest {
    total: u64,
    rows: u64,
    sum: u64,
    row: Option<DefaultHasher>,
}

impl Digest {
    pub fn start_row(&mut self) {
        self.row = Some(DefaultHasher::new());
    }

    /// One value of the current row: a type tag and its bytes.
    pub fn value(&mut self, tag: u8, bytes: &[u8]) {
        if let Some(h) = &mut self.row {
            h.write_u8(tag);
            h.write_usize(bytes.len());
            h.write(bytes);
        }
    }

    pub fn end_row(&mut self) {
        if let Some(h) = self.row.take() {
            self.sum = self.sum.wrapping_add(h.finish());
            self.rows += 1;
        }
    }

    /// Closes a statement's multiset into the ordered total.
    pub fn end_statement(&mut self) {
        let mut h = DefaultHasher::new();
        h.write_u64(self.total);
        h.write_u64(self.rows);
        h.write_u64(self.sum);
        self.total = h.finish();
        self.rows = 0;
        self.sum = 0;
    }

    pub fn finish(&self) -> u64 {
        self.total
    }
}

/// Type tags of [`Digest::value`].
pub mod tag {
    pub const NULL: u8 = 0;
    pub const INTEGER: u8 = 1;
    pub const REAL: u8 = 2;
    pub const TEXT: u8 = 3;
    pub const BLOB: u8 = 4;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(statements: &[&[&[&str]]]) -> u64 {
        let mut d = Digest::default();
        for rows in statements {
            for row in *rows {
                d.start_row();
                for v in *row {
                    d.value(tag::TEXT, v.as_bytes());
                }
                d.end_row();
            }
            d.end_statement();
        }
        d.finish()
    }

    #[test]
    fn row_order_does_not_count_but_statement_order_and_values_do() {
        let a = digest(&[&[&["1", "x"], &["2", "y"]], &[]]);
        assert_eq!(a, digest(&[&[&["2", "y"], &["1", "x"]], &[]]));
        assert_ne!(a, digest(&[&[], &[&["2", "y"], &["1", "x"]]]));
        assert_ne!(a, digest(&[&[&["1", "x"], &["2", "z"]], &[]]));
        // Values are delimited: ("ab", "c") is not ("a", "bc").
        assert_ne!(digest(&[&[&["ab", "c"]]]), digest(&[&[&["a", "bc"]]]));
        // A duplicated row counts.
        assert_ne!(digest(&[&[&["1"]]]), digest(&[&[&["1"], &["1"]]]));
    }
}
