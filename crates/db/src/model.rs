//! The preview's table, one per strategy instance, on either backend:
//! `model_field(name text primary key, field_value double precision)`,
//! seeded from [`Model::fields`]. A fork proves that its previews leaked
//! no write by comparing [`hash_rows`] of the table right after seeding
//! and after the fork: the hash is computed in Rust over rows sorted by
//! name bytes, so it is the same function on both backends and does not
//! depend on a server's collation.

use crate::DbError;
use runner_core::preview::Model;
use sha2::{Digest, Sha256};

/// Hex SHA-256 over rows sorted by name bytes, each row hashed as name bytes,
/// one 0 byte, and the value's f64 bits little-endian: bit-exact, so a leaked
/// write of even one ulp changes it.
pub fn hash_rows(mut rows: Vec<(String, f64)>) -> String {
    rows.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut h = Sha256::new();
    for (name, value) in &rows {
        h.update(name.as_bytes());
        h.update([0u8]);
        h.update(value.to_bits().to_le_bytes());
    }
    runner_core::hex::hex(&h.finalize())
}

/// The steps of one preview on a seeded `model_field` table. The override
/// field names are bound when the table is opened (they depend only on the
/// model size), so a preview passes values alone.
pub trait ModelTable {
    fn begin(&mut self) -> Result<(), DbError>;
    /// Writes `values` for [`runner_core::preview::Overrides::field_names`], in that order.
    fn write_overrides(&mut self, values: &[f64]) -> Result<(), DbError>;
    /// Reads every row into `model`; any row order gives the same model.
    fn read_into(&mut self, model: &mut Model) -> Result<(), DbError>;
    fn rollback(&mut self) -> Result<(), DbError>;
    /// [`hash_rows`] of the table as committed (outside any preview).
    fn content_hash(&mut self) -> Result<String, DbError>;
    /// The pid of a database server process serving this table's
    /// connection; none for an embedded database.
    fn backend_pid(&mut self) -> Result<Option<u32>, DbError> {
        Ok(None)
    }
    /// Once, after the fork's last read: removes the table where it outlives
    /// the connection (a server's); an in-memory one goes with it.
    fn close(&mut self) -> Result<(), DbError> {
        Ok(())
    }
}

/// Checks a full read-back: with `name` the primary key, a row count equal
/// to the model's field count means every field was set exactly once, so
/// nothing stale survives from the previous preview.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn check_row_count(model: &Model, rows: usize) -> Result<(), DbError> {
    if rows == model.field_count() {
        Ok(())
    } else {
        Err(DbError::Model(format!(
            "expected {} rows, got {rows}",
            model.field_count()
        )))
    }
}

/// The name, in the run schema, of the table the exec parent makes for one
/// strategy instance of one job (slot `b` or `t`).
pub fn job_table(cell: u32, fork: u32, slot: &str) -> String {
    format!("model_field_c{cell}_f{fork}_{slot}")
}

/// The exec parent's connection that makes the preview's tables a fork
/// ahead of their workers (a server's: `pg::table::Maker`, opened by
/// `open::table_maker`).
pub trait TableMaker {
    /// Drops the tables `drop` (if they exist) and makes afresh, seeded
    /// with their rows, those of `make`, in one committed transaction;
    /// names as [`job_table`] gives them.
    fn step(
        &mut self,
        drop: &[String],
        make: &[(String, Vec<(String, f64)>)],
    ) -> Result<(), DbError>;
}
