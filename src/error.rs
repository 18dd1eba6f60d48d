//! The two ways a command can fail, and their exit codes (docs/guide/commands.md).

/// Exit code 2: the user's input (spec, flags, template, folder) is wrong.
/// Exit code 1: the input was fine but the run failed (a fork crashed, the
/// database went away); finished forks are kept.
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error("{0}")]
    BadInput(String),
    #[error("{0}")]
    RunFailed(String),
    /// The arms' outputs differ: the experiment file's to fix (exit 2, as
    /// bad input), but a fact about the code measured, not the input, so
    /// `exec --bisect` skips the commit instead of stopping the bisection.
    #[error("{0}")]
    ArmsDisagree(String),
}

impl RunnerError {
    pub fn exit_code(&self) -> i32 {
        match self {
            RunnerError::BadInput(_) | RunnerError::ArmsDisagree(_) => 2,
            RunnerError::RunFailed(_) => 1,
        }
    }
}

impl From<crate::spec::SpecError> for RunnerError {
    fn from(e: crate::spec::SpecError) -> Self {
        RunnerError::BadInput(e.message)
    }
}

/// Shorthand for bad input: a message, or a module's typed error, whose
/// `Display` is the sentence the user sees.
pub fn bad_input(msg: impl std::fmt::Display) -> RunnerError {
    RunnerError::BadInput(msg.to_string())
}

/// Shorthand for a failed run (a message or a module's typed error).
pub fn run_failed(msg: impl std::fmt::Display) -> RunnerError {
    RunnerError::RunFailed(msg.to_string())
}

pub type Result<T, E = RunnerError> = std::result::Result<T, E>;
