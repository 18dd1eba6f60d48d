//! What a gate leaves for CI: `gate.json` in the output folder (written by
//! `report::write`, so `runner report` rewrites it byte for byte), a short
//! Markdown verdict appended to `$GITHUB_STEP_SUMMARY` when that is set,
//! and the exit code of `runner exec` (0 pass, 3 regression, 4
//! inconclusive). The sentences come from the report's view-model
//! (`report::context::gate`), so every place says the same.

use crate::context::GateView;
use crate::numbers;
use runner_analysis::gate::{Share, Verdict};
use runner_analysis::Analysis;
use runner_folder::RunInfo;
use runner_plan::self_check::GateSizing;
use runner_spec::Experiment;
use serde::Serialize;
use std::path::Path;

/// The file a gated run writes beside `analysis.json`.
pub(crate) const GATE_JSON: &str = "gate.json";

/// The environment variable GitHub Actions sets to a file whose Markdown
/// it shows on the run's summary page.
pub(crate) const STEP_SUMMARY_ENV: &str = runner_core::settings::STEP_SUMMARY;

/// A gate's outputs, computed with the report.
#[derive(Debug, Clone)]
pub struct GateFiles {
    pub json: String,
    /// Markdown for `$GITHUB_STEP_SUMMARY`, without the folder's path
    /// (exec adds it once the folder is in place).
    pub step_summary: String,
    pub exit_code: i32,
    /// The `--set KEY=VALUE` overrides of the design an inconclusive
    /// verdict names; empty when it names none.
    pub advice: Vec<String>,
}

/// `gate.json`: every key is always present; a number the run could not
/// give (no self-check) is null.
#[derive(Debug, Serialize)]
struct GateJson<'a> {
    verdict: Verdict,
    exit_code: i32,
    reason: runner_analysis::gate::Reason,
    summary: &'a str,
    self_check_summary: &'a str,
    max_slowdown: &'a str,
    judges: runner_analysis::gate::Judged,
    interval: runner_analysis::effect::IntervalKind,
    confidence: f64,
    cell: Option<u32>,
    /// The judged statistic of the deciding cell, its interval and the
    /// threshold in its unit: a speed ratio against 1 + the percentage,
    /// or D in ns against the duration.
    estimate: Option<f64>,
    ci: Option<[f64; 2]>,
    threshold: Option<f64>,
    threshold_ns: Option<f64>,
    baseline_median_ns: Option<f64>,
    self_check: bool,
    self_check_bounds: bool,
    false_positive_share: Option<f64>,
    false_positive_forks: Option<[u32; 2]>,
    false_positive_upper_bound: Option<f64>,
    nominal_false_positive_share: f64,
    false_block_share: Option<f64>,
    false_block_forks: Option<[u32; 2]>,
    false_block_upper_bound: Option<f64>,
    max_false_block: f64,
    power: Option<f64>,
    power_method: &'static str,
    power_slowdown: Option<f64>,
    power_spread: Option<f64>,
    min_power: f64,
    forks_needed: Option<u32>,
    pairs_needed: Option<u32>,
    advice: Option<String>,
    overrides: &'a [String],
    aa: bool,
    cells: Vec<JsonCell>,
    seeds: JsonSeeds,
    run_id: &'a str,
    report: &'a str,
}

#[derive(Debug, Serialize)]
struct JsonCell {
    cell: u32,
    params: serde_json::Map<String, serde_json::Value>,
    threshold: f64,
    estimate: f64,
    ci: [f64; 2],
    decision: Verdict,
}

/// The seeds behind every number of gate.json (run.json has them all).
/// The deciding interval (Student's t over the forks) draws nothing.
#[derive(Debug, Serialize)]
struct JsonSeeds {
    master: u64,
    schedule: u64,
    /// Per self-check fork: the seed of its stream, which dithers its D
    /// within the clock's step (its interval is exact).
    self_check: Vec<ForkSeed>,
}

#[derive(Debug, Serialize)]
struct ForkSeed {
    cell: u32,
    fork: u32,
    seed: u64,
}

fn pair(s: Option<&Share>) -> Option<[u32; 2]> {
    s.map(|s| [s.flagged, s.forks])
}

/// gate.json, the step summary and the exit code of a gated run.
pub(crate) fn files(info: &RunInfo, analysis: &Analysis, view: &GateView<'_>) -> GateFiles {
    let g = view.data;
    let deciding = view.view.deciding_cell.and_then(|id| {
        g.groups
            .iter()
            .flat_map(|gr| gr.cells.iter().map(move |c| (gr, c)))
            .find(|(_, c)| c.cell == id)
    });
    let checks: Vec<u32> = g
        .groups
        .iter()
        .flat_map(|gr| [&gr.false_alarms, &gr.false_blocks])
        .filter_map(|c| c.as_ref().map(|c| c.cell))
        .collect();
    let json = GateJson {
        verdict: g.verdict,
        exit_code: g.exit_code,
        reason: g.reason,
        summary: &view.view.verdict,
        self_check_summary: &view.view.self_check,
        max_slowdown: &g.max_slowdown,
        judges: g.judges,
        interval: g.interval,
        confidence: analysis.confidence,
        cell: deciding.map(|(_, c)| c.cell),
        estimate: deciding.map(|(_, c)| c.estimate),
        ci: deciding.map(|(_, c)| c.ci),
        threshold: deciding.map(|(gr, _)| gr.threshold),
        threshold_ns: deciding.map(|(gr, _)| gr.threshold_ns),
        baseline_median_ns: deciding.map(|(gr, _)| gr.baseline_median_ns),
        self_check: g.self_check,
        self_check_bounds: g.self_check_bounds,
        false_positive_share: g.false_alarms.map(|s| s.share),
        false_positive_forks: pair(g.false_alarms.as_ref()),
        false_positive_upper_bound: g.false_alarms.map(|s| s.upper_bound),
        nominal_false_positive_share: g.nominal_false_alarm,
        false_block_share: g.false_blocks.map(|s| s.share),
        false_block_forks: pair(g.false_blocks.as_ref()),
        false_block_upper_bound: g.false_blocks.map(|s| s.upper_bound),
        max_false_block: g.max_false_block,
        power: g.power.map(|p| p.power),
        power_method: "deciding-interval",
        power_slowdown: g.power.map(|p| p.slowdown),
        power_spread: g.power.map(|p| p.spread),
        min_power: g.min_power,
        forks_needed: g.advice.map(|a| a.forks),
        pairs_needed: g.advice.map(|a| a.pairs),
        advice: g
            .advice
            .map(|a| crate::context::advice_flags(&a, &info.spec().experiment)),
        overrides: &view.view.overrides,
        aa: view.view.aa,
        cells: g
            .groups
            .iter()
            .flat_map(|gr| {
                gr.cells.iter().map(move |c| JsonCell {
                    cell: c.cell,
                    params: c.params.clone(),
                    threshold: gr.threshold,
                    estimate: c.estimate,
                    ci: c.ci,
                    decision: c.decision,
                })
            })
            .collect(),
        seeds: JsonSeeds {
            master: info.seeds().master,
            schedule: info.seeds().schedule,
            self_check: info
                .seeds()
                .bootstrap
                .iter()
                .filter(|s| checks.contains(&s.cell))
                .map(|s| ForkSeed {
                    cell: s.cell,
                    fork: s.fork,
                    seed: s.seed,
                })
                .collect(),
        },
        run_id: info.run_id(),
        report: "report.md",
    };
    let mut text = serde_json::to_string_pretty(&json).expect("gate.json serializes");
    text.push('\n');
    GateFiles {
        json: text,
        step_summary: step_summary(&info.spec().experiment, view),
        exit_code: g.exit_code,
        advice: g
            .advice
            .map(|a| crate::context::advice_sets(&a, &info.spec().experiment))
            .unwrap_or_default(),
    }
}

/// The Markdown verdict for `$GITHUB_STEP_SUMMARY`.
fn step_summary(exp: &Experiment, view: &GateView<'_>) -> String {
    let v = &view.view;
    let mut out = format!(
        "### runner gate: {} ({})\n\n{}\n\n{}\n",
        v.label,
        exp.title.replace('\n', " "),
        v.verdict,
        v.self_check
    );
    if let Some(t) = &v.rates {
        out.push('\n');
        out.push_str(t);
    }
    if !v.overrides.is_empty() {
        out.push_str("\nOverrides of the experiment file this verdict was reached under:\n\n");
        for o in &v.overrides {
            out.push_str(&format!("- `{o}`\n"));
        }
    }
    if v.rows.len() > 1 {
        out.push_str(&format!(
            "\n| cell | threshold | treatment − `{}` | decision |\n|---|---|---:|---|\n",
            exp.design.baseline
        ));
        for r in &v.rows {
            out.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                r.label,
                r.threshold,
                r.estimate,
                serde_json::to_value(r.decision)
                    .ok()
                    .and_then(|d| d.as_str().map(String::from))
                    .unwrap_or_default()
            ));
        }
    }
    out
}

/// Where a reviewer finds the report: the folder as a path relative to
/// the directory the job ran in (the repository's checkout, in a
/// workflow), never an absolute path of the runner machine, and the run's
/// page, whose artifacts hold the folder, when GitHub Actions says where
/// it is.
fn where_to_read(dir: &Path) -> String {
    let shown = std::env::current_dir()
        .ok()
        .and_then(|cwd| {
            runner_folder::output::target::absolute(dir)
                .ok()?
                .strip_prefix(&cwd)
                .ok()
                .map(Path::to_path_buf)
        })
        .unwrap_or_else(|| {
            dir.file_name()
                .map(std::path::PathBuf::from)
                .unwrap_or_else(|| dir.to_path_buf())
        });
    let page = match &runner_core::settings::get().ci_run_page {
        Some(page) => {
            format!(" (in this run's artifacts: {page})")
        }
        _ => String::new(),
    };
    format!(
        "Report: `{}`, verdict for scripts: `{}`{page}.",
        shown.join("report.md").display(),
        shown.join(GATE_JSON).display()
    )
}

/// Appends `markdown` (and where the report is) to `$GITHUB_STEP_SUMMARY`
/// when it is set; does nothing otherwise. Only a regular file is appended
/// to (`output::guard::append`: never a link, a device or a FIFO). A file
/// that cannot be written is a warning, not a failed run: the verdict and
/// gate.json stand.
pub fn append_step_summary(markdown: &str, dir: &Path) {
    append(&format!("{markdown}\n{}\n\n", where_to_read(dir)));
}

/// A gated run that failed before its verdict, for `$GITHUB_STEP_SUMMARY`:
/// the reviewer sees why there is no verdict, and where the kept forks are.
pub fn append_failure(exp: &Experiment, error: &str) {
    append(&format!(
        "### runner gate: FAILED ({})\n\nThe run failed before the gate could decide, so there is no verdict:\n\n```\n{}\n```\n\n",
        exp.title.replace('\n', " "),
        error.replace("```", "'''")
    ));
}

fn append(text: &str) {
    let Some(path) = &runner_core::settings::get().step_summary else {
        return;
    };
    let written = runner_folder::output::guard::append(Path::new(&path), text.as_bytes());
    if let Err(e) = written {
        runner_core::console::warn(&format!(
            "cannot append the gate's verdict to {STEP_SUMMARY_ENV} ({}): {e}",
            Path::new(&path).display()
        ));
    }
}

/// What exec says when it has sized a percentage gate's 0.5x cells.
pub fn sizing_lines(exp: &Experiment, sizing: &GateSizing) -> Vec<String> {
    let max = exp
        .gate
        .map(|g| g.max_slowdown.to_string())
        .unwrap_or_default();
    sizing
        .groups
        .iter()
        .map(|s| {
            format!(
                "gate: {max} of the {} baseline median (of cells {}) is {}; the self-check now runs `{}` against itself with half that, {}, injected",
                numbers::duration(s.baseline_median_ns),
                numbers::list(&s.cells.iter().map(u32::to_string).collect::<Vec<_>>(), "and"),
                numbers::duration(s.threshold_ns),
                exp.design.baseline,
                numbers::delay(runner_plan::self_check::within_delay_ns(s.threshold_ns) as f64),
            )
        })
        .collect()
}
