//! Who reads what (docs/guide/own-code.md), once strategies and grid are valid:
//!
//! - every `{name}` names a grid key, `{input}` (per run) or `{scratch}`
//!   (a command's private directory), where that name is available;
//! - every grid key is read by the baseline or the treatment (a sweep
//!   nobody reads would run identical cells and call them different),
//!   unless an arm is imported (it ran elsewhere, in the cells its data names);
//! - every SQL text passes [`runner_db::statements::check`] under every
//!   binding of its placeholders, since a value can change what it says.

use super::experiment::{Design, Grid};
use super::kinds::{StrategyKind, TextRole};
use super::location::{line_col, KeyPath, Problem};
use super::placeholder::{self, Fill, CLIENT, INPUT, SCRATCH};
use runner_db::statements::{SqlDialect, SqlRole};
use std::collections::{BTreeMap, BTreeSet};

/// Bindings tried per SQL text at most; beyond that the first ones are checked.
const MAX_BINDINGS: usize = 256;

/// One text that may hold placeholders, and where it was written.
struct Site<'a> {
    strategy: &'a str,
    /// `strategies.NAME.KEY[i]` in the table, or the grid value that set it.
    path: KeyPath,
    /// The key as the user wrote it (`argv[1]`, `run_file`).
    key: String,
    /// Set when the text came from a file (`run_file`, `setup_file`).
    file: Option<&'a str>,
    role: TextRole,
    text: &'a str,
    /// The path points at this very string, so offsets inside it are exact.
    exact: bool,
    /// An `sql` arm's `run` under `protocol = "prepared"`.
    prepared: bool,
}

/// The path of a key that [`StrategyKind::texts`] names (`argv[2]`, `env.X`).
fn key_path(base: &KeyPath, key: &str) -> KeyPath {
    if let Some((k, rest)) = key.split_once('[') {
        let i = rest.trim_end_matches(']').parse().unwrap_or(0);
        return base.child(k).at(i);
    }
    match key.split_once('.') {
        Some((k, sub)) => base.child(k).child(sub),
        None => base.child(key),
    }
}

fn sites<'a>(
    strategies: &'a BTreeMap<String, StrategyKind>,
    grid: &'a Grid,
    swept: &'a [StrategyKind],
) -> Vec<Site<'a>> {
    let mut out = Vec::new();
    for (name, kind) in strategies {
        let base = KeyPath::root().child("strategies").child(name);
        for (key, role, text) in kind.texts() {
            let file = sql_file(kind, &key);
            out.push(Site {
                strategy: name,
                path: key_path(&base, &key),
                key,
                file,
                role,
                text,
                exact: true,
                prepared: prepared(kind),
            });
        }
    }
    // Each swept value, applied alone to its strategy: its texts are the
    // ones whose key is the swept key.
    let mut k = 0;
    for s in &grid.strategy_keys {
        let gpath = swept_path(s);
        for i in 0..s.values.len() {
            let kind = &swept[k];
            k += 1;
            for (key, role, text) in kind.texts() {
                let root_key = key.split(['[', '.']).next().unwrap_or_default();
                let same = root_key == s.key
                    || (s.key.ends_with("_file") && root_key == s.key.trim_end_matches("_file"))
                    || (root_key.ends_with("_file") && root_key.trim_end_matches("_file") == s.key);
                if same {
                    let file = sql_file(kind, &key);
                    let exact = !key.contains('[') && !key.contains('.');
                    out.push(Site {
                        strategy: &s.strategy,
                        path: gpath.at(i),
                        key,
                        file,
                        role,
                        text,
                        exact,
                        prepared: prepared(kind),
                    });
                }
            }
        }
    }
    out
}

fn prepared(kind: &StrategyKind) -> bool {
    matches!(kind, StrategyKind::Sql(s) if s.protocol == super::kinds::Protocol::Prepared)
}

/// Where a sweep was written in the file.
fn swept_path(s: &super::experiment::SweptKey) -> KeyPath {
    KeyPath {
        segments: s.at.clone(),
        index: None,
    }
}

fn sql_file<'a>(kind: &'a StrategyKind, key: &str) -> Option<&'a str> {
    match kind {
        StrategyKind::Sql(s) if key == "run_file" => s.run.file.as_deref(),
        StrategyKind::Sql(s) if key == "setup_file" => {
            s.setup.as_ref().and_then(|t| t.file.as_deref())
        }
        _ => None,
    }
}

impl Site<'_> {
    /// A problem at byte `offset` of this text, with `message`.
    fn problem(&self, offset: usize, message: String) -> Problem {
        match self.file {
            Some(f) => {
                let (line, col) = line_col(self.text, offset);
                Problem::value(&self.path, format!("{f}:{line}:{col}: {message}"))
            }
            None if self.exact => Problem::value(&self.path, message).inside(offset),
            None => Problem::value(&self.path, message),
        }
    }

    fn shown(&self) -> String {
        format!("strategies.{}.{}", self.strategy, self.key)
    }
}

/// The checks of this module, in order: names, readers, SQL.
pub(crate) fn check(
    strategies: &BTreeMap<String, StrategyKind>,
    design: &Design,
    grid: &Grid,
    dialect: SqlDialect,
) -> Result<(), Problem> {
    let swept: Vec<StrategyKind> = grid
        .strategy_keys
        .iter()
        .flat_map(|s| {
            s.values.iter().map(|f| {
                let mut k = strategies[&s.strategy].clone();
                k.apply(f);
                k
            })
        })
        .collect();
    let sites = sites(strategies, grid, &swept);
    let mut readable: BTreeSet<&str> = grid.params.keys().map(String::as_str).collect();
    readable.insert("delay_us");
    readable.extend(grid.workload.keys().map(String::as_str));
    for site in &sites {
        names(site, &readable)?;
    }
    readers(strategies, design, grid, &sites)?;
    for site in &sites {
        let role = match site.role {
            TextRole::RunSql => SqlRole::Run,
            TextRole::SetupSql => SqlRole::Setup,
            _ => continue,
        };
        sql(site, role, grid, dialect)?;
    }
    Ok(())
}

fn names(site: &Site<'_>, readable: &BTreeSet<&str>) -> Result<(), Problem> {
    for (name, offset) in placeholder::names(site.text) {
        let refusal = if name == INPUT && !site.role.allows_input() {
            Some(format!("{} uses {{input}}, which exists only per run; setup, teardown, cwd and stdin run once per fork", site.shown()))
        } else if name == SCRATCH && !site.role.allows_scratch() {
            Some(format!(
                "{} uses {{scratch}}, which only command strategies have",
                site.shown()
            ))
        } else if name == CLIENT && site.role != TextRole::RunSql {
            Some(format!(
                "{} uses {{client}}, which only the measured SQL (`run`) of an sql strategy has",
                site.shown()
            ))
        } else if name != INPUT && name != SCRATCH && name != CLIENT && !readable.contains(name) {
            // Every name valid here, the per-run and per-fork ones first.
            let mut valid: Vec<&str> = Vec::new();
            if site.role.allows_scratch() {
                valid.push(SCRATCH);
            }
            if site.role.allows_input() {
                valid.push(INPUT);
            }
            if site.role == TextRole::RunSql {
                valid.push(CLIENT);
            }
            valid.extend(readable.iter().copied());
            Some(format!(
                "{} uses the placeholder {{{name}}}, which names no [grid] key and is not runner's;{} valid here: {} (write {{{{ for a literal brace)",
                site.shown(),
                super::suggest::nearest(name, valid.iter().copied())
                    .map_or_else(String::new, |c| format!(" did you mean {{{c}}}?")),
                valid.iter().map(|k| format!("{{{k}}}")).collect::<Vec<_>>().join(", ")
            ))
        } else if site.key == "shell" && name != INPUT {
            // Values are shell-quoted into `shell`: quoted once more by
            // the user, they would be shell syntax again.
            placeholder::shell_context(site.text, offset).map(|place| format!(
                "{} has the placeholder {{{name}}} inside {place}; runner shell-quotes every value it puts into `shell`, so write it bare (echo {{{name}}}), or pass it through env (env = {{ V = \"{{{name}}}\" }}, then \"$V\" in the shell text)",
                site.shown()
            ))
        } else {
            None
        };
        if let Some(message) = refusal {
            return Err(site.problem(offset, message));
        }
    }
    Ok(())
}

fn readers(
    strategies: &BTreeMap<String, StrategyKind>,
    design: &Design,
    grid: &Grid,
    sites: &[Site<'_>],
) -> Result<(), Problem> {
    let arms = design.arms();
    // Imported arms ran elsewhere, in whatever cells their data names.
    if arms
        .iter()
        .any(|a| strategies.get(*a) == Some(&StrategyKind::Imported))
    {
        return Ok(());
    }
    let read: BTreeSet<&str> = sites
        .iter()
        .filter(|s| arms.contains(&s.strategy))
        .flat_map(|s| placeholder::names(s.text).into_iter().map(|(n, _)| n))
        .collect();
    let preview = arms
        .iter()
        .any(|a| strategies.get(*a).is_some_and(StrategyKind::reads_workload));
    let treatments = design
        .variants()
        .iter()
        .map(|t| format!("`{t}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let nobody = |key: &str| {
        format!(
            "grid.{key} is read by nothing: neither baseline `{}` nor treatment {treatments}{} uses {{{key}}}; use it in argv, env or SQL, or remove it",
            design.baseline,
            if grid.workload.contains_key(key) { " computes the preview or" } else { "" }
        )
    };
    let base = KeyPath::root().child("grid");
    for key in grid.workload.keys() {
        if !preview && !read.contains(key.as_str()) {
            return Err(Problem::key(&base.child(key), nobody(key)));
        }
    }
    for key in grid.params.keys() {
        if !read.contains(key.as_str()) {
            return Err(Problem::key(&base.child(key), nobody(key)));
        }
    }
    if !grid.clients.is_empty() {
        let path = base.child(super::experiment::CLIENTS_KEY);
        let sql = |a: &&str| matches!(strategies.get(*a), Some(StrategyKind::Sql(_)));
        if !arms.iter().any(sql) {
            return Err(Problem::key(&path, format!("{path} sweeps the concurrent clients of `sql` arms, but neither baseline `{}` nor treatment {treatments} is an sql strategy; remove it", design.baseline)));
        }
        if let Some(s) = grid.strategy_keys.iter().find(|s| s.key == "clients") {
            return Err(Problem::key(&path, format!("{path} and {} both sweep `{}`'s clients; keep {path}, which sets every sql arm's clients at once", swept_path(s), s.strategy)));
        }
    }
    for s in &grid.strategy_keys {
        if !arms.contains(&s.strategy.as_str()) {
            let path = swept_path(s);
            return Err(Problem::key(&path, format!("{path} sweeps strategy `{}`, which is neither the baseline (`{}`) nor a treatment ({treatments}); the sweep would change nothing", s.strategy, design.baseline)));
        }
    }
    Ok(())
}

/// Every binding of the grid keys `site` uses, as placeholder texts.
fn bindings(site: &Site<'_>, grid: &Grid) -> Vec<BTreeMap<String, String>> {
    let mut values: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (name, _) in placeholder::names(site.text) {
        let list: Vec<String> = if name == "delay_us" {
            grid.delay_us
                .iter()
                .map(|d| super::values::param_text(&super::values::number(*d)))
                .collect()
        } else if let Some(v) = grid.workload.get(name) {
            v.iter().map(u32::to_string).collect()
        } else if let Some(v) = grid.params.get(name) {
            v.iter().map(super::values::param_text).collect()
        } else {
            continue;
        };
        values.insert(name, list);
    }
    let mut out = vec![BTreeMap::new()];
    for (name, list) in values {
        let mut next = Vec::new();
        for b in &out {
            for v in &list {
                let mut b: BTreeMap<String, String> = b.clone();
                b.insert(name.to_string(), v.clone());
                next.push(b);
                if next.len() >= MAX_BINDINGS {
                    break;
                }
            }
        }
        out = next;
    }
    out
}

fn sql(site: &Site<'_>, role: SqlRole, grid: &Grid, dialect: SqlDialect) -> Result<(), Problem> {
    for binding in bindings(site, grid) {
        let bound = placeholder::substitute(site.text, true, |name| match binding.get(name) {
            Some(v) => Fill::With(v.clone()),
            None => Fill::With("0".into()),
        });
        let shown_binding = if binding.is_empty() {
            String::new()
        } else {
            let pairs: Vec<String> = binding.iter().map(|(k, v)| format!("{k} = {v}")).collect();
            format!(" (with {})", pairs.join(", "))
        };
        if role == SqlRole::Run && site.prepared {
            check_prepared(site, &binding, &shown_binding)?;
        }
        if let Err(r) = runner_db::statements::check(&bound.text, dialect, role) {
            let at = bound.source_offset(r.offset);
            let message = if site.file.is_some() {
                format!("{}{shown_binding}: {}", site.shown(), r.message)
            } else {
                let (line, col) = line_col(site.text, at);
                format!(
                    "{}: the statement at line {line}, column {col}{shown_binding}: {}",
                    site.shown(),
                    r.message
                )
            };
            return Err(site.problem(at, message));
        }
    }
    Ok(())
}

/// Under `protocol = "prepared"` an `{input}` can only stand in a
/// statement's code, where it becomes the parameter `$1`; one inside a
/// string, a dollar quote or a quoted name of a statement PostgreSQL
/// prepares is refused here, pointing at it, rather than run as a `$1`.
fn check_prepared(
    site: &Site<'_>,
    binding: &BTreeMap<String, String>,
    shown_binding: &str,
) -> Result<(), Problem> {
    use runner_db::statements::{places, preparable, split, unpreparable, Place};
    let pg = SqlDialect::Postgres;
    let bound = placeholder::substitute(site.text, false, |name| match binding.get(name) {
        _ if name == INPUT => Fill::Keep,
        Some(v) => Fill::With(v.clone()),
        None => Fill::With("0".into()),
    });
    let (probe, inputs) = placeholder::inputs_as(&bound.text, "$1");
    let Ok(ranges) = split(&probe, pg) else {
        return Ok(());
    };
    for (n, r) in ranges.iter().enumerate() {
        let here: Vec<(usize, usize)> = inputs
            .iter()
            .filter(|(out, _)| r.contains(out))
            .map(|&(out, src)| (out - r.start, src))
            .collect();
        let statement = &probe[r.clone()];
        if here.is_empty() || !preparable(statement, pg) {
            continue;
        }
        let offsets: Vec<usize> = here.iter().map(|(o, _)| *o).collect();
        for (place, (_, src)) in places(statement, pg, &offsets).iter().zip(&here) {
            if let Place::Quoted(what) = place {
                let at = bound.source_offset(*src);
                return Err(site.problem(
                    at,
                    format!(
                        "{}{shown_binding}: protocol = \"prepared\": statement {} {}",
                        site.shown(),
                        n + 1,
                        unpreparable(what)
                    ),
                ));
            }
        }
    }
    Ok(())
}
