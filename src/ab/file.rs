//! The experiment file `runner ab` writes: readable, commented, and the
//! same file a user would write by hand (docs/guide/experiment-file.md), so
//! that `runner exec` of it is the whole story and it can be edited and
//! committed. Pure: arguments in, TOML text out.

use super::error::AbError;
use crate::cli::ab::{AbArgs, DEFAULT_MAX_FORKS};
use std::path::Path;

/// One command as the file runs it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Arm {
    /// The strategy name: the command as typed, so the Finding reads
    /// "`gzip -2 -c` is slower than `gzip -1 -c`".
    pub name: String,
    /// The command line as typed.
    pub command: String,
}

/// What the file says, before it is text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    pub name: String,
    /// The baseline first, then each treatment.
    pub arms: Vec<Arm>,
    /// `[grid]` keys from -P and -L, each with its values as TOML text.
    pub grid: Vec<(String, Vec<String>)>,
}

/// A strategy name longer than this is given a short one instead
/// (`baseline`, `treatment`, `treatment-2`): a report's tables name arms.
const MAX_ARM_NAME: usize = 60;

/// At most this many values of one -P scan.
const MAX_SCAN: i64 = 100;

/// The plan of `args`: the experiment's name, its arms and its grid.
pub(crate) fn plan(args: &AbArgs) -> Result<Plan, AbError> {
    let name = match &args.name {
        Some(n) => check_name(n)?,
        None => derived_name(&args.commands),
    };
    let long = args
        .commands
        .iter()
        .any(|c| c.chars().count() > MAX_ARM_NAME);
    let arms = args
        .commands
        .iter()
        .enumerate()
        .map(|(i, c)| Arm {
            name: match (long, i) {
                (false, _) => c.trim().to_string(),
                (true, 0) => "baseline".into(),
                (true, 1) => "treatment".into(),
                (true, i) => format!("treatment-{i}"),
            },
            command: c.clone(),
        })
        .collect::<Vec<_>>();
    for (i, a) in arms.iter().enumerate().skip(1) {
        if arms[1..i].iter().any(|b| b.name == a.name) {
            return Err(AbError::TreatmentTwice {
                command: a.command.clone(),
            });
        }
    }
    for a in &arms {
        if a.command.trim().is_empty() {
            return Err(AbError::EmptyCommand);
        }
        if !args.shell {
            shlex::split(&a.command)
                .filter(|w| !w.is_empty())
                .ok_or_else(|| AbError::Unsplittable {
                    command: a.command.clone(),
                })?;
        }
    }
    if let Some(input) = args.input.as_deref().filter(|p| p.to_str().is_none()) {
        return Err(AbError::InputNotUtf8 {
            input: input.to_path_buf(),
        });
    }
    Ok(Plan {
        name,
        arms,
        grid: grid(args)?,
    })
}

/// `text` read back as `runner exec` will read it (without looking at this
/// machine's files and programs, which exec checks itself): a file that
/// would not read back is refused before it is written.
pub(crate) fn reads_back(spec: &Path, text: &str) -> Result<(), AbError> {
    runner_spec::parse_recorded(
        &spec.display().to_string(),
        text,
        &runner_spec::Recorded::default(),
    )
    .map(|_| ())
    .map_err(AbError::DoesNotReadBack)
}

/// `--name` as a folder name (it names the file and the report folder).
fn check_name(n: &str) -> Result<String, AbError> {
    let ok = !n.is_empty()
        && n != "."
        && n != ".."
        && !n.starts_with('.')
        && n.chars().all(|c| c.is_alphanumeric() || "-_.".contains(c));
    if ok {
        Ok(n.to_string())
    } else {
        Err(AbError::BadName {
            name: n.to_string(),
        })
    }
}

/// `gzip -1 -c` and `gzip -2 -c` -> `gzip-1-c-vs-gzip-2-c`, at most 80
/// characters.
pub(crate) fn derived_name(commands: &[String]) -> String {
    let slug = |c: &str| {
        let mut s = String::new();
        for ch in c.chars() {
            if ch.is_ascii_alphanumeric() || ch == '.' || ch == '_' {
                s.push(ch.to_ascii_lowercase());
            } else if !s.ends_with('-') && !s.is_empty() {
                s.push('-');
            }
        }
        s.trim_matches(['-', '.']).to_string()
    };
    let name: String = commands
        .iter()
        .map(|c| slug(c))
        .collect::<Vec<_>>()
        .join("-vs-")
        .chars()
        .take(80)
        .collect();
    let name = name.trim_matches(['-', '.']).to_string();
    if name.is_empty() {
        "ab".into()
    } else {
        name
    }
}

/// `[grid]` from `-P VAR MIN MAX` and each `-L VAR V1,V2`.
fn grid(args: &AbArgs) -> Result<Vec<(String, Vec<String>)>, AbError> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    if let Some(p) = &args.parameter_scan {
        let (var, min, max) = (&p[0], &p[1], &p[2]);
        let int = |s: &str| {
            s.parse::<i64>().map_err(|source| AbError::ScanNotInteger {
                var: var.clone(),
                min: min.clone(),
                max: max.clone(),
                got: s.to_string(),
                source,
            })
        };
        let (lo, hi) = (int(min)?, int(max)?);
        if lo > hi {
            return Err(AbError::ScanReversed {
                var: var.clone(),
                min: min.clone(),
                max: max.clone(),
            });
        }
        // In i128: the count of any two i64 ends fits, so no end can wrap it.
        let count = i128::from(hi) - i128::from(lo) + 1;
        if count > i128::from(MAX_SCAN) {
            return Err(AbError::ScanTooLong {
                var: var.clone(),
                min: min.clone(),
                max: max.clone(),
                count,
                limit: MAX_SCAN,
            });
        }
        out.push((var.clone(), (lo..=hi).map(|v| v.to_string()).collect()));
    }
    for pair in args.parameter_list.chunks(2) {
        let (var, values) = (&pair[0], &pair[1]);
        let values: Vec<String> = values.split(',').map(s).collect();
        out.push((var.clone(), values));
    }
    for (i, (var, _)) in out.iter().enumerate() {
        let word = !var.is_empty() && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !word {
            return Err(AbError::BadParameterName { var: var.clone() });
        }
        if out[..i].iter().any(|(v, _)| v == var) {
            return Err(AbError::ParameterTwice { var: var.clone() });
        }
    }
    Ok(out)
}

/// A TOML basic string on one line: `"` and `\` escaped, every control
/// character written as an escape, anything else (unicode too) as typed.
/// One line always, because the same text also names a table
/// (`[strategies."..."]`), where TOML allows no multi-line string, which is
/// what the `toml` crate writes for text holding a newline.
fn s(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A command's text as the file must hold it to run as typed: as in
/// hyperfine, only a -P/-L name (`vars`) is a placeholder, and runner's own
/// `{input}` and `{scratch}` stay ones too; any other `{name}` and a typed
/// `{{` are escaped, so exec does not read them as placeholders.
fn as_typed(text: &str, vars: &[String]) -> String {
    use runner_spec::placeholder::{scan, Piece, INPUT, SCRATCH};
    let mut out = String::with_capacity(text.len());
    for piece in scan(text) {
        match piece {
            Piece::Literal(r) => out.push_str(&text[r]),
            Piece::Escape(_) => out.push_str("{{{{"),
            Piece::Name(n, r) if n == INPUT || n == SCRATCH || vars.iter().any(|v| v == n) => {
                out.push_str(&text[r])
            }
            Piece::Name(_, r) => {
                out.push('{');
                out.push_str(&text[r]);
            }
        }
    }
    out
}

/// A TOML array of strings.
fn words(w: &[String]) -> String {
    format!(
        "[{}]",
        w.iter().map(|x| s(x)).collect::<Vec<_>>().join(", ")
    )
}

/// How a command line runs: its words (no shell), or /bin/sh -c.
fn run_keys(command: &str, shell: bool, vars: &[String]) -> (String, String) {
    if shell {
        ("shell".into(), s(&as_typed(command, vars)))
    } else {
        let w = shlex::split(command).unwrap_or_default();
        ("argv".into(), typed_words(&w, vars))
    }
}

/// A once-per-fork or per-run command (`setup`, `prepare`) as an argv.
fn aside(command: &str, shell: bool, vars: &[String]) -> String {
    match shlex::split(command) {
        Some(w) if !shell && !w.is_empty() => typed_words(&w, vars),
        _ => typed_words(&["sh".into(), "-c".into(), command.to_string()], vars),
    }
}

/// [`words`] of a command's words, each [`as_typed`].
fn typed_words(w: &[String], vars: &[String]) -> String {
    words(&w.iter().map(|x| as_typed(x, vars)).collect::<Vec<_>>())
}

/// `key = value   # comment`, the comments of a table aligned.
fn line(out: &mut String, key: &str, value: &str, comment: &str) {
    let assignment = format!("{key} = {value}");
    if comment.is_empty() {
        out.push_str(&format!("{assignment}\n"));
    } else {
        out.push_str(&format!("{assignment:<34} # {comment}\n"));
    }
}

/// `# key = value   # comment`: a key the file leaves out, shown with
/// what leaving it out means.
fn commented(out: &mut String, assignment: &str, comment: &str) {
    out.push_str(&format!("{:<34} # {comment}\n", format!("# {assignment}")));
}

/// The file's text; `invocation` is the `runner ab` command line that
/// wrote it (recorded in its header).
pub(crate) fn text(args: &AbArgs, plan: &Plan, invocation: &str) -> String {
    let name = &plan.name;
    let mut out = format!(
        "# Written by `runner ab`:\n#     {invocation}\n# Run it again (the report goes to reports/{name}/) with\n#     runner exec experiments/{name}.toml\n# Edit it freely: `runner ab` never replaces a file it did not write, nor\n# one changed since. Every key: docs/reference.md.\n"
    );
    let commands: Vec<String> = plan.arms.iter().map(|a| a.command.clone()).collect();
    let vars: Vec<String> = plan.grid.iter().map(|(v, _)| v.clone()).collect();
    line(&mut out, "name", &s(name), "");
    line(&mut out, "title", &s(&commands.join(" vs ")), "");
    out.push_str("# seed = 42                      # fixes schedule and inputs; omitted, drawn per run (in run.json)\n");
    for (i, arm) in plan.arms.iter().enumerate() {
        let first = i == 0;
        if i > 0 && plan.arms[..i].iter().any(|a| a.name == arm.name) {
            continue; // the baseline again: an A/A comparison of one strategy
        }
        out.push_str(&format!(
            "\n# {}\n[strategies.{}]\n",
            match i {
                0 => "The baseline: the first command.".to_string(),
                1 if plan.arms.len() == 2 =>
                    "The treatment, timed in pairs with the baseline.".into(),
                _ => format!("Treatment {i}, timed in pairs with the baseline."),
            },
            s(&arm.name)
        ));
        line(&mut out, "kind", &s("command"), "");
        let (key, value) = run_keys(&arm.command, args.shell, &vars);
        let how = match (first, args.shell) {
            (false, _) => "",
            (true, false) => "no shell: the words of the command line",
            (true, true) => "run by /bin/sh -c, inside the timed region",
        };
        line(&mut out, &key, &value, how);
        if let Some(input) = &args.input {
            let comment = if first {
                "every run reads this file as stdin"
            } else {
                ""
            };
            line(
                &mut out,
                "stdin",
                &s(&as_typed(&input.to_string_lossy(), &vars)),
                comment,
            );
        }
        if let Some(setup) = &args.setup {
            let comment = if first { "once per fork, untimed" } else { "" };
            line(&mut out, "setup", &aside(setup, args.shell, &vars), comment);
        }
        let prepare = match args.prepare.len() {
            0 => None,
            1 => args.prepare.first(),
            _ => args.prepare.get(i),
        };
        if let Some(p) = prepare {
            let comment = if first {
                "before every run, untimed"
            } else {
                ""
            };
            line(&mut out, "prepare", &aside(p, args.shell, &vars), comment);
        }
        if !args.compare_output {
            let comment = if first {
                "the commands may print different bytes; true checks they print the same"
            } else {
                ""
            };
            line(&mut out, "compare_output", "false", comment);
        }
    }
    out.push_str("\n[design]\n");
    line(&mut out, "baseline", &s(&plan.arms[0].name), "");
    let treatments: Vec<String> = plan.arms[1..].iter().map(|a| a.name.clone()).collect();
    if treatments.len() == 1 {
        line(&mut out, "treatment", &s(&treatments[0]), "");
    } else {
        line(
            &mut out,
            "treatments",
            &words(&treatments),
            "each compared with the baseline",
        );
    }
    match args.warmup {
        Some(n) => line(
            &mut out,
            "warmup_pairs",
            &n.to_string(),
            "pairs per fork before the measured ones, not analysed",
        ),
        None => commented(
            &mut out,
            "warmup_pairs = 3",
            "warm-up pairs per fork; left out, chosen from trial runs",
        ),
    }
    match args.runs {
        Some(n) => line(
            &mut out,
            "pairs",
            &n.to_string(),
            "measured pairs per fork, the two runs of each in a random order",
        ),
        None => commented(
            &mut out,
            "pairs = 30",
            "measured pairs per fork; left out, about 0.5 s of runs, at least 5",
        ),
    }
    if args.instructions {
        line(
            &mut out,
            "measure",
            "[\"time\", \"instructions\"]",
            "also count instructions, under valgrind, in counted pairs of their own",
        );
        commented(
            &mut out,
            "counted_pairs = 3",
            "counted pairs per fork after the timed ones; left out, 1",
        );
    }
    out.push_str(
        "\n# A sequential design: forks (fresh processes) run until the answer is known.\n[design.stop]\n",
    );
    line(
        &mut out,
        "decide",
        "true",
        "stop once the ratio's interval excludes 1: faster or slower",
    );
    commented(
        &mut out,
        "half_width = \"2%\"",
        "also stop once within 2 %; `runner check` says if this machine can",
    );
    if args.runs.is_some() {
        line(&mut out, "min_forks", "3", "");
    } else {
        commented(
            &mut out,
            "min_forks = 3",
            "left out, chosen with the pairs: 3, more when a fork's pairs are few and long",
        );
    }
    line(
        &mut out,
        "max_forks",
        &args.max_forks.max(3).to_string(),
        "",
    );
    if !plan.grid.is_empty() {
        out.push_str("\n# Every combination is a comparison of its own; {NAME} in a command takes its value.\n[grid]\n");
        for (var, values) in &plan.grid {
            line(&mut out, var, &format!("[{}]", values.join(", ")), "");
        }
    }
    out
}

/// The `runner ab` command line of `args`, quoted for a shell: what the
/// file's header records.
pub(crate) fn invocation(args: &AbArgs) -> String {
    let mut argv: Vec<String> = vec!["runner".into(), "ab".into()];
    let mut opt = |k: &str, v: Option<String>| {
        argv.push(k.into());
        argv.extend(v);
    };
    if let Some(n) = &args.name {
        opt("--name", Some(n.clone()));
    }
    if args.shell {
        opt("--shell", None);
    }
    if let Some(c) = &args.setup {
        opt("--setup", Some(c.clone()));
    }
    for c in &args.prepare {
        opt("--prepare", Some(c.clone()));
    }
    if let Some(f) = &args.input {
        opt("--input", Some(f.to_string_lossy().into_owned()));
    }
    if let Some(n) = args.warmup {
        opt("--warmup", Some(n.to_string()));
    }
    if let Some(n) = args.runs {
        opt("--runs", Some(n.to_string()));
    }
    if args.max_forks != DEFAULT_MAX_FORKS {
        opt("--max-forks", Some(args.max_forks.to_string()));
    }
    if let Some(p) = &args.parameter_scan {
        opt("-P", None);
        argv.extend(p.iter().cloned());
    }
    for pair in args.parameter_list.chunks(2) {
        argv.push("-L".into());
        argv.extend(pair.iter().cloned());
    }
    if args.compare_output {
        argv.push("--compare-output".into());
    }
    if args.instructions {
        argv.push("--instructions".into());
    }
    argv.extend(args.commands.iter().cloned());
    runner_core::shell::join(&argv)
}
