//! The Setup's view of `sql` arms: what differs between them besides
//! `run` (each arm's `setup`, `search_path`), the private copies a fork
//! made, and with `explain = true` each arm's plan shape and buffers, and
//! whether it changed between forks, with the whole plans and their
//! per-node comparison folded below (`plans`). Also the Finding's plan
//! sentence. Present only when an arm runs SQL, so other reports are
//! unchanged.

use runner_db::plans::{arm_shape, StatementPlan};
use runner_folder::RunInfo;
use runner_spec::StrategyKind;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Serialize)]
pub struct SqlView {
    /// One line per SQL arm: its setup and search_path.
    pub arms: Vec<String>,
    /// Private copies and plans, one line each.
    pub lines: Vec<String>,
    /// With `explain = true`: each arm's plans of the first fork, whole.
    pub plans: Vec<super::plans::ArmPlan>,
    /// The arms' plans node by node (PostgreSQL, two arms).
    pub plan_diff: Vec<super::plans::NodeDiff>,
}

/// Past this many characters a plan's shape is not written inline: the
/// Setup points at the plans folded below it instead of cutting it.
const INLINE: usize = 200;

/// Inline code for Markdown: whitespace folded, backticks replaced, long
/// text cut.
fn code(text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = if text.chars().count() > 200 {
        format!("{}...", text.chars().take(197).collect::<String>())
    } else {
        text
    };
    format!("`{}`", text.replace('`', "'"))
}

pub(super) fn build(info: &RunInfo) -> Option<SqlView> {
    let exp = &info.spec().experiment;
    let mut arms = Vec::new();
    for name in exp.design.arms() {
        let Some(StrategyKind::Sql(s)) = exp.strategies.get(name) else {
            continue;
        };
        let setup = match &s.setup {
            Some(t) => match &t.file {
                Some(f) => format!("setup from `{f}`: {}", code(&t.text)),
                None => format!("setup {}", code(&t.text)),
            },
            None => "no setup".to_string(),
        };
        let path = if s.search_path.is_empty() {
            "no search_path".to_string()
        } else {
            format!("search_path {}", code(&s.search_path.join(", ")))
        };
        arms.push(format!("`{name}`: {setup}; {path}"));
    }
    if arms.is_empty() {
        return None;
    }
    let mut lines = Vec::new();
    if let Some(copies) = copies_line(info) {
        lines.push(copies);
    }
    lines.extend(plan_lines(info));
    lines.extend(super::sql_runs::protocol_line(info));
    lines.extend(super::sql_runs::client_lines(info));
    lines.extend(super::sql_runs::failure_lines(info));
    let plans = arm_plans(info);
    Some(SqlView {
        arms,
        lines,
        plans: super::plans::arm_plans(&plans),
        plan_diff: super::plans::diff(&plans),
    })
}

fn copies_line(info: &RunInfo) -> Option<String> {
    let mut per_table: BTreeMap<&str, (u64, Vec<u64>)> = BTreeMap::new();
    // Dead row versions the guard found in the copied tables themselves.
    let mut written: BTreeMap<&str, u64> = BTreeMap::new();
    for f in info.forks() {
        for c in f.summary.sql.iter().flat_map(|s| &s.copies) {
            let e = per_table.entry(&c.table).or_default();
            e.0 = c.rows;
            e.1.push(c.ns);
        }
    }
    for f in info.forks() {
        let residue = f
            .database_guard
            .iter()
            .flat_map(|g| g.residue.iter().flatten());
        for r in residue.filter(|r| r.dead_rows > 0) {
            if let Some((t, _)) = per_table.get_key_value(r.table.as_str()) {
                *written.entry(t).or_default() += r.dead_rows;
            }
        }
    }
    if per_table.is_empty() {
        return None;
    }
    let said: Vec<String> = per_table
        .iter()
        .map(|(t, (rows, ns))| {
            let mut ns = ns.clone();
            ns.sort_unstable();
            format!(
                "{t} ({rows} rows, median {} per copy)",
                crate::numbers::duration(ns[ns.len() / 2] as f64)
            )
        })
        .collect();
    Some(format!(
        "Private copies: each fork's arms wrote their own copy of {}, made untimed before `setup`; {}",
        said.join(", "),
        tables_themselves(&written)
    ))
}

/// What the Setup says of the copied tables themselves: "only read" only
/// when the guard found no dead row version in any of them.
fn tables_themselves(written: &BTreeMap<&str, u64>) -> String {
    if written.is_empty() {
        return "the tables themselves were only read.".into();
    }
    let said: Vec<String> = written
        .iter()
        .map(|(t, n)| format!("{n} dead row versions in {t}"))
        .collect();
    format!(
        "**the tables themselves were written too**: the guard found {} after the forks, writes that reached a table by a way runner could not point at its copy.",
        said.join(", ")
    )
}

/// Each arm's plans per fork, in fork order: (arm name, plans).
fn arm_plans(info: &RunInfo) -> Vec<(String, Vec<&[StatementPlan]>)> {
    let d = &info.spec().experiment.design;
    let mut b: Vec<&[StatementPlan]> = Vec::new();
    let mut t: Vec<&[StatementPlan]> = Vec::new();
    for f in info.forks() {
        if let Some(p) = f.summary.sql.as_ref().and_then(|s| s.plans.as_ref()) {
            b.push(&p.baseline);
            t.push(p.treatment.as_deref().unwrap_or(&p.baseline));
        }
    }
    if b.is_empty() {
        return Vec::new();
    }
    let mut out = vec![(d.baseline.clone(), b)];
    if d.baseline != d.treatment {
        out.push((d.treatment.clone(), t));
    }
    out
}

/// A plan's shape inline, or, when long, where it is shown whole.
fn shape_text(shape: &str) -> String {
    if shape.chars().count() > INLINE {
        let nodes = shape.matches(" > ").count() + shape.matches(" | ").count() + 1;
        format!("{nodes} nodes, shown whole under \"Plans\" below")
    } else {
        code(shape)
    }
}

fn plan_lines(info: &RunInfo) -> Vec<String> {
    let mut out = Vec::new();
    for (name, forks) in arm_plans(info) {
        let shapes: Vec<String> = forks.iter().map(|p| arm_shape(p)).collect();
        let mut distinct = shapes.clone();
        distinct.sort();
        distinct.dedup();
        let how = super::plans::how(forks[0]);
        let changed = if distinct.len() > 1 {
            format!(
                "; **the plan changed between forks** ({} shapes in {} forks)",
                distinct.len(),
                forks.len()
            )
        } else {
            format!("; the same plan in all {} forks", forks.len())
        };
        // SQLite's query plan measures nothing: no buffers to count.
        let buffers = if how == "EXPLAIN QUERY PLAN" {
            String::new()
        } else {
            let (hit, read, temp) = forks[0]
                .iter()
                .filter_map(StatementPlan::shape)
                .fold((0, 0, 0), |a, s| {
                    (a.0 + s.shared_hit, a.1 + s.shared_read, a.2 + s.temp_blocks)
                });
            format!("; first fork: {hit} shared buffers hit, {read} read, {temp} temporary blocks")
        };
        out.push(format!(
            "Plan of `{name}` ({how} after the measured runs, untimed): {}{buffers}{changed}.",
            shape_text(&shapes[0])
        ));
    }
    out
}

/// The Finding's sentence when the arms' plans differ, e.g. "The arms'
/// plans differ: `idx`: `Index Scan using ...`; `noidx`: `Seq Scan on t`."
pub(super) fn plan_sentence(info: &RunInfo) -> Option<String> {
    let arms = arm_plans(info);
    if arms.len() < 2 {
        return None;
    }
    let first: Vec<String> = arms.iter().map(|(_, f)| arm_shape(f[0])).collect();
    if first.windows(2).all(|w| w[0] == w[1]) {
        return None;
    }
    let said: Vec<String> = arms
        .iter()
        .zip(&first)
        .map(|((name, _), shape)| format!("`{name}`: {}", shape_text(shape)))
        .collect();
    Some(format!("The arms' plans differ: {}.", said.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copied_table_is_said_to_be_only_read_only_when_nothing_was_found_in_it() {
        assert_eq!(
            tables_themselves(&BTreeMap::new()),
            "the tables themselves were only read."
        );
        let found: BTreeMap<&str, u64> = [("public.orders", 43200)].into();
        let said = tables_themselves(&found);
        assert!(!said.contains("only read"), "{said}");
        assert!(
            said.contains("43200 dead row versions in public.orders"),
            "{said}"
        );
    }
}
