//! A run once its folder is open: the database, the forks, then analysis,
//! report and promotion. Every failure after the folder exists ends in one
//! message that says what is kept and prints the command that resumes.

use super::database::RunDatabase;
use super::error::ExecError;
use super::measured::Measured;
use super::resume::{check_same_database, resume_command};
use super::{jobs, ExecArgs, ExecOutcome};
use runner_core::error::{Failure, Result, RunnerError};
use runner_core::record::PairRecord;
use runner_folder::partial::Partial;
use runner_folder::RunInfo;
use runner_os::interrupt;
use runner_spec::Experiment;
use std::path::PathBuf;

pub(super) struct Run<'a> {
    pub args: &'a ExecArgs,
    /// The experiment as run: the file's, with the counts of a fork's
    /// pairs the trial runs chose once they have.
    pub exp: Experiment,
    pub final_dir: PathBuf,
    pub resuming: bool,
}

impl Run<'_> {
    fn resume(&self, partial: &Partial) -> String {
        resume_command(self.args, &self.final_dir, &partial.dir)
    }

    pub(super) fn go(
        mut self,
        partial: Partial,
        mut info: RunInfo,
        mut measured: Measured,
    ) -> Result<ExecOutcome> {
        let db = match self.prepare_database(&info) {
            Ok(db) => db,
            // Nothing ran: a new run leaves nothing behind.
            Err(e) if !self.resuming => {
                partial.remove();
                return Err(e);
            }
            Err(e) => return Err(e.with_hint(self.kept(&partial, &info))),
        };
        if self.resuming {
            let now = db.as_ref().map(|d| &d.info);
            if let Err(e) = check_same_database(info.database().as_ref(), now) {
                cleanup(db.as_ref());
                return Err(e);
            }
        }
        info.record_database(db.as_ref().map(|d| d.info.clone()));
        // Recorded now, so a resume can check it runs on the same database.
        let result = partial.write_run_info(&info).and_then(|()| {
            let db = db.as_ref().map(|d| &d.target);
            self.run_all(&mut info, &partial, &mut measured, db)
        });
        cleanup(db.as_ref());
        if let Err(e) = result {
            return Err(self.stopped(partial, &info, e));
        }
        self.finish(partial, info, measured)
    }

    /// A run that stopped before its last fork: what it keeps and what to
    /// do next. A new run with no finished fork keeps nothing (its folder
    /// would only make the next exec refuse). A failure of the input (the
    /// arms' outputs differ) is not followed by a resume command: --resume
    /// runs the same experiment file, and refuses a changed one.
    fn stopped(&self, partial: Partial, info: &RunInfo, e: RunnerError) -> RunnerError {
        let kept = partial.finished_forks(info).map(|f| f.len()).unwrap_or(0);
        if kept == 0 && !self.resuming {
            let dir = partial.dir.display().to_string();
            partial.remove();
            return e.with_hint(
                format!("no fork had finished, so nothing was kept ({dir} is removed); run the same exec again once the cause is fixed"),
            );
        }
        match e.failure() {
            Failure::BadInput | Failure::ArmsDisagree => e.with_hint(
                format!(
                    "{kept} of {} forks finished and are kept in {}; resuming runs the missing forks with the same experiment file, so if the file must change, move {} away (or delete it) and run exec again",
                    info.jobs().len(),
                    partial.dir.display(),
                    partial.dir.display()
                ),
            ),
            Failure::RunFailed => e.with_hint(self.kept(&partial, info)),
        }
    }

    /// The run's phases, one after the other, each fork added to `measured`
    /// as it finishes:
    ///
    /// 1. every job the plan holds from the start;
    /// 2. for a gate with a percentage threshold, its 0.5x self-check cells:
    ///    sized from the experiment cells' rows of phase 1 (in memory), the
    ///    sizing recorded in run.json and the plan derived again with it,
    ///    then their jobs. A resume picks up in either phase: the sizing
    ///    is recorded once phase 1 is complete.
    fn run_all(
        &mut self,
        info: &mut RunInfo,
        partial: &Partial,
        measured: &mut Measured,
        db: Option<&runner_db::DbTarget>,
    ) -> Result<()> {
        let quiet = self.args.quiet;
        jobs::run_jobs(jobs::Phase {
            exp: &mut self.exp,
            info,
            partial,
            measured,
            db,
            quiet,
            announce: true,
        })?;
        if !runner_plan::self_check::needs_sizing(&self.exp, info.gate_sizing().as_ref()) {
            return Ok(());
        }
        self.size_gate(info, measured)?;
        partial.write_run_info(info)?;
        jobs::run_jobs(jobs::Phase {
            exp: &mut self.exp,
            info,
            partial,
            measured,
            db,
            quiet,
            announce: false,
        })
    }

    /// Phase 2's plan: the 0.5x self-check cells sized from phase 1's rows.
    fn size_gate(&self, info: &mut RunInfo, measured: &Measured) -> Result<()> {
        let cells: Vec<u32> = info
            .cells()
            .iter()
            .filter(|c| c.role.is_experiment())
            .map(|c| c.cell)
            .collect();
        let rows: Vec<PairRecord> = measured.rows_of(&cells).cloned().collect();
        let sizing = runner_analysis::gate::sizing::size(&self.exp, info.cells(), &rows)
            .map_err(|e| ExecError::GateSizing(Box::new(e)))?;
        if !self.args.quiet {
            for line in runner_report::gate_files::sizing_lines(&self.exp, &sizing) {
                runner_core::console::err(&line);
            }
        }
        info.record_gate_sizing(sizing);
        Ok(())
    }

    /// What a failed run keeps, and the command that goes on from there.
    fn kept(&self, partial: &Partial, info: &RunInfo) -> String {
        let kept = partial.finished_forks(info).map(|f| f.len()).unwrap_or(0);
        format!(
            "{kept} of {} forks finished and are kept in {}; to run the missing ones with their original seeds: {}",
            info.jobs().len(),
            partial.dir.display(),
            self.resume(partial)
        )
    }

    /// The run's database, connected and (PostgreSQL) given its schema; a
    /// signal stops the wait (a server that never answers, a lock).
    fn prepare_database(&self, info: &RunInfo) -> Result<Option<RunDatabase>> {
        let (exp, run_id, resuming) = (self.exp.clone(), info.run_id().to_string(), self.resuming);
        // Any signal so far (0): a Ctrl-C during start-up stops here too.
        interrupt::run(0, move || RunDatabase::prepare(&exp, &run_id, resuming)).map_err(
            |signal| ExecError::InterruptedWhile {
                signal,
                during: "while preparing the database",
            },
        )?
    }

    /// Every fork finished: pairs.csv, analysis, report, the final run.json,
    /// then the folder into place. Until the final run.json is written the
    /// folder resumes (it only renders); after it, it is a finished report.
    /// The analysis reads the rows from memory; pairs.csv is the forks'
    /// files joined, byte for byte what `runner report` will read.
    fn finish(
        self,
        partial: Partial,
        mut info: RunInfo,
        measured: Measured,
    ) -> Result<ExecOutcome> {
        let kept = |e: RunnerError| {
            e.with_hint(
                format!(
                    "every fork finished and is kept in {}; to analyse and render the report (once what stopped it is fixed): {}",
                    partial.dir.display(),
                    self.resume(&partial)
                ),
            )
        };
        let (forks, pairs) = measured.into_parts();
        let bytes = partial.assemble_pairs(&forks).map_err(kept)?;
        let pairs_sha256 = runner_folder::sha256_bytes(&bytes);
        drop(bytes);
        info.finish(forks, pairs_sha256, runner_os::environment::load_average());
        let for_thread = info.clone();
        let rendering = interrupt::run(0, move || {
            let template = runner_report::template_for(&for_thread, None)?;
            runner_report::render_run(&for_thread, &pairs, template)
        })
        .map_err(|signal| {
            kept(
                ExecError::InterruptedWhile {
                    signal,
                    during: "during the analysis",
                }
                .into(),
            )
        })?
        .map_err(kept)?;
        runner_report::write(&partial.dir, None, &rendering).map_err(kept)?;
        partial.write_run_info(&info).map_err(kept)?;
        let complete = |e: RunnerError| {
            e.with_hint(format!(
                "the run finished and is complete in {}; rename it to {} yourself",
                partial.dir.display(),
                self.final_dir.display()
            ))
        };
        partial.drop_fork_files().map_err(complete)?;
        let previous = partial.promote(&self.final_dir)?;
        let previous = previous.map_or(String::new(), |old| {
            format!(
                "the report it replaced: {}/ (git ignores it)\n",
                old.display()
            )
        });
        let summary = format!(
            "{}report: {}\n{previous}",
            rendering.summary,
            self.final_dir.join("report.md").display()
        );
        let (exit_code, advice) = match &rendering.gate {
            Some(g) => {
                runner_report::gate_files::append_step_summary(&g.step_summary, &self.final_dir);
                (g.exit_code, g.advice.clone())
            }
            None => (0, Vec::new()),
        };
        Ok(ExecOutcome {
            dir: self.final_dir,
            info,
            summary,
            exit_code,
            advice,
        })
    }
}

/// Drops the run's schema; after a signal a second one cuts it short (the
/// server's lock_timeout bounds it otherwise).
fn cleanup(db: Option<&RunDatabase>) {
    let Some(db) = db else { return };
    let schema = match &db.target {
        runner_db::DbTarget::Postgres { schema, .. } => schema.clone(),
        runner_db::DbTarget::Sqlite | runner_db::DbTarget::SqliteFile { .. } => return,
    };
    let db = db.clone();
    if interrupt::run(interrupt::count(), move || db.cleanup()).is_err() {
        runner_core::console::warn(&format!(
            "stopped dropping the run's schema; drop it yourself with DROP SCHEMA {schema} CASCADE (a resume of the run, when its folder is kept, drops it first)"
        ));
    }
}
