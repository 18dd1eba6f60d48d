//! `runner check`: the plan of an experiment file, its trial runs and
//! forecast, without running it (`summary` computes, `text` renders).

mod error;
pub(crate) mod preflight;
mod summary;
mod text;
mod trials;

pub(crate) use summary::summarize;

/// `runner check`: prints the plan, as text or (`json`) as one JSON
/// object; a failed trial prints it too, then fails (exit 1) with the
/// reason.
pub(crate) fn check(
    spec_path: &std::path::Path,
    set: &[String],
    flags: &preflight::CheckFlags,
    json: bool,
) -> runner_core::error::Result<String> {
    let summary = summarize(spec_path, set, flags)?;
    let text = if json {
        let mut s = serde_json::to_string_pretty(&summary).expect("the summary serializes");
        s.push('\n');
        s
    } else {
        text::render(&summary)
    };
    match &summary.failure {
        None => Ok(text),
        Some(f) => {
            runner_core::console::out(&text);
            Err(runner_core::error::run_failed(f.message.clone()))
        }
    }
}
