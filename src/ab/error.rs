//! Why `runner ab` refuses its command line, writes no experiment file, or
//! cannot export a finished run: each is the user's to fix (exit 2), said
//! before anything runs where it can be, so a refusal never costs a run.
//! The `Display` is the sentence the user sees; the underlying error (the
//! spec's, the system's, the guard's) stays the `source`.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub(crate) enum AbError {
    /// A treatment repeats another: a comparison with itself, twice.
    #[error("the treatment `{command}` is given twice; give each command once (the same command as the baseline makes an A/A comparison)")]
    TreatmentTwice { command: String },
    /// A command that is only whitespace runs nothing.
    #[error("a command is empty; give each as one argument, e.g. 'gzip -1 -c'")]
    EmptyCommand,
    /// Without `--shell` a command is split into words as a shell would,
    /// and this one cannot be.
    #[error("cannot split `{command}` into words as a shell would (an unclosed quote?); fix the quoting, or pass --shell to run it by /bin/sh -c")]
    Unsplittable { command: String },
    /// The experiment file is UTF-8 text and cannot name this path.
    #[error("--input {}: the path is not valid UTF-8, which the experiment file cannot hold; rename the file", .input.display())]
    InputNotUtf8 { input: PathBuf },
    /// Every run reads `--input` as stdin, so it must exist before the run.
    #[error("--input {}: no such file; give a file every run reads as stdin (a path from this folder)", .input.display())]
    NoInput { input: PathBuf },
    /// The written file would not be a valid spec (a bug of the writer, or
    /// a value the spec refuses): it is not written.
    #[error(
        "the experiment file runner ab would write does not read back, so nothing was written: {0}"
    )]
    DoesNotReadBack(#[source] runner_spec::SpecError),
    /// `--name` names the experiment file and the report folder, so it must
    /// be a plain file name.
    #[error("--name {name:?} must be a file name of letters, digits, `-`, `_` and `.` (it names experiments/NAME.toml and reports/NAME/)")]
    BadName { name: String },
    /// An end of `-P VAR MIN MAX` is not an integer.
    #[error("-P {var} {min} {max}: MIN and MAX must be integers, got `{got}`")]
    ScanNotInteger {
        var: String,
        min: String,
        max: String,
        got: String,
        #[source]
        source: std::num::ParseIntError,
    },
    /// `-P VAR MIN MAX` with MIN above MAX scans nothing.
    #[error("-P {var} {min} {max}: MIN must be at most MAX")]
    ScanReversed {
        var: String,
        min: String,
        max: String,
    },
    /// A scan of `count` values, more than `limit`: every value is a
    /// comparison of its own.
    #[error("-P {var} {min} {max}: that is {count} values, and a scan is at most {limit} (every value is a comparison of its own); narrow the range, or list the values you want with -L {var} V1,V2,...")]
    ScanTooLong {
        var: String,
        min: String,
        max: String,
        count: i128,
        limit: i64,
    },
    /// A parameter is written `{NAME}` in a command, so its name is a word.
    #[error("the parameter name `{var}` must be letters, digits and `_` (it is written {{{var}}} in a command)")]
    BadParameterName { var: String },
    /// One parameter given by two -P or -L flags.
    #[error("the parameter `{var}` is given twice; give each -P or -L name once")]
    ParameterTwice { var: String },
    /// The two exports would write one file.
    #[error("--export-json and --export-markdown both name {}; give each its own file", .path.display())]
    ExportsCollide { path: PathBuf },
    /// An export that would destroy data, or could only fail after the run.
    #[error("{flag} {}: {why}", .path.display())]
    Export {
        flag: &'static str,
        path: PathBuf,
        #[source]
        why: ExportRefusal,
    },
    /// `experiments/` is missing and cannot be made.
    #[error("cannot make the folder {}: {source}", .dir.display())]
    MakeFolder {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The write guard refused the experiment file (one runner did not
    /// write, or one changed since): another name avoids it.
    #[error("{0}; or give this comparison another name with --name")]
    SpecNotWritten(#[source] runner_core::error::RunnerError),
    /// The finished run's pairs.csv cannot be read back for the export.
    #[error("{}: {source}", .path.display())]
    Pairs {
        path: PathBuf,
        #[source]
        source: runner_core::record::PairsCsvError,
    },
    /// The finished run's analysis.json cannot be read.
    #[error("{}: {source}", .path.display())]
    AnalysisUnread {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The finished run's analysis.json is not JSON of its shape.
    #[error("{}: {source}", .path.display())]
    AnalysisNotJson {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// The finished run's analysis.json was written by a newer runner.
    #[error(transparent)]
    AnalysisFormat(runner_folder::output::format::FormatError),
}

/// Every refusal of `runner ab` is its command line's or its files' to
/// fix: bad input (exit 2).
impl runner_core::error::Coded for AbError {
    fn failure(&self) -> runner_core::error::Failure {
        runner_core::error::Failure::BadInput
    }
}

/// Why an export's path is refused before the run (`export::check_target`).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExportRefusal {
    /// The path ends in no file name (`/`, `..`).
    #[error("not a file name; name the file the export goes to")]
    NotAFileName,
    /// Experiment files are the user's record, never an export's target.
    #[error("an export never goes onto an experiment file (*.toml); name a .json or .md file")]
    ExperimentFile,
    /// The export would replace the file this command writes.
    #[error("it is the experiment file this command writes")]
    OwnSpec,
    /// The run writes its own report folder, `dir`, after the export was
    /// checked.
    #[error("it is inside this run's own report folder {}, whose files the run writes; put the export outside it", .dir.display())]
    InOwnFolder { dir: PathBuf },
    /// Another run's report folder, `dir`, holds data.
    #[error("it is inside the report folder {}, whose files are a run's data; put the export outside it", .dir.display())]
    InReportFolder { dir: PathBuf },
    /// The export is written after the run, so its folder must exist now.
    #[error("the folder {} does not exist; make it first (the export is written after the run, and is checked before it)", .dir.display())]
    NoFolder { dir: PathBuf },
    /// A file runner did not write; `why` is the guard's reason.
    #[error("it {why}, and runner never replaces a file it did not write; move it away or choose another path")]
    Foreign { why: String },
}

#[cfg(test)]
mod tests {
    use super::*;
    use runner_core::error::RunnerError;

    /// Each kind's sentence (the one the user read before these were
    /// typed); every one is exit 2.
    #[test]
    fn each_kind_says_its_sentence() {
        let p = PathBuf::from;
        let s = |t: &str| t.to_string();
        let scan = || (s("x"), s("1"), s("y"));
        let export = |why| AbError::Export {
            flag: "--export-json",
            path: p("out/h.json"),
            why,
        };
        let not_an_integer = "y".parse::<i64>().unwrap_err();
        let cases: Vec<(AbError, &str)> = vec![
            (
                AbError::TreatmentTwice { command: s("gzip -1") },
                "the treatment `gzip -1` is given twice; give each command once (the same command as the baseline makes an A/A comparison)",
            ),
            (
                AbError::EmptyCommand,
                "a command is empty; give each as one argument, e.g. 'gzip -1 -c'",
            ),
            (
                AbError::Unsplittable { command: s("echo 'a") },
                "cannot split `echo 'a` into words as a shell would (an unclosed quote?); fix the quoting, or pass --shell to run it by /bin/sh -c",
            ),
            (
                AbError::InputNotUtf8 { input: p("in.txt") },
                "--input in.txt: the path is not valid UTF-8, which the experiment file cannot hold; rename the file",
            ),
            (
                AbError::NoInput { input: p("in.txt") },
                "--input in.txt: no such file; give a file every run reads as stdin (a path from this folder)",
            ),
            (
                AbError::BadName { name: s("../x") },
                "--name \"../x\" must be a file name of letters, digits, `-`, `_` and `.` (it names experiments/NAME.toml and reports/NAME/)",
            ),
            (
                {
                    let (var, min, max) = scan();
                    AbError::ScanNotInteger { var, min, max, got: s("y"), source: not_an_integer }
                },
                "-P x 1 y: MIN and MAX must be integers, got `y`",
            ),
            (
                {
                    let (var, min, max) = scan();
                    AbError::ScanReversed { var, min, max }
                },
                "-P x 1 y: MIN must be at most MAX",
            ),
            (
                {
                    let (var, min, max) = scan();
                    AbError::ScanTooLong { var, min, max, count: 101, limit: 100 }
                },
                "-P x 1 y: that is 101 values, and a scan is at most 100 (every value is a comparison of its own); narrow the range, or list the values you want with -L x V1,V2,...",
            ),
            (
                AbError::BadParameterName { var: s("a-b") },
                "the parameter name `a-b` must be letters, digits and `_` (it is written {a-b} in a command)",
            ),
            (
                AbError::ParameterTwice { var: s("n") },
                "the parameter `n` is given twice; give each -P or -L name once",
            ),
            (
                AbError::ExportsCollide { path: p("h.json") },
                "--export-json and --export-markdown both name h.json; give each its own file",
            ),
            (
                AbError::MakeFolder {
                    dir: p("experiments"),
                    source: std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied"),
                },
                "cannot make the folder experiments: denied",
            ),
            (
                AbError::SpecNotWritten(runner_core::error::bad_input("x.toml is not a file runner wrote")),
                "x.toml is not a file runner wrote; or give this comparison another name with --name",
            ),
            (
                AbError::AnalysisUnread {
                    path: p("r/analysis.json"),
                    source: std::io::Error::new(std::io::ErrorKind::NotFound, "gone"),
                },
                "r/analysis.json: gone",
            ),
            (
                export(ExportRefusal::NotAFileName),
                "--export-json out/h.json: not a file name; name the file the export goes to",
            ),
            (
                export(ExportRefusal::ExperimentFile),
                "--export-json out/h.json: an export never goes onto an experiment file (*.toml); name a .json or .md file",
            ),
            (
                export(ExportRefusal::OwnSpec),
                "--export-json out/h.json: it is the experiment file this command writes",
            ),
            (
                export(ExportRefusal::InOwnFolder { dir: p("reports/x") }),
                "--export-json out/h.json: it is inside this run's own report folder reports/x, whose files the run writes; put the export outside it",
            ),
            (
                export(ExportRefusal::InReportFolder { dir: p("reports/y") }),
                "--export-json out/h.json: it is inside the report folder reports/y, whose files are a run's data; put the export outside it",
            ),
            (
                export(ExportRefusal::NoFolder { dir: p("out") }),
                "--export-json out/h.json: the folder out does not exist; make it first (the export is written after the run, and is checked before it)",
            ),
            (
                export(ExportRefusal::Foreign { why: s("is not a file runner wrote") }),
                "--export-json out/h.json: it is not a file runner wrote, and runner never replaces a file it did not write; move it away or choose another path",
            ),
        ];
        for (e, text) in cases {
            assert_eq!(e.to_string(), text);
            let e = RunnerError::from(e);
            assert_eq!((e.to_string().as_str(), e.exit_code()), (text, 2));
        }
    }
}
