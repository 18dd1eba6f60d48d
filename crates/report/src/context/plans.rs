//! The plans of `[database] explain = true` as a database engineer reads
//! them: each arm's plan tree of the first fork, node by node, with what
//! EXPLAIN ANALYZE measured (actual rows against the estimate, loops, time
//! per loop, a sort's or hash's method and memory), and a per-node
//! comparison of the arms. Shown whole, folded under `<details>`, never
//! cut: a long join plan is exactly the one to read.
//!
//! On SQLite the plan is `EXPLAIN QUERY PLAN`'s rows, which hold no
//! measurement: the tree is its lines, and there is no comparison of
//! times.

use runner_db::plans::StatementPlan;
use serde::Serialize;
use serde_json::Value;

/// One arm's plans, as lines of a code block.
#[derive(Debug, Serialize)]
pub struct ArmPlan {
    pub arm: String,
    /// `EXPLAIN (ANALYZE, BUFFERS)` or `EXPLAIN QUERY PLAN`.
    pub how: &'static str,
    pub lines: Vec<String>,
}

/// One node of a plan, as compared between the arms.
#[derive(Debug, Clone, PartialEq)]
struct Node {
    depth: usize,
    label: String,
    rows: Option<f64>,
    estimate: Option<f64>,
    loops: Option<f64>,
    /// Inclusive time per loop, ms.
    ms: Option<f64>,
    /// Sort method and memory, hash buckets and batches, an aggregate's strategy.
    detail: Vec<String>,
}

/// The nodes of an explained statement, depth first.
fn nodes(plan: &StatementPlan) -> Vec<Node> {
    let mut out = Vec::new();
    let root = plan.json.as_ref().and_then(|j| {
        j.get(0)
            .and_then(|p| p.get("Plan"))
            .or_else(|| j.get("Plan"))
    });
    if let Some(root) = root {
        walk(root, 0, &mut out);
    }
    out
}

fn walk(node: &Value, depth: usize, out: &mut Vec<Node>) {
    let text = |k: &str| node.get(k).and_then(Value::as_str);
    let num = |k: &str| node.get(k).and_then(Value::as_f64);
    let mut label = text("Node Type").unwrap_or("?").to_string();
    if let Some(s) = text("Strategy").filter(|s| *s != "Plain") {
        label = format!("{label} ({s})");
    }
    if let Some(j) = text("Join Type") {
        label = format!("{label} ({j})");
    }
    if let Some(i) = text("Index Name") {
        label.push_str(&format!(" using {i}"));
    }
    if let Some(r) = text("Relation Name") {
        label.push_str(&format!(" on {r}"));
        if let Some(a) = text("Alias").filter(|a| *a != r) {
            label.push_str(&format!(" {a}"));
        }
    }
    let mut detail = Vec::new();
    if let Some(m) = text("Sort Method") {
        let space = match (num("Sort Space Used"), text("Sort Space Type")) {
            (Some(kb), Some(t)) => format!(", {kb:.0} kB {}", t.to_lowercase()),
            _ => String::new(),
        };
        detail.push(format!("sort: {m}{space}"));
    }
    if let Some(b) = num("Hash Buckets") {
        detail.push(format!(
            "hash: {b:.0} buckets, {:.0} batches, {:.0} kB",
            num("Hash Batches").unwrap_or(1.0),
            num("Peak Memory Usage").unwrap_or(0.0)
        ));
    }
    if let Some(w) = num("Workers Launched") {
        detail.push(format!("{w:.0} workers"));
    }
    let hit = num("Shared Hit Blocks").unwrap_or(0.0);
    let read = num("Shared Read Blocks").unwrap_or(0.0);
    if hit + read > 0.0 {
        detail.push(format!("buffers: {hit:.0} hit, {read:.0} read"));
    }
    let temp = num("Temp Read Blocks").unwrap_or(0.0) + num("Temp Written Blocks").unwrap_or(0.0);
    if temp > 0.0 {
        detail.push(format!("{temp:.0} temporary blocks"));
    }
    out.push(Node {
        depth,
        label: fenced(&label),
        rows: num("Actual Rows"),
        estimate: num("Plan Rows"),
        loops: num("Actual Loops"),
        ms: num("Actual Total Time"),
        detail,
    });
    for child in node
        .get("Plans")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        walk(child, depth + 1, out);
    }
}

/// Text for a line of the fenced plan: no backtick (recorded ones arrive
/// as `safe::BACKTICK`, which a fence would turn back into one), so no
/// line can close the fence.
fn fenced(text: &str) -> String {
    text.replace(['`', crate::safe::BACKTICK], "'")
}

fn number(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// `rows 1000 (est. 980) x 3 loops, 0.412 ms per loop`.
fn measured(n: &Node) -> String {
    let mut s = Vec::new();
    if let Some(r) = n.rows {
        let est = n
            .estimate
            .map_or(String::new(), |e| format!(" (est. {})", number(e)));
        s.push(format!("rows {}{est}", number(r)));
    }
    if let Some(l) = n.loops.filter(|l| *l != 1.0) {
        s.push(format!("{} loops", number(l)));
    }
    if let Some(ms) = n.ms {
        let per = if n.loops.is_some_and(|l| l != 1.0) {
            " per loop"
        } else {
            ""
        };
        s.push(format!("{ms:.3} ms{per}"));
    }
    s.extend(n.detail.iter().cloned());
    s.join(", ")
}

/// Lines of one statement's plan: the statement, then its tree.
fn statement_lines(i: usize, p: &StatementPlan, out: &mut Vec<String>) {
    let text: String = p.statement.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = fenced(&text);
    out.push(format!("-- statement {}: {text}", i + 1));
    if !p.query_plan.is_empty() {
        out.extend(p.query_plan.iter().map(|l| fenced(l)));
        return;
    }
    let ns = nodes(p);
    if ns.is_empty() {
        out.push("(not explained: ran as it is)".into());
        return;
    }
    for n in ns {
        let arrow = if n.depth == 0 { "" } else { "-> " };
        out.push(format!(
            "{}{arrow}{}  [{}]",
            "   ".repeat(n.depth),
            n.label,
            measured(&n)
        ));
    }
    if let Some(ms) = p
        .json
        .as_ref()
        .and_then(|j| j.get(0))
        .and_then(|j| j.get("Execution Time"))
        .and_then(Value::as_f64)
    {
        out.push(format!("execution {ms:.3} ms"));
    }
}

/// Each arm's plans of the first fork that has them, as lines.
pub(super) fn arm_plans(arms: &[(String, Vec<&[StatementPlan]>)]) -> Vec<ArmPlan> {
    arms.iter()
        .filter_map(|(arm, forks)| {
            let first = forks.first()?;
            let mut lines = Vec::new();
            for (i, p) in first.iter().enumerate() {
                statement_lines(i, p, &mut lines);
            }
            Some(ArmPlan {
                arm: arm.clone(),
                how: how(first),
                lines,
            })
        })
        .collect()
}

/// What EXPLAIN ran: PostgreSQL's JSON or SQLite's query plan.
pub(super) fn how(plans: &[StatementPlan]) -> &'static str {
    if plans.iter().any(|p| p.json.is_some()) {
        "EXPLAIN (ANALYZE, BUFFERS)"
    } else {
        "EXPLAIN QUERY PLAN"
    }
}

/// One row of the per-node comparison of two arms.
#[derive(Debug, Serialize)]
pub struct NodeDiff {
    pub statement: usize,
    /// The node, indented by its depth; both labels when they differ.
    pub node: String,
    pub baseline: String,
    pub treatment: String,
}

/// The arms' nodes side by side, statement by statement, depth first:
/// where the trees have the same shape each node meets its counterpart;
/// where they differ, the rows pair nodes by position and say both labels.
/// Empty on SQLite (nothing measured) or with fewer than two arms.
pub(super) fn diff(arms: &[(String, Vec<&[StatementPlan]>)]) -> Vec<NodeDiff> {
    let [(_, b), (_, t), ..] = arms else {
        return Vec::new();
    };
    let (Some(b), Some(t)) = (b.first(), t.first()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, (bp, tp)) in b.iter().zip(t.iter()).enumerate() {
        let (bn, tn) = (nodes(bp), nodes(tp));
        for k in 0..bn.len().max(tn.len()) {
            let (x, y) = (bn.get(k), tn.get(k));
            let indent = |n: &Node| "\u{a0}\u{a0}".repeat(n.depth);
            let node = match (x, y) {
                (Some(x), Some(y)) if x.label == y.label && x.depth == y.depth => {
                    format!("{}{}", indent(x), x.label)
                }
                (Some(x), Some(y)) => format!("{}{} / {}", indent(x), x.label, y.label),
                (Some(x), None) => format!("{}{} / -", indent(x), x.label),
                (None, Some(y)) => format!("{}- / {}", indent(y), y.label),
                (None, None) => continue,
            };
            out.push(NodeDiff {
                statement: i + 1,
                node: node.replace('|', "\\|"),
                baseline: x.map_or("-".into(), measured).replace('|', "\\|"),
                treatment: y.map_or("-".into(), measured).replace('|', "\\|"),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(json: &str) -> StatementPlan {
        StatementPlan {
            statement: "SELECT o.id FROM orders o JOIN vip v ON v.id = o.c ORDER BY 1".into(),
            json: Some(serde_json::from_str(json).unwrap()),
            query_plan: Vec::new(),
        }
    }

    const SORTED_JOIN: &str = r#"[{"Plan": {"Node Type": "Sort", "Actual Rows": 100, "Plan Rows": 90,
        "Actual Loops": 1, "Actual Total Time": 1.5, "Sort Method": "quicksort", "Sort Space Used": 32,
        "Sort Space Type": "Memory", "Shared Hit Blocks": 12, "Shared Read Blocks": 0,
        "Plans": [{"Node Type": "Hash Join", "Join Type": "Inner", "Actual Rows": 100, "Plan Rows": 90,
            "Actual Loops": 1, "Actual Total Time": 1.2,
            "Plans": [{"Node Type": "Seq Scan", "Relation Name": "orders", "Alias": "o", "Actual Rows": 1000,
                       "Plan Rows": 1000, "Actual Loops": 1, "Actual Total Time": 0.4},
                      {"Node Type": "Hash", "Actual Rows": 10, "Actual Loops": 1, "Actual Total Time": 0.1,
                       "Hash Buckets": 1024, "Hash Batches": 1, "Peak Memory Usage": 9,
                       "Plans": [{"Node Type": "Index Scan", "Index Name": "vip_pkey", "Relation Name": "vip",
                                  "Alias": "v", "Actual Rows": 1, "Plan Rows": 1, "Actual Loops": 10,
                                  "Actual Total Time": 0.01}]}]}]}, "Execution Time": 1.7}]"#;

    #[test]
    fn a_plan_shows_rows_loops_time_and_methods_node_by_node() {
        let p = plan(SORTED_JOIN);
        let arms = vec![("a".to_string(), vec![std::slice::from_ref(&p)])];
        let shown = arm_plans(&arms);
        assert_eq!(shown[0].how, "EXPLAIN (ANALYZE, BUFFERS)");
        assert_eq!(
            shown[0].lines,
            [
                "-- statement 1: SELECT o.id FROM orders o JOIN vip v ON v.id = o.c ORDER BY 1",
                "Sort  [rows 100 (est. 90), 1.500 ms, sort: quicksort, 32 kB memory, buffers: 12 hit, 0 read]",
                "   -> Hash Join (Inner)  [rows 100 (est. 90), 1.200 ms]",
                "      -> Seq Scan on orders o  [rows 1000 (est. 1000), 0.400 ms]",
                "      -> Hash  [rows 10, 0.100 ms, hash: 1024 buckets, 1 batches, 9 kB]",
                "         -> Index Scan using vip_pkey on vip v  [rows 1 (est. 1), 10 loops, 0.010 ms per loop]",
                "execution 1.700 ms",
            ]
        );
    }

    #[test]
    fn the_arms_are_compared_node_by_node_and_sqlite_is_named_for_what_it_is() {
        let a = plan(SORTED_JOIN);
        let b = plan(
            r#"[{"Plan": {"Node Type": "Index Scan", "Index Name": "o_c", "Relation Name": "orders",
                 "Actual Rows": 100, "Plan Rows": 100, "Actual Loops": 1, "Actual Total Time": 0.2}}]"#,
        );
        let arms = vec![
            ("slow".to_string(), vec![std::slice::from_ref(&a)]),
            ("fast".to_string(), vec![std::slice::from_ref(&b)]),
        ];
        let d = diff(&arms);
        assert_eq!(d.len(), 5);
        assert_eq!(d[0].node, "Sort / Index Scan using o_c on orders");
        assert!(d[0].treatment.starts_with("rows 100 (est. 100), 0.200 ms"));
        assert_eq!(d[1].treatment, "-");
        let same = diff(&[arms[0].clone(), arms[0].clone()]);
        assert_eq!(same[2].node, "\u{a0}\u{a0}\u{a0}\u{a0}Seq Scan on orders o");
        let lite = StatementPlan {
            statement: "SELECT * FROM t WHERE a = 1".into(),
            json: None,
            query_plan: vec!["SEARCH t USING INDEX t_a (a=?)".into()],
        };
        assert_eq!(how(std::slice::from_ref(&lite)), "EXPLAIN QUERY PLAN");
        let arms = vec![("x".to_string(), vec![std::slice::from_ref(&lite)])];
        assert_eq!(
            arm_plans(&arms)[0].lines,
            [
                "-- statement 1: SELECT * FROM t WHERE a = 1",
                "SEARCH t USING INDEX t_a (a=?)"
            ]
        );
        assert!(diff(&[arms[0].clone(), arms[0].clone()]).is_empty());
    }
}
