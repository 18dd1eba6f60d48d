//! What every layer of runner stands on: one pair as measured, its CSV row
//! and pairs.csv read and written (`record`), the master seed and every
//! seed derived from it (`seed`), the preview workload's model and
//! calculator (`preview`), the text helpers (`shell`, `redact`, `hex`),
//! lines to the terminal (`console`), every environment variable runner
//! reads (`settings`) and how a command fails, with its exit code
//! (`error`).
//!
//! Of the machine it uses files, the terminal and the environment through
//! `std`, nothing more: processes, CPUs, `/proc` and databases are the os
//! and db crates'.
//! Nothing here imports another runner crate.

pub mod console;
pub mod error;
pub mod hex;
pub mod preview;
pub mod record;
pub mod redact;
pub mod seed;
pub mod settings;
pub mod shell;
