//! What every layer of runner stands on and that needs nothing of the
//! machine: one pair as measured and its CSV row (`record`), the master seed
//! and every seed derived from it (`seed`), the preview workload's model and
//! calculator (`preview`), and the text helpers (`console`, `shell`,
//! `redact`, `hex`).
//!
//! Nothing here imports another runner crate.

pub mod console;
pub mod hex;
pub mod preview;
pub mod record;
pub mod redact;
pub mod seed;
pub mod shell;
