//! One command line, handed to its command.

use crate::cli::{Cli, Command};
use crate::{ab, check, clean, compare, env, exec, history, import, merge};
use runner_core::console;
use runner_core::error::Result;
use runner_core::settings;
use runner_os::interrupt;

/// Runs one command line and returns its exit code when it did not fail:
/// 0, or a gate's 3 (regression) or 4 (inconclusive). Output for the user
/// goes to stdout; progress and errors to stderr (printed by `main`); a
/// closed stream is not an error (see `console`).
pub fn run(cli: Cli) -> Result<i32> {
    // The environment, read once before anything uses it; the statistics
    // crate takes the analysis's threads from it as an argument.
    runner_stats::pool::configure(settings::get().threads);
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
            console::out(&check::check(&spec, &set, &flags, json)?);
            Ok(0)
        }
        Command::Report { dir, template, out } => {
            let rendered = runner_report::render_folder(&dir, template.as_deref(), out.as_deref())?;
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
            let (_, summary) = import::analyze(&args)?;
            console::out(&summary);
            Ok(0)
        }
        Command::Env { json } => {
            console::out(&env::env(json));
            Ok(0)
        }
        Command::Clean { spec, list, schema } => {
            console::out(&clean::clean(spec.as_deref(), list, &schema)?);
            Ok(0)
        }
        // What ended a worker, with every cause (`StrategyError::chain`).
        Command::Worker => {
            exec::worker::main().map_err(crate::strategy::error::Chained)?;
            Ok(0)
        }
    }
}
