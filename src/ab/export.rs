//! hyperfine's export formats, from a finished report folder, so tools that
//! read hyperfine's JSON (or paste its Markdown table) read runner's.
//!
//! JSON: hyperfine's schema (`results[]`, each with `command`, `mean`,
//! `stddev`, `median`, `user`, `system`, `min`, `max`, `times`,
//! `memory_usage_byte`, `exit_codes` and, with -P/-L, `parameters`;
//! seconds), one result per
//! command and grid combination, from the measured runs of every fork.
//! runner's paired figures, which hyperfine has no field for, go under an
//! extra key `runner` of each treatment's result: the cell's `effect` from
//! analysis.json (direction, difference, ratio and change with their
//! intervals), its forks and pairs, and the report. Markdown: hyperfine's
//! table, whose Relative column is runner's paired ratio with its interval
//! rather than a ratio of means.

use super::error::{AbError, ExportRefusal};
use super::file::Plan;
use runner_analysis::Analysis;
use runner_core::error::Result;
use runner_core::record::{PairRecord, Phase};
use runner_folder::output::guard::{self, Owner};
use serde::Serialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// What an export must never land on: the run's own folder (before and
/// while it runs) and the experiment file ab writes.
pub(crate) struct Own<'a> {
    pub spec: &'a Path,
    pub out_dir: &'a Path,
}

/// Whether `dir` is a report folder: it holds a run.json of runner's, or
/// its record of the files runner wrote lists a run's data.
fn report_folder(dir: &Path) -> bool {
    if guard::runner_run_json(&dir.join(runner_folder::FILE), false) {
        return true;
    }
    let Ok(text) = std::fs::read_to_string(dir.join(guard::RECORD)) else {
        return false;
    };
    let Ok(record) = serde_json::from_str::<Value>(&text) else {
        return false;
    };
    ["files", "pending"].iter().any(|k| {
        record[k]
            .as_object()
            .is_some_and(|m| ["run.json", "pairs.csv"].iter().any(|f| m.contains_key(*f)))
    })
}

/// Refuses, before anything runs, an export `flag PATH` that could destroy
/// data or that could only fail after every fork: a folder that does not
/// exist, a report folder or anything inside one (another run's or this
/// run's own, whose files would be replaced), an experiment file, or a file
/// runner did not write. An export runner wrote before may be written again.
pub(crate) fn check_target(flag: &'static str, path: &Path, own: &Own<'_>) -> Result<()> {
    let refuse = |why: ExportRefusal| {
        Err(AbError::Export {
            flag,
            path: path.to_path_buf(),
            why,
        }
        .into())
    };
    let Some(name) = path.file_name().filter(|_| !path.ends_with("..")) else {
        return refuse(ExportRefusal::NotAFileName);
    };
    let parent = runner_folder::output::parent_or_dot(path);
    if Path::new(name)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
    {
        return refuse(ExportRefusal::ExperimentFile);
    }
    let absolute =
        |p: &Path| runner_folder::output::target::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let at: PathBuf = absolute(parent).join(name);
    let spec = absolute(own.spec);
    let out = absolute(own.out_dir);
    let partial = runner_folder::partial::partial_path(&out);
    if at == spec {
        return refuse(ExportRefusal::OwnSpec);
    }
    if at.starts_with(&out) || at.starts_with(&partial) {
        return refuse(ExportRefusal::InOwnFolder {
            dir: own.out_dir.to_path_buf(),
        });
    }
    if let Some(dir) = at.ancestors().skip(1).find(|d| report_folder(d)) {
        return refuse(ExportRefusal::InReportFolder {
            dir: dir.to_path_buf(),
        });
    }
    if !parent.is_dir() {
        return refuse(ExportRefusal::NoFolder {
            dir: parent.to_path_buf(),
        });
    }
    match guard::owner(path)? {
        Owner::Missing | Owner::Runner => Ok(()),
        Owner::Foreign(why) => refuse(ExportRefusal::Foreign { why }),
    }
}

/// hyperfine's `BenchmarkResult`, as its JSON exporter writes it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct HyperfineResult {
    pub command: String,
    pub mean: f64,
    pub stddev: Option<f64>,
    pub median: f64,
    pub user: f64,
    pub system: f64,
    pub min: f64,
    pub max: f64,
    pub times: Vec<f64>,
    /// Peak RSS of each run, bytes (Linux's `ru_maxrss`, which includes
    /// the worker's memory up to the exec: a floor for a small program).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_usage_byte: Option<Vec<u64>>,
    pub exit_codes: Vec<Option<i32>>,
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub parameters: Map<String, Value>,
    /// runner's paired figures (treatments), or the role (the baseline).
    pub runner: Value,
    /// The speed ratio and its interval, for the Markdown table.
    #[serde(skip)]
    pub ratio: Option<(f64, [f64; 2])>,
}

/// Every result of a run, in hyperfine's order: per grid combination, the
/// baseline, then each treatment.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Results {
    pub results: Vec<HyperfineResult>,
}

/// One arm's measured runs: times and CPU use, in ns.
#[derive(Default)]
struct Runs {
    times: Vec<u64>,
    user: Vec<u64>,
    system: Vec<u64>,
    rss_bytes: Vec<u64>,
}

impl Runs {
    fn add(&mut self, ns: u64, usage: Option<runner_core::record::RunUsage>) {
        self.times.push(ns);
        if let Some(u) = usage {
            self.user.push(u.user_ns);
            self.system.push(u.sys_ns);
            self.rss_bytes.push(u.max_rss_kib.saturating_mul(1024));
        }
    }

    fn result(
        &self,
        command: String,
        parameters: Map<String, Value>,
        runner: Value,
        ratio: Option<(f64, [f64; 2])>,
    ) -> HyperfineResult {
        let s = |ns: f64| ns / 1e9;
        let n = self.times.len();
        let mean_of = |v: &[u64]| {
            if v.is_empty() {
                0.0
            } else {
                v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64
            }
        };
        let mean = mean_of(&self.times);
        // hyperfine: the sample standard deviation, none for one run.
        let stddev = (n > 1).then(|| {
            let ss: f64 = self.times.iter().map(|&x| (x as f64 - mean).powi(2)).sum();
            s((ss / (n - 1) as f64).sqrt())
        });
        let mut sorted = self.times.clone();
        sorted.sort_unstable();
        let median = match n {
            0 => 0.0,
            _ if n % 2 == 1 => sorted[n / 2] as f64,
            _ => (sorted[n / 2 - 1] as f64 + sorted[n / 2] as f64) / 2.0,
        };
        HyperfineResult {
            command,
            mean: s(mean),
            stddev,
            median: s(median),
            user: s(mean_of(&self.user)),
            system: s(mean_of(&self.system)),
            min: s(sorted.first().copied().unwrap_or(0) as f64),
            max: s(sorted.last().copied().unwrap_or(0) as f64),
            times: self.times.iter().map(|&t| s(t as f64)).collect(),
            memory_usage_byte: (!self.rss_bytes.is_empty() && self.rss_bytes.len() == n)
                .then(|| self.rss_bytes.clone()),
            // A run that exits non-zero stops its fork: every kept run exited 0.
            exit_codes: vec![Some(0); n],
            parameters,
            runner,
            ratio,
        }
    }
}

/// `{NAME}` in `command` replaced by the cell's values, as the run did.
fn substitute(command: &str, params: &Map<String, Value>) -> String {
    let mut out = command.to_string();
    for (k, v) in params {
        let text = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        out = out.replace(&format!("{{{k}}}"), &text);
    }
    out
}

impl Results {
    /// The results of the finished report folder `dir` of `plan`'s file.
    pub(crate) fn read(dir: &Path, plan: &Plan) -> Result<Results> {
        let info = runner_folder::read(dir)?;
        let pairs_csv = dir.join("pairs.csv");
        let pairs =
            runner_core::record::read_pairs_csv(&pairs_csv).map_err(|source| AbError::Pairs {
                path: pairs_csv,
                source,
            })?;
        let path = dir.join("analysis.json");
        let bytes = std::fs::read(&path).map_err(|source| AbError::AnalysisUnread {
            path: path.clone(),
            source,
        })?;
        let analysis: Analysis = runner_folder::output::format::parse(
            &path,
            &bytes,
            runner_folder::output::format::Kind::Analysis,
        )
        .map_err(|e| match e {
            runner_folder::output::format::ReadError::Format(e) => AbError::AnalysisFormat(e),
            runner_folder::output::format::ReadError::Json(source) => AbError::AnalysisNotJson {
                path: path.clone(),
                source,
            },
        })?;
        let design = &info.spec().experiment.design;
        let command_of = |name: &str| {
            plan.arms
                .iter()
                .find(|a| a.name == name)
                .map_or_else(|| name.to_string(), |a| a.command.clone())
        };
        let report = dir.join("report.md").display().to_string();
        // Grid combinations in the cells' order; the baseline's runs of
        // every variant of one combination are one result.
        let mut groups: Vec<(Map<String, Value>, Runs, Vec<HyperfineResult>)> = Vec::new();
        for cell in info.cells() {
            let mut params = runner_plan::group_params(&cell.params);
            params.remove(runner_plan::TREATMENT_KEY);
            let (baseline, treatment) = cell.arms(design);
            let rows = pairs
                .iter()
                .filter(|r| r.cell == cell.cell && r.phase == Phase::Measure);
            let mut own = Runs::default();
            let i = match groups.iter().position(|g| g.0 == params) {
                Some(i) => i,
                None => {
                    groups.push((params.clone(), Runs::default(), Vec::new()));
                    groups.len() - 1
                }
            };
            for r in rows {
                add(&mut groups[i].1, &mut own, r);
            }
            let a = analysis.cells.iter().find(|c| c.cell == cell.cell);
            let mut runner = serde_json::json!({
                "baseline": substitute(&command_of(baseline), &params),
                "effect": a.map(|c| &c.effect),
                "forks": a.map(|c| c.forks_total),
                "pairs": a.map(|c| c.n),
                "report": report,
            });
            // Counted instructions, in a key of their own (absent for a
            // run that times alone, whose export is unchanged); counted
            // alone, the times above are the counted runs' under valgrind.
            if let Some(i) = a.and_then(|c| c.instructions.as_ref()) {
                runner["instructions"] = serde_json::json!({
                    "baseline_median": i.baseline_median,
                    "treatment_median": i.treatment_median,
                    "effect": i.effect,
                    "counted_pairs": i.n,
                    "times_are_counted_runs": !design.times(),
                });
            }
            let command = substitute(&command_of(treatment), &params);
            let ratio = a.map(|c| (c.effect.ratio, c.effect.ratio_ci));
            groups[i]
                .2
                .push(own.result(command, params.clone(), runner, ratio));
        }
        let mut results = Vec::new();
        for (params, base, treatments) in groups {
            let command = substitute(&command_of(&design.baseline), &params);
            let role = serde_json::json!({ "role": "baseline", "report": report });
            results.push(base.result(command, params, role, None));
            results.extend(treatments);
        }
        Ok(Results { results })
    }

    /// hyperfine's JSON, pretty-printed with a final newline as hyperfine writes it.
    pub(crate) fn json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("results serialize");
        text.push('\n');
        text
    }

    /// hyperfine's Markdown table; Relative is runner's paired ratio.
    pub(crate) fn markdown(&self) -> String {
        let first = self.results.first().map_or(0.0, |r| r.mean);
        let (unit, scale) = match first {
            m if m < 1e-3 => ("µs", 1e6),
            m if m < 1.0 => ("ms", 1e3),
            _ => ("s", 1.0),
        };
        let mut out = format!(
            "| Command | Mean [{unit}] | Min [{unit}] | Max [{unit}] | Relative |\n|:---|---:|---:|---:|---:|\n"
        );
        for r in &self.results {
            let v = |x: f64| format!("{:.1}", x * scale);
            let mean = match r.stddev {
                Some(sd) => format!("{} ± {}", v(r.mean), v(sd)),
                None => v(r.mean),
            };
            let relative = match r.ratio {
                Some((m, [lo, hi])) => format!("{m:.2} [{lo:.2}, {hi:.2}]"),
                None => "1.00".to_string(),
            };
            out.push_str(&format!(
                "| `{}` | {mean} | {} | {} | {relative} |\n",
                r.command.replace('|', "\\|"),
                v(r.min),
                v(r.max)
            ));
        }
        out
    }
}

fn add(base: &mut Runs, treatment: &mut Runs, r: &PairRecord) {
    let usage = r.usage();
    base.add(r.baseline_ns, usage.baseline);
    treatment.add(r.treatment_ns, usage.treatment);
}
