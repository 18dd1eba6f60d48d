//! What a `[strategies.NAME]` table runs, validated: the preview kinds, and
//! the user's own code (`command`, `sql`; docs/guide/own-code.md).
//!
//! A strategy key swept from `[grid]` is one [`Field`]: the key with its
//! validated value. [`StrategyKind::apply`] sets it, so a cell's strategy is
//! the file's strategy with the cell's fields applied, and nothing after
//! validation re-reads TOML or files.

use super::placeholder::Quoting;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a `[strategies.NAME]` table runs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum StrategyKind {
    InMemory,
    TxRollback,
    Spin {
        duration_ns: u64,
    },
    Noop,
    Command(Box<CommandSpec>),
    Sql(Box<SqlSpec>),
    /// An arm whose pairs another harness measured and `runner analyze`
    /// imported. Valid only in a recorded spec (run.json): nothing can run it.
    Imported,
}

/// `kind = "command"`: a program run without a shell (or with one).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct CommandSpec {
    pub program: Program,
    /// Working directory; `None`: runner's own.
    pub cwd: Option<String>,
    /// Added to (or replacing in) runner's environment.
    pub env: BTreeMap<String, String>,
    /// A file each run reads as stdin; `None`: `/dev/null`.
    pub stdin: Option<String>,
    /// Once per fork before any run, untimed.
    pub setup: Option<Vec<String>>,
    /// Once per fork after the last run, untimed.
    pub teardown: Option<Vec<String>>,
    /// Before every run, untimed.
    pub prepare: Option<Vec<String>>,
    /// A run still going after this long is killed and the fork fails.
    pub timeout_ns: Option<u64>,
    /// A non-zero exit does not stop the fork.
    pub allow_failure: bool,
    /// The agreement check compares stdout (else only the exit status).
    pub compare_output: bool,
}

impl CommandSpec {
    /// Rewrites every text that may hold placeholders; `f` is told how a
    /// value must be written into it (quoted for `/bin/sh` in `shell`).
    pub fn map_texts(&mut self, mut f: impl FnMut(&str, Quoting) -> String) {
        let mut each = |v: &mut String| *v = f(v, Quoting::Raw);
        match &mut self.program {
            Program::Argv(a) => a.iter_mut().for_each(&mut each),
            Program::Shell(s) => *s = f(s, Quoting::Shell),
        }
        let mut each = |v: &mut String| *v = f(v, Quoting::Raw);
        for list in [&mut self.setup, &mut self.teardown, &mut self.prepare]
            .into_iter()
            .flatten()
        {
            list.iter_mut().for_each(&mut each);
        }
        self.env.values_mut().for_each(&mut each);
        self.cwd
            .iter_mut()
            .chain(self.stdin.iter_mut())
            .for_each(&mut each);
    }
}

/// What a command runs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Program {
    /// `argv[0]` is looked up on PATH; no shell.
    Argv(Vec<String>),
    /// `/bin/sh -c TEXT`: one more process per run.
    Shell(String),
}

impl Default for Program {
    fn default() -> Self {
        Program::Argv(Vec::new())
    }
}

impl Program {
    /// The argv that runs, `{placeholders}` still in it.
    pub fn argv(&self) -> Vec<String> {
        match self {
            Program::Argv(a) => a.clone(),
            Program::Shell(s) => vec!["/bin/sh".into(), "-c".into(), s.clone()],
        }
    }
}

/// `kind = "sql"`: statements run against the run's database.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SqlSpec {
    /// The measured statements, each run inside `BEGIN ... ROLLBACK`.
    pub run: SqlText,
    /// Once per fork, committed, in the strategy's own schema.
    pub setup: Option<SqlText>,
    /// PostgreSQL schemas searched after the strategy's own (the user's
    /// tables, read by the measured SQL).
    pub search_path: Vec<String>,
    /// A run whose statement errors is timed to its error, rolled back and
    /// counted with its SQLSTATE, instead of stopping the fork.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_failure: bool,
    /// How the statements reach the server.
    #[serde(default, skip_serializing_if = "Protocol::is_simple")]
    pub protocol: Protocol,
    /// Connections that run the statements at once per run (1: one, as
    /// without the key).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub clients: u32,
}

impl Default for SqlSpec {
    fn default() -> Self {
        SqlSpec {
            run: SqlText::default(),
            setup: None,
            search_path: Vec::new(),
            allow_failure: false,
            protocol: Protocol::Simple,
            clients: 1,
        }
    }
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// `protocol` of an `sql` strategy.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// Every run's statements as text: parsed and planned every time.
    #[default]
    Simple,
    /// Each statement prepared once per fork, untimed; a run executes the
    /// prepared statements with `{input}` as their parameter.
    Prepared,
}

impl Protocol {
    pub fn is_simple(&self) -> bool {
        *self == Protocol::Simple
    }

    pub fn label(self) -> &'static str {
        match self {
            Protocol::Simple => "simple",
            Protocol::Prepared => "prepared",
        }
    }
}

/// SQL as given: inline, or read from a file at validation (so run.json
/// holds the exact text that ran, and a resume notices a changed file).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct SqlText {
    pub text: String,
    /// The file it was read from (`run_file`, `setup_file`).
    pub file: Option<String>,
}

/// One strategy key and its validated value: what a `[grid]` sweep of
/// `strategies.NAME.KEY` sets in each cell.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "key", content = "value", rename_all = "snake_case")]
pub enum Field {
    /// spin `duration_us`, in ns.
    DurationNs(u64),
    Argv(Vec<String>),
    Shell(String),
    Cwd(String),
    Env(BTreeMap<String, String>),
    Stdin(String),
    Setup(Vec<String>),
    Teardown(Vec<String>),
    Prepare(Vec<String>),
    TimeoutNs(u64),
    AllowFailure(bool),
    CompareOutput(bool),
    /// sql `run` or `run_file`.
    Run(SqlText),
    /// sql `setup` or `setup_file`.
    SqlSetup(SqlText),
    SearchPath(Vec<String>),
    Protocol(Protocol),
    Clients(u32),
}

impl StrategyKind {
    pub fn needs_database(&self) -> bool {
        matches!(self, StrategyKind::TxRollback | StrategyKind::Sql(_))
    }

    /// Whether the kind runs the user's own code (SQL or a command), which
    /// only the database guard can check did nothing lasting
    /// (`exec::db_guard`); runner's built-in kinds run only runner's statements.
    pub fn runs_user_code(&self) -> bool {
        matches!(self, StrategyKind::Sql(_) | StrategyKind::Command(_))
    }

    /// Whether a run computes the preview (so its results can be compared).
    pub fn computes_preview(&self) -> bool {
        matches!(self, StrategyKind::InMemory | StrategyKind::TxRollback)
    }

    /// Whether runs record CPU time and peak RSS (a child process's rusage).
    pub fn measures_usage(&self) -> bool {
        matches!(self, StrategyKind::Command(_))
    }

    /// Whether the kind reads `[workload]` (and so a swept `plans`/`months`).
    pub fn reads_workload(&self) -> bool {
        self.computes_preview()
    }

    /// The spelling used in the experiment file.
    pub fn label(&self) -> &'static str {
        match self {
            StrategyKind::InMemory => "in-memory",
            StrategyKind::TxRollback => "tx-rollback",
            StrategyKind::Spin { .. } => "spin",
            StrategyKind::Noop => "noop",
            StrategyKind::Command(_) => "command",
            StrategyKind::Sql(_) => "sql",
            StrategyKind::Imported => "imported",
        }
    }

    /// Sets one key. Validation only makes fields that fit the kind; one
    /// that does not is ignored. Keys that exclude each other replace each
    /// other (`shell` replaces `argv`, `run_file` replaces `run`), so a
    /// swept key always wins over the table's.
    pub fn apply(&mut self, field: &Field) {
        match (self, field.clone()) {
            (StrategyKind::Spin { duration_ns }, Field::DurationNs(ns)) => *duration_ns = ns,
            (StrategyKind::Command(c), f) => match f {
                Field::Argv(a) => c.program = Program::Argv(a),
                Field::Shell(s) => c.program = Program::Shell(s),
                Field::Cwd(d) => c.cwd = Some(d),
                Field::Env(e) => c.env = e,
                Field::Stdin(s) => c.stdin = Some(s),
                Field::Setup(a) => c.setup = Some(a),
                Field::Teardown(a) => c.teardown = Some(a),
                Field::Prepare(a) => c.prepare = Some(a),
                Field::TimeoutNs(ns) => c.timeout_ns = Some(ns),
                Field::AllowFailure(b) => c.allow_failure = b,
                Field::CompareOutput(b) => c.compare_output = b,
                _ => {}
            },
            (StrategyKind::Sql(s), f) => match f {
                Field::Run(t) => s.run = t,
                Field::SqlSetup(t) => s.setup = Some(t),
                Field::SearchPath(p) => s.search_path = p,
                Field::AllowFailure(b) => s.allow_failure = b,
                Field::Protocol(p) => s.protocol = p,
                Field::Clients(n) => s.clients = n,
                _ => {}
            },
            _ => {}
        }
    }

    /// Rewrites every text [`StrategyKind::texts`] lists (filling placeholders).
    pub fn map_texts(&mut self, f: impl FnMut(&str, Quoting) -> String) {
        match self {
            StrategyKind::Command(c) => c.map_texts(f),
            StrategyKind::Sql(s) => {
                let mut f = f;
                s.run.text = f(&s.run.text, Quoting::Raw);
                if let Some(t) = &mut s.setup {
                    t.text = f(&t.text, Quoting::Raw);
                }
            }
            _ => {}
        }
    }

    /// Every text that may hold `{placeholders}`, with the key it came from
    /// (`argv[2]`, `env.LANG`, `run`) and what it is.
    pub fn texts(&self) -> Vec<(String, TextRole, &str)> {
        let mut out = Vec::new();
        match self {
            StrategyKind::Command(c) => {
                match &c.program {
                    Program::Argv(a) => list(&mut out, "argv", TextRole::Argv, a),
                    Program::Shell(s) => out.push(("shell".into(), TextRole::Argv, s.as_str())),
                }
                for (key, role, value) in [
                    ("setup", TextRole::ForkArgv, &c.setup),
                    ("teardown", TextRole::ForkArgv, &c.teardown),
                    ("prepare", TextRole::Argv, &c.prepare),
                ] {
                    if let Some(a) = value {
                        list(&mut out, key, role, a);
                    }
                }
                for (k, v) in &c.env {
                    out.push((format!("env.{k}"), TextRole::Argv, v.as_str()));
                }
                for (key, value) in [("cwd", &c.cwd), ("stdin", &c.stdin)] {
                    if let Some(v) = value {
                        out.push((key.into(), TextRole::ForkArgv, v.as_str()));
                    }
                }
            }
            StrategyKind::Sql(s) => {
                out.push((
                    sql_key("run", &s.run),
                    TextRole::RunSql,
                    s.run.text.as_str(),
                ));
                if let Some(t) = &s.setup {
                    out.push((sql_key("setup", t), TextRole::SetupSql, t.text.as_str()));
                }
            }
            _ => {}
        }
        out
    }
}

fn list<'a>(
    out: &mut Vec<(String, TextRole, &'a str)>,
    key: &str,
    role: TextRole,
    a: &'a [String],
) {
    for (i, v) in a.iter().enumerate() {
        out.push((format!("{key}[{i}]"), role, v.as_str()));
    }
}

fn sql_key(key: &str, t: &SqlText) -> String {
    if t.file.is_some() {
        format!("{key}_file")
    } else {
        key.to_string()
    }
}

/// Which placeholders a text may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextRole {
    /// Per run (argv, shell, env, prepare): grid values, `{scratch}`, `{input}`.
    Argv,
    /// Once per fork (setup, teardown, cwd, stdin): no `{input}`.
    ForkArgv,
    /// Measured SQL: grid values and `{input}`.
    RunSql,
    /// Setup SQL: grid values only.
    SetupSql,
}

impl TextRole {
    pub fn allows_input(self) -> bool {
        matches!(self, TextRole::Argv | TextRole::RunSql)
    }

    pub fn allows_scratch(self) -> bool {
        matches!(self, TextRole::Argv | TextRole::ForkArgv)
    }
}
