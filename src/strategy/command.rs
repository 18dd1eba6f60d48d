//! `command`: the user's program, one fresh process per run (design section 8).
//!
//! Timed region: from `Command::spawn` (posix_spawn on Linux) to `wait4`
//! returning the reaped child. Everything else is outside it: building the
//! argv and environment for the input, `prepare`, opening stdin, and the
//! check of the exit status. stdout goes to /dev/null while timing (as in
//! hyperfine) and is captured only by the checks before timing; stderr goes
//! to a file, so a failing run can be reported with its last lines.
//!
//! `wait4` also returns the child's rusage: user and system CPU time and
//! peak RSS, recorded per run. With `timeout_s` the wait is a `poll` on a
//! pidfd (Linux 5.3+), two more system calls inside the timed region of
//! both arms; without it, a plain blocking `wait4`.

mod reap;

use super::{Observation, Outcome, Setting, Strategy};
use crate::record::RunUsage;
use crate::spec::placeholder::{self, Fill, Template, SCRATCH};
use crate::spec::CommandSpec;
use anyhow::{bail, Context, Result};
pub use reap::describe;
use reap::{reap, succeeded};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

/// Lines of a failing run's stderr quoted in the error.
const STDERR_LINES: usize = 10;

pub struct Command {
    name: String,
    argv: Vec<Template>,
    env: Vec<(String, Template)>,
    cwd: Option<PathBuf>,
    stdin: Option<PathBuf>,
    prepare: Option<Vec<Template>>,
    teardown: Option<Vec<Template>>,
    timeout: Option<Duration>,
    allow_failure: bool,
    compare_output: bool,
    /// `{scratch}`: made at set-up when a text uses it, removed at teardown.
    scratch: Option<PathBuf>,
    /// Receives every child's stderr; truncated before each run.
    stderr: File,
    stderr_path: PathBuf,
    /// The run's process, built (untimed) by `before`.
    ready: Option<std::process::Command>,
    input: u64,
    /// Wait status and usage of the last run, read by `after`.
    finished: Option<(i32, RunUsage)>,
}

fn compile(texts: &[String]) -> Result<Vec<Template>> {
    texts
        .iter()
        .map(|t| Template::compile(t).map_err(anyhow::Error::from))
        .collect()
}

impl Command {
    /// Makes `{scratch}` if used, compiles every text, and runs `setup`.
    pub fn new(spec: &CommandSpec, at: &Setting<'_>) -> Result<Command> {
        let mut spec = spec.clone();
        let kind = crate::spec::StrategyKind::Command(Box::new(spec.clone()));
        let uses_scratch = kind
            .texts()
            .iter()
            .any(|(_, _, t)| placeholder::names(t).iter().any(|(n, _)| *n == SCRATCH));
        let tag = format!("runner-{}-{}", std::process::id(), at.slot);
        let scratch = if uses_scratch {
            let dir = std::env::temp_dir().join(&tag);
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("creating the scratch directory {}", dir.display()))?;
            Some(dir)
        } else {
            None
        };
        if let Some(dir) = &scratch {
            let value = placeholder::escape(&dir.display().to_string());
            let fill = |t: &str| {
                placeholder::substitute(t, false, |n| match n {
                    SCRATCH => Fill::With(value.clone()),
                    _ => Fill::Keep,
                })
                .text
            };
            spec.map_texts(fill);
        }
        let fixed = |t: &Option<String>| -> Result<Option<PathBuf>> {
            t.as_deref()
                .map(|t| Template::compile(t).map(|c| PathBuf::from(c.render(0))))
                .transpose()
                .map_err(anyhow::Error::from)
        };
        let stderr_path = std::env::temp_dir().join(format!("{tag}.stderr"));
        let stderr = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&stderr_path)
            .with_context(|| format!("creating {}", stderr_path.display()))?;
        let mut command = Command {
            name: at.name.to_string(),
            argv: compile(&spec.program.argv())?,
            env: spec
                .env
                .iter()
                .map(|(k, v)| Ok((k.clone(), Template::compile(v)?)))
                .collect::<Result<_, placeholder::Unbound>>()?,
            cwd: fixed(&spec.cwd)?,
            stdin: fixed(&spec.stdin)?,
            prepare: spec.prepare.as_deref().map(compile).transpose()?,
            teardown: spec.teardown.as_deref().map(compile).transpose()?,
            timeout: spec.timeout_ns.map(Duration::from_nanos),
            allow_failure: spec.allow_failure,
            compare_output: spec.compare_output,
            scratch,
            stderr,
            stderr_path,
            ready: None,
            input: 0,
            finished: None,
        };
        if let Some(setup) = spec.setup.as_deref() {
            command.once("setup", &compile(setup)?, 0)?;
        }
        Ok(command)
    }

    /// The process for `argv` rendered for `input`: env, cwd, stdin set,
    /// stdout to /dev/null, stderr to the file (emptied first).
    fn process(&mut self, argv: &[Template], input: u64) -> Result<std::process::Command> {
        let argv: Vec<String> = argv.iter().map(|t| t.render(input)).collect();
        let Some(program) = argv.first() else {
            bail!("strategy `{}` has an empty argv", self.name);
        };
        let mut p = std::process::Command::new(program);
        p.args(&argv[1..]);
        for (k, v) in &self.env {
            p.env(k, v.render(input));
        }
        if let Some(d) = &self.cwd {
            p.current_dir(d);
        }
        let stdin = match &self.stdin {
            Some(f) => Stdio::from(
                File::open(f).with_context(|| format!("opening stdin file {}", f.display()))?,
            ),
            None => Stdio::null(),
        };
        self.stderr.set_len(0)?;
        self.stderr.seek(SeekFrom::Start(0))?;
        p.stdin(stdin)
            .stdout(Stdio::null())
            .stderr(Stdio::from(self.stderr.try_clone()?));
        Ok(p)
    }

    fn shown(argv: &[Template], input: u64) -> String {
        let argv: Vec<String> = argv.iter().map(|t| t.render(input)).collect();
        crate::shell::join(&argv)
    }

    /// Runs `argv` once, untimed (setup, teardown, prepare); it must succeed.
    fn once(&mut self, what: &str, argv: &[Template], input: u64) -> Result<()> {
        let mut p = self.process(argv, input)?;
        let child = p.spawn().with_context(|| {
            format!(
                "{what} command `{}` of strategy `{}` could not start",
                Self::shown(argv, input),
                self.name
            )
        })?;
        let (status, _) = reap(child.id() as i32, self.timeout)?;
        if !succeeded(status) {
            bail!(
                "{what} command `{}` of strategy `{}` ended with {}{}",
                Self::shown(argv, input),
                self.name,
                describe(status),
                self.stderr_tail()
            );
        }
        Ok(())
    }

    /// The last lines of the last child's stderr, as an indented block.
    fn stderr_tail(&self) -> String {
        let mut text = String::new();
        let _ = File::open(&self.stderr_path).and_then(|mut f| f.read_to_string(&mut text));
        let lines: Vec<&str> = text.lines().collect();
        if lines.is_empty() {
            return "; its stderr was empty".into();
        }
        let tail = &lines[lines.len().saturating_sub(STDERR_LINES)..];
        format!("; its last stderr lines:\n    {}", tail.join("\n    "))
    }

    /// A run that failed stops the fork, unless failures are allowed.
    fn check_status(&self, status: i32) -> Result<()> {
        if succeeded(status) || self.allow_failure {
            return Ok(());
        }
        bail!(
            "command `{}` of strategy `{}` ended with {} on input {} (set allow_failure = true to time runs that fail){}",
            Self::shown(&self.argv, self.input),
            self.name,
            describe(status),
            self.input,
            self.stderr_tail()
        )
    }
}

impl Strategy for Command {
    fn before(&mut self, input: u64) -> Result<()> {
        if let Some(prepare) = self.prepare.clone() {
            self.once("prepare", &prepare, input)?;
        }
        let argv = std::mem::take(&mut self.argv);
        let p = self.process(&argv, input);
        self.argv = argv;
        self.ready = Some(p?);
        self.input = input;
        Ok(())
    }

    fn run(&mut self, _input: u64) -> Result<()> {
        let mut p = self
            .ready
            .take()
            .context("a command ran without its set-up")?;
        let child = p.spawn().with_context(|| {
            format!(
                "command `{}` of strategy `{}` could not start",
                Self::shown(&self.argv, self.input),
                self.name
            )
        })?;
        self.finished = Some(reap(child.id() as i32, self.timeout)?);
        Ok(())
    }

    fn after(&mut self) -> Result<Outcome> {
        let (status, usage) = self
            .finished
            .take()
            .context("a command's result was read twice")?;
        self.check_status(status)?;
        Ok(Outcome {
            fingerprint: status as u64,
            usage: Some(usage),
        })
    }

    fn observe(&mut self, input: u64) -> Result<Observation> {
        self.before(input)?;
        let mut p = self
            .ready
            .take()
            .context("a command ran without its set-up")?;
        if self.compare_output {
            p.stdout(Stdio::piped());
        }
        let mut child = p.spawn().with_context(|| {
            format!(
                "command `{}` of strategy `{}` could not start",
                Self::shown(&self.argv, input),
                self.name
            )
        })?;
        let mut stdout = Vec::new();
        if let Some(mut out) = child.stdout.take() {
            out.read_to_end(&mut stdout)?;
        }
        let (status, _) = reap(child.id() as i32, self.timeout)?;
        self.check_status(status)?;
        Ok(Observation::Command {
            status: describe(status),
            stdout: self.compare_output.then_some(stdout),
        })
    }

    fn teardown(&mut self) -> Result<()> {
        if let Some(teardown) = self.teardown.take() {
            self.once("teardown", &teardown, 0)?;
        }
        if let Some(dir) = self.scratch.take() {
            std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
        }
        Ok(())
    }
}

impl Drop for Command {
    fn drop(&mut self) {
        if let Some(dir) = &self.scratch {
            let _ = std::fs::remove_dir_all(dir);
        }
        let _ = std::fs::remove_file(&self.stderr_path);
    }
}
