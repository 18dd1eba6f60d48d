//! `runner`: performance experiments you can trust and commit.
//!
//! Flow: `spec` (TOML -> Experiment) -> `plan` (cells, jobs, seeds) -> `exec`
//! (fresh worker processes measure pairs) -> `analysis` (every statistic) ->
//! `report` (Markdown, plots). Over many machines, `shard` cuts the plan
//! (`exec --shard I/N`) and `merge` joins the shards into one run again.

pub mod ab;
pub mod analysis;
pub mod analyze;
pub mod cli;
pub mod commands;
pub mod compare;
pub mod console;
pub mod db;
pub mod environment;
pub mod error;
pub mod exec;
pub mod hex;
pub mod history;
pub mod interrupt;
pub mod memory_layout;
pub mod merge;
pub mod output;
pub mod placement;
pub mod plan;
pub mod preview;
pub mod reaper;
pub mod record;
pub mod redact;
pub mod report;
pub mod run_folder;
pub mod seed;
pub mod shard;
pub mod shell;
pub mod spec;
pub mod stats;
pub mod strategy;
pub mod temp;

use cli::{Cli, Command};
pub use error::{Result, RunnerError};

/// Runs one command line and returns its exit code when it did not fail:
/// 0, or a gate's 3 (regression) or 4 (inconclusive). Output for the user
/// goes to stdout; progress and errors to stderr (printed by `main`); a
/// closed stream is not an error (see `console`).
pub fn run(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Ab(args) => {
            let outcome = ab::ab(&args)?;
            console::out(&outcome.summary);
            Ok(outcome.exit_code)
        }
        Command::Exec(args) => exec::retry::exec_with_retry(&args),
        Command::Merge(args) => {
            interrupt::install();
            console::out(&merge::merge(&args)?.summary);
            Ok(0)
        }
        Command::Check {
            spec,
            set,
            flags,
            json,
        } => {
            console::out(&commands::check(&spec, &set, &flags, json)?);
            Ok(0)
        }
        Command::Report { dir, template, out } => {
            interrupt::install();
            let rendered = report::render_folder(&dir, template.as_deref(), out.as_deref())?;
            console::out(&format!("{}\n", rendered.report.display()));
            Ok(0)
        }
        Command::Compare { a, b, out } => {
            interrupt::install();
            let (text, written) = compare::compare(&a, &b, out.as_deref())?;
            match written {
                Some(path) => console::out(&format!("{}\n", path.display())),
                None => console::out(&text),
            }
            Ok(0)
        }
        Command::History { dir, since, out } => {
            let outcome = history::history(&dir, since.as_deref(), out.as_deref())?;
            console::out(&outcome.summary);
            Ok(0)
        }
        Command::Analyze(args) => {
            let (_, summary) = analyze::analyze(&args)?;
            console::out(&summary);
            Ok(0)
        }
        Command::Env { json } => {
            console::out(&commands::env(json));
            Ok(0)
        }
        Command::Worker => exec::worker::main()
            .map(|()| 0)
            .map_err(|e| RunnerError::RunFailed(format!("{e:#}"))),
    }
}
