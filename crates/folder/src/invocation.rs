//! The command that made a run's folder: the arguments of `exec`, `merge`
//! or `analyze` exactly as clap parsed them (these structs are the command
//! line's own definition, `cli` embeds them), recorded once in run.json as
//! `invocation`, and rendered back by one [`Invocation::to_argv`]. Resume's
//! command, the report's Reproduce text and merge's `--shard` commands are
//! this struct, changed where they differ and rendered; none re-parses an
//! argv.
//!
//! Older run.json files recorded the raw argv as `command_line`; their
//! migration (`output::format`) parses it once, with these same
//! definitions, through [`argv_json`] (an argv that is not a runner command
//! line is a bad run.json, exit 2).

use clap::{Args, Parser, Subcommand};
use serde::{Deserialize, Deserializer, Serialize};
use std::path::PathBuf;

use super::{ArgvError, ShardFlagError};

/// `runner exec`.
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
pub struct ExecArgs {
    /// The experiment file (TOML), e.g. experiments/aa.toml.
    #[arg(value_name = "SPEC")]
    pub spec: PathBuf,
    /// Output folder, default reports/<name>/ (name from the file). A finished run replaces
    /// the folder, and the report in it.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Override any key of the file, typed like the file: --set design.forks=2,
    /// --set 'grid.delay_us=[0, 5]' (repeatable; recorded, and repeated in the report's
    /// Reproduce command).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Finish an interrupted or failed run kept in DIR.partial/: runs only its missing jobs,
    /// with their original seeds (the error message of the failed run prints this command).
    #[arg(long, value_name = "DIR.partial")]
    pub resume: Option<PathBuf>,
    /// No progress on stderr (the finding still goes to stdout).
    #[arg(long)]
    pub quiet: bool,
    /// Run only shard I of N (1 <= I <= N) of the same seeded job list, into a shard folder
    /// (default reports/<name>-shard-I-of-N/) that `runner merge` joins with the others.
    /// Without it, a Slurm array task (SLURM_ARRAY_TASK_ID) or a Kubernetes Indexed Job
    /// (JOB_COMPLETION_INDEX, with --shards) is a shard; --shard 1/1 runs everything.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<(u32, u32)>,
    /// The number of shards when the index comes from JOB_COMPLETION_INDEX (a Kubernetes
    /// Indexed Job's completions).
    #[arg(long, value_name = "N")]
    pub shards: Option<u32>,
    /// Refuse (exit 2) an experiment file without `[gate]`: in CI, a file
    /// that lost its gate must not read as a pass.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gate_required: bool,
    /// Exit codes for `git bisect run` (needs a [gate]): 0 the gate passes, 1 a regression,
    /// 125 (skip this commit) inconclusive or a failed run, 128 (stop bisecting) bad input.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bisect: bool,
    /// An inconclusive gate runs once more, into the same folder, with the design its verdict
    /// names (more forks, more pairs, or both; twice the forks when it names none), and exits
    /// with that run's verdict: 4 again if it is still inconclusive.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub retry_inconclusive: bool,
}

impl ExecArgs {
    /// `runner exec SPEC` with no flags.
    pub fn of_spec(spec: impl Into<PathBuf>) -> ExecArgs {
        ExecArgs {
            spec: spec.into(),
            out: None,
            set: Vec::new(),
            resume: None,
            quiet: false,
            shard: None,
            shards: None,
            gate_required: false,
            bisect: false,
            retry_inconclusive: false,
        }
    }
}

/// The flags of exec that `runner check` takes too (`commands::preflight`),
/// so the exact command line a CI job runs can be tried first; `--resume`
/// is exec's alone.
#[derive(Debug, Clone, Default, Args)]
pub struct CheckFlags {
    /// As for exec: refuse (exit 2) an experiment file without `[gate]`.
    #[arg(long)]
    pub gate_required: bool,
    /// As for exec: the run's exit codes for `git bisect run` (needs a [gate]).
    #[arg(long)]
    pub bisect: bool,
    /// As for exec: an inconclusive gate runs once more with the design it names.
    #[arg(long)]
    pub retry_inconclusive: bool,
    /// As for exec: the plan of shard I of N only.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<(u32, u32)>,
    /// As for exec: the number of shards when the index comes from JOB_COMPLETION_INDEX.
    #[arg(long, value_name = "N")]
    pub shards: Option<u32>,
    /// As for exec: the output folder exec would write.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Accepted so exec's command line runs unchanged; check prints its plan either way.
    #[arg(long)]
    pub quiet: bool,
}

/// `runner merge`.
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
pub struct MergeArgs {
    /// The merged report folder (replaced like exec's --out: only if it is runner's).
    #[arg(value_name = "OUT")]
    pub out: PathBuf,
    /// The shard folders, e.g. shards/1 shards/2 (each a finished `exec --shard` folder).
    #[arg(value_name = "SHARD_DIR", required = true, num_args = 1..)]
    pub shards: Vec<PathBuf>,
    /// Merge even when shards are missing; the report then names every missing job.
    #[arg(long)]
    pub allow_missing: bool,
}

const BASELINE: &str = "baseline";
const TREATMENT: &str = "treatment";
const RESAMPLES: u32 = 2000;
const CONFIDENCE: f64 = 0.95;

/// `runner analyze`.
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
pub struct AnalyzeArgs {
    /// The CSV of pairs, one row per pair, with a header.
    #[arg(value_name = "PAIRS.csv")]
    pub csv: PathBuf,
    /// Output folder, default reports/<file stem>/; replaced only if runner wrote it.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Master seed of the bootstrap (default: drawn, printed in the report and run.json).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// The baseline arm's name in the report.
    #[arg(long, value_name = "NAME", default_value = BASELINE)]
    pub baseline: String,
    /// The treatment arm's name; the same as --baseline makes it an A/A.
    #[arg(long, value_name = "NAME", default_value = TREATMENT)]
    pub treatment: String,
    /// The report's title, default "<file stem> (imported)".
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
    /// Bootstrap resamples per interval (100 to 100000).
    #[arg(long, value_name = "N", default_value_t = RESAMPLES)]
    pub resamples: u32,
    /// Confidence of every interval (0.5 to 0.999).
    #[arg(long, value_name = "C", default_value_t = CONFIDENCE)]
    pub confidence: f64,
    /// The step of the clock that timed the pairs, in ns (e.g. 20): every D is
    /// dithered within it before its medians, as `report` does for runner's own
    /// runs (docs/guide/statistics.md, "Ties and the clock's steps"). 0, the
    /// default, takes the times as exact; at most 1000000 (1 ms).
    #[arg(long, value_name = "NS", default_value_t = 0)]
    pub clock_resolution_ns: u64,
    /// Nothing on stderr but errors (the seed a drawn run used is in
    /// run.json); the summary still goes to stdout, as with exec.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub quiet: bool,
}

/// The command that made a run's folder, as run.json records it.
#[derive(Debug, Clone, PartialEq, Subcommand, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "lowercase")]
pub enum Invocation {
    Exec(ExecArgs),
    Merge(MergeArgs),
    Analyze(AnalyzeArgs),
}

/// The parser of a recorded argv: the same definitions as the live one.
#[derive(Debug, Parser)]
#[command(name = "runner")]
struct Recorded {
    #[command(subcommand)]
    invocation: Invocation,
}

/// Parses `I/N` (clap's value parser for `--shard`).
pub fn parse_shard(text: &str) -> Result<(u32, u32), ShardFlagError> {
    let fail = || ShardFlagError { text: text.into() };
    let (i, n) = text.split_once('/').ok_or_else(fail)?;
    let (i, n): (u32, u32) = (
        i.trim().parse().map_err(|_| fail())?,
        n.trim().parse().map_err(|_| fail())?,
    );
    if i == 0 || n == 0 || i > n {
        return Err(fail());
    }
    Ok((i, n))
}

/// A path as text: recorded and printed paths are text (run.json is JSON),
/// so a byte that is not UTF-8 shows as U+FFFD rather than failing the run.
fn text(p: &std::path::Path) -> String {
    p.to_string_lossy().into_owned()
}

/// An argv being rendered: options first, then the positionals (after `--`
/// when one starts with `-`, which clap would otherwise take for a flag).
#[derive(Default)]
struct Argv {
    options: Vec<String>,
    positionals: Vec<String>,
}

impl Argv {
    fn positional(&mut self, v: String) {
        self.positionals.push(v);
    }

    /// `--name value`, or `--name=value` for a value that starts with `-`.
    fn option(&mut self, name: &str, v: String) {
        if v.starts_with('-') {
            self.options.push(format!("--{name}={v}"));
        } else {
            self.options.push(format!("--{name}"));
            self.options.push(v);
        }
    }

    fn flag(&mut self, name: &str, on: bool) {
        if on {
            self.options.push(format!("--{name}"));
        }
    }

    /// `runner SUBCOMMAND ...`: positionals first when that is unambiguous
    /// (how people write it and how the report has always printed it).
    fn finish(self, sub: &str) -> Vec<String> {
        let mut out = vec!["runner".to_string(), sub.to_string()];
        if self.positionals.iter().any(|p| p.starts_with('-')) {
            out.extend(self.options);
            out.push("--".into());
            out.extend(self.positionals);
        } else {
            out.extend(self.positionals);
            out.extend(self.options);
        }
        out
    }
}

impl Invocation {
    /// The argv (`runner SUBCOMMAND ...`) that clap parses back into this
    /// invocation; arguments at their default are left out.
    pub fn to_argv(&self) -> Vec<String> {
        let mut a = Argv::default();
        match self {
            Invocation::Exec(e) => {
                a.positional(text(&e.spec));
                if let Some(o) = &e.out {
                    a.option("out", text(o));
                }
                if let Some((i, n)) = e.shard {
                    a.option("shard", format!("{i}/{n}"));
                }
                if let Some(n) = e.shards {
                    a.option("shards", n.to_string());
                }
                for s in &e.set {
                    a.option("set", s.clone());
                }
                a.flag("quiet", e.quiet);
                a.flag("gate-required", e.gate_required);
                a.flag("bisect", e.bisect);
                a.flag("retry-inconclusive", e.retry_inconclusive);
                if let Some(r) = &e.resume {
                    a.option("resume", text(r));
                }
                a.finish("exec")
            }
            Invocation::Merge(m) => {
                a.positional(text(&m.out));
                for s in &m.shards {
                    a.positional(text(s));
                }
                a.flag("allow-missing", m.allow_missing);
                a.finish("merge")
            }
            Invocation::Analyze(z) => {
                a.positional(text(&z.csv));
                if let Some(o) = &z.out {
                    a.option("out", text(o));
                }
                if z.baseline != BASELINE {
                    a.option("baseline", z.baseline.clone());
                }
                if z.treatment != TREATMENT {
                    a.option("treatment", z.treatment.clone());
                }
                if let Some(t) = &z.title {
                    a.option("title", t.clone());
                }
                if z.resamples != RESAMPLES {
                    a.option("resamples", z.resamples.to_string());
                }
                if z.confidence != CONFIDENCE {
                    a.option("confidence", z.confidence.to_string());
                }
                if let Some(s) = z.seed {
                    a.option("seed", s.to_string());
                }
                if z.clock_resolution_ns != 0 {
                    a.option("clock-resolution-ns", z.clock_resolution_ns.to_string());
                }
                a.flag("quiet", z.quiet);
                a.finish("analyze")
            }
        }
    }

    /// Parses an argv (`runner SUBCOMMAND ...`; the program name is
    /// ignored) with the command line's own definitions.
    pub fn from_argv<S: AsRef<str>>(argv: &[S]) -> Result<Invocation, ArgvError> {
        let words = std::iter::once("runner").chain(argv.iter().skip(1).map(|a| a.as_ref()));
        Recorded::try_parse_from(words)
            .map(|r| r.invocation)
            .map_err(ArgvError)
    }

    /// What run.json records: every text with its password replaced by
    /// `***` (`redact`), paths as text.
    pub fn recorded(&self) -> Invocation {
        let s = |t: &str| runner_core::redact::secrets(t);
        let p = |t: &std::path::Path| PathBuf::from(s(&text(t)));
        match self {
            Invocation::Exec(e) => Invocation::Exec(ExecArgs {
                spec: p(&e.spec),
                out: e.out.as_deref().map(p),
                set: e.set.iter().map(|v| s(v)).collect(),
                resume: e.resume.as_deref().map(p),
                ..e.clone()
            }),
            Invocation::Merge(m) => Invocation::Merge(MergeArgs {
                out: p(&m.out),
                shards: m.shards.iter().map(|d| p(d)).collect(),
                ..m.clone()
            }),
            Invocation::Analyze(z) => Invocation::Analyze(AnalyzeArgs {
                csv: p(&z.csv),
                out: z.out.as_deref().map(p),
                baseline: s(&z.baseline),
                treatment: s(&z.treatment),
                title: z.title.as_deref().map(s),
                ..z.clone()
            }),
        }
    }

    /// `exec`, `merge` or `analyze`.
    pub fn command(&self) -> &'static str {
        match self {
            Invocation::Exec(_) => "exec",
            Invocation::Merge(_) => "merge",
            Invocation::Analyze(_) => "analyze",
        }
    }
}

/// Reads run.json's `invocation`, the key named in its error: serde's
/// own error for an internally tagged enum names no key.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Invocation, D::Error> {
    use serde::de::Error;
    let value = serde_json::Value::deserialize(d)?;
    Invocation::deserialize(value).map_err(|e| D::Error::custom(format!("invocation: {e}")))
}

/// The JSON of the invocation an older run.json's raw argv
/// (`command_line`) records, for `output::format`'s migration; the error is
/// a sentence naming the argv.
pub fn argv_json(argv: &[String]) -> Result<serde_json::Value, crate::output::format::StepError> {
    let parsed = Invocation::from_argv(argv).map_err(|e| {
        crate::output::format::StepError::ArgvNotACommand {
            line: runner_core::shell::join(argv),
            why: e.to_string(),
        }
    })?;
    Ok(serde_json::to_value(parsed).expect("an invocation serializes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec(spec: &str) -> ExecArgs {
        ExecArgs::of_spec(spec)
    }

    fn round_trips(inv: Invocation) {
        let argv = inv.to_argv();
        assert_eq!(argv[0], "runner");
        assert_eq!(
            Invocation::from_argv(&argv).ok(),
            Some(inv.clone()),
            "{argv:?}"
        );
        // As a shell would split the printed line, too.
        let words = shlex::split(&runner_core::shell::join(&argv)).unwrap();
        assert_eq!(Invocation::from_argv(&words).ok(), Some(inv), "{words:?}");
    }

    #[test]
    fn to_argv_round_trips_through_clap() {
        round_trips(Invocation::Exec(exec("experiments/aa.toml")));
        round_trips(Invocation::Exec(ExecArgs {
            out: Some("reports/my out".into()),
            set: vec![
                "grid.delay_us=[0, 5]".into(),
                "title=it's".into(),
                "-x=1".into(),
                "design.forks=2".into(),
            ],
            resume: Some("reports/my out.partial".into()),
            quiet: true,
            shard: Some((2, 4)),
            shards: Some(4),
            gate_required: true,
            bisect: true,
            retry_inconclusive: true,
            ..exec("experiments/my spec.toml")
        }));
        // A positional that looks like a flag goes after `--`.
        round_trips(Invocation::Exec(ExecArgs {
            out: Some("-o".into()),
            ..exec("-spec.toml")
        }));
        round_trips(Invocation::Merge(MergeArgs {
            out: "reports/m".into(),
            shards: vec!["s/1".into(), "s/2".into(), "-3".into()],
            allow_missing: true,
        }));
        round_trips(Invocation::Merge(MergeArgs {
            out: "reports/m".into(),
            shards: vec!["s/1".into()],
            allow_missing: false,
        }));
        let analyze = AnalyzeArgs {
            csv: "data/pairs.csv".into(),
            out: None,
            seed: None,
            baseline: BASELINE.into(),
            treatment: TREATMENT.into(),
            title: None,
            resamples: RESAMPLES,
            confidence: CONFIDENCE,
            clock_resolution_ns: 0,
            quiet: false,
        };
        round_trips(Invocation::Analyze(analyze.clone()));
        round_trips(Invocation::Analyze(AnalyzeArgs {
            out: Some("reports/x".into()),
            seed: Some(42),
            baseline: "old".into(),
            treatment: "new build".into(),
            title: Some("JMH: old vs new".into()),
            resamples: 500,
            confidence: 0.9,
            clock_resolution_ns: 20,
            quiet: true,
            ..analyze
        }));
    }

    #[test]
    fn defaults_are_left_out_and_positionals_come_first() {
        let inv = Invocation::Exec(ExecArgs {
            out: Some("reports/aa".into()),
            set: vec!["design.forks=2".into()],
            quiet: true,
            ..exec("experiments/aa.toml")
        });
        assert_eq!(
            runner_core::shell::join(&inv.to_argv()),
            "runner exec experiments/aa.toml --out reports/aa --set 'design.forks=2' --quiet"
        );
    }

    #[test]
    fn bisect_is_recorded_only_when_given() {
        let plain = serde_json::to_value(Invocation::Exec(exec("a.toml"))).unwrap();
        assert!(plain.get("bisect").is_none(), "{plain}");
        let inv = Invocation::Exec(ExecArgs {
            bisect: true,
            ..exec("a.toml")
        });
        let json = serde_json::to_value(&inv).unwrap();
        assert_eq!(json["bisect"], true);
        assert_eq!(serde_json::from_value::<Invocation>(json).unwrap(), inv);
        assert_eq!(
            runner_core::shell::join(&inv.to_argv()),
            "runner exec a.toml --bisect"
        );
    }

    #[test]
    fn a_recorded_argv_parses_into_the_struct() {
        let old = [
            "./target/release/runner",
            "exec",
            "experiments/validity.toml",
            "--out",
            "reports/validity-sqlite",
            "--set",
            "grid.delay_us=[0, 5, 25]",
            "--quiet",
            "--set=design.forks=3",
        ];
        assert_eq!(
            Invocation::from_argv(&old).ok(),
            Some(Invocation::Exec(ExecArgs {
                out: Some("reports/validity-sqlite".into()),
                set: vec!["grid.delay_us=[0, 5, 25]".into(), "design.forks=3".into()],
                quiet: true,
                ..exec("experiments/validity.toml")
            }))
        );
        let e = Invocation::from_argv(&["runner", "exec", "a.toml", "--bogus"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--bogus"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        assert!(Invocation::from_argv(&["runner", "report", "r"]).is_err());
    }

    #[test]
    fn the_record_hides_passwords() {
        let inv = Invocation::Exec(ExecArgs {
            set: vec!["database.url=postgres://u:hunter2@h/db".into()],
            ..exec("a.toml")
        });
        let json = serde_json::to_string(&inv.recorded()).unwrap();
        assert!(!json.contains("hunter2"), "{json}");
        assert!(json.contains("postgres://u:***@h/db"), "{json}");
    }
}
