//! The template's context (design section 7), documented in
//! `templates/README.md`: the object of `analysis.json` at top level, plus
//! `spec`, `environment`, `database` and `run`.

use crate::analysis::{Analysis, AnalysisInput, CellInfo};
use crate::run_info::RunInfo;
use serde_json::{json, Map, Value};

/// What the analysis needs from `run.json`.
pub fn analysis_input(info: &RunInfo) -> AnalysisInput {
    let exp = &info.spec.experiment;
    AnalysisInput {
        master_seed: info.seeds.master,
        resamples: exp.analysis.resamples,
        confidence: exp.analysis.confidence,
        ordering: exp.design.ordering,
        pad_baseline: exp.design.pad_baseline,
        cells: info
            .cells
            .iter()
            .map(|c| CellInfo {
                cell: c.cell,
                params: c.params.clone(),
                delay_ns: c.delay_ns,
            })
            .collect(),
        target_half_width_ns: None,
    }
}

/// The command that reproduces this run: the spec as recorded, with the
/// master seed pinned when the run drew it; quoted for a POSIX shell.
pub fn reproduce_command(info: &RunInfo) -> String {
    let mut argv: Vec<String> = ["cargo", "run", "--release", "--", "exec"]
        .map(String::from)
        .to_vec();
    argv.push(info.spec.path.clone());
    let mut args = info.command_line.iter().skip(2);
    while let Some(a) = args.next() {
        if a == "--set" {
            if let Some(v) = args.next() {
                argv.extend(["--set".to_string(), v.clone()]);
            }
        } else if let Some(v) = a.strip_prefix("--set=") {
            argv.extend(["--set".to_string(), v.to_string()]);
        }
    }
    if info.seeds.drawn {
        argv.extend(["--set".to_string(), format!("seed={}", info.seeds.master)]);
    }
    crate::shell::join(&argv)
}

/// Builds the whole context.
pub fn build(info: &RunInfo, analysis: &Analysis) -> Value {
    let mut ctx: Map<String, Value> = match serde_json::to_value(analysis) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let exp = &info.spec.experiment;
    let strategies: Map<String, Value> = exp
        .strategies
        .iter()
        .map(|(name, kind)| (name.clone(), json!({ "kind": kind.label() })))
        .collect();
    let mut spec = serde_json::to_value(exp).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut spec {
        m.insert("path".into(), json!(info.spec.path));
        m.insert("sha256".into(), json!(info.spec.sha256));
        m.insert("strategies".into(), Value::Object(strategies));
        m.insert(
            "baseline_kind".into(),
            json!(exp.strategies[&exp.design.baseline].label()),
        );
        m.insert(
            "treatment_kind".into(),
            json!(exp.strategies[&exp.design.treatment].label()),
        );
        m.insert("is_aa".into(), json!(exp.design.is_aa()));
    }
    ctx.insert("spec".into(), spec);
    ctx.insert(
        "environment".into(),
        serde_json::to_value(&info.environment).unwrap_or(Value::Null),
    );
    ctx.insert(
        "database".into(),
        info.database.clone().unwrap_or(Value::Null),
    );
    let arms_agree = info
        .forks
        .iter()
        .all(|f| f.checks.arms_agree != Some(false));
    let compared = info.forks.iter().any(|f| f.checks.arms_agree == Some(true));
    let matches_in_memory = info
        .forks
        .iter()
        .any(|f| f.checks.matches_in_memory == Some(true));
    ctx.insert(
        "run".into(),
        json!({
            "run_id": info.run_id,
            "master_seed": info.seeds.master,
            "seed_drawn": info.seeds.drawn,
            "command_line": info.command_line.join(" "),
            "reproduce": reproduce_command(info),
            "started_at": info.started_at,
            "finished_at": info.finished_at,
            "forks_run": info.forks.len(),
            "arms_compared": compared,
            "arms_agree": arms_agree,
            "matches_in_memory": matches_in_memory,
            "has_delays": info.cells.iter().any(|c| c.delay_ns > 0),
            "wall_s": info.forks.iter().map(|f| f.wall_ns).sum::<u64>() as f64 / 1e9,
            "build_profile": info.build.profile,
            "fault": info.build.fault,
        }),
    );
    Value::Object(ctx)
}
