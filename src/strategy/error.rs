//! What fails inside a worker: setting up an arm, a run, the checks before
//! timing. One sentence per kind (`Display`) and the cause it wraps
//! (`source`); the worker's entry prints the whole chain, `what: cause:
//! cause`, which is the failure its parent reports.

use super::agreement::Disagreement;
use runner_core::error::{Coded, Failure};
use runner_db::DbError;

/// A strategy's failure (and the worker's, which runs them).
#[derive(Debug, thiserror::Error)]
pub enum StrategyError {
    /// The arms' outputs differ: the experiment file's to fix, not a
    /// failure a re-run could cure.
    #[error(transparent)]
    Disagree(#[from] Disagreement),
    /// A database step failed, as the database said it.
    #[error(transparent)]
    Db(#[from] DbError),
    /// A system call or a file failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A message between the worker and its parent would not parse or
    /// serialize.
    #[error(transparent)]
    Message(#[from] serde_json::Error),
    /// The worker could not be pinned as its job says.
    #[error(transparent)]
    Placement(#[from] runner_os::placement::apply::PinError),
    /// A text names a placeholder the job gives no value for.
    #[error(transparent)]
    Unbound(#[from] runner_spec::placeholder::Unbound),
    /// What failed, said in one sentence (a command's status, a timeout,
    /// a run read twice).
    #[error("{0}")]
    Failed(String),
    /// `doing` failed because of `source`.
    #[error("{doing}")]
    While {
        doing: String,
        #[source]
        source: Box<StrategyError>,
    },
}

/// Arms whose outputs differ are the experiment file's to fix (a
/// bisection skips the commit); anything else a worker meets fails its
/// fork. A failure while doing something is its cause's.
impl Coded for StrategyError {
    fn failure(&self) -> Failure {
        match self {
            StrategyError::Disagree(_) => Failure::ArmsDisagree,
            StrategyError::While { source, .. } => source.failure(),
            StrategyError::Db(_)
            | StrategyError::Io(_)
            | StrategyError::Message(_)
            | StrategyError::Placement(_)
            | StrategyError::Unbound(_)
            | StrategyError::Failed(_) => Failure::RunFailed,
        }
    }
}

/// What `runner worker` ends with: the failure said whole, every cause on
/// its line (`StrategyError::chain`), since its parent shows the worker's
/// last stderr lines, not its sources; the code is the failure's own.
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.chain())]
pub struct Chained(#[source] pub StrategyError);

impl Coded for Chained {
    fn failure(&self) -> Failure {
        self.0.failure()
    }
}

impl From<runner_db::statements::Refusal> for StrategyError {
    /// The SQL checker's sentence (the file's check refused the text
    /// before, so here it means a job made by hand).
    fn from(r: runner_db::statements::Refusal) -> Self {
        StrategyError::Failed(r.message)
    }
}

impl StrategyError {
    /// The failure as the worker's parent reports it: this sentence, then
    /// each cause's, joined by `: ` (the whole story in one line). A cause
    /// whose sentence already ends the line is not said twice: some kinds
    /// (a placement's `PinError`) name their cause in their own sentence
    /// as well as keep it as their source, for callers that print one line.
    pub fn chain(&self) -> String {
        let mut out = self.to_string();
        let mut at: &dyn std::error::Error = self;
        while let Some(next) = at.source() {
            let said = next.to_string();
            if !out.ends_with(&said) {
                out.push_str(&format!(": {said}"));
            }
            at = next;
        }
        out
    }

    /// Whether this, or an error it wraps, is a [`Disagreement`].
    pub fn is_disagreement(&self) -> bool {
        match self {
            StrategyError::Disagree(_) => true,
            StrategyError::While { source, .. } => source.is_disagreement(),
            _ => false,
        }
    }
}

pub type Result<T, E = StrategyError> = std::result::Result<T, E>;

/// Says what was being done when an error happened: the error becomes the
/// cause of a [`StrategyError::While`].
pub trait Doing<T> {
    fn doing(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: Into<StrategyError>> Doing<T> for std::result::Result<T, E> {
    fn doing(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| StrategyError::While {
            doing: what(),
            source: Box::new(e.into()),
        })
    }
}

impl<T> Doing<T> for Option<T> {
    /// `None` is the failure: what was missing, said as `what`.
    fn doing(self, what: impl FnOnce() -> String) -> Result<T> {
        self.ok_or_else(|| StrategyError::Failed(what()))
    }
}

/// Returns a [`StrategyError::Failed`] with the formatted sentence.
macro_rules! fail {
    ($($arg:tt)*) => {
        return Err($crate::strategy::error::StrategyError::Failed(format!($($arg)*)))
    };
}
pub(crate) use fail;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_reads_what_then_why_and_a_disagreement_is_found_inside() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let e: Result<()> = Err(io).doing(|| "opening stdin file x".into());
        let e = e.doing(|| "setting up `a`".into()).unwrap_err();
        assert_eq!(
            e.chain(),
            "setting up `a`: opening stdin file x: no such file"
        );
        assert!(!e.is_disagreement());
        let d: Result<()> = Err(Disagreement("the rows differ".into()).into());
        let d = d.doing(|| "checking".into()).unwrap_err();
        assert!(d.is_disagreement());
        assert_eq!(d.chain(), "checking: the rows differ");
        // Each carries its code; the worker's last word is the chain.
        assert_eq!(d.failure(), Failure::ArmsDisagree);
        assert_eq!(e.failure(), Failure::RunFailed);
        let ended = runner_core::error::RunnerError::from(Chained(e));
        assert_eq!(ended.exit_code(), 1);
        assert_eq!(
            ended.to_string(),
            "setting up `a`: opening stdin file x: no such file"
        );
    }

    #[test]
    fn a_cause_its_error_already_names_is_said_once() {
        use runner_os::placement::{apply::PinError, Placement};
        let pin = PinError::Pin {
            placement: Placement::SameCore,
            cpu: 7,
            source: std::io::Error::from_raw_os_error(libc::EINVAL),
        };
        let e: Result<()> = Err(pin.into());
        let e = e.doing(|| "pinning the worker".into()).unwrap_err();
        let chain = e.chain();
        assert!(
            chain.starts_with(
                "pinning the worker: placement \"same-core\": cannot pin the worker to CPU 7: "
            ),
            "{chain}"
        );
        assert_eq!(chain.matches("Invalid argument").count(), 1, "{chain}");
    }
}
