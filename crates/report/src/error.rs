//! Why a report cannot be rendered from a folder: the folder holds no
//! finished run, the template cannot be read or rendered, or a signal
//! stopped the work (a record that cannot be made safe for Markdown is
//! `safe::SafeError`). The `Display`
//! is the sentence the user sees, naming the folder, or the template's
//! file and line.

use runner_core::error::{Coded, Failure};
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The folder's run has not finished: it is resumed, not rendered.
    #[error("{} holds a run in progress (run.json has no finish time); finish it with `runner exec SPEC --resume {}`", .dir.display(), .dir.display())]
    InProgress { dir: PathBuf },
    /// minijinja refused the template (`name`, as the user named it), or
    /// stopped it past its fuel.
    #[error("{}: template error: {}", template_at(.name, .cause), template_said(.cause))]
    Template {
        name: String,
        #[source]
        cause: minijinja::Error,
    },
    /// The rendering passed the bound on its output (`mib`).
    #[error("{name}: template error: the rendering passed {mib} MiB, more than any report needs, and was stopped")]
    TooLong { name: String, mib: usize },
    /// The rendering is not UTF-8 text.
    #[error("{name}: template error: {cause}")]
    NotText {
        name: String,
        #[source]
        cause: std::string::FromUtf8Error,
    },
    /// The template file cannot be read.
    #[error("cannot read template {}: {cause}", .path.display())]
    TemplateUnread {
        path: PathBuf,
        #[source]
        cause: std::io::Error,
    },
    /// The template file is larger than any template needs (`kib`).
    #[error("cannot read template {}: it is larger than {kib} KiB", .path.display())]
    TemplateTooLarge { path: PathBuf, kib: u64 },
    /// A signal came while the folder was read and analysed; nothing was
    /// written.
    #[error("{signal} while reading and analysing {}; nothing was written, the folder is as it was", .dir.display())]
    Interrupted {
        dir: PathBuf,
        signal: runner_os::interrupt::Interrupted,
    },
}

impl Coded for ReportError {
    /// A folder in progress or a template that cannot be rendered is the
    /// input's to fix (exit 2); a signal stops a report
    /// whose input was fine (exit 1), and rendering it again finishes it.
    fn failure(&self) -> Failure {
        match self {
            ReportError::Interrupted { .. } => Failure::RunFailed,
            _ => Failure::BadInput,
        }
    }
}

/// The template's file, and its line where minijinja knows it.
fn template_at(name: &str, e: &minijinja::Error) -> String {
    e.line().map_or(name.to_string(), |l| format!("{name}:{l}"))
}

/// minijinja's own detail, or for a template stopped past its fuel, why.
fn template_said(e: &minijinja::Error) -> String {
    match e.kind() {
        minijinja::ErrorKind::OutOfFuel => format!(
            "the template did more work than any report needs ({} steps) and was stopped; look for a loop that runs far too often",
            crate::TEMPLATE_FUEL
        ),
        _ => e.detail().unwrap_or(&e.to_string()).to_string(),
    }
}
