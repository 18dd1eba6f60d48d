//! One committed version of a report folder: its run.json and pairs.csv
//! checked exactly as `runner report` checks a folder (run.json against
//! its spec and seeds, every fork's rows against their digests, the
//! whole file against `pairs_sha256`), then analysed by this runner, so
//! every version's figures come from its own checked rows by one method,
//! whichever runner wrote it. What the history needs is kept; the rows
//! are dropped before the next version is read.

use runner_analysis::effect::Effect;
use runner_analysis::gate::Verdict;
use runner_folder::RunInfo;
use runner_os::environment::Environment;
use runner_spec::Experiment;
use runner_stats::apart::Bounded;
use std::path::Path;

pub(super) use super::version_error::VersionError;

/// Where a version was measured: what makes two of its runs comparable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Machine {
    /// `host (CPU, N logical cores)`, or the note for imported data.
    pub name: String,
    /// Host, CPU, cores, memory, kernel and database server: a change in
    /// any of these is a machine change.
    key: Vec<String>,
}

impl Machine {
    fn of(info: &RunInfo) -> Machine {
        if info.imported().is_some() {
            return Machine {
                name: "unknown (imported data)".into(),
                key: vec![format!("imported {}", info.run_id())],
            };
        }
        let e: &Environment = info.environment();
        let database = info.database().as_ref().map_or(String::new(), |d| {
            format!(
                "{} {}",
                d["backend"].as_str().unwrap_or(""),
                d["version"].as_str().unwrap_or("")
            )
        });
        Machine {
            name: format!(
                "{} ({}, {} logical cores)",
                e.hostname, e.cpu_model, e.logical_cores
            ),
            key: vec![
                e.hostname.clone(),
                e.cpu_model.clone(),
                e.logical_cores.to_string(),
                // To a tenth of a GiB: a VM reports a few kB more or less
                // after a reboot, which is not another machine.
                format!("{:.1} GiB", e.memory_bytes as f64 / f64::from(1u32 << 30)),
                format!("{} {}", e.os, e.kernel),
                database,
            ],
        }
    }

    /// A machine known by its host alone (for tests of the rule).
    #[cfg(test)]
    pub(crate) fn named(host: &str) -> Machine {
        Machine {
            name: host.into(),
            key: vec![
                host.into(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ],
        }
    }

    /// What differs from `before`: (what, before, now); empty on the
    /// same machine.
    pub(crate) fn changes_from(&self, before: &Machine) -> Vec<(String, String, String)> {
        const WHAT: [&str; 6] = [
            "host",
            "CPU",
            "logical cores",
            "memory",
            "kernel",
            "database server",
        ];
        if self.key.len() != before.key.len() {
            return vec![("source".into(), before.name.clone(), self.name.clone())];
        }
        WHAT.iter()
            .zip(self.key.iter().zip(&before.key))
            .filter(|(_, (a, b))| a != b)
            .map(|(w, (a, b))| (w.to_string(), b.clone(), a.clone()))
            .collect()
    }
}

/// One fork of a cell, as two-separate-runs comparisons see it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ForkPoint {
    /// The fork's median D.
    pub median_ns: f64,
    pub baseline_ns: f64,
    pub treatment_ns: f64,
}

/// One experiment cell of one version.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CellPoint {
    /// The grid values in words, as the report labels the cell
    /// (`delay_us = 0`, a variant's name).
    pub label: String,
    /// The treatment of this cell (a variant's, with several).
    pub treatment: String,
    pub delay_ns: u64,
    /// The cell's effect as its report states it (`analysis::effect`).
    pub effect: Effect,
    pub baseline_ns: f64,
    pub treatment_ns: f64,
    pub forks: Vec<ForkPoint>,
    /// The instructions' effect, for a version that counted them.
    pub instructions: Option<runner_analysis::instructions::CountEffect>,
}

/// A version that was read, checked and analysed.
#[derive(Debug, Clone)]
pub(crate) struct Version {
    pub run_id: String,
    pub machine: Machine,
    pub experiment: Experiment,
    pub confidence: f64,
    pub gate: Option<Verdict>,
    pub cells: Vec<CellPoint>,
}

/// Checks a version's two files as `runner report` checks a folder; the
/// error is one sentence naming the file.
pub(super) fn check(
    run_json: &[u8],
    pairs: &[u8],
) -> Result<(RunInfo, Vec<runner_core::record::PairRecord>), VersionError> {
    let info =
        RunInfo::parse(Path::new(runner_folder::FILE), run_json).map_err(VersionError::Read)?;
    runner_folder::verify::check(&info).map_err(VersionError::Record)?;
    if info.finished_at().is_none() {
        return Err(VersionError::InProgress);
    }
    let rows = runner_folder::digest::check_pairs(pairs, &info).map_err(VersionError::Pairs)?;
    Ok((info, rows))
}

impl CellPoint {
    /// Median D with its interval, ns.
    pub(crate) fn difference(&self) -> Bounded {
        let e = &self.effect;
        Bounded {
            estimate: e.difference_ns,
            lo: e.difference_ci_ns[0],
            hi: e.difference_ci_ns[1],
        }
    }

    /// The speed ratio less the injected delay, (treatment − delay) /
    /// baseline, with its interval: what the code did, whatever the
    /// delay. Without a delay it is the cell's speed ratio as its report
    /// states it; with one, the cell's ratio includes the delay, so it is
    /// 1 + (D − delay) / the baseline's median, where D is that ratio
    /// turned into time per run (`effect.difference`), so on the ratio's
    /// interval. None
    /// when the baseline's median is 0.
    pub(crate) fn ratio_less_delay(&self) -> Option<Bounded> {
        let (b, d) = (self.baseline_ns, self.delay_ns as f64);
        let e = &self.effect;
        if self.delay_ns == 0 {
            return Some(Bounded {
                estimate: e.ratio,
                lo: e.ratio_ci[0],
                hi: e.ratio_ci[1],
            });
        }
        (b > 0.0).then(|| {
            let r = |x: f64| 1.0 + (x - d) / b;
            let dd = self.difference();
            Bounded {
                estimate: r(dd.estimate),
                lo: r(dd.lo),
                hi: r(dd.hi),
            }
        })
    }
}

/// Reads, checks and analyses one version.
pub(super) fn read(run_json: &[u8], pairs: &[u8]) -> Result<Version, VersionError> {
    let (info, rows) = check(run_json, pairs)?;
    let analysis = runner_analysis::run::analyse(&info, &rows)?;
    drop(rows);
    let cells = analysis
        .cells
        .iter()
        .filter(|c| !c.forks.is_empty())
        .map(|c| CellPoint {
            label: runner_report::numbers::params(&info.spec().experiment.grid.labelled(&c.params)),
            treatment: c
                .params
                .get(runner_plan::TREATMENT_KEY)
                .and_then(|t| t.as_str())
                .unwrap_or(&info.spec().experiment.design.treatment)
                .to_string(),
            delay_ns: c.delay_ns,
            effect: c.effect(),
            baseline_ns: c.pooled.baseline_median_ns,
            treatment_ns: c.pooled.treatment_median_ns,
            forks: c
                .forks
                .iter()
                .map(|f| ForkPoint {
                    median_ns: f.median_ns,
                    baseline_ns: f.baseline_median_ns,
                    treatment_ns: f.treatment_median_ns,
                })
                .collect(),
            instructions: c.instructions.as_ref().map(|i| i.effect.clone()),
        })
        .collect();
    Ok(Version {
        run_id: info.run_id().to_string(),
        machine: Machine::of(&info),
        confidence: analysis.confidence,
        gate: analysis.gate.as_ref().map(|g| g.verdict),
        experiment: info.spec().experiment.clone(),
        cells,
    })
}
