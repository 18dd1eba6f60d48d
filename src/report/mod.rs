//! Rendering a report folder from its raw data (design section 7).
//!
//! `exec` and `runner report` both come through [`render_folder`], which reads
//! only `pairs.csv` and `run.json`; that is what makes `runner report`
//! reproduce `report.md` byte for byte.

pub mod context;
pub mod filters;

use crate::analysis::{self, Analysis};
use crate::error::{bad_input, Result};
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

/// Renders `template` (minijinja) with `ctx`; errors name the template's file:line.
pub fn render(name: &str, template: &str, ctx: &serde_json::Value) -> Result<String> {
    let mut env = minijinja::Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    filters::register(&mut env);
    let fail = |e: minijinja::Error| {
        let at = match e.line() {
            Some(l) => format!("{name}:{l}"),
            None => name.to_string(),
        };
        bad_input(format!(
            "{at}: template error: {}",
            e.detail().unwrap_or(&e.to_string())
        ))
    };
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
    let mut env = minijinja::Environment::new();
    filters::register(&mut env);
    env.add_template(&name, &source).map_err(|e| {
        let at = e.line().map_or(name.clone(), |l| format!("{name}:{l}"));
        bad_input(format!(
            "{at}: template error: {}",
            e.detail().unwrap_or(&e.to_string())
        ))
    })
}

/// Writes `analysis.json` and the report (to `out`, default `DIR/report.md`).
/// A custom template is `template`, else the run's `report.template`, else
/// the built-in one. Returns the report's path.
pub fn render_folder(dir: &Path, template: Option<&Path>, out: Option<&Path>) -> Result<PathBuf> {
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
    write_atomic(&report, text.as_bytes())?;
    Ok(report)
}

/// What `exec` prints on stdout when it finishes: headline, sensitivity table, path.
pub fn terminal_summary(dir: &Path) -> Result<String> {
    let text = std::fs::read_to_string(dir.join("analysis.json"))
        .map_err(|e| bad_input(format!("cannot read analysis.json: {e}")))?;
    let analysis: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad_input(format!("bad analysis.json: {e}")))?;
    let summary = render("summary", include_str!("summary.txt.j2"), &analysis)?;
    Ok(format!(
        "{summary}report: {}\n",
        dir.join("report.md").display()
    ))
}
