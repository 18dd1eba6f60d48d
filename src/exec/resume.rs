//! What a resumed run must agree with, and the command that resumes one.

use super::error::ExecError;
use super::ExecArgs;
use runner_core::error::Result;
use runner_folder::verify::differing_keys;
use runner_folder::Invocation;
use runner_spec::Experiment;
use std::path::Path;

/// A resumed run must run the spec it was started with (both as recorded:
/// passwords redacted, see `redact`).
pub(crate) fn check_same_spec(started: &Experiment, now: &Experiment) -> Result<()> {
    let a = serde_json::to_value(started).expect("experiment serializes");
    let b = serde_json::to_value(now).expect("experiment serializes");
    let mut keys = Vec::new();
    differing_keys(&a, &b, "", &mut keys);
    if keys.is_empty() {
        Ok(())
    } else {
        Err(ExecError::SpecChanged { keys }.into())
    }
}

/// A resumed run must measure on the database it started on: the same
/// backend and, for PostgreSQL, the same host, port and database. (Mixing
/// would put forks of two systems into one cell.)
pub(crate) fn check_same_database(
    started: Option<&serde_json::Value>,
    now: Option<&serde_json::Value>,
) -> Result<()> {
    let describe = |v: Option<&serde_json::Value>| -> String {
        let Some(v) = v else {
            return "no database".into();
        };
        match v["postgres"].as_object() {
            Some(pg) => format!(
                "postgres at {}:{} database {}",
                pg.get("host").map_or(String::new(), |h| h
                    .as_str()
                    .unwrap_or_default()
                    .to_string()),
                pg.get("port").map_or(String::new(), |p| p.to_string()),
                pg.get("database").map_or(String::new(), |d| d.to_string()),
            ),
            None => v["backend"].as_str().unwrap_or("unknown").to_string(),
        }
    };
    let (a, b) = (describe(started), describe(now));
    if a == b {
        Ok(())
    } else {
        Err(ExecError::OtherDatabase { started: a, now: b }.into())
    }
}

/// The command that finishes this run: this invocation's spec, `--set`
/// flags and `--quiet`, the output folder it writes and the partial folder
/// it uses (not what the run was first started with: a moved folder or a
/// different `--out` is what the next attempt needs). Quoted for a POSIX
/// shell; a password in a `--set` is shown as `***`, with a note to put it
/// back.
pub(crate) fn resume_command(args: &ExecArgs, final_dir: &Path, partial: &Path) -> String {
    let resume = ExecArgs {
        out: Some(final_dir.to_path_buf()),
        resume: Some(partial.to_path_buf()),
        shards: None,
        ..args.clone()
    };
    let argv = Invocation::Exec(resume).to_argv();
    let line = runner_core::shell::join(&argv);
    let shown = runner_core::redact::secrets(&line);
    if shown == line {
        line
    } else {
        format!(
            "{shown} (put the password where it shows {}, or pass the URL in RUNNER_DATABASE_URL)",
            runner_core::redact::MASK
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(set: &[&str], quiet: bool) -> ExecArgs {
        ExecArgs {
            set: set.iter().map(|s| s.to_string()).collect(),
            quiet,
            ..ExecArgs::of_spec("experiments/my spec.toml")
        }
    }

    #[test]
    fn names_the_folders_used_and_quotes_for_a_shell() {
        let cmd = resume_command(
            &args(&["grid.delay_us=[0, 5]", "title=it's"], true),
            Path::new("out dir"),
            Path::new("moved.partial"),
        );
        assert_eq!(
            cmd,
            "runner exec 'experiments/my spec.toml' --out 'out dir' --set 'grid.delay_us=[0, 5]' --set \"title=it's\" --quiet --resume moved.partial"
        );
        // What a shell makes of it is the argv runner needs.
        let words = shlex::split(&cmd).unwrap();
        assert_eq!(words[2], "experiments/my spec.toml");
        assert_eq!(words[6], "grid.delay_us=[0, 5]");
        assert_eq!(words.last().unwrap(), "moved.partial");
    }

    #[test]
    fn a_password_in_a_flag_is_not_printed() {
        let cmd = resume_command(
            &args(&["database.url=postgres://u:hunter2@h/db"], false),
            Path::new("o"),
            Path::new("o.partial"),
        );
        assert!(!cmd.contains("hunter2"), "{cmd}");
        assert!(cmd.contains("postgres://u:***@h/db"), "{cmd}");
        assert!(cmd.contains("RUNNER_DATABASE_URL"), "{cmd}");
    }

    #[test]
    fn spec_differences_name_the_keys() {
        let text =
            "[strategies.a]\nkind = \"noop\"\n[design]\nbaseline = \"a\"\ntreatment = \"a\"\n";
        let a = runner_spec::parse_recorded("x.toml", text, &Default::default()).unwrap();
        let mut b = a.clone();
        b.design.pad_baseline = false;
        b.analysis.resamples = 300;
        let e = check_same_spec(&a, &b).unwrap_err().to_string();
        assert!(
            e.contains("(analysis.resamples, design.pad_baseline differ)"),
            "{e}"
        );
        check_same_spec(&a, &a).unwrap();
    }
}
