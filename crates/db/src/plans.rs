//! Plans beside times (`[database] explain = true`): what a fork records
//! of each arm's statements, run once more after its measured runs,
//! untimed and rolled back, under `EXPLAIN (ANALYZE, BUFFERS, FORMAT
//! JSON)` on PostgreSQL or `EXPLAIN QUERY PLAN` on SQLite; and the plan's
//! shape, which the report compares between arms and forks.
//!
//! Also what a fork's private copies cost ([`CopyMade`]), recorded beside
//! the plans in run.json.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One statement of an arm and its plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatementPlan {
    pub statement: String,
    /// PostgreSQL's `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)` output, as
    /// the server gave it; none for a statement EXPLAIN does not take
    /// (it ran as it is, so the ones after it see its effect).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json: Option<Value>,
    /// SQLite's `EXPLAIN QUERY PLAN` rows (their `detail`), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub query_plan: Vec<String>,
}

/// A fork's private copy of one table: made untimed, before `setup`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CopyMade {
    /// The user's table, schema-qualified.
    pub table: String,
    pub rows: u64,
    /// Wall time of the copy (structure, data, sequences, ANALYZE).
    pub ns: u64,
}

/// What the report says of a plan: its nodes, outermost first, and the
/// buffers the statement touched.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct PlanShape {
    /// `Aggregate > Index Only Scan using t_a_idx on t`.
    pub nodes: String,
    pub shared_hit: u64,
    pub shared_read: u64,
    /// Temporary blocks read and written (a sort or hash that spilled).
    pub temp_blocks: u64,
}

impl StatementPlan {
    /// The plan's shape; none for a statement that was not explained.
    pub fn shape(&self) -> Option<PlanShape> {
        if let Some(json) = &self.json {
            let plan = json
                .get(0)
                .and_then(|p| p.get("Plan"))
                .or(json.get("Plan"))?;
            let mut nodes = Vec::new();
            walk(plan, &mut nodes);
            let n = |k: &str| plan.get(k).and_then(Value::as_u64).unwrap_or(0);
            return Some(PlanShape {
                nodes: nodes.join(" > "),
                shared_hit: n("Shared Hit Blocks"),
                shared_read: n("Shared Read Blocks"),
                temp_blocks: n("Temp Read Blocks") + n("Temp Written Blocks"),
            });
        }
        (!self.query_plan.is_empty()).then(|| PlanShape {
            nodes: self.query_plan.join("; "),
            ..PlanShape::default()
        })
    }
}

/// The nodes of a plan tree, depth first; a node with several children
/// lists them in brackets.
fn walk(node: &Value, out: &mut Vec<String>) {
    let kind = node.get("Node Type").and_then(Value::as_str).unwrap_or("?");
    let mut label = kind.to_string();
    if let Some(index) = node.get("Index Name").and_then(Value::as_str) {
        label.push_str(&format!(" using {index}"));
    }
    if let Some(rel) = node.get("Relation Name").and_then(Value::as_str) {
        label.push_str(&format!(" on {rel}"));
    }
    out.push(label);
    let children: Vec<&Value> = node
        .get("Plans")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    match children.as_slice() {
        [] => {}
        [one] => walk(one, out),
        many => {
            let parts: Vec<String> = many
                .iter()
                .map(|c| {
                    let mut sub = Vec::new();
                    walk(c, &mut sub);
                    sub.join(" > ")
                })
                .collect();
            out.push(format!("({})", parts.join(" | ")));
        }
    }
}

/// An arm's plans as one line: each explained statement's nodes, `; `
/// between statements.
pub fn arm_shape(plans: &[StatementPlan]) -> String {
    plans
        .iter()
        .filter_map(StatementPlan::shape)
        .map(|s| s.nodes)
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_reads_as_its_nodes_and_buffers() {
        let json: Value = serde_json::from_str(
            r#"[{"Plan": {"Node Type": "Aggregate", "Shared Hit Blocks": 12, "Shared Read Blocks": 3,
                 "Temp Read Blocks": 0, "Temp Written Blocks": 0,
                 "Plans": [{"Node Type": "Index Only Scan", "Index Name": "t_a_idx", "Relation Name": "t"}]}}]"#,
        )
        .unwrap();
        let p = StatementPlan {
            statement: "SELECT count(*) FROM t WHERE a = 1".into(),
            json: Some(json),
            query_plan: Vec::new(),
        };
        assert_eq!(
            p.shape().unwrap(),
            PlanShape {
                nodes: "Aggregate > Index Only Scan using t_a_idx on t".into(),
                shared_hit: 12,
                shared_read: 3,
                temp_blocks: 0
            }
        );
        let join: Value = serde_json::from_str(
            r#"[{"Plan": {"Node Type": "Hash Join", "Plans": [{"Node Type": "Seq Scan", "Relation Name": "a"},
                 {"Node Type": "Hash", "Plans": [{"Node Type": "Seq Scan", "Relation Name": "b"}]}]}}]"#,
        )
        .unwrap();
        let j = StatementPlan {
            statement: String::new(),
            json: Some(join),
            query_plan: Vec::new(),
        };
        assert_eq!(
            j.shape().unwrap().nodes,
            "Hash Join > (Seq Scan on a | Hash > Seq Scan on b)"
        );
        let lite = StatementPlan {
            statement: String::new(),
            json: None,
            query_plan: vec!["SEARCH t USING INDEX t_a (a=?)".into()],
        };
        assert_eq!(
            arm_shape(&[p, lite]),
            "Aggregate > Index Only Scan using t_a_idx on t; SEARCH t USING INDEX t_a (a=?)"
        );
    }
}
