//! Rendering a report folder from its raw data (design section 7).
//!
//! `exec` and `runner report` both come through [`render_folder`], which reads
//! only `pairs.csv` and `run.json`; that is what makes `runner report`
//! reproduce `report.md` byte for byte.

pub mod context;
pub mod filters;
pub mod format;
pub mod plots;

use crate::analysis::{self, Analysis};
use crate::error::{bad_input, Result, RunnerError};
use crate::exec::partial::write_atomic;
use crate::run_info::RunInfo;
use std::path::{Path, PathBuf};

/// The default template, compiled in; `templates/report.md.j2` is its copy.
pub const DEFAULT_TEMPLATE: &str = include_str!("../../templates/report.md.j2");

/// Reads a folder's raw data and recomputes every statistic.
pub fn analyse_folder(dir: &Path) -> Result<(RunInfo, Analysis)> {
    let info = RunInfo::read(&dir.join("run.json")).map_err(|e| bad_input(format!("{e:#}")))?;
    let pairs = crate::record::read_pairs_csv(&dir.join("pairs.csv"))
        .map_err(|e| bad_input(format!("{e:#}")))?;
    let input = context::analysis_input(&info);
    let analysis = analysis::analyse(&input, &pairs)
        .map_err(|e| bad_input(format!("{}: {e}", dir.display())))?;
    Ok((info, analysis))
}

/// One minijinja environment for every template, so a template that passes
/// [`check_template`] renders under the same rules.
fn template_env() -> minijinja::Environment<'static> {
    let mut env = minijinja::Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    filters::register(&mut env);
    env
}

/// A template error as one sentence naming the template's file:line.
fn template_error(name: &str, e: minijinja::Error) -> RunnerError {
    let at = e.line().map_or(name.to_string(), |l| format!("{name}:{l}"));
    bad_input(format!(
        "{at}: template error: {}",
        e.detail().unwrap_or(&e.to_string())
    ))
}

/// Renders `template` (minijinja) with `ctx`; errors name the template's file:line.
pub fn render<C: serde::Serialize>(name: &str, template: &str, ctx: &C) -> Result<String> {
    let mut env = template_env();
    let fail = |e| template_error(name, e);
    env.add_template(name, template).map_err(fail)?;
    let tmpl = env.get_template(name).map_err(fail)?;
    tmpl.render(ctx).map_err(fail)
}

/// Reads and compiles a template file without rendering it, so a broken
/// template is refused before a run spends its time.
pub fn check_template(path: &Path) -> Result<()> {
    let source = std::fs::read_to_string(path)
        .map_err(|e| bad_input(format!("cannot read template {}: {e}", path.display())))?;
    let name = path.display().to_string();
    template_env()
        .add_template_owned(name.clone(), source)
        .map_err(|e| template_error(&name, e))
}

/// Writes `analysis.json`, the report (to `out`, default `DIR/report.md`)
/// and the plots beside the report, where its relative links find them.
/// A custom template is `template`, else the run's `report.template`, else
/// the built-in one. Returns the report's path and the terminal summary.
pub fn render_folder(dir: &Path, template: Option<&Path>, out: Option<&Path>) -> Result<Rendered> {
    let (info, analysis) = analyse_folder(dir)?;
    let template_path = template
        .map(Path::to_path_buf)
        .or_else(|| info.spec.experiment.report.template.clone());
    let (name, source) = match &template_path {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| bad_input(format!("cannot read template {}: {e}", p.display())))?;
            (p.display().to_string(), text)
        }
        None => (
            "templates/report.md.j2".to_string(),
            DEFAULT_TEMPLATE.to_string(),
        ),
    };
    let ctx = context::build(&info, &analysis);
    let text = render(&name, &source, &ctx)?;
    let mut json = serde_json::to_string_pretty(&analysis).expect("analysis serializes");
    json.push('\n');
    write_atomic(&dir.join("analysis.json"), json.as_bytes())?;
    let report = out
        .map(Path::to_path_buf)
        .unwrap_or_else(|| dir.join("report.md"));
    let beside = match report.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    plots::write_all(&beside, &analysis, info.spec.experiment.design.is_aa())?;
    write_atomic(&report, text.as_bytes())?;
    let summary = render("summary", include_str!("summary.txt.j2"), &ctx)?;
    Ok(Rendered { report, summary })
}

/// What [`render_folder`] wrote, and what `exec` prints on stdout when it
/// finishes: the headline and the sensitivity table.
pub struct Rendered {
    pub report: PathBuf,
    pub summary: String,
}
