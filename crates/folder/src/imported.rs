//! What `runner analyze` records about pairs it imported from another
//! harness: the file, its digest, how its columns were read and which of
//! its forks became which of runner's. Nothing about how the pairs were
//! measured is known, and nothing is claimed (see the report's Setup).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Imported {
    /// The CSV as given on the command line.
    pub file: String,
    /// SHA-256 of its bytes.
    pub sha256: String,
    /// Its data rows.
    pub rows: u64,
    /// Its header, as found.
    pub columns: Vec<String>,
    /// What told cells apart: `cell`, `delay`, or `cell x delay`.
    pub cells_by: String,
    /// Per runner cell and fork, that fork's id in the file.
    pub forks: Vec<ImportedFork>,
    /// The file gave the wait actually spent (`spin_ns`).
    pub has_spin: bool,
    /// The file gave each run's start time (`baseline_at_ns`, `treatment_at_ns`).
    pub has_start_times: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportedFork {
    pub cell: u32,
    pub fork: u32,
    /// The `fork` value in the file.
    pub source: String,
}
