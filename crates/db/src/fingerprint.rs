//! The fingerprint of a PostgreSQL database outside runner's own schemas,
//! taken by the parent before and after every fork: the check that what
//! the construction promises (nothing the user's SQL does is committed,
//! see `pg::session`) held, and the detector for what it cannot hold (a
//! sequence moved, or a server-side connection that commits on its own,
//! called from inside a function where no parser sees it).
//!
//! Per relation outside runner's schemas: the `xmin` of its catalog row
//! (any committed DDL, GRANT or TRUNCATE rewrites that row), its committed
//! row changes (`n_mod_since_analyze` counts only committed inserts,
//! updates and deletes, where `n_tup_*` also count rolled-back ones) and
//! its live rows, and for a sequence its last value. Also every schema and
//! function (catalog `xmin`) and the number of large objects.
//!
//! A rollback restores what a table holds, not what it occupies: every row
//! version a rolled-back write made stays in the table as a dead row until
//! VACUUM reclaims it, and the table (with its indexes) keeps the pages it
//! grew by. So per table the guard also reads its dead row versions
//! (`n_dead_tup`) and its size (`pg_total_relation_size`, less the free
//! space and visibility maps, which an autovacuum of a table nobody wrote
//! may create on its own), and records
//! what a fork added ([`Residue`]): not a change of content, but said in
//! the report instead of "unchanged".
//!
//! Limits, said in the README too: statistics of a session reach the
//! views when it ends, so the parent waits for the fork's connections to
//! close first; an ANALYZE or VACUUM of a table during the fork (autovacuum)
//! resets its counters, so then only its catalog row is compared; another
//! session's committed writes during the fork to an object the experiment
//! names are changes too (run on a database nobody else writes
//! meanwhile), while its changes to anything else are only noted
//! ([`Blame`]); cluster-wide objects (roles, databases, tablespaces) are
//! not in it.

//!
//! What is compared, and what a comparison found ([`GuardRecord`], kept per
//! fork in run.json), are here; taking it on the server is `pg::guard`.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// What takes fingerprints for a run: a server connection of the parent's
/// own (`pg::guard::Guard`), opened by `open::guard`.
pub trait Fingerprinter {
    /// The fingerprint now.
    fn take(&mut self) -> Result<Fingerprint, crate::DbError>;
    /// Waits, at most `limit`, until the connections of the run's workers
    /// (`backends`; `None`: every worker connection of the run) are gone,
    /// so their statistics are in the views [`Fingerprinter::take`] reads.
    fn wait_for_workers(
        &mut self,
        backends: Option<&[u32]>,
        limit: std::time::Duration,
    ) -> Result<(), crate::DbError>;
}

/// One object's state: what is compared, and what may have reset it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct State {
    pub(crate) kind: &'static str,
    /// Catalog row version: changes with any committed DDL on the object.
    pub(crate) xmin: String,
    /// Committed row changes and live rows (tables), or last value
    /// (sequences); `None` where not readable.
    pub(crate) changes: Option<i64>,
    pub(crate) live: Option<i64>,
    pub(crate) last_value: Option<String>,
    /// ANALYZE and VACUUM runs so far: when they moved, the counters above
    /// were reset and are not compared.
    pub(crate) maintenance: Option<i64>,
    /// Dead row versions and bytes on disk (table, indexes, TOAST).
    pub(crate) dead: Option<i64>,
    pub(crate) bytes: Option<i64>,
}

/// Everything outside runner's schemas, by qualified name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    pub(crate) objects: BTreeMap<String, State>,
    pub(crate) large_objects: i64,
}

/// What a fork's guard found, recorded per fork in run.json.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct GuardRecord {
    /// Tables, views and other relations compared (sequences apart).
    pub relations: u32,
    pub sequences: u32,
    /// Schemas and functions compared by their catalog rows.
    pub schemas: u32,
    pub functions: u32,
    /// Nothing outside runner's schemas changed during the fork.
    pub held: bool,
    /// What changed, one sentence each (empty when `held`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<String>,
    /// What rolled-back writes left in the tables (dead row versions,
    /// bytes), one entry per table that has some; absent in records made
    /// before runner counted them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub residue: Option<Vec<Residue>>,
    /// What changed, or was left, in relations the experiment's SQL never
    /// names: another session's work during the fork, said but not held
    /// against the run (one sentence each).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_sessions: Vec<String>,
}

/// What a fork's rolled-back writes left in one table: the content is as
/// before, but the row versions they made stay, dead, until VACUUM.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Residue {
    pub table: String,
    /// Dead row versions added during the fork.
    pub dead_rows: u64,
    /// Bytes the table, its indexes and TOAST grew by.
    pub bytes: u64,
}

/// Who a change is held against: the objects the experiment names
/// (`db::preflight`), and whether the run is strict.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Blame {
    /// Guard keys the experiment names or copies: relations and sequences
    /// as `schema.name`, `schema S`, `function schema.name`, and `large
    /// objects` when its SQL calls a large-object function. `None`: every
    /// change is the run's (its arms run commands, which may touch anything).
    pub named: Option<BTreeSet<String>>,
    /// `[database] strict`: dead row versions the run left in a table it
    /// names, and any sequence that moved, fail the run too.
    pub strict: bool,
}

impl Blame {
    fn ours(&self, key: &str, kind: &str) -> bool {
        let Some(named) = &self.named else {
            return true;
        };
        match kind {
            // `function s.f(int)`: named without its arguments.
            "function" => named.contains(key.split('(').next().unwrap_or(key)),
            _ => named.contains(key),
        }
    }

    /// The sentence a fork, or trials, whose guard did not hold fail with.
    pub fn failure(&self, during: &str, record: &GuardRecord) -> String {
        let who = if self.named.is_some() {
            "or another session's commit to an object the experiment names or copies (other sessions' changes to anything else are only noted)"
        } else {
            "or another session's commit (the arms run commands, which may touch anything, so every change is held against the run)"
        };
        format!(
            "outside runner's schemas, the database changed during {during}: {}. runner never commits what the user's SQL writes, so this is an effect PostgreSQL does not roll back (a sequence, a function that opens its own connection), {who}",
            record.changes.join("; ")
        )
    }
}

impl Fingerprint {
    /// What changed from `self` (before the fork) to `after`, one sentence
    /// per object, and the counts compared. A change to an object the
    /// experiment names or copies (`blame`) is the run's and fails it; a
    /// change to anything else is another session's, said in
    /// `other_sessions` and not held against the run, unless `strict`
    /// holds a moved sequence against it anyway (any function may move
    /// one). What rolled-back writes left in a named table is residue,
    /// said in the report, and a failure too when strict.
    pub fn compare(&self, after: &Fingerprint, blame: &Blame) -> GuardRecord {
        let mut changes = Vec::new();
        let mut residue = Vec::new();
        let mut others = Vec::new();
        let name = |key: &str, s: &State| {
            if s.kind == "schema" || s.kind == "function" {
                key.to_owned()
            } else {
                format!("{} {key}", s.kind)
            }
        };
        for (key, b) in &self.objects {
            let ours = blame.ours(key, b.kind);
            let what = name(key, b);
            let Some(a) = after.objects.get(key) else {
                let said = format!("{what} was dropped");
                if ours {
                    changes.push(said);
                } else {
                    others.push(said);
                }
                continue;
            };
            let grew = |x: Option<i64>, y: Option<i64>| match (x, y) {
                (Some(x), Some(y)) if y > x => (y - x) as u64,
                _ => 0,
            };
            // A VACUUM during the fork reset the dead count: only bytes then.
            let dead_rows = if b.maintenance == a.maintenance {
                grew(b.dead, a.dead)
            } else {
                0
            };
            let bytes = grew(b.bytes, a.bytes);
            if dead_rows > 0 || bytes > 0 {
                if !ours {
                    others.push(format!(
                        "{what} gained {dead_rows} dead row versions and {bytes} bytes"
                    ));
                } else {
                    if blame.strict && dead_rows > 0 {
                        changes.push(format!(
                            "{what} was left {dead_rows} dead row versions by rolled-back writes, which [database] strict = true does not allow"
                        ));
                    }
                    residue.push(Residue {
                        table: key.clone(),
                        dead_rows,
                        bytes,
                    });
                }
            }
            let mut found = None;
            if b.last_value != a.last_value {
                found = Some(format!(
                    "{what} moved (last value {} -> {})",
                    b.last_value.as_deref().unwrap_or("never used"),
                    a.last_value.as_deref().unwrap_or("never used")
                ));
            } else if b.xmin != a.xmin {
                found = Some(format!("{what} was altered (its catalog row changed)"));
            } else if b.maintenance == a.maintenance {
                if let (Some(x), Some(y)) = (b.changes, a.changes) {
                    if y > x {
                        found = Some(format!("{what} had {} committed row changes", y - x));
                    }
                }
                if found.is_none() && b.live != a.live {
                    found = Some(format!(
                        "{what} went from {} to {} live rows",
                        b.live.unwrap_or(0),
                        a.live.unwrap_or(0)
                    ));
                }
            }
            let strict_sequence = blame.strict && b.last_value != a.last_value;
            match found {
                Some(f) if ours => changes.push(f),
                Some(f) if strict_sequence => changes.push(format!(
                    "{f}, which the experiment does not name, but [database] strict = true holds every moved sequence against the run"
                )),
                Some(f) => others.push(f),
                None => {}
            }
        }
        for (key, a) in &after.objects {
            if !self.objects.contains_key(key) {
                let said = format!("{} was created", name(key, a));
                if blame.ours(key, a.kind) {
                    changes.push(said);
                } else {
                    others.push(said);
                }
            }
        }
        if self.large_objects != after.large_objects {
            let said = format!(
                "the number of large objects went from {} to {}",
                self.large_objects, after.large_objects
            );
            if blame.ours("large objects", "large objects") {
                changes.push(said);
            } else {
                others.push(said);
            }
        }
        let count = |kind: &str| self.objects.values().filter(|s| s.kind == kind).count() as u32;
        GuardRecord {
            relations: self
                .objects
                .values()
                .filter(|s| !matches!(s.kind, "sequence" | "schema" | "function"))
                .count() as u32,
            sequences: count("sequence"),
            schemas: count("schema"),
            functions: count("function"),
            held: changes.is_empty(),
            changes,
            residue: Some(residue),
            other_sessions: others,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(xmin: &str, changes: i64, live: i64, maintenance: i64) -> State {
        State {
            kind: "table",
            xmin: xmin.into(),
            changes: Some(changes),
            live: Some(live),
            last_value: None,
            maintenance: Some(maintenance),
            dead: Some(0),
            bytes: Some(8192),
        }
    }

    /// Every change is the run's.
    fn all() -> Blame {
        Blame::default()
    }

    fn naming(keys: &[&str]) -> Blame {
        Blame {
            named: Some(keys.iter().map(|k| k.to_string()).collect()),
            strict: false,
        }
    }

    fn print(objects: Vec<(&str, State)>) -> Fingerprint {
        Fingerprint {
            objects: objects
                .into_iter()
                .map(|(k, s)| (k.to_owned(), s))
                .collect(),
            large_objects: 0,
        }
    }

    #[test]
    fn committed_changes_are_named_and_rolled_back_ones_are_not() {
        let before = print(vec![("public.v", table("10", 5, 100, 0))]);
        // A rolled-back DELETE leaves n_mod_since_analyze and live rows.
        assert!(before.compare(&before.clone(), &all()).held);
        let after = print(vec![("public.v", table("10", 6, 99, 0))]);
        let r = before.compare(&after, &all());
        assert!(!r.held);
        assert_eq!(r.changes, ["table public.v had 1 committed row changes"]);
        // An autovacuum reset the counters: only the catalog row counts.
        let vacuumed = print(vec![("public.v", table("10", 0, 98, 1))]);
        assert!(before.compare(&vacuumed, &all()).held);
        let altered = print(vec![("public.v", table("11", 5, 100, 0))]);
        assert_eq!(
            before.compare(&altered, &all()).changes,
            ["table public.v was altered (its catalog row changed)"]
        );
    }

    #[test]
    fn what_a_rollback_leaves_is_counted_but_is_no_change() {
        let before = print(vec![("public.acc", table("10", 5, 1000, 0))]);
        let mut after = before.clone();
        let acc = after.objects.get_mut("public.acc").unwrap();
        acc.dead = Some(1000);
        acc.bytes = Some(8192 + 65536);
        let r = before.compare(&after, &all());
        assert!(r.held, "the content is the same");
        assert_eq!(
            r.residue,
            Some(vec![Residue {
                table: "public.acc".into(),
                dead_rows: 1000,
                bytes: 65536
            }])
        );
        // A VACUUM in between reset the count: the bytes are still said.
        after.objects.get_mut("public.acc").unwrap().maintenance = Some(1);
        after.objects.get_mut("public.acc").unwrap().dead = Some(0);
        let r = before.compare(&after, &all());
        assert_eq!(r.residue.unwrap()[0].dead_rows, 0);
        assert_eq!(before.compare(&before, &all()).residue, Some(Vec::new()));
    }

    #[test]
    fn sequences_created_and_dropped_objects_are_changes() {
        let seq = |v: &str| State {
            kind: "sequence",
            xmin: "7".into(),
            changes: None,
            live: None,
            last_value: Some(v.into()),
            maintenance: None,
            dead: None,
            bytes: None,
        };
        let before = print(vec![
            ("public.s", seq("1")),
            ("public.t", table("1", 0, 0, 0)),
        ]);
        let after = print(vec![
            ("public.s", seq("28")),
            ("public.u", table("2", 0, 0, 0)),
        ]);
        let r = before.compare(&after, &all());
        assert_eq!(
            r.changes,
            [
                "sequence public.s moved (last value 1 -> 28)",
                "table public.t was dropped",
                "table public.u was created"
            ]
        );
        assert_eq!((r.relations, r.sequences), (1, 1));
    }

    #[test]
    fn changes_to_tables_the_sql_does_not_name_are_another_sessions() {
        let before = print(vec![
            ("public.mine", table("10", 5, 100, 0)),
            ("public.victim", table("10", 5, 100, 0)),
        ]);
        let mut after = before.clone();
        let v = after.objects.get_mut("public.victim").unwrap();
        v.changes = Some(8);
        v.dead = Some(30);
        let r = before.compare(&after, &naming(&["public.mine"]));
        assert!(r.held, "{r:?}");
        assert_eq!(
            r.other_sessions,
            [
                "table public.victim gained 30 dead row versions and 0 bytes",
                "table public.victim had 3 committed row changes"
            ]
        );
        assert_eq!(r.residue, Some(Vec::new()));
        // The same change to a table the SQL names is the run's.
        let r = before.compare(&after, &naming(&["public.victim"]));
        assert!(!r.held);
        assert_eq!(
            r.changes,
            ["table public.victim had 3 committed row changes"]
        );
        assert_eq!(r.residue.unwrap()[0].dead_rows, 30);
        assert!(r.other_sessions.is_empty());
    }

    #[test]
    fn only_what_the_experiment_names_fails_it_and_strict_adds_dead_rows_and_sequences() {
        let seq = |v: &str| State {
            kind: "sequence",
            xmin: "7".into(),
            changes: None,
            live: None,
            last_value: Some(v.into()),
            maintenance: None,
            dead: None,
            bytes: None,
        };
        let other = |kind: &'static str| State {
            kind,
            xmin: "3".into(),
            changes: None,
            live: None,
            last_value: None,
            maintenance: None,
            dead: None,
            bytes: None,
        };
        let before = print(vec![
            ("public.acc", table("10", 5, 100, 0)),
            ("public.acc_id_seq", seq("100")),
            ("public.other_seq", seq("1")),
            ("schema elsewhere", other("schema")),
            ("function elsewhere.f(integer)", other("function")),
        ]);
        let mut after = before.clone();
        after.objects.get_mut("public.acc").unwrap().dead = Some(40);
        after
            .objects
            .get_mut("public.other_seq")
            .unwrap()
            .last_value = Some("2".into());
        after.objects.get_mut("schema elsewhere").unwrap().xmin = "9".into();
        after
            .objects
            .get_mut("function elsewhere.f(integer)")
            .unwrap()
            .xmin = "9".into();
        after
            .objects
            .insert("elsewhere.t".into(), table("11", 0, 0, 0));
        // Another session's DDL in a schema the experiment never names,
        // and a sequence it does not name: noted, not held against it.
        let named = naming(&["public.acc", "public.acc_id_seq", "schema public"]);
        let r = before.compare(&after, &named);
        assert!(r.held, "{r:?}");
        assert_eq!(r.other_sessions.len(), 4, "{:?}", r.other_sessions);
        assert_eq!(r.residue.as_ref().unwrap()[0].dead_rows, 40);
        // The same function or schema named: the run's.
        let r = before.compare(
            &after,
            &naming(&["public.acc", "function elsewhere.f", "schema elsewhere"]),
        );
        assert_eq!(
            r.changes,
            [
                "function elsewhere.f(integer) was altered (its catalog row changed)",
                "schema elsewhere was altered (its catalog row changed)"
            ]
        );
        // Strict: the dead rows and the unnamed sequence fail the run.
        let strict = Blame {
            strict: true,
            ..named
        };
        let r = before.compare(&after, &strict);
        assert!(!r.held);
        assert_eq!(r.changes.len(), 2, "{:?}", r.changes);
        assert!(r.changes[0].contains("40 dead row versions") && r.changes[0].contains("strict"));
        assert!(r.changes[1].starts_with("sequence public.other_seq moved (last value 1 -> 2)"));
        assert!(strict
            .failure("cell 0 fork 0", &r)
            .contains("an object the experiment names"));
        assert!(all().failure("x", &r).contains("the arms run commands"));
    }
}
