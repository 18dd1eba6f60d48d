//! How a command fails, and the exit code each way of failing says
//! (docs/guide/commands.md).
//!
//! Each module's own error kinds are typed (thiserror) and say once, by
//! [`Coded`], which [`Failure`] they are; `?` then turns them into a
//! [`RunnerError`] that keeps the typed error whole, so its message is
//! printed once and its cause stays reachable as its source.

use std::error::Error;
use std::fmt;

/// The ways a command can fail, each with its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// Exit code 2: the user's input (spec, flags, template, folder) is
    /// wrong.
    BadInput,
    /// Exit code 1: the input was fine but the run failed (a fork
    /// crashed, the database went away); finished forks are kept.
    RunFailed,
    /// The arms' outputs differ: the experiment file's to fix (exit 2, as
    /// bad input), but a fact about the code measured, not the input, so
    /// `exec --bisect` skips the commit instead of stopping the bisection.
    ArmsDisagree,
}

impl Failure {
    pub const fn exit_code(self) -> i32 {
        match self {
            Failure::BadInput | Failure::ArmsDisagree => 2,
            Failure::RunFailed => 1,
        }
    }
}

/// A typed error that knows which failure it is. Implemented once per
/// error kind, beside it; `?` turns it into a [`RunnerError`].
pub trait Coded: Error + Send + Sync + 'static {
    fn failure(&self) -> Failure;
}

/// What a command ends with when it fails: which failure it is (so its
/// exit code), and the error that says why, kept whole.
#[derive(Debug)]
pub struct RunnerError {
    failure: Failure,
    error: Box<dyn Error + Send + Sync>,
}

impl RunnerError {
    /// A failure of the given kind from any error (a typed one that is not
    /// [`Coded`] because its kind depends on where it happened, such as an
    /// I/O error, or a [`Message`]).
    pub fn new(failure: Failure, error: impl Into<Box<dyn Error + Send + Sync>>) -> Self {
        RunnerError {
            failure,
            error: error.into(),
        }
    }

    pub fn failure(&self) -> Failure {
        self.failure
    }

    pub fn exit_code(&self) -> i32 {
        self.failure.exit_code()
    }

    /// The same failure, with what to do next on a line of its own.
    pub fn with_hint(self, hint: impl fmt::Display) -> Self {
        RunnerError {
            failure: self.failure,
            error: Box::new(Hinted {
                error: self.error,
                hint: hint.to_string(),
            }),
        }
    }
}

impl fmt::Display for RunnerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl Error for RunnerError {
    /// The typed error's own cause: its message is this error's, so it is
    /// not a cause of it.
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.error.source()
    }
}

impl<E: Coded> From<E> for RunnerError {
    fn from(e: E) -> Self {
        RunnerError {
            failure: e.failure(),
            error: Box::new(e),
        }
    }
}

/// A sentence with no typed error behind it: what [`bad_input`] and
/// [`run_failed`] carry, for the few failures that arise in one place
/// only and are said there.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Message(pub String);

/// An error and, on the next line, what to do about it.
#[derive(Debug)]
struct Hinted {
    error: Box<dyn Error + Send + Sync>,
    hint: String,
}

impl fmt::Display for Hinted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}\n{}", self.error, self.hint)
    }
}

impl Error for Hinted {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.error.source()
    }
}

/// Bad input said in a sentence (exit 2).
pub fn bad_input(msg: impl fmt::Display) -> RunnerError {
    RunnerError::new(Failure::BadInput, Message(msg.to_string()))
}

/// A failed run said in a sentence (exit 1).
pub fn run_failed(msg: impl fmt::Display) -> RunnerError {
    RunnerError::new(Failure::RunFailed, Message(msg.to_string()))
}

/// The arms' outputs differ, said in a sentence (exit 2; a bisection
/// skips the commit).
pub fn arms_disagree(msg: impl fmt::Display) -> RunnerError {
    RunnerError::new(Failure::ArmsDisagree, Message(msg.to_string()))
}

pub type Result<T, E = RunnerError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot read {path}: {cause}")]
    struct Unread {
        path: String,
        #[source]
        cause: std::io::Error,
    }

    impl Coded for Unread {
        fn failure(&self) -> Failure {
            Failure::BadInput
        }
    }

    fn read() -> Result<()> {
        Err(Unread {
            path: "a.toml".into(),
            cause: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
        })?
    }

    #[test]
    fn a_typed_error_keeps_its_code_its_message_and_its_cause() {
        let e = read().unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert_eq!(e.to_string(), "cannot read a.toml: no such file");
        // The cause is reachable, and is not the error itself again.
        assert_eq!(e.source().unwrap().to_string(), "no such file");
        let hinted = e.with_hint("fix the path");
        assert_eq!(
            hinted.to_string(),
            "cannot read a.toml: no such file\nfix the path"
        );
        assert_eq!(hinted.failure(), Failure::BadInput);
        assert_eq!(hinted.source().unwrap().to_string(), "no such file");
    }

    #[test]
    fn each_failure_says_its_exit_code() {
        assert_eq!(bad_input("x").exit_code(), 2);
        assert_eq!(run_failed("x").exit_code(), 1);
        assert_eq!(arms_disagree("x").exit_code(), 2);
        assert_eq!(arms_disagree("x").failure(), Failure::ArmsDisagree);
    }
}
