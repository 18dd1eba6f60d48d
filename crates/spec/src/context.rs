//! What validating an experiment file needs from outside the file: the
//! process environment's database URL and what may be looked at on this
//! machine. Passed in, so the rules do not read the environment and the
//! tests do not depend on it.

/// What validation needs from outside the file; passed in so tests do not
/// depend on the process environment.
pub(crate) struct Context<'a> {
    /// The file stem, the default `name`.
    pub stem: &'a str,
    /// RUNNER_DATABASE_URL when set and non-empty.
    pub env_url: Option<&'a str>,
    /// What validation may look at on this machine (see [`Files`]).
    pub files: Files<'a>,
}

/// How validation treats the files and programs a spec names.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Files<'a> {
    /// A spec about to run: paths, programs and a database URL are checked
    /// on this machine, and SQL files are read.
    Here,
    /// A spec recorded in run.json, validated again when the run is read
    /// back: the rules that look at this machine (a file or program exists,
    /// a database URL is at hand) held where the run started and are not
    /// asked again here; SQL files come from the texts the run recorded.
    Recorded(&'a super::Recorded),
}

impl Files<'_> {
    pub(super) fn recorded(&self) -> bool {
        matches!(self, Files::Recorded(_))
    }
}

impl Context<'_> {
    pub(super) fn recorded(&self) -> bool {
        self.files.recorded()
    }
}
