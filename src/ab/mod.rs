//! `runner ab CMD CMD [CMD...]`: hyperfine's one line, answered the way an
//! experiment file is. It writes `experiments/NAME.toml` (commented, a
//! sequential design that stops once the answer is known), runs it exactly
//! as `runner exec experiments/NAME.toml` would into `reports/NAME/`, and
//! prints exec's Finding; `--export-json` and `--export-markdown` then write
//! hyperfine's formats from the report folder. The file is the record: a
//! user edits it and runs `runner exec`, and commits both.
//!
//! The file goes through the one write guard (`output::guard`): a file
//! runner did not write, or one changed since, is never replaced.

mod error;
pub(crate) mod export;
pub(crate) mod file;

use crate::cli::ab::AbArgs;
use crate::exec::ExecArgs;
use error::AbError;
use runner_core::error::Result;
use std::path::Path;

/// The folder `runner ab` writes its experiment files into.
pub(crate) const EXPERIMENTS: &str = "experiments";

/// What `runner ab` did: the file, and (unless `--no-run`) exec's output.
pub(crate) struct AbOutcome {
    /// For stdout: exec's summary (the Finding), or with `--no-run` how to run it.
    pub summary: String,
    /// exec's exit code (0 without a gate).
    pub exit_code: i32,
}

/// `runner ab`.
pub(crate) fn ab(args: &AbArgs) -> Result<AbOutcome> {
    let plan = file::plan(args)?;
    if let Some(input) = args.input.as_deref().filter(|p| !p.is_file()) {
        return Err(AbError::NoInput {
            input: input.to_path_buf(),
        }
        .into());
    }
    let spec = Path::new(EXPERIMENTS).join(format!("{}.toml", plan.name));
    let text = file::text(args, &plan, &file::invocation(args));
    file::reads_back(&spec, &text)?;
    check_exports(args, &spec, &Path::new("reports").join(&plan.name))?;
    write_spec(&spec, &text)?;
    if args.no_run {
        return Ok(AbOutcome {
            summary: format!(
                "{}\nrun it with: runner exec {}\n",
                spec.display(),
                spec.display()
            ),
            exit_code: 0,
        });
    }
    if !args.quiet {
        runner_core::console::err(&format!(
            "wrote {}; running it as `runner exec {}`",
            spec.display(),
            spec.display()
        ));
    }
    let mut exec_args = ExecArgs::of_spec(&spec);
    exec_args.quiet = args.quiet;
    let outcome = crate::exec::exec(&exec_args)?;
    let mut summary = outcome.summary;
    if args.export_json.is_some() || args.export_markdown.is_some() {
        let results = export::Results::read(&outcome.dir, &plan)?;
        if let Some(path) = &args.export_json {
            runner_folder::output::guard::write(path, results.json().as_bytes())?;
            summary.push_str(&format!("{}\n", path.display()));
        }
        if let Some(path) = &args.export_markdown {
            runner_folder::output::guard::write(path, results.markdown().as_bytes())?;
            summary.push_str(&format!("{}\n", path.display()));
        }
    }
    Ok(AbOutcome {
        summary,
        exit_code: outcome.exit_code,
    })
}

/// Every export refused now that would be refused, or would destroy
/// data, after the run (`export::check_target`).
fn check_exports(args: &AbArgs, spec: &Path, out_dir: &Path) -> Result<()> {
    let own = export::Own { spec, out_dir };
    let exports = [
        ("--export-json", &args.export_json),
        ("--export-markdown", &args.export_markdown),
    ];
    for (flag, path) in exports.iter().filter_map(|(f, p)| Some((f, p.as_ref()?))) {
        export::check_target(flag, path, &own)?;
    }
    if let (Some(json), Some(md)) = (&args.export_json, &args.export_markdown) {
        let same = |p: &Path| runner_folder::output::target::absolute(p).ok();
        if same(json) == same(md) {
            return Err(AbError::ExportsCollide { path: json.clone() }.into());
        }
    }
    Ok(())
}

/// Writes the experiment file, making `experiments/` when it is missing.
fn write_spec(spec: &Path, text: &str) -> Result<(), AbError> {
    if let Some(dir) = spec.parent() {
        std::fs::create_dir_all(dir).map_err(|source| AbError::MakeFolder {
            dir: dir.to_path_buf(),
            source,
        })?;
    }
    runner_folder::output::guard::write(spec, text.as_bytes()).map_err(AbError::SpecNotWritten)
}

#[cfg(test)]
mod tests;
