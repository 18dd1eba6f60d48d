//! `command`: the user's program, one fresh process per run (docs/guide/own-code.md).
//!
//! Timed region: from `Command::spawn` (posix_spawn on Linux) to `wait4`
//! returning the reaped child. Everything else is outside it: building the
//! argv and environment for the input, `prepare`, opening stdin, and the
//! check of the exit status. stdout goes to /dev/null while timing (as in
//! hyperfine) and is captured only by the checks before timing; stderr goes
//! to a file, so a failing run can be reported with its last lines.
//!
//! The timed region ends when the child's exit is seen, not reaped: a
//! blocking `waitid(WNOWAIT)`, or with `timeout_s` a `poll` on a pidfd
//! (Linux 5.3+), the same for both arms. After it, untimed: the run's
//! process group and every process it started are killed, and `wait4`
//! reaps it with its rusage (user and system CPU time and peak RSS,
//! recorded per run). See `reap` and docs/safety.md.
//!
//! `timeout_s` bounds every process of the strategy: setup, prepare,
//! teardown, the runs of the checks (stdout is read as it streams, hashed,
//! never past the deadline) and the timed runs.

mod counted;
mod reap;

use super::{CountWith, Counted, Observation, Outcome, Setting, StdoutDigest, Strategy};
use crate::strategy::error::{fail, Doing, Result, StrategyError};
pub(crate) use reap::{describe, left_behind};
use reap::{finish, run_out, succeeded, wait_exit};
use runner_spec::placeholder::{self, Fill, Quoting, Template, SCRATCH};
use runner_spec::CommandSpec;
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// How long the checks wait, after a run and everything it started were
/// killed, for its stdout to close (only a process runner cannot reach
/// can still hold it).
const DRAIN: Duration = Duration::from_secs(5);

/// How many times `timeout_s` a counted run may take.
const COUNTED_SLOWER: u32 = 100;

/// Lines of a failing run's stderr quoted in the error.
const STDERR_LINES: usize = 10;

pub(crate) struct Command {
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
    scratch: Option<tempfile::TempDir>,
    /// Receives every child's stderr; truncated before each run. Unnamed,
    /// so nothing is left of it however the worker ends.
    stderr: File,
    /// The run's process, built (untimed) by `before`.
    ready: Option<std::process::Command>,
    input: u64,
    /// The timed run's process: exited, not reaped until `after`.
    running: Option<i32>,
    /// Runs that succeeded so far, and the inputs they ran on: a run that
    /// fails after them fails at random (or on something besides its
    /// input), which its error says.
    succeeded: u64,
    succeeded_on: std::collections::BTreeSet<u64>,
}

fn compile(texts: &[String]) -> Result<Vec<Template>> {
    texts
        .iter()
        .map(|t| Template::compile(t).map_err(StrategyError::from))
        .collect()
}

impl Command {
    /// Makes `{scratch}` if used, compiles every text, and runs `setup`.
    pub(crate) fn new(spec: &CommandSpec, at: &Setting<'_>) -> Result<Command> {
        let mut spec = spec.clone();
        let kind = runner_spec::StrategyKind::Command(Box::new(spec.clone()));
        let uses_scratch = kind
            .texts()
            .iter()
            .any(|(_, _, t)| placeholder::names(t).iter().any(|(n, _)| *n == SCRATCH));
        // A fresh private folder at a random name (`temp`): nothing that
        // was there before is used or removed.
        let scratch = if uses_scratch {
            Some(runner_os::temp::scratch().doing(|| "creating the scratch directory".into())?)
        } else {
            None
        };
        if let Some(dir) = &scratch {
            let dir = dir.path().display().to_string();
            let fill = |t: &str, into: Quoting| {
                placeholder::substitute(t, false, |n| match n {
                    SCRATCH => Fill::With(placeholder::escape(&into.quote(&dir))),
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
                .map_err(StrategyError::from)
        };
        let stderr = runner_os::temp::unnamed_file()
            .doing(|| "creating a file for the stderr of the strategy's commands".into())?;
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
            ready: None,
            input: 0,
            running: None,
            succeeded: 0,
            succeeded_on: Default::default(),
        };
        if let Some(setup) = spec.setup.as_deref() {
            command.once("setup", &compile(setup)?, 0)?;
        }
        Ok(command)
    }

    /// The process for `argv` rendered for `input`: env, cwd, stdin set,
    /// stdout to /dev/null, stderr to the file (emptied first).
    fn process(&mut self, argv: &[Template], input: u64) -> Result<std::process::Command> {
        self.process_under(None, argv, input)
    }

    /// [`Command::process`], run by `under` (a program and its options,
    /// which the rendered argv follows) when given.
    fn process_under(
        &mut self,
        under: Option<(&std::path::Path, Vec<std::ffi::OsString>)>,
        argv: &[Template],
        input: u64,
    ) -> Result<std::process::Command> {
        let argv: Vec<String> = argv.iter().map(|t| t.render(input)).collect();
        let Some(program) = argv.first() else {
            fail!("strategy `{}` has an empty argv", self.name);
        };
        let mut p = match under {
            Some((tool, options)) => {
                let mut p = std::process::Command::new(tool);
                p.args(options).args(&argv);
                // The counter's own options come from its command line
                // only: options from the environment could change its tool.
                p.env_remove("VALGRIND_OPTS");
                p
            }
            None => {
                let mut p = std::process::Command::new(program);
                p.args(&argv[1..]);
                p
            }
        };
        for (k, v) in &self.env {
            p.env(k, v.render(input));
        }
        if let Some(d) = &self.cwd {
            p.current_dir(d);
        }
        let stdin = match &self.stdin {
            Some(f) => {
                Stdio::from(File::open(f).doing(|| format!("opening stdin file {}", f.display()))?)
            }
            None => Stdio::null(),
        };
        self.stderr.set_len(0)?;
        self.stderr.seek(SeekFrom::Start(0))?;
        // Its own process group: everything the run starts can be killed
        // with it. posix_spawn sets it, so both arms pay the same.
        p.process_group(0)
            .stdin(stdin)
            .stdout(Stdio::null())
            .stderr(Stdio::from(self.stderr.try_clone()?));
        Ok(p)
    }

    fn shown(argv: &[Template], input: u64) -> String {
        let argv: Vec<String> = argv.iter().map(|t| t.render(input)).collect();
        runner_core::shell::join(&argv)
    }

    /// Runs `argv` once, untimed (setup, teardown, prepare); it must succeed.
    fn once(&mut self, what: &str, argv: &[Template], input: u64) -> Result<()> {
        let mut p = self.process(argv, input)?;
        let child = p.spawn().doing(|| {
            format!(
                "{what} command `{}` of strategy `{}` could not start",
                Self::shown(argv, input),
                self.name
            )
        })?;
        let Some(status) = run_out(child.id() as i32, self.timeout)? else {
            fail!(
                "{what} command `{}` of strategy `{}` was still going after timeout_s = {} s and was killed",
                Self::shown(argv, input),
                self.name,
                self.timeout.unwrap_or_default().as_secs_f64()
            );
        };
        if !succeeded(status) {
            fail!(
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
        // At offset 0 without moving the shared offset the children write at.
        let len = self.stderr.metadata().map_or(0, |m| m.len());
        let keep = len.min(64 * 1024);
        let mut bytes = vec![0; keep as usize];
        let n = self.stderr.read_at(&mut bytes, len - keep).unwrap_or(0);
        bytes.truncate(n);
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.lines().collect();
        if lines.is_empty() {
            return "; its stderr was empty".into();
        }
        let tail = &lines[lines.len().saturating_sub(STDERR_LINES)..];
        format!("; its last stderr lines:\n    {}", tail.join("\n    "))
    }

    /// The error for a run of the strategy's command killed at `timeout_s`.
    fn timed_out(&self, what: &str) -> StrategyError {
        StrategyError::Failed(format!(
            "{what} of command `{}` of strategy `{}` on input {} was still going after timeout_s = {} s and was killed, with every process it started",
            Self::shown(&self.argv, self.input),
            self.name,
            self.input,
            self.timeout.unwrap_or_default().as_secs_f64()
        ))
    }

    /// A run that failed stops the fork, unless failures are allowed. A
    /// failure after runs that succeeded, on this input or others, is
    /// said to be one that comes and goes: the remedy differs from a
    /// command that cannot run at all.
    fn check_status(&mut self, status: i32) -> Result<()> {
        if succeeded(status) {
            self.succeeded += 1;
            self.succeeded_on.insert(self.input);
            return Ok(());
        }
        if self.allow_failure {
            return Ok(());
        }
        let at_random = if self.succeeded_on.contains(&self.input) {
            "; it succeeded on this same input before, so it fails at random or on something besides its input (the time, a file, the network): set allow_failure = true in its table to time every run, failures included, or make it succeed every time".to_string()
        } else if self.succeeded > 0 {
            format!(
                "; {} earlier run{} succeeded, so it may fail at random or on some inputs only: set allow_failure = true in its table to time every run, failures included",
                self.succeeded,
                if self.succeeded == 1 { "" } else { "s" }
            )
        } else {
            " (set allow_failure = true to time runs that fail)".into()
        };
        fail!(
            "command `{}` of strategy `{}` ended with {} on input {}{at_random}{}",
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
            .doing(|| "a command ran without its set-up".into())?;
        let child = p.spawn().doing(|| {
            format!(
                "command `{}` of strategy `{}` could not start",
                Self::shown(&self.argv, self.input),
                self.name
            )
        })?;
        let pid = child.id() as i32;
        if !wait_exit(pid, self.timeout)? {
            finish(pid, false)?;
            return Err(self.timed_out("a timed run"));
        }
        self.running = Some(pid);
        Ok(())
    }

    fn after(&mut self) -> Result<Outcome> {
        let pid = self
            .running
            .take()
            .doing(|| "a command's result was read twice".into())?;
        let ended = finish(pid, true)?;
        let (status, usage) = (ended.status, ended.usage);
        self.check_status(status)?;
        Ok(Outcome {
            fingerprint: status as u64,
            usage: Some(usage),
            failed: None,
        })
    }

    fn observe(&mut self, input: u64) -> Result<Observation> {
        // `prepare` (in `before`) has a timeout_s of its own; the run's
        // starts at its spawn.
        self.before(input)?;
        let mut p = self
            .ready
            .take()
            .doing(|| "a command ran without its set-up".into())?;
        if self.compare_output {
            p.stdout(Stdio::piped());
        }
        let started = Instant::now();
        let mut child = p.spawn().doing(|| {
            format!(
                "command `{}` of strategy `{}` could not start",
                Self::shown(&self.argv, input),
                self.name
            )
        })?;
        let pid = child.id() as i32;
        let deadline = self.timeout.map(|t| started + t);
        let mut digest = StdoutDigest::default();
        let mut sink = |b: &[u8]| digest.push(b);
        let status = match child.stdout.take() {
            Some(pipe) => {
                let fd = pipe.as_fd();
                let read = reap::read_while_running(pid, fd, deadline, &mut sink);
                let exited = matches!(read, Ok(reap::Read::Exited));
                let status = finish(pid, exited)?.status;
                if read? == reap::Read::TimedOut {
                    return Err(self.timed_out("a run of the agreement check before timing"));
                }
                // What it printed before it and its processes were killed.
                let until = deadline.map_or(Instant::now() + DRAIN, |d| {
                    d.max(Instant::now()).min(Instant::now() + DRAIN)
                });
                if !reap::drain(fd, until, &mut sink)? {
                    fail!(
                        "the stdout of command `{}` of strategy `{}` stayed open after the command and every process it started had ended: a process outside runner's reach holds it",
                        Self::shown(&self.argv, input),
                        self.name
                    );
                }
                status
            }
            None => match run_out(pid, self.timeout)? {
                Some(status) => status,
                None => return Err(self.timed_out("a run of the agreement check before timing")),
            },
        };
        self.check_status(status)?;
        // A run allowed to fail that did is compared with nothing: such a
        // command may fail on some runs only.
        if !succeeded(status) {
            return Ok(Observation::Failed {
                code: describe(status),
            });
        }
        Ok(Observation::Command {
            status: describe(status),
            stdout: self.compare_output.then(|| digest.finish()),
        })
    }

    fn count(&mut self, input: u64, with: &CountWith) -> Result<Counted> {
        if let Some(prepare) = self.prepare.clone() {
            self.once("prepare", &prepare, input)?;
        }
        self.input = input;
        let dir = runner_os::temp::count_outputs()
            .doing(|| "creating a folder for valgrind's count files".into())?;
        let argv = std::mem::take(&mut self.argv);
        let options = counted::options(dir.path(), with.cache_sim);
        let p = self.process_under(Some((&with.valgrind, options)), &argv, input);
        self.argv = argv;
        let child = p?.spawn().doing(|| {
            format!(
                "valgrind ({}) could not start command `{}` of strategy `{}`",
                with.valgrind.display(),
                Self::shown(&self.argv, input),
                self.name
            )
        })?;
        // valgrind runs a program 20 to 50 times slower: its timeout is
        // that of a run a hundred times as long.
        let timeout = self.timeout.map(|t| t * COUNTED_SLOWER);
        let Some(status) = run_out(child.id() as i32, timeout)? else {
            return Err(self.timed_out("a counted run (under valgrind, allowed 100 x timeout_s)"));
        };
        self.check_status(status)?;
        let count = counted::read_all(dir.path()).map_err(|e| {
            StrategyError::Failed(format!(
                "the counted run of command `{}` of strategy `{}` on input {input}: {e}{}",
                Self::shown(&self.argv, input),
                self.name,
                self.stderr_tail()
            ))
        })?;
        Ok(Counted {
            count,
            fingerprint: status as u64,
        })
    }

    fn teardown(&mut self) -> Result<()> {
        if let Some(teardown) = self.teardown.take() {
            self.once("teardown", &teardown, 0)?;
        }
        if let Some(dir) = self.scratch.take() {
            let shown = dir.path().display().to_string();
            dir.close()
                .doing(|| format!("removing the scratch directory {shown}"))?;
        }
        Ok(())
    }
}

impl Drop for Command {
    fn drop(&mut self) {
        // A timed run whose `after` never came (the fork failed between).
        if let Some(pid) = self.running.take() {
            let _ = finish(pid, true);
        }
        // The scratch folder goes with its `TempDir`.
    }
}
