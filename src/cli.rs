//! Command line (design section 2), with clap derive.

use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "runner",
    version,
    about = "Performance experiments you can trust and commit",
    long_about = "Runs an experiment file in fresh worker processes, pairs every measurement \
                  with a partner in randomized order, records seeds and the machine, and \
                  renders a Markdown report with bootstrap intervals."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate, run every job in fresh forks, analyse and render the report.
    Exec {
        /// The experiment file (TOML).
        spec: PathBuf,
        /// Output folder; default reports/<name>/.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Override a key of the file: --set design.forks=2 (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Finish an interrupted run kept in DIR.partial/.
        #[arg(long, value_name = "DIR.partial")]
        resume: Option<PathBuf>,
        /// No progress output.
        #[arg(long)]
        quiet: bool,
    },
    /// Validate and print the plan (cells, jobs, pairs, time estimate); runs nothing.
    Check {
        spec: PathBuf,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Re-analyse a report folder's raw data and re-render it; no re-run.
    Report {
        dir: PathBuf,
        /// A minijinja template to render instead of the run's own.
        #[arg(long)]
        template: Option<PathBuf>,
        /// Where to write the rendering; default DIR/report.md.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Print the environment metadata a run would record, and the machine
    /// checks as OK / WARN lines.
    Env {
        /// Print the whole record as JSON, as run.json has it.
        #[arg(long)]
        json: bool,
    },
    /// Internal: run one job (read from stdin) and stream its records to stdout.
    #[command(hide = true)]
    Worker,
}
