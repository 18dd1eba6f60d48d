//! Why a gate cannot be sized from the first phase's rows. Neither is the
//! user's input: exec reports it as a failed run.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizingError {
    /// Only a percentage threshold depends on the baseline's median.
    #[error("only a percentage threshold is sized from the run")]
    NotPercent,
    #[error("cells {cells:?} have no measured baseline runs to size the gate from")]
    NoBaseline { cells: Vec<u32> },
}
