//! `runner`: performance experiments you can trust and commit.
//!
//! Flow: `spec` (TOML -> Experiment) -> `plan` (cells, jobs, seeds) -> `exec`
//! (fresh worker processes measure pairs) -> `analysis` (every statistic) ->
//! `report` (Markdown, plots). Over many machines, `shard` cuts the plan
//! (`exec --shard I/N`) and `merge` joins the shards into one run again.

pub(crate) mod ab;
pub mod analysis;
pub(crate) mod analyze;
pub mod cli;
pub(crate) mod commands;
pub mod compare;
pub use runner_core::console;
pub use runner_db as db;
pub use runner_os::environment;

pub mod exec;
pub(crate) use runner_core::hex;
pub(crate) mod history;
pub(crate) use runner_os::interrupt;
pub(crate) use runner_os::memory_layout;
pub(crate) mod merge;
pub(crate) mod output;
pub(crate) use runner_os::placement;
pub mod plan;
pub use runner_core::preview;
pub use runner_core::record;
pub use runner_core::redact;
pub(crate) use runner_os::reaper;
pub mod report;
pub mod run_folder;
pub mod settings;
pub(crate) use runner_core::seed;
pub(crate) mod shard;
pub(crate) use runner_core::shell;
pub mod spec;
pub use runner_stats as stats;
pub mod strategy;
pub(crate) use runner_os::temp;

use cli::{Cli, Command};

/// This binary as run.json records it: the compiler and the commit come
/// from build.rs, so a result can be traced to the binary that made it.
pub const BINARY: environment::Binary = environment::Binary {
    rustc: env!("RUNNER_RUSTC_VERSION"),
    version: env!("CARGO_PKG_VERSION"),
    git_commit: env!("RUNNER_GIT_COMMIT"),
};
use runner_core::error::Result;

/// Runs one command line and returns its exit code when it did not fail:
/// 0, or a gate's 3 (regression) or 4 (inconclusive). Output for the user
/// goes to stdout; progress and errors to stderr (printed by `main`); a
/// closed stream is not an error (see `console`).
pub fn run(cli: Cli) -> Result<i32> {
    // The environment, read once before anything uses it.
    settings::get();
    // Ctrl-C, SIGTERM and SIGHUP are counted (and a command stops cleanly at
    // its next check) only by the commands that check; the others keep the
    // default action and end at once.
    if cli.command.stops_cleanly_at_a_signal() {
        interrupt::install();
    }
    match cli.command {
        Command::Ab(args) => {
            let outcome = ab::ab(&args)?;
            console::out(&outcome.summary);
            Ok(outcome.exit_code)
        }
        Command::Exec(args) => exec::retry::exec_with_retry(&args),
        Command::Merge(args) => {
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
            let rendered = report::render_folder(&dir, template.as_deref(), out.as_deref())?;
            console::out(&format!("{}\n", rendered.report.display()));
            Ok(0)
        }
        Command::Compare { a, b, out } => {
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
        Command::Clean { spec, list, schema } => {
            console::out(&commands::clean(spec.as_deref(), list, &schema)?);
            Ok(0)
        }
        // What ended a worker, with every cause (`StrategyError::chain`).
        Command::Worker => exec::worker::main()
            .map(|()| 0)
            .map_err(|e| runner_core::error::run_failed(e.chain())),
    }
}
