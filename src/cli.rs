//! Command line (docs/guide/commands.md), with clap derive. Every argument has a
//! help text that says what it takes and what it defaults to. The arguments
//! of exec, merge and analyze are defined where run.json records them
//! (`run_folder::invocation`), so what a folder records is what was parsed.

pub(crate) mod ab;

use clap::{Parser, Subcommand};
use runner_folder::invocation::{AnalyzeArgs, ExecArgs, MergeArgs};
use std::path::PathBuf;

/// Shown under every command's help: where the database comes from.
const DATABASE_NOTE: &str =
    "Database: a tx-rollback strategy runs on the PostgreSQL server named by \
     RUNNER_DATABASE_URL (postgres://USER:PASSWORD@HOST:PORT/DB) or the file's database.url, in a \
     schema of its own that it creates and drops; with neither, on an embedded SQLite that needs \
     nothing installed.";

#[derive(Debug, Parser)]
#[command(
    name = "runner",
    version,
    about = "Performance experiments you can trust and commit",
    long_about = "Runs an experiment file in fresh worker processes, pairs every measurement \
                  with a partner in randomized order, records seeds and the machine, and \
                  renders a Markdown report with intervals over the forks and within each.",
    after_help = DATABASE_NOTE
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compare commands in one line, as hyperfine does: writes experiments/NAME.toml, runs it as
    /// exec would into reports/NAME/, and prints the Finding.
    #[command(
        long_about = "Compares two or more commands in one line, with hyperfine's options where \
                      hyperfine has them. The first command is the baseline, each other one a \
                      treatment. Writes experiments/NAME.toml, a commented experiment file with a \
                      sequential design (forks run until the answer is known, 3 to --max-forks), \
                      runs it exactly as `runner exec experiments/NAME.toml` would into \
                      reports/NAME/, and prints the Finding. Never replaces an experiment file it \
                      did not write, nor one changed since; --no-run only writes it.",
        after_long_help = ab::EXAMPLES
    )]
    Ab(ab::AbArgs),
    /// Validate, run every job (cell x fork) in a fresh process, analyse and render the report.
    #[command(
        long_about = "Validates the experiment file, runs every job (cell x fork) in a fresh \
                      worker process, analyses the pairs and renders report.md, analysis.json \
                      and the plots into the output folder, then prints the finding and the \
                      sensitivity table. The run is written to DIR.partial/ and replaces DIR \
                      (a previous report there included) only when it is complete, so a failed \
                      or interrupted run leaves the previous report intact and prints the \
                      --resume command that finishes it. With [gate] in the file, exec is a CI \
                      regression gate: exit 0 pass, 3 regression, 4 inconclusive, and gate.json \
                      in the folder.",
        after_help = DATABASE_NOTE
    )]
    Exec(ExecArgs),
    /// Join the shard folders of one spec and seed into one ordinary report folder.
    #[command(
        long_about = "Joins the folders of `runner exec SPEC --shard I/N` (one per shard, from \
                      one spec and master seed) into one ordinary report folder OUT: pairs.csv, \
                      run.json listing the shards and machines, analysis.json and the report, \
                      with a machines level when the forks ran on more than one host. Refuses \
                      shards of another spec or seed, a job present twice and a missing shard \
                      (naming the --shard command that runs it), unless --allow-missing."
    )]
    Merge(MergeArgs),
    /// Validate the experiment file and print the plan (cells, jobs, pairs, a time estimate from a few untimed trial runs of each arm); runs no fork.
    #[command(after_help = DATABASE_NOTE)]
    Check {
        /// The experiment file (TOML), e.g. experiments/aa.toml.
        #[arg(value_name = "SPEC")]
        spec: PathBuf,
        /// Override any key of the file, as for exec: --set design.forks=2 (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Exec's flags, so the exact CI command line can be tried first.
        #[command(flatten)]
        flags: runner_folder::invocation::CheckFlags,
        /// Print the plan as one JSON object (the fields docs/guide/commands.md lists)
        /// instead of the text; exit codes unchanged.
        #[arg(long)]
        json: bool,
    },
    /// Re-analyse a report folder's pairs.csv and run.json and re-render it; no re-run.
    #[command(
        long_about = "Re-analyses a finished report folder from its raw data (pairs.csv and \
                      run.json) and writes analysis.json, the report and the plots again, byte \
                      for byte as exec wrote them when nothing else changed. Nothing is \
                      measured."
    )]
    Report {
        /// A finished report folder, e.g. reports/aa (holds pairs.csv and run.json).
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// A minijinja template to render instead of the run's own (templates/README.md lists
        /// every variable).
        #[arg(long, value_name = "FILE")]
        template: Option<PathBuf>,
        /// Where to write the report, default DIR/report.md; the plots go beside it.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Compare two finished runs of one experiment: what changed, and what separate runs can resolve.
    #[command(
        long_about = "Reads two finished report folders of the same experiment (e.g. yesterday's \
                      and today's run) and prints, per cell and arm, how far the median run moved \
                      from A to B with a hierarchical bootstrap interval over each run's forks, and \
                      what two separate runs can and cannot resolve given their own fork spread. \
                      Runs of different specs are refused (exit 2, naming the keys); different \
                      machines are named. Output: Markdown on stdout, or in --out FILE."
    )]
    Compare {
        /// The earlier run's folder, e.g. reports/aa-monday.
        #[arg(value_name = "DIR_A")]
        a: PathBuf,
        /// The later run's folder; changes are B − A.
        #[arg(value_name = "DIR_B")]
        b: PathBuf,
        /// Write the Markdown to FILE (outside both folders) instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// A committed report folder over its git history: what moved, at which commit, by how much.
    #[command(
        long_about = "Reads every committed version of a report folder from the repository's git \
                      objects (nothing is checked out), checks each by its digests as `runner \
                      report` does (a version that fails is named and skipped), analyses each \
                      again, and writes history.md and two SVG trends (effect.svg, medians.svg) \
                      to commit: per cell, at each commit, the effect with its interval, each \
                      arm's median and the machine, with a change marked wherever consecutive \
                      versions differ by more than separate runs on that machine resolve. A \
                      machine or spec change is marked as such."
    )]
    History {
        /// A report folder committed in the current repository, e.g. reports/aa.
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// Start at the version current at this revision (a hash, a tag, HEAD~20), default the
        /// folder's first commit.
        #[arg(long, value_name = "REV")]
        since: Option<String>,
        /// Output folder, default history-NAME beside DIR (e.g. reports/history-aa).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Analyse pairs another harness measured (a CSV), into a report folder like exec's.
    #[command(
        long_about = "Reads a CSV of pairs measured by another harness (JMH, pyperf, a script) \
                      and writes runner's analysis and report for them into a folder like exec's \
                      (pairs.csv, run.json, analysis.json, report.md, plots). Columns, by name: \
                      fork, pair, first (baseline|treatment), baseline_ns, treatment_ns, and cell \
                      (any label) or delay_ns / delay_us, or both; optional: phase \
                      (warmup|measure), spin_ns, baseline_at_ns, treatment_at_ns. Other columns \
                      are ignored. The report says the data was imported and states nothing about \
                      how it was measured."
    )]
    Analyze(AnalyzeArgs),
    /// Print the environment metadata a run would record, and the machine
    /// checks as OK / WARN lines.
    Env {
        /// Print the whole record as JSON, as run.json has it.
        #[arg(long)]
        json: bool,
    },
    /// List runner's schemas on the PostgreSQL server with their owners, and drop those whose
    /// owner is gone.
    #[command(
        long_about = "Lists every schema of runner's on the PostgreSQL server (RUNNER_DATABASE_URL, \
                      or the database of the experiment file SPEC), each with its owner (the run \
                      or check, the process and the host that made it), and drops those whose \
                      owner ran on this host and is gone (a runner killed with kill -9). Every \
                      exec and check does the same first. A schema whose owner still runs is \
                      never dropped; one made on another host or by an older runner is kept \
                      unless named with --schema."
    )]
    Clean {
        /// An experiment file whose [database] names the server (RUNNER_DATABASE_URL wins).
        #[arg(value_name = "SPEC")]
        spec: Option<PathBuf>,
        /// Only list the schemas; drop nothing.
        #[arg(long)]
        list: bool,
        /// Also drop this schema of runner's, whatever its owner's host (repeatable); never
        /// one whose owner still runs here.
        #[arg(long = "schema", value_name = "NAME")]
        schema: Vec<String>,
    },
    /// Internal: run one job (read from stdin) and stream its records to stdout.
    #[command(hide = true)]
    Worker,
}

impl Command {
    /// Whether the command checks for Ctrl-C and termination signals and
    /// stops cleanly at them (a run keeps its finished forks, a folder is
    /// left as it was), so they are counted instead of ending the process.
    /// `history` and `env` end at once (what history writes, it writes
    /// atomically); a worker is stopped by its parent.
    pub fn stops_cleanly_at_a_signal(&self) -> bool {
        match self {
            Command::Ab(_)
            | Command::Exec(_)
            | Command::Merge(_)
            | Command::Check { .. }
            | Command::Report { .. }
            | Command::Compare { .. }
            | Command::Analyze(_) => true,
            Command::History { .. }
            | Command::Env { .. }
            | Command::Clean { .. }
            | Command::Worker => false,
        }
    }
}
