//! The experiment file: raw TOML -> validated [`Experiment`] (docs/reference.md).
//!
//! `load` reads the file, applies `--set` overrides, rejects unknown keys and
//! out-of-range values with file:line:column, and returns types that make
//! wrong states unrepresentable.

mod collect;
mod command;
mod context;
pub(crate) mod experiment;
mod gate;
mod grid;
pub(crate) mod kinds;
pub mod limits;
mod location;
mod measure;
mod of_baseline;
mod override_error;
mod overrides;
pub mod placeholder;
mod raw;
mod sql;
mod stop;
mod strategies;
mod suggest;
mod uses;
mod validate;
mod value_error;
pub mod values;

#[cfg(test)]
mod tests;

pub use experiment::*;
pub use gate::{Gate, MaxSlowdown, Metric, DEFAULT_MAX_FALSE_BLOCK};
pub use kinds::*;
pub use of_baseline::OfBaseline;
pub use stop::{describe_rule, HalfWidth, StopRule};

pub use location::toml_key;
use location::{line_col, path_at, KeyPath, Locator, Position, Problem};
use std::path::{Path, PathBuf};
use toml_edit::{DocumentMut, ImDocument};

/// A spec as loaded: the validated experiment plus the exact text it came from.
#[derive(Debug, Clone)]
pub struct LoadedSpec {
    pub path: PathBuf,
    pub experiment: Experiment,
    /// The TOML after `--set` overrides were applied; hashed into run.json.
    pub resolved_toml: String,
}

/// Bad input in an experiment file or a `--set` flag. Always exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct SpecError {
    /// One sentence: `FILE:LINE:COL: key `K`: what is wrong; what would be valid`.
    pub message: String,
}

impl runner_core::error::Coded for SpecError {
    fn failure(&self) -> runner_core::error::Failure {
        runner_core::error::Failure::BadInput
    }
}

impl SpecError {
    /// Control characters are escaped so the error is always one line, even
    /// when a flag or a key contains a newline.
    fn new(message: String) -> Self {
        let message = message
            .chars()
            .flat_map(|c| -> Box<dyn Iterator<Item = char>> {
                if c.is_control() {
                    Box::new(c.escape_default())
                } else {
                    Box::new(std::iter::once(c))
                }
            });
        SpecError {
            message: message.collect(),
        }
    }
}

/// Reads, overrides and validates an experiment file.
pub fn load(path: &Path, overrides: &[String]) -> Result<LoadedSpec, SpecError> {
    let shown = path.display().to_string();
    if path.is_dir() {
        return Err(SpecError::new(format!(
            "{shown}: is a directory; expected an experiment file (TOML)"
        )));
    }
    let bytes = read_capped(path)
        .map_err(|e| SpecError::new(format!("{shown}: cannot read the experiment file: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let valid = std::str::from_utf8(&e.as_bytes()[..at]).unwrap_or_default();
        let (line, col) = line_col(valid, at);
        SpecError::new(format!(
            "{shown}:{line}:{col}: the file is not valid UTF-8 (byte 0x{:02x}); save it as UTF-8",
            e.as_bytes()[at]
        ))
    })?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let env = runner_core::settings::get().database_url.clone();
    let ctx = context::Context {
        stem: &stem,
        env_url: env.as_deref(),
        files: context::Files::Here,
    };
    let (experiment, resolved_toml) = load_text(&shown, text, overrides, &ctx)?;
    Ok(LoadedSpec {
        path: path.to_path_buf(),
        experiment,
        resolved_toml,
    })
}

/// At most [`limits::MAX_SPEC_BYTES`] of `path`; a longer file (or an
/// endless one, `/dev/zero`) is an error, not a hang.
fn read_capped(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(limits::MAX_SPEC_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limits::MAX_SPEC_BYTES {
        return Err(std::io::Error::other(format!(
            "it is larger than {} KiB, more than any experiment file needs",
            limits::MAX_SPEC_BYTES / 1024
        )));
    }
    Ok(bytes)
}

/// What a recorded spec is validated again with instead of this machine:
/// the texts of the SQL files the run read, and the backend it used (which
/// decides the SQL grammar).
#[derive(Debug, Clone, Default)]
pub struct Recorded {
    /// `run_file` / `setup_file` path -> the text the run read from it.
    pub sql_files: std::collections::BTreeMap<String, String>,
    /// The run used PostgreSQL (else SQLite, or no database).
    pub postgres: bool,
    /// The design as the run recorded it, for the counts of a fork's pairs
    /// its trial runs chose (`Design::adopt_runs`); none for a new run.
    pub design: Option<Design>,
    /// The gate as the run recorded it, for the keys its runner may not
    /// have known: a run made before the retry cap and `allow_overrides`
    /// had neither, and its file cannot say so.
    pub gate: Option<Gate>,
}

impl Recorded {
    /// From an experiment as validated (its SQL texts) and the backend used.
    pub fn of(experiment: &Experiment, postgres: bool) -> Recorded {
        let mut sql_files = std::collections::BTreeMap::new();
        collect_sql_files(
            &serde_json::to_value(experiment).unwrap_or_default(),
            &mut sql_files,
        );
        Recorded {
            sql_files,
            postgres,
            design: Some(experiment.design.clone()),
            gate: experiment.gate,
        }
    }
}

/// Every `{text, file}` object (an SQL text read from a file) in `v`.
fn collect_sql_files(v: &serde_json::Value, out: &mut std::collections::BTreeMap<String, String>) {
    match v {
        serde_json::Value::Object(m) => {
            if let (Some(serde_json::Value::String(text)), Some(serde_json::Value::String(file))) =
                (m.get("text"), m.get("file"))
            {
                out.insert(file.clone(), text.clone());
            }
            m.values().for_each(|x| collect_sql_files(x, out));
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_sql_files(x, out)),
        _ => {}
    }
}

/// The spec recorded in a run.json (`spec.toml`, as resolved when the run
/// started, and the path it came from), validated again by the same rules,
/// minus the ones that look at this machine (see `context::Context`).
pub fn parse_recorded(
    path: &str,
    toml: &str,
    recorded: &Recorded,
) -> Result<Experiment, SpecError> {
    parse_recorded_with(path, toml, recorded, &[])
}

/// [`parse_recorded`] with `--set` flags applied to the recorded text, as
/// exec applied them to the file: a flag the recorded text already
/// reflects changes nothing (how run.json's `invocation` is checked).
pub fn parse_recorded_with(
    path: &str,
    toml: &str,
    recorded: &Recorded,
    flags: &[String],
) -> Result<Experiment, SpecError> {
    let stem = Path::new(path)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ctx = context::Context {
        stem: &stem,
        env_url: None,
        files: context::Files::Recorded(recorded),
    };
    let (mut experiment, _) = load_text("spec.toml", toml.to_string(), flags, &ctx)?;
    if let Some(design) = &recorded.design {
        experiment.design.adopt_runs(design);
    }
    if let (Some(gate), Some(was)) = (experiment.gate.as_mut(), recorded.gate) {
        // What the file left out is what its runner had: a default of a
        // later runner (the retry cap, overrides allowed) would make an
        // older run read as something it was not.
        let written = |key: &str| {
            toml.parse::<toml::Table>().ok().is_some_and(|t| {
                t.get("gate")
                    .and_then(toml::Value::as_table)
                    .is_some_and(|g| g.contains_key(key))
            })
        };
        if !written("max_retry_factor") {
            gate.max_retry_factor = was.max_retry_factor;
        }
        if !written("allow_overrides") {
            gate.allow_overrides = was.allow_overrides;
        }
    }
    Ok(experiment)
}

/// Everything after reading the file; kept free of I/O (except the template
/// check) so unit tests can feed it text and a fake environment.
/// A gate whose file says `allow_overrides = false` takes no `--set`: a
/// CI command line must not be able to loosen it (and not this key
/// either, which is read from the file as written).
fn refuse_overrides(
    shown: &str,
    text: &str,
    original: &ImDocument<String>,
    flags: &[String],
) -> Result<(), SpecError> {
    let Some(first) = flags.first() else {
        return Ok(());
    };
    let Some(item) = original.get("gate").and_then(|g| g.get("allow_overrides")) else {
        return Ok(());
    };
    if item.as_bool() != Some(false) {
        return Ok(());
    }
    let (line, col) = item.span().map_or((1, 1), |s| line_col(text, s.start));
    Err(SpecError::new(format!(
        "{shown}:{line}:{col}: gate.allow_overrides = false, so this experiment takes no --set (got --set {first}); change the experiment file instead, or set allow_overrides = true in it"
    )))
}

fn load_text(
    shown: &str,
    text: String,
    flags: &[String],
    ctx: &context::Context,
) -> Result<(Experiment, String), SpecError> {
    let original = ImDocument::parse(text.clone()).map_err(|e| {
        let (line, col) = e.span().map_or((1, 1), |s| line_col(&text, s.start));
        // toml_edit puts what it expected on a second line; keep it, on one line.
        let lines: Vec<&str> = e
            .message()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        SpecError::new(format!(
            "{shown}:{line}:{col}: TOML syntax error: {}",
            lines.join("; ")
        ))
    })?;
    refuse_overrides(shown, &text, &original, flags)?;
    let mut doc: DocumentMut = original.clone().into_mut();
    let mut locator = Locator {
        original: Some(&original),
        overrides: Vec::new(),
    };
    for flag in flags {
        let o = overrides::parse(flag)
            .and_then(|o| overrides::apply(&mut doc, &o).map(|_| o))
            .map_err(|m| SpecError::new(format!("{shown}: {m}")))?;
        locator.overrides.push((o.path, o.flag));
    }
    let resolved = doc.to_string();
    let mut found: Vec<String> = Vec::new();
    let mut repairs = collect::Repairs::default();
    // Every problem in one run: after each, the document is repaired where
    // it is and checked again (`collect`), so the user sees all of them at
    // once; a problem that may only follow from a repair is not listed.
    for _ in 0..MAX_PASSES {
        let text = doc.to_string();
        let problem = match toml::from_str::<raw::RawSpec>(&text) {
            Err(e) => {
                let (message, path) = serde_error(shown, &text, &e, &locator);
                found.push(message);
                match path {
                    Some(path) => Problem::key(&path, String::new()),
                    None => break,
                }
            }
            Ok(raw) => match validate::experiment(raw, ctx) {
                Ok(experiment) if found.is_empty() => return Ok((experiment, resolved)),
                Ok(_) => break,
                Err(p) => {
                    if !repairs.explain(&p) {
                        found.push(render(shown, &p, &locator).message);
                    }
                    p
                }
            },
        };
        if found.len() >= MAX_PROBLEMS || !repairs.repair(&mut doc, &problem) {
            break;
        }
    }
    if found.is_empty() {
        // Only repairs' consequences were seen, which cannot happen
        // without a first problem; kept as a sentence rather than a panic.
        found.push(format!("{shown}: the file could not be validated"));
    }
    Err(SpecError {
        message: in_file_order(shown, found).join("\n"),
    })
}

/// The problems sorted by their line and column in the file (stable: those
/// without one, a flag's or the environment's, keep their order, last).
fn in_file_order(shown: &str, mut found: Vec<String>) -> Vec<String> {
    let at = |m: &String| -> Option<(usize, usize)> {
        let rest = m.strip_prefix(shown)?.strip_prefix(':')?;
        let mut parts = rest.splitn(3, ':');
        Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
    };
    found.sort_by_key(|m| at(m).map_or((1, 0, 0), |(l, c)| (0, l, c)));
    found
}

/// At most this many problems of one file are listed.
const MAX_PROBLEMS: usize = 20;

/// At most this many passes (a repair whose consequence is not listed is a
/// pass without a problem).
const MAX_PASSES: usize = 60;

/// `problem` with its position: `FILE:LINE:COL: ...`.
fn render(shown: &str, problem: &Problem, locator: &Locator) -> SpecError {
    SpecError::new(match locator.position(problem) {
        Position::At(line, col) => format!("{shown}:{line}:{col}: {}", problem.message),
        Position::Flag(flag) => format!("{shown}: {flag}: {}", problem.message),
        Position::Unknown => format!("{shown}: {}", problem.message),
    })
}

/// Serde reports unknown keys and non-table values by a span in the resolved
/// text; turn that span back into a key path so the error names the key and
/// the position in the file as written. The message, and the key's path when
/// serde's span names one.
fn serde_error(
    shown: &str,
    resolved: &str,
    e: &toml::de::Error,
    locator: &Locator,
) -> (String, Option<KeyPath>) {
    let message = e
        .message()
        .lines()
        .next()
        .unwrap_or_default()
        .trim()
        .to_string();
    let found = ImDocument::parse(resolved.to_string())
        .ok()
        .and_then(|d| path_at(d.as_table(), e.span().map_or(0, |s| s.start)));
    let Some((path, _)) = found else {
        return (SpecError::new(format!("{shown}: {message}")).message, None);
    };
    let problem = if let Some(valid) = unknown_key_expected(&message) {
        Problem::key(
            &path,
            format!(
                "unknown key `{path}`;{} valid keys here are: {valid}",
                path.segments
                    .last()
                    .map_or_else(String::new, |k| suggest::did_you_mean(k, valid.split(", ")))
            ),
        )
    } else {
        let value = toml::from_str::<toml::Table>(resolved).ok().and_then(|t| {
            let mut v = toml::Value::Table(t);
            for seg in &path.segments {
                v = v.get(seg)?.clone();
            }
            Some(values::describe(&v))
        });
        let got = value.unwrap_or_else(|| "a value of another type".into());
        Problem::value(&path, format!("{path} must be a table (e.g. [{path}] with its keys on the lines below), got {got}"))
    };
    (render(shown, &problem, locator).message, Some(path))
}

/// The valid keys listed by serde's `unknown field` error, without quoting.
fn unknown_key_expected(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown field `")?;
    let expected = rest.split_once(", expected ").map_or("", |(_, e)| e);
    let names: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    Some(if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    })
}
