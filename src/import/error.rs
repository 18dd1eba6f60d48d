//! Why `runner analyze` cannot turn another harness's pairs into a run:
//! a flag out of range, a file runner cannot read as pairs, or data that
//! does not fit runner's uniform design are bad input, each sentence
//! naming the file, the line and the column; a signal while reading or
//! analysing, or an assembly that refuses what the import derived (a bug),
//! fails the command. Nothing is written in either case.

use runner_core::error::{Coded, Failure};
use runner_os::interrupt::Interrupted;

#[derive(Debug, thiserror::Error)]
pub(crate) enum ImportError {
    /// `--resamples` outside what the analysis accepts.
    #[error("--resamples must be from 100 to 100000 (default 2000), got {0}")]
    Resamples(u32),
    /// `--confidence` outside what the analysis accepts.
    #[error("--confidence must be from 0.5 to 0.999 (default 0.95), got {0}")]
    Confidence(f64),
    /// `--clock-resolution-ns` coarser than any clock runner analyses.
    #[error(
        "--clock-resolution-ns must be from 0 to {most} (1 ms, the coarsest clock runner analyses; 0, the default, takes the times as exact), got {got}"
    )]
    ClockResolution { most: u64, got: u64 },
    /// `--baseline` or `--treatment` that cannot name an arm.
    #[error("{flag} must name the arm (any text without control characters), got {name:?}")]
    ArmName { flag: &'static str, name: String },
    /// The file cannot be opened.
    #[error("cannot read {file}: {source}")]
    Unreadable {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// The file has no header line runner can read.
    #[error("{file}: cannot read the header line: {source}")]
    Header {
        file: String,
        #[source]
        source: csv::Error,
    },
    /// A column named twice: which one holds the values would be a guess.
    #[error(
        "{file}:{line}: the header names the column `{column}` twice (columns {first} and {second}); each column may appear once, so rename or drop one"
    )]
    ColumnTwice {
        file: String,
        line: u64,
        column: String,
        first: usize,
        second: usize,
    },
    /// A column runner needs for every pair is not in the header.
    #[error(
        "{file}:1: the header lacks {}; runner analyze needs the columns {} and `cell` or `delay_ns` (or `delay_us`); found: {}",
        backticked(.missing),
        backticked(.required),
        .found.join(", ")
    )]
    MissingColumns {
        file: String,
        missing: Vec<&'static str>,
        required: &'static [&'static str],
        found: Vec<String>,
    },
    /// Nothing in the header tells runner's cells apart.
    #[error(
        "{file}:1: the header has neither `cell` nor `delay_ns` (or `delay_us`); one of them tells runner's cells apart"
    )]
    NoCellColumn { file: String },
    /// A row the CSV reader cannot read (the reader's sentence names where).
    #[error("{file}: {source}")]
    Csv {
        file: String,
        #[source]
        source: csv::Error,
    },
    /// More rows than the analysis holds in memory.
    #[error("{file}:{line}: more than {most} rows; runner analyses at most that many pairs")]
    TooManyRows { file: String, line: u64, most: u64 },
    /// A value that is not what its column holds.
    #[error("{file}:{line}: column `{column}` must be {what}, got {got:?}")]
    BadValue {
        file: String,
        line: u64,
        column: &'static str,
        what: &'static str,
        got: String,
    },
    /// A header and nothing else.
    #[error("{file}: there are no rows after the header")]
    NoRows { file: String },
    /// The labels and delays are not a grid, which runner's cells are.
    #[error(
        "{file}: cell {label:?} has no rows at delay {delay_ns} ns; runner's cells are a grid (every cell label at every delay), so give every label every delay, or only one of the `cell` and delay columns"
    )]
    NotAGrid {
        file: String,
        label: String,
        delay_ns: u64,
    },
    /// A fork with one pair number twice in a phase: which row is the
    /// pair would be a guess.
    #[error(
        "{file}:{line}: fork {fork:?} has pair {pair} twice (also on line {also}) in one phase"
    )]
    PairTwice {
        file: String,
        line: u32,
        fork: String,
        pair: u32,
        also: u32,
    },
    /// A fork of warm-up pairs only.
    #[error("{file}: fork {fork:?} has no measured pairs (phase `measure`)")]
    NoMeasured { file: String, fork: String },
    /// Forks of unequal size, or cells of unequal forks: runner's design
    /// is uniform. `this` and `first` are (forks in the cell, warm-up
    /// pairs, measured pairs).
    #[error(
        "{file}: runner's design is uniform, but fork {fork:?} has {} warm-up + {} measured pairs in a cell of {} forks, where the first fork read has {} + {} in a cell of {}; import forks of equal size",
        .this.1, .this.2, .this.0, .first.1, .first.2, .first.0
    )]
    NotUniform {
        file: String,
        fork: String,
        this: (u32, u32, u32),
        first: (u32, u32, u32),
    },
    /// The spec written from the data does not validate.
    #[error("{file}: the data cannot be described as runner's design: {source}")]
    NotADesign {
        file: String,
        #[source]
        source: runner_spec::SpecError,
    },
    /// The assembly refused the run the import derived: a bug of the
    /// import, not of the file.
    #[error("the imported run does not check out ({0}); this is a bug")]
    Assembly(#[source] runner_folder::FolderError),
    /// A signal while the file was read.
    #[error("{signal} while reading {file}; nothing was written")]
    InterruptedReading { signal: Interrupted, file: String },
    /// A signal during the analysis.
    #[error("{0} during the analysis; nothing was written")]
    InterruptedAnalysis(Interrupted),
}

impl Coded for ImportError {
    fn failure(&self) -> Failure {
        use ImportError as E;
        match self {
            E::Assembly(_) | E::InterruptedReading { .. } | E::InterruptedAnalysis(_) => {
                Failure::RunFailed
            }
            E::Resamples(_)
            | E::Confidence(_)
            | E::ClockResolution { .. }
            | E::ArmName { .. }
            | E::Unreadable { .. }
            | E::Header { .. }
            | E::ColumnTwice { .. }
            | E::MissingColumns { .. }
            | E::NoCellColumn { .. }
            | E::Csv { .. }
            | E::TooManyRows { .. }
            | E::BadValue { .. }
            | E::NoRows { .. }
            | E::NotAGrid { .. }
            | E::PairTwice { .. }
            | E::NoMeasured { .. }
            | E::NotUniform { .. }
            | E::NotADesign { .. } => Failure::BadInput,
        }
    }
}

/// Column names as a sentence lists them: `a`, `b`.
fn backticked(names: &[&str]) -> String {
    names
        .iter()
        .map(|c| format!("`{c}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use runner_core::error::RunnerError;
    use std::error::Error;

    #[test]
    fn a_file_runner_cannot_read_is_bad_input_and_keeps_its_cause() {
        let e = RunnerError::from(ImportError::Unreadable {
            file: "p.csv".into(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
        });
        assert_eq!(
            (e.to_string().as_str(), e.exit_code()),
            ("cannot read p.csv: no such file", 2)
        );
        assert_eq!(e.source().unwrap().to_string(), "no such file");
        let missing = ImportError::MissingColumns {
            file: "p.csv".into(),
            missing: vec!["fork", "pair"],
            required: &["fork", "pair", "first"],
            found: vec!["x".into(), "y".into()],
        };
        assert_eq!(
            missing.to_string(),
            "p.csv:1: the header lacks `fork`, `pair`; runner analyze needs the columns `fork`, `pair`, `first` and `cell` or `delay_ns` (or `delay_us`); found: x, y"
        );
        let signal = ImportError::InterruptedAnalysis(Interrupted);
        assert_eq!(signal.failure(), Failure::RunFailed);
    }
}
