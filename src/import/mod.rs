//! `runner analyze PAIRS.csv`: runner's analysis and report for pairs
//! another harness measured (JMH, pyperf, a script), from a minimal set of
//! columns ([`table`]).
//!
//! The result is an ordinary output folder (`pairs.csv` in runner's
//! columns, `run.json`, `analysis.json`, `report.md`, the plots), written
//! through `output` like a run's: `--out` checked first, built in
//! `DIR.partial/`, put in place whole. What cannot be derived from a spec
//! is adapted, explicitly:
//!
//! - the spec is written from the data ([`spec`]), with arms of
//!   `kind = "imported"`, which only a recorded spec may hold; run.json's
//!   checks then hold unchanged (cells, jobs and seeds derived from it, the
//!   digest of every fork's rows and of pairs.csv), and `runner report`
//!   re-renders the folder byte for byte;
//! - run.json's `imported` names the file, its SHA-256, its columns and
//!   which of its forks became which of runner's; `environment` is where
//!   `analyze` ran, and the report says the machine is not known;
//! - runner's design is uniform: every cell must have the same number of
//!   forks, and every fork the same number of (warm-up and measured) pairs;
//! - what the file does not give is written as 0 in pairs.csv (`spin_ns`,
//!   `*_at_ns`; `delay_ns` without a delay column), and the report leaves
//!   out what would rest on it (the spin column of the calibration); with
//!   no start times, run order within a fork is pair order, then `first`.

mod error;
mod shape;
mod spec;
mod table;

use error::ImportError;
use runner_core::error::Result;
use runner_core::record::PairRecord;
use runner_folder::assemble::{now_rfc3339, Builder, Source};
use runner_folder::digest::RowDigest;
use runner_folder::output::{guard, target};
use runner_folder::partial::{partial_path, Partial};
use runner_folder::{
    CheckReport, ForkRecord, ForkSummary, Imported, ImportedFork, Invocation, RunInfo, SpecInfo,
};
use shape::{cell_ids, cells_of, forks};
use std::path::{Path, PathBuf};

pub(crate) use runner_folder::invocation::AnalyzeArgs;

/// The run: spec, cells, jobs, seeds and forks, and the rows in runner's
/// order and numbering (`t.rows`, changed in place: see [`shape::forks`]).
fn build(args: &AnalyzeArgs, t: &mut table::Table) -> Result<RunInfo> {
    let shown = args.csv.display().to_string();
    let cells = cells_of(t, &shown)?;
    let by_label = !cells.labels.is_empty();
    let (master, drawn) = seed(args);
    let (stem, title) = name_and_title(args);
    let sha256 = t.sha256.clone();
    // A first spec gives the cells; the forks' shape completes it.
    let sketch = spec::Settings {
        name: &stem,
        title: &title,
        file: &shown,
        sha256: &sha256,
        seed: (!drawn).then_some(master),
        baseline: &args.baseline,
        treatment: &args.treatment,
        forks: 1,
        warmup_pairs: 0,
        pairs: 1,
        delays_ns: &cells.delays,
        labels: &cells.labels,
        resamples: args.resamples,
        confidence: args.confidence,
    };
    let (_, first) = written_spec(&sketch)?;
    let ids = cell_ids(&runner_plan::cells(&first), by_label);
    let (forks, n_forks, warmup, pairs) = forks(t, &ids, by_label, &shown)?;
    let (toml, exp) = written_spec(&spec::Settings {
        forks: n_forks,
        warmup_pairs: warmup,
        pairs,
        ..sketch
    })?;
    planned_delays(&mut t.rows, &runner_plan::cells(&exp));
    let source = Digests::of(&t.rows, &forks).into_source(t, shown.clone(), sha256, cells.by);
    assemble(
        args,
        SpecInfo::new(shown, toml, exp),
        (master, drawn),
        source,
    )
}

/// The spec's name and title: the file's name says where the pairs came
/// from, unless `--title` says otherwise.
fn name_and_title(args: &AnalyzeArgs) -> (String, String) {
    let stem = args
        .csv
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "imported".into());
    let title = args
        .title
        .clone()
        .unwrap_or_else(|| format!("{stem} (imported)"));
    (stem, title)
}

/// The master seed and whether runner drew it: drawn, it is said at once,
/// as exec says it, since only that line and run.json can repeat the
/// analysis.
fn seed(args: &AnalyzeArgs) -> (u64, bool) {
    let (master, drawn) = match args.seed {
        Some(s) => (s, false),
        None => (rand::random::<u64>() >> 11, true),
    };
    if drawn && !args.quiet {
        // As exec says it: the seed that reproduces this analysis.
        runner_core::console::err(&format!(
            "seed: drawn {master} (recorded in run.json; --seed {master} repeats this analysis)"
        ));
    }
    (master, drawn)
}

/// The spec's text and what it validates to as a recorded spec, so the
/// folder never holds a spec its readers would refuse.
fn written_spec(s: &spec::Settings<'_>) -> Result<(String, runner_spec::Experiment)> {
    let toml = spec::toml(s);
    let exp =
        runner_spec::parse_recorded(s.file, &toml, &Default::default()).map_err(|source| {
            ImportError::NotADesign {
                file: s.file.to_string(),
                source,
            }
        })?;
    Ok((toml, exp))
}

/// Gives each row its cell's planned delay, which pairs.csv records (the
/// file's own delay, or 0 without a delay column, only told cells apart).
fn planned_delays(rows: &mut [PairRecord], cells: &[runner_plan::Cell]) {
    for r in rows.iter_mut() {
        r.delay_ns = cells[r.cell as usize].delay_ns;
    }
}

/// What run.json says of the forks: each one's record and source, and the
/// digest of the whole pairs.csv.
struct Digests {
    records: Vec<ForkRecord>,
    sources: Vec<ImportedFork>,
    pairs_sha256: String,
}

impl Digests {
    /// The digests of pairs.csv and of each fork's rows, from the lines
    /// the folder's file will hold, without holding them. `rows` are in
    /// `forks`' order, each fork's rows one after the other.
    fn of(rows: &[PairRecord], forks: &shape::Forks) -> Digests {
        let mut whole = RowDigest::default();
        whole.push(
            format!(
                "{}\n",
                runner_core::record::csv_header(runner_core::record::Columns::default())
            )
            .as_bytes(),
        );
        let (mut records, mut sources) = (Vec::new(), Vec::new());
        let mut at = 0usize;
        let mut line = Vec::new();
        for (&(cell, fork), (source, warm, meas)) in forks {
            let n = (warm + meas) as usize;
            let mut part = RowDigest::default();
            for r in &rows[at..at + n] {
                line.clear();
                runner_core::record::write_line(&mut line, r, r.columns());
                part.push(&line);
                whole.push(&line);
            }
            at += n;
            let (rows, sha256) = part.finish();
            records.push(unmeasured(cell, fork, rows, sha256));
            sources.push(ImportedFork {
                cell,
                fork,
                source: source.clone(),
            });
        }
        Digests {
            records,
            sources,
            pairs_sha256: whole.finish().1,
        }
    }

    /// The forks with what run.json's `imported` says of the file, so a
    /// reader can trace each of runner's forks back to the file's rows.
    fn into_source(self, t: &table::Table, file: String, sha256: String, cells_by: &str) -> Source {
        Source::Imported {
            imported: Imported {
                file,
                sha256,
                rows: t.rows.len() as u64,
                columns: t.columns.clone(),
                cells_by: cells_by.into(),
                forks: self.sources,
                has_spin: t.has_spin,
                has_start_times: t.has_start_times,
            },
            forks: self.records,
            pairs_sha256: self.pairs_sha256,
        }
    }
}

/// A fork runner did not measure: its rows' count and digest are all it
/// can vouch for, so it claims no check a run makes.
fn unmeasured(cell: u32, fork: u32, rows: u64, sha256: String) -> ForkRecord {
    ForkRecord {
        summary: ForkSummary::unmeasured(cell, fork),
        checks: CheckReport {
            arms_agree: None,
            matches_in_memory: None,
            repeatable: false,
            seeded_hash: None,
        },
        wall_ns: 0,
        rows,
        sha256,
        host: None,
        sentinel: None,
        database_guard: None,
        job_ns: None,
    }
}

/// The run.json, assembled and checked as every reader checks it before
/// anything is written; the machine recorded is the one `analyze` ran on.
fn assemble(
    args: &AnalyzeArgs,
    spec: SpecInfo,
    (master, drawn): (u64, bool),
    source: Source,
) -> Result<RunInfo> {
    let at = now_rfc3339();
    let invocation = Invocation::Analyze(args.clone());
    // What every reader checks, checked before anything is written.
    let environment = runner_os::environment::capture(&crate::binary::BINARY);
    let info = Builder::new(&invocation, spec, master, drawn, environment)
        .times(at.clone(), Some(at))
        .assemble(source)
        .map_err(ImportError::Assembly)?;
    Ok(info)
}

fn check_args(args: &AnalyzeArgs) -> Result<()> {
    if !(100..=100_000).contains(&args.resamples) {
        return Err(ImportError::Resamples(args.resamples).into());
    }
    if !(0.5..=0.999).contains(&args.confidence) {
        return Err(ImportError::Confidence(args.confidence).into());
    }
    let most = runner_folder::recorded::MAX_CLOCK_RESOLUTION_NS;
    if args.clock_resolution_ns > most {
        return Err(ImportError::ClockResolution {
            most,
            got: args.clock_resolution_ns,
        }
        .into());
    }
    for (flag, name) in [
        ("--baseline", &args.baseline),
        ("--treatment", &args.treatment),
    ] {
        if name.trim().is_empty() || name.chars().any(char::is_control) {
            return Err(ImportError::ArmName {
                flag,
                name: name.clone(),
            }
            .into());
        }
    }
    Ok(())
}

/// `runner analyze`: reads, checks and analyses the file, writes the
/// folder; returns the report's path and the terminal summary.
pub(crate) fn analyze(args: &AnalyzeArgs) -> Result<(PathBuf, String)> {
    check_args(args)?;
    let stem = args
        .csv
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (out, what) = match &args.out {
        Some(o) => (o.clone(), "--out"),
        None => (Path::new("reports").join(&stem), "the output folder"),
    };
    target::check_out(&out, what)?;
    // Reading and laying out millions of rows takes seconds: on a thread of
    // its own, so a signal is answered at once (the reader also stops).
    let owned = args.clone();
    let (info, pairs) =
        runner_os::interrupt::run(0, move || -> Result<(RunInfo, Vec<PairRecord>)> {
            let mut t = table::read(&owned.csv)?;
            let info = build(&owned, &mut t)?;
            Ok((info, t.rows))
        })
        .map_err(|signal| ImportError::InterruptedReading {
            signal,
            file: args.csv.display().to_string(),
        })??;
    let partial = Partial::create(&partial_path(&out), &info)?;
    // pairs.csv first, streamed from the rows: the analysis then holds the
    // rows alone, not their text besides.
    let stored = guard::write_with(&partial.dir.join("pairs.csv"), |w| {
        runner_core::record::write_csv(w, &pairs, runner_core::record::Columns::default())
    });
    if let Err(e) = stored {
        partial.remove();
        return Err(e);
    }
    let for_thread = info.clone();
    let rendered = runner_os::interrupt::run(0, move || {
        let template = runner_report::template_for(&for_thread, None)?;
        runner_report::render_run(&for_thread, &pairs, template)
    })
    .map_err(|i| ImportError::InterruptedAnalysis(i).into());
    let written = rendered.and_then(|r| r).and_then(|rendering| {
        runner_report::write(&partial.dir, None, &rendering)?;
        partial.write_run_info(&info)?;
        partial.drop_fork_files()?;
        Ok(rendering)
    });
    let rendering = match written {
        Ok(r) => r,
        Err(e) => {
            partial.remove();
            return Err(e);
        }
    };
    partial.promote(&out)?;
    let report = out.join("report.md");
    let summary = format!("{}report: {}\n", rendering.summary, report.display());
    Ok((report, summary))
}
