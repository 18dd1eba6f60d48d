//! Before anything of the user's runs (`check`'s trials, exec's estimate
//! and forks): the catalog's answers about the experiment's SQL
//! (`db::preflight`), as the command's errors. What cannot run as written
//! is bad input (exit 2); a server that cannot answer fails the run
//! (exit 1), pointing at the privileges guide when it says so.

pub(crate) use super::error::with_privileges;

use super::error::ExecError;
use runner_core::error::Result;
use runner_db::preflight::{ArmSql, Findings, PreflightError};
use runner_db::DbTarget;
use runner_plan::Cell;
use runner_spec::placeholder::Template;
use runner_spec::{Experiment, StrategyKind};

/// The SQL arms of `cells`, each distinct text once, placeholders filled
/// (`{input}` as 0).
pub(crate) fn arms(exp: &Experiment, cells: &[Cell]) -> Vec<ArmSql> {
    let mut out: Vec<ArmSql> = Vec::new();
    for cell in cells {
        let (b, t) = cell.arms(&exp.design);
        for name in [b, t] {
            let StrategyKind::Sql(spec) = runner_plan::bind(exp, cell, name) else {
                continue;
            };
            let render = |text: &str| {
                Template::compile(text).map_or_else(|_| text.to_owned(), |t| t.render(0))
            };
            let mut texts: Vec<String> = spec.setup.iter().map(|s| render(&s.text)).collect();
            texts.push(render(&spec.run.text));
            let arm = ArmSql {
                strategy: name.to_string(),
                texts,
                search_path: spec.search_path.clone(),
            };
            let seen = out.iter().any(|a| {
                a.strategy == arm.strategy
                    && a.texts == arm.texts
                    && a.search_path == arm.search_path
            });
            if !seen {
                out.push(arm);
            }
        }
    }
    out
}

/// The catalog's findings for a PostgreSQL run whose arms run SQL; `None`
/// elsewhere. On SQLite the private copies' tables are looked up in
/// `database.sqlite_file`.
pub(crate) fn run(
    exp: &Experiment,
    cells: &[Cell],
    db: Option<&DbTarget>,
) -> Result<Option<Findings>> {
    let Some(db) = db else {
        return Ok(None);
    };
    let findings = runner_db::open::preflight(db, &arms(exp, cells), &exp.database.private_copies)
        .map_err(|e| match e {
            PreflightError::Db(source) => ExecError::Catalog { source },
            e => ExecError::Preflight(e),
        })?;
    Ok(findings)
}
