//! The arguments of `runner ab`, in hyperfine's spelling where hyperfine
//! has the option (`--setup`, `--prepare`, `--input`, `--warmup`, `-P`,
//! `-L`, `--export-json`, `--export-markdown`, `-N`), so a hyperfine
//! command line needs few changes.

use clap::Args;
use std::path::PathBuf;

/// Shown under `runner ab --help`: the before/after of a user's own code.
pub(crate) const EXAMPLES: &str = "Examples:
  Your program before and after a change, each built into its own folder:
    git worktree add ../before HEAD~1 && (cd ../before && cargo build --release)
    cargo build --release
    runner ab --name tool-change --input data.txt \\
        '../before/target/release/tool --fast' 'target/release/tool --fast'
  Two settings of one program, on the same input (hyperfine: -N --input):
    runner ab --input input.txt 'gzip -1 -c' 'gzip -2 -c'
  A sweep: every level against the baseline, one comparison per level:
    runner ab -L level 2,6,9 --input input.txt 'gzip -1 -c' 'gzip -{level} -c'
Then edit experiments/NAME.toml if you like, and run it again with
`runner exec experiments/NAME.toml`; commit both it and reports/NAME/.";

/// Forks per comparison at most unless --max-forks.
pub(crate) const DEFAULT_MAX_FORKS: u32 = 10;

/// `runner ab`.
#[derive(Debug, Clone, PartialEq, Args)]
pub struct AbArgs {
    /// The commands to compare: the first is the baseline, each other one a treatment
    /// compared with it in pairs of runs. Split into words as a shell would, and run without
    /// a shell (use --shell for pipes and redirections). `{NAME}` takes a -P/-L value.
    #[arg(value_name = "CMD", required = true, num_args = 2..)]
    pub commands: Vec<String>,
    /// Names the experiment: experiments/NAME.toml and reports/NAME/ (default: made from the
    /// commands, e.g. gzip-1-c-vs-gzip-2-c).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Only write experiments/NAME.toml; run nothing (run it later with `runner exec`).
    #[arg(long, conflicts_with_all = ["export_json", "export_markdown"])]
    pub no_run: bool,
    /// Run each command by /bin/sh -c (one more process per run, timed) instead of splitting
    /// its words; needed for pipes, redirections and variables.
    #[arg(long)]
    pub shell: bool,
    /// No shell (the default, as hyperfine's -N): accepted so a hyperfine command line works.
    #[arg(short = 'N', conflicts_with = "shell")]
    pub no_shell: bool,
    /// Run CMD once in every fork before its runs, untimed (e.g. build or unpack an input).
    #[arg(short = 's', long, value_name = "CMD")]
    pub setup: Option<String>,
    /// Run CMD before every timed run, untimed (e.g. clear a cache). Once for all commands, or
    /// once per command in their order.
    #[arg(short = 'p', long, value_name = "CMD")]
    pub prepare: Vec<String>,
    /// A file every run reads as its stdin (default /dev/null).
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// Pairs of runs per fork before the measured ones, recorded but not analysed (default:
    /// chosen from trial runs before the first fork, none for a long command).
    #[arg(short = 'w', long, value_name = "NUM")]
    pub warmup: Option<u32>,
    /// Measured pairs per fork: each command runs NUM times in every fork, the two of a pair
    /// in a random order (default: chosen from trial runs before the first fork, about half a
    /// second of runs and at least 5 pairs).
    #[arg(short = 'r', long, value_name = "NUM")]
    pub runs: Option<u32>,
    /// At most NUM forks (fresh processes) per comparison; each stops once its answer is known,
    /// after at least 3 (up to 6 for long commands, whose forks are cheap beside their runs).
    #[arg(long, value_name = "NUM", default_value_t = DEFAULT_MAX_FORKS)]
    pub max_forks: u32,
    /// Compare the commands at every integer from MIN to MAX: `{VAR}` in a command takes it
    /// (a [grid] key; every value is a comparison of its own).
    #[arg(short = 'P', long, num_args = 3, value_names = ["VAR", "MIN", "MAX"], allow_hyphen_values = true)]
    pub parameter_scan: Option<Vec<String>>,
    /// Compare the commands at every value of the comma-separated VALUES: `{VAR}` in a command
    /// takes it. Repeatable: every combination is a comparison.
    #[arg(short = 'L', long, num_args = 2, value_names = ["VAR", "VALUES"], allow_hyphen_values = true, action = clap::ArgAction::Append)]
    pub parameter_list: Vec<String>,
    /// Also count each command's instructions under valgrind (`design.measure = ["time",
    /// "instructions"]`): a few counted pairs per fork after the timed ones, never timed, with
    /// their own ratio and interval; load on the machine does not move them.
    #[arg(long)]
    pub instructions: bool,
    /// Require every command to print the same stdout on the same input, checked before
    /// timing (default: exit statuses only; hyperfine compares nothing).
    #[arg(long)]
    pub compare_output: bool,
    /// Write hyperfine's JSON (results[] with command, mean, stddev, median, min, max, times,
    /// user, system, exit_codes; seconds) to FILE, with runner's paired figures under `runner`.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Write hyperfine's Markdown table to FILE, its Relative column runner's paired ratio.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
    /// No progress on stderr (the finding still goes to stdout).
    #[arg(long)]
    pub quiet: bool,
}
