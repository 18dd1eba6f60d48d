//! The regression gate around a run (design section 2): its self-check
//! cells ([`cells`]), their sizing from the run itself ([`sizing`]), and
//! what it writes for CI ([`output`]: `gate.json`, the lines for
//! `$GITHUB_STEP_SUMMARY` and the terminal, the exit code). The rule
//! itself is `stats::gate`; the numbers it is applied to, `analysis::gate`.

pub mod cells;
pub mod output;
pub mod sizing;

pub use sizing::{GateSizing, GroupSizing};
