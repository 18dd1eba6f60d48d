//! Rendering a report folder from its raw data (templates/README.md).
//!
//! `exec` and `runner report` both come through here: [`read_folder`] reads
//! `run.json` and `pairs.csv` and checks them against each other (digests,
//! rows, pair indices, the spec: `runner_folder::digest`, `runner_folder::verify`);
//! [`render_run`] computes everything in memory; [`write`] puts it on disk.
//! Reading nothing else is what makes `runner report` reproduce `report.md`
//! byte for byte, and checking first is what keeps it from printing numbers
//! computed from data that is not the run's.

pub mod context;
pub mod effect;
mod error;
pub(crate) mod filters;
pub mod gate_files;
pub mod numbers;
pub mod plots;
pub(crate) mod safe;

pub use error::ReportError;
use runner_core::error::Result;
use runner_core::record::PairRecord;
use runner_folder::output::{self, guard, target};
use runner_folder::RunInfo;
use std::path::{Path, PathBuf};

/// The default template, compiled in; `templates/report.md.j2` is its copy.
pub const DEFAULT_TEMPLATE: &str = include_str!("../../../templates/report.md.j2");

/// Work a template may do (minijinja's fuel: roughly one unit per
/// instruction). The default report uses well under a million; a template
/// that loops far beyond that is stopped with an error instead of running
/// for hours.
const TEMPLATE_FUEL: u64 = 50_000_000;
/// The most a rendering may write: far above any report, far below a disk.
const MAX_OUTPUT_BYTES: usize = 16 << 20;
/// A template file is read whole.
const MAX_TEMPLATE_BYTES: u64 = 1 << 20;

/// Reads a finished folder's run.json and pairs.csv, each checked (exit 2
/// naming the file, the key or the fork when anything does not match).
pub fn read_folder(dir: &Path) -> Result<(RunInfo, Vec<PairRecord>)> {
    read_folder_with(dir, |_| ()).map(|(info, pairs, ())| (info, pairs))
}

/// [`read_folder`], with `beside(&run.json)` computed while pairs.csv is
/// read and checked (on the analysis's pool).
fn read_folder_with<T: Send>(
    dir: &Path,
    beside: impl FnOnce(&RunInfo) -> T + Send,
) -> Result<(RunInfo, Vec<PairRecord>, T)> {
    let info = runner_folder::read(dir)?;
    if info.finished_at().is_none() {
        return Err(ReportError::InProgress {
            dir: dir.to_path_buf(),
        }
        .into());
    }
    let (pairs, other) = runner_stats::pool::join(
        || runner_folder::digest::read_pairs(dir, &info),
        || beside(&info),
    );
    Ok((info, pairs?, other))
}

/// One minijinja environment for every template, so a template that passes
/// [`check_template`] renders under the same rules.
fn template_env() -> minijinja::Environment<'static> {
    let mut env = minijinja::Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    env.set_fuel(Some(TEMPLATE_FUEL));
    filters::register(&mut env);
    env
}

/// Output that stops a rendering past [`MAX_OUTPUT_BYTES`].
struct Capped {
    text: Vec<u8>,
    over: bool,
}

impl std::io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.text.len() + buf.len() > MAX_OUTPUT_BYTES {
            self.over = true;
            return Err(std::io::Error::other("output too large"));
        }
        self.text.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Renders `template` (minijinja) with `ctx`; errors name the template's
/// file:line. Bounded in work and in output size.
pub fn render<C: serde::Serialize>(name: &str, template: &str, ctx: &C) -> Result<String> {
    let mut env = template_env();
    let fail = |cause| ReportError::Template {
        name: name.to_string(),
        cause,
    };
    env.add_template(name, template).map_err(fail)?;
    let tmpl = env.get_template(name).map_err(fail)?;
    let mut out = Capped {
        text: Vec::new(),
        over: false,
    };
    match tmpl.render_captured_to(ctx, &mut out) {
        Ok(_) => {}
        Err(_) if out.over => {
            return Err(ReportError::TooLong {
                name: name.to_string(),
                mib: MAX_OUTPUT_BYTES >> 20,
            }
            .into())
        }
        Err(e) => return Err(fail(e).into()),
    }
    String::from_utf8(out.text).map_err(|cause| {
        ReportError::NotText {
            name: name.to_string(),
            cause,
        }
        .into()
    })
}

/// Reads a template file (at most [`MAX_TEMPLATE_BYTES`]).
fn read_template(path: &Path) -> Result<String> {
    use std::io::Read;
    let unread = |cause| ReportError::TemplateUnread {
        path: path.to_path_buf(),
        cause,
    };
    let mut text = String::new();
    std::fs::File::open(path)
        .map_err(unread)?
        .take(MAX_TEMPLATE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(unread)?;
    if text.len() as u64 > MAX_TEMPLATE_BYTES {
        return Err(ReportError::TemplateTooLarge {
            path: path.to_path_buf(),
            kib: MAX_TEMPLATE_BYTES >> 10,
        }
        .into());
    }
    Ok(text)
}

/// Reads and compiles a template file without rendering it, so a broken
/// template is refused before a run spends its time.
pub fn check_template(path: &Path) -> Result<()> {
    let source = read_template(path)?;
    let name = path.display().to_string();
    template_env()
        .add_template_owned(name.clone(), source)
        .map_err(|cause| ReportError::Template { name, cause })?;
    Ok(())
}

/// The template a folder renders with: `template`, else the run's
/// `report.template`, else the built-in one; as (name, source).
pub fn template_for(info: &RunInfo, template: Option<&Path>) -> Result<(String, String)> {
    let path = template
        .map(Path::to_path_buf)
        .or_else(|| info.spec().experiment.report.template.clone());
    Ok(match path {
        Some(p) => (p.display().to_string(), read_template(&p)?),
        None => (
            "templates/report.md.j2".to_string(),
            DEFAULT_TEMPLATE.to_string(),
        ),
    })
}

/// Everything a folder's report consists of, computed in memory.
pub struct Rendering {
    pub analysis_json: String,
    pub report: String,
    pub plots: Vec<(&'static str, String)>,
    /// The headline and the sensitivity table, for the terminal (led by the
    /// gate's verdict when there is a gate).
    pub summary: String,
    /// A gate's `gate.json`, its Markdown verdict for
    /// `$GITHUB_STEP_SUMMARY`, and its exit code.
    pub gate: Option<crate::gate_files::GateFiles>,
}

/// Analyses `pairs` and renders the report, the plots and the summary;
/// no I/O. Pure and long-running: callers run it through
/// `interrupt::run`, so a signal is answered during it.
pub fn render_run(
    info: &RunInfo,
    pairs: &[PairRecord],
    template: (String, String),
) -> Result<Rendering> {
    // Everything shown comes from a copy whose recorded text cannot change
    // the report's structure (`safe`).
    let info = safe::for_markdown(info)?;
    render_safe(&info, pairs, template)
}

/// [`render_run`] of a record already made safe for Markdown.
fn render_safe(
    info: &RunInfo,
    pairs: &[PairRecord],
    template: (String, String),
) -> Result<Rendering> {
    let analysis = runner_analysis::run::analyse(info, pairs)?;
    let mut ctx = context::build(info, &analysis);
    ctx.run.overhead = context::overhead::view(info, pairs);
    let (name, source) = template;
    // The record's `|` and backticks travel as marks (`safe`): each output
    // gets them back as its place needs.
    let report = safe::finish_markdown(&render(&name, &source, &ctx)?);
    let mut analysis_json = serde_json::to_string_pretty(&analysis).expect("analysis serializes");
    analysis_json.push('\n');
    let analysis_json = safe::plain(&analysis_json);
    let plots = plots::render_all(&plots::Input::of(&analysis, &ctx, pairs))?
        .into_iter()
        .map(|(name, svg)| (name, safe::plain_xml(&svg)))
        .collect();
    let summary = safe::plain(&render("summary", include_str!("summary.txt.j2"), &ctx)?);
    let gate = ctx.gate.as_ref().map(|g| {
        let mut files = crate::gate_files::files(info, &analysis, g);
        files.json = safe::plain(&files.json);
        files.step_summary = safe::finish_markdown(&files.step_summary);
        files
    });
    Ok(Rendering {
        analysis_json,
        report,
        plots,
        summary,
        gate,
    })
}

/// Writes `analysis.json` into `dir`, the report to `out` (default
/// `DIR/report.md`) and the plots beside the report, where its relative
/// links find them. Every file goes through `output::guard` (checked all
/// first, then written atomically and recorded).
pub fn write(dir: &Path, out: Option<&Path>, r: &Rendering) -> Result<PathBuf> {
    let default = dir.join("report.md");
    let report = out.map(Path::to_path_buf).unwrap_or(default.clone());
    let beside = output::parent_or_dot(&report).to_path_buf();
    let inside = match (target::absolute(&report), target::absolute(&default)) {
        (Ok(a), Ok(b)) => a == b,
        _ => out.is_none(),
    };
    let mut files: Vec<(PathBuf, &[u8])> = r
        .plots
        .iter()
        .map(|(name, svg)| (beside.join(name), svg.as_bytes()))
        .collect();
    files.push((report.clone(), r.report.as_bytes()));
    if !inside {
        target::check_new_files(&files)?;
        std::fs::create_dir_all(&beside)
            .map_err(|e| output::io_err("create the folder of", &report, e))?;
    }
    let mut inside_files = vec![(dir.join("analysis.json"), r.analysis_json.as_bytes())];
    if let Some(g) = &r.gate {
        inside_files.push((dir.join(crate::gate_files::GATE_JSON), g.json.as_bytes()));
    }
    // Every file checked before the first is written (`write_all`): a
    // refusal leaves everything as it was.
    let all: Vec<(PathBuf, &[u8])> = inside_files.into_iter().chain(files).collect();
    guard::write_all(&all)?;
    // A run folder re-rendered as another kind (a comparison's folder
    // first drawn with a study's plots by an older runner) keeps no plot
    // its report no longer links; only runner's own, unchanged, go. Beside
    // a report written elsewhere (`--out`) the plots may be another
    // report's, so they stay.
    if inside {
        let drawn: Vec<&str> = r.plots.iter().map(|(name, _)| *name).collect();
        for name in output::STUDY_PLOTS
            .iter()
            .chain(&output::COMPARISON_PLOTS)
            .chain(&[
                output::STOP_PLOT,
                output::CLIENTS_PLOT,
                output::INSTRUCTIONS_PLOT,
            ])
        {
            if !drawn.contains(name) {
                guard::remove_own(&dir.join(name))?;
            }
        }
    }
    Ok(report)
}

/// What `runner report` wrote.
pub struct Rendered {
    pub report: PathBuf,
    pub summary: String,
}

/// `runner report DIR [--template FILE] [--out FILE]`: check, analyse and
/// render (answering a signal throughout), then write.
pub fn render_folder(dir: &Path, template: Option<&Path>, out: Option<&Path>) -> Result<Rendered> {
    if let Some(o) = out {
        target::check_report_out(dir, o)?;
    }
    // Any signal since runner started (0): nothing is worth finishing.
    let since = 0;
    let (folder, tpl) = (dir.to_path_buf(), template.map(Path::to_path_buf));
    let rendering = runner_os::interrupt::run(since, move || -> Result<Rendering> {
        let (info, pairs, safe) = read_folder_with(&folder, safe::for_markdown)?;
        let template = template_for(&info, tpl.as_deref())?;
        render_safe(&safe?, &pairs, template)
    })
    .map_err(|signal| ReportError::Interrupted {
        dir: dir.to_path_buf(),
        signal,
    })??;
    let report = write(dir, out, &rendering)?;
    Ok(Rendered {
        report,
        summary: rendering.summary,
    })
}
