//! What one run produced, in full, for the agreement checks before timing:
//! compared between the arms and between two runs of one arm, and, when
//! they differ, described so the message says what differs.

use runner_core::preview::Projection;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// Bytes of a command's stdout kept to show where two outputs differ.
pub(crate) const STDOUT_HEAD: usize = 64 * 1024;

/// A command's stdout, hashed as it streams: a run may print gigabytes,
/// and only its length, its SHA-256 and its first bytes (to show a
/// difference) are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stdout {
    pub len: u64,
    pub sha256: [u8; 32],
    /// The first [`STDOUT_HEAD`] bytes.
    pub head: Vec<u8>,
}

impl Stdout {
    /// The summary of `bytes`, as if they had streamed.
    pub fn of(bytes: &[u8]) -> Stdout {
        let mut d = StdoutDigest::default();
        d.push(bytes);
        d.finish()
    }

    /// The whole output, when it fitted in the head.
    pub fn complete(&self) -> Option<&[u8]> {
        (self.len as usize == self.head.len()).then_some(&self.head[..])
    }
}

/// Builds a [`Stdout`] chunk by chunk.
#[derive(Default)]
pub struct StdoutDigest {
    hash: Sha256,
    len: u64,
    head: Vec<u8>,
}

impl StdoutDigest {
    pub fn push(&mut self, chunk: &[u8]) {
        self.hash.update(chunk);
        self.len += chunk.len() as u64;
        let room = STDOUT_HEAD.saturating_sub(self.head.len());
        self.head.extend_from_slice(&chunk[..room.min(chunk.len())]);
    }

    pub fn finish(self) -> Stdout {
        Stdout {
            len: self.len,
            sha256: self.hash.finalize().into(),
            head: self.head,
        }
    }
}

/// The output of one run, as rich as the kind has it.
#[derive(Debug, Clone, PartialEq)]
pub enum Observation {
    /// `spin`, `noop`: nothing to compare.
    Nothing,
    Preview(Projection),
    Command {
        /// `exit N` or `signal N`.
        status: String,
        /// `None` when `compare_output = false`.
        stdout: Option<Stdout>,
    },
    /// Per statement, the rows as text (`None` is SQL NULL), and the
    /// statements as the run sent them (to name them in a message).
    Rows {
        rows: Vec<Vec<Vec<Option<String>>>>,
        statements: Vec<String>,
    },
    /// A run of an `sql` arm with `allow_failure = true` that failed, with
    /// its code: compared with nothing, since such an arm may fail on some
    /// runs only (under contention, a deadlock).
    Failed {
        code: String,
    },
}

impl Observation {
    /// Whether two arms' outputs can be compared as results: the same sort
    /// of output (previews, rows, or two commands' captured stdout). A
    /// command with `compare_output = false` has no result to compare; its
    /// exit status is checked on every run anyway.
    pub fn comparable(&self, other: &Observation) -> bool {
        matches!(
            (self, other),
            (Observation::Preview(_), Observation::Preview(_))
                | (
                    Observation::Command {
                        stdout: Some(_),
                        ..
                    },
                    Observation::Command {
                        stdout: Some(_),
                        ..
                    }
                )
                | (Observation::Rows { .. }, Observation::Rows { .. })
        )
    }

    /// Equality as the checks mean it: previews bit for bit (a leaked write
    /// can be one ulp; `==` on f64 calls 0.0 and -0.0 equal), stdout when
    /// both sides captured it, rows as a multiset per statement (row order
    /// is not compared: two formulations without ORDER BY may return the
    /// same rows in any order).
    pub fn same(&self, other: &Observation) -> bool {
        self.difference(other).is_none()
    }

    /// What differs, in a sentence; `None` when nothing does.
    pub fn difference(&self, other: &Observation) -> Option<String> {
        match (self, other) {
            (Observation::Nothing, Observation::Nothing) => None,
            (Observation::Preview(a), Observation::Preview(b)) => {
                let same = a.ending_mrr.to_bits() == b.ending_mrr.to_bits()
                    && a.ending_cash.to_bits() == b.ending_cash.to_bits()
                    && a.lifetime_revenue.to_bits() == b.lifetime_revenue.to_bits()
                    && a.runway_month == b.runway_month;
                (!same).then(|| format!("{a:?} vs {b:?}"))
            }
            (
                Observation::Command {
                    status: s1,
                    stdout: o1,
                },
                Observation::Command {
                    status: s2,
                    stdout: o2,
                },
            ) => {
                if s1 != s2 {
                    return Some(format!("one {s1}, the other {s2}"));
                }
                match (o1, o2) {
                    (Some(a), Some(b)) => stdout_difference(a, b),
                    _ => None,
                }
            }
            (
                Observation::Rows {
                    rows: a,
                    statements: sa,
                },
                Observation::Rows {
                    rows: b,
                    statements: sb,
                },
            ) => rows_difference(a, b, sa, sb),
            (Observation::Failed { .. }, _) | (_, Observation::Failed { .. }) => None,
            (a, b) => Some(format!("{} vs {}", a.sort(), b.sort())),
        }
    }

    fn sort(&self) -> &'static str {
        match self {
            Observation::Nothing => "no output",
            Observation::Preview(_) => "a preview",
            Observation::Command { .. } => "a command's output",
            Observation::Rows { .. } => "rows",
            Observation::Failed { .. } => "a failed run",
        }
    }
}

fn shorten(s: &str) -> String {
    if s.chars().count() > 80 {
        format!("{}...", s.chars().take(77).collect::<String>())
    } else {
        s.to_string()
    }
}

fn stdout_difference(a: &Stdout, b: &Stdout) -> Option<String> {
    if a.len == b.len && a.sha256 == b.sha256 {
        return None;
    }
    // Lines are compared within the kept heads; a difference beyond them
    // is told by the lengths and hashes.
    let shared = a.head.len().min(b.head.len());
    let cut = |h: &[u8]| -> Vec<u8> {
        if a.complete().is_some() && b.complete().is_some() {
            h.to_vec()
        } else {
            h[..shared].to_vec()
        }
    };
    let (ha, hb) = (cut(&a.head), cut(&b.head));
    if ha == hb {
        let hex = |h: &[u8; 32]| runner_core::hex::hex(&h[..8]);
        return Some(format!(
            "stdout differs ({} vs {} bytes) after the first {shared} bytes, which agree (SHA-256 {}... vs {}...)",
            a.len,
            b.len,
            hex(&a.sha256),
            hex(&b.sha256)
        ));
    }
    let (ta, tb) = (String::from_utf8_lossy(&ha), String::from_utf8_lossy(&hb));
    let (la, lb): (Vec<&str>, Vec<&str>) = (ta.lines().collect(), tb.lines().collect());
    let at = (0..la.len().max(lb.len()))
        .find(|&i| la.get(i) != lb.get(i))
        .unwrap_or(0);
    let show =
        |l: Option<&&str>| l.map_or("(no line)".to_string(), |l| format!("{:?}", shorten(l)));
    Some(format!(
        "stdout differs ({} vs {} bytes), first at line {}: {} vs {}",
        a.len,
        b.len,
        at + 1,
        show(la.get(at)),
        show(lb.get(at))
    ))
}

type Row = Vec<Option<String>>;

fn show_row(r: &Row) -> String {
    let cells: Vec<String> = r
        .iter()
        .map(|v| v.as_deref().map_or("NULL".to_string(), shorten))
        .collect();
    format!("({})", cells.join(", "))
}

/// `2 statements (`CREATE TEMP TABLE x ...`, `SELECT ...`)`.
fn statement_list(statements: &[String]) -> String {
    let shown: Vec<String> = statements
        .iter()
        .map(|s| {
            format!(
                "`{}`",
                shorten(&s.split_whitespace().collect::<Vec<_>>().join(" "))
            )
        })
        .collect();
    format!(
        "{} statement{} ({})",
        statements.len(),
        if statements.len() == 1 { "" } else { "s" },
        shown.join(", ")
    )
}

/// Rows as a multiset per statement: what one side has more of than the
/// other. The sides are compared statement by statement, so a different
/// number of statements is said with the statements and what to change.
fn rows_difference(a: &[Vec<Row>], b: &[Vec<Row>], sa: &[String], sb: &[String]) -> Option<String> {
    if a.len() != b.len() {
        return Some(format!(
            "the first ran {} and the second {}; rows are compared statement by statement, so both must run the same number of statements, each returning the rows its counterpart returns: move statements that only prepare (CREATE, INSERT, SET) into `setup`, or make both `run` texts the same shape",
            statement_list(sa),
            statement_list(sb)
        ));
    }
    for (i, (ra, rb)) in a.iter().zip(b).enumerate() {
        let mut count: BTreeMap<&Row, i64> = BTreeMap::new();
        for r in ra {
            *count.entry(r).or_default() += 1;
        }
        for r in rb {
            *count.entry(r).or_default() -= 1;
        }
        let only = |sign: i64| -> Vec<String> {
            count
                .iter()
                .filter(|(_, &n)| n * sign > 0)
                .take(3)
                .map(|(r, _)| show_row(r))
                .collect()
        };
        let (first, second) = (only(1), only(-1));
        if first.is_empty() && second.is_empty() {
            continue;
        }
        let list = |v: Vec<String>| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join(", ")
            }
        };
        return Some(format!(
            "statement {} returned {} rows vs {}; rows only in the first: {}; only in the second: {}",
            i + 1,
            ra.len(),
            rb.len(),
            list(first),
            list(second)
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(v: &[&[&str]]) -> Observation {
        Observation::Rows {
            rows: vec![v
                .iter()
                .map(|r| r.iter().map(|c| Some(c.to_string())).collect())
                .collect()],
            statements: vec!["SELECT x".into()],
        }
    }

    #[test]
    fn rows_compare_as_a_multiset_and_name_the_odd_ones() {
        let a = rows(&[&["1", "x"], &["2", "y"]]);
        assert!(a.same(&rows(&[&["2", "y"], &["1", "x"]])));
        let d = a.difference(&rows(&[&["1", "x"], &["1", "x"]])).unwrap();
        assert!(d.contains("only in the first: (2, y)"), "{d}");
        assert!(d.contains("only in the second: (1, x)"), "{d}");
        let null = Observation::Rows {
            rows: vec![vec![vec![None]]],
            statements: vec!["SELECT x".into()],
        };
        assert!(!null.same(&rows(&[&["NULL"]])), "NULL is not the text NULL");
    }

    #[test]
    fn a_different_number_of_statements_is_named_with_the_fix() {
        let one = rows(&[&["1"]]);
        let two = Observation::Rows {
            rows: vec![vec![], vec![vec![Some("1".into())]]],
            statements: vec![
                "CREATE TEMP TABLE x AS\n   SELECT 1 AS v".into(),
                "SELECT v FROM x".into(),
            ],
        };
        let d = one.difference(&two).unwrap();
        assert!(
            d.starts_with("the first ran 1 statement (`SELECT x`) and the second 2 statements (`CREATE TEMP TABLE x AS SELECT 1 AS v`, `SELECT v FROM x`)"),
            "{d}"
        );
        assert!(d.contains("into `setup`"), "{d}");
        assert!(!d.contains("1 statements"), "{d}");
    }

    #[test]
    fn stdout_and_status_differences_are_described() {
        let cmd = |status: &str, out: &str| Observation::Command {
            status: status.into(),
            stdout: Some(Stdout::of(out.as_bytes())),
        };
        assert!(cmd("exit 0", "a\nb\n").same(&cmd("exit 0", "a\nb\n")));
        let d = cmd("exit 0", "a\nb\n")
            .difference(&cmd("exit 0", "a\nc\n"))
            .unwrap();
        assert!(d.contains("first at line 2: \"b\" vs \"c\""), "{d}");
        let d = cmd("exit 0", "").difference(&cmd("exit 1", "")).unwrap();
        assert_eq!(d, "one exit 0, the other exit 1");
        let blind = Observation::Command {
            status: "exit 0".into(),
            stdout: None,
        };
        assert!(blind.same(&cmd("exit 0", "anything")));
        assert!(!blind.comparable(&cmd("exit 0", "anything")));
        assert!(cmd("exit 0", "a").comparable(&cmd("exit 0", "b")));
        assert!(!blind.comparable(&Observation::Nothing));
    }

    #[test]
    fn long_outputs_are_compared_by_hash_and_shown_by_their_heads() {
        let big = vec![b'x'; STDOUT_HEAD * 3];
        let mut other = big.clone();
        *other.last_mut().unwrap() = b'y';
        let (a, b) = (Stdout::of(&big), Stdout::of(&other));
        assert_eq!(a.head.len(), STDOUT_HEAD);
        assert_eq!(a.len, big.len() as u64);
        let d = stdout_difference(&a, &b).unwrap();
        assert!(
            d.contains("after the first 65536 bytes, which agree"),
            "{d}"
        );
        assert!(stdout_difference(&a, &Stdout::of(&big)).is_none());
        let mut streamed = StdoutDigest::default();
        for chunk in big.chunks(1000) {
            streamed.push(chunk);
        }
        assert_eq!(streamed.finish(), a);
        let d = stdout_difference(&Stdout::of(b"a\nb\n"), &Stdout::of(&big)).unwrap();
        assert!(d.contains("first at line 1"), "{d}");
    }
}
