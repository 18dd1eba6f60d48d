//! No dead ends: what a run would meet is said by `check`, before the run,
//! with what to change; and a run that stops before any fork finished
//! leaves nothing that blocks the next exec.

use crate::common;
use common::*;

/// Two arms that print different lines.
const DIFFER: &str = r#"
name = "differ"
seed = 3
[strategies.one]
kind = "command"
argv = ["printf", "same\none\n"]
[strategies.two]
kind = "command"
argv = ["printf", "same\ntwo\n"]
[design]
baseline = "one"
treatment = "two"
forks = 2
warmup_pairs = 1
pairs = 3
[analysis]
resamples = 200
"#;

/// `check` made trial runs of both arms but exited 0 when their outputs
/// differed; exec then failed suggesting `--resume`, and after the spec
/// was fixed, `--resume` refused the changed spec and a new exec refused
/// the `.partial` folder.
#[test]
fn differing_outputs_stop_check_and_exec_naming_compare_output_and_leave_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "differ", DIFFER);
    let s = spec.to_str().unwrap();
    let o = run_in(t, &["check", s]);
    assert_refused(
        &o,
        &[
            "check's trial run found that baseline `one` (command) and treatment `two` (command) disagree",
            "first at line 2: \"one\" vs \"two\"",
            "set `compare_output = false` in [strategies.one] and [strategies.two]",
        ],
    );
    for quiet in [false, true] {
        let mut args = vec!["exec", s, "--out", "out"];
        if quiet {
            // No trial: the first fork finds it.
            args.push("--quiet");
        }
        let o = run_in(t, &args);
        let err = err_of(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("first at line 2: \"one\" vs \"two\""), "{err}");
        assert!(err.contains("`compare_output = false`"), "{err}");
        assert!(!err.contains("--resume"), "{err}");
        assert!(!t.join("out.partial").exists(), "{err}");
    }
    // Fixed as the message says, the same exec runs.
    let fixed = write_spec(
        t,
        "differ",
        &DIFFER
            .replace(
                "argv = [\"printf\", \"same\\none\\n\"]",
                "argv = [\"printf\", \"same\\none\\n\"]\ncompare_output = false",
            )
            .replace(
                "argv = [\"printf\", \"same\\ntwo\\n\"]",
                "argv = [\"printf\", \"same\\ntwo\\n\"]\ncompare_output = false",
            ),
    );
    let o = run_in(
        t,
        &["exec", fixed.to_str().unwrap(), "--out", "out", "--quiet"],
    );
    assert!(o.status.success(), "{}", err_of(&o));
}

/// Arms compared statement by statement said only "1 statements returned
/// results vs 2", with no hint how to fix it.
#[test]
fn a_different_number_of_statements_is_named_with_what_to_change() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(
        t,
        "statements",
        r#"
[database]
backend = "sqlite"
[strategies.one]
kind = "sql"
run = "SELECT 1 AS v"
[strategies.two]
kind = "sql"
run = "CREATE TEMP TABLE x AS SELECT 1 AS v; SELECT v FROM x"
[design]
baseline = "one"
treatment = "two"
"#,
    );
    let o = run_in(t, &["check", spec.to_str().unwrap()]);
    assert_refused(
        &o,
        &[
            "the first ran 1 statement (`SELECT 1 AS v`) and the second 2 statements (`CREATE TEMP TABLE x AS SELECT 1 AS v`, `SELECT v FROM x`)",
            "move statements that only prepare (CREATE, INSERT, SET) into `setup`",
        ],
    );
    assert!(!err_of(&o).contains("1 statements"), "{}", err_of(&o));
}

/// `check` spoke of "a local database backend" for commands that use none.
#[test]
fn check_mentions_no_database_when_none_is_used() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "same", &DIFFER.replace("same\\ntwo\\n", "same\\none\\n"));
    let o = run_in(t, &["check", spec.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", err_of(&o));
    assert!(out.contains("placement   "), "{out}");
    assert!(!out.to_lowercase().contains("database"), "{out}");
}

/// A percentage gate's self-check was sized "from a baseline run of about
/// 1.00 ms" right after the trial runs had measured 3.32 ms.
#[test]
fn check_sizes_the_gate_from_its_own_trial_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(
        t,
        "gate",
        &format!(
            "{}\n[gate]\nmax_slowdown = \"20%\"\n",
            DIFFER.replace("same\\ntwo\\n", "same\\none\\n")
        ),
    );
    let o = run_in(t, &["check", spec.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", err_of(&o));
    let trial = out
        .lines()
        .find(|l| l.starts_with("trial "))
        .unwrap_or_else(|| panic!("no trial line: {out}"));
    let baseline = trial
        .split("`one` ")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .unwrap()
        .trim();
    assert!(
        out.contains(&format!(
            "estimated here from the trial runs' median baseline run of {baseline}:"
        )),
        "{out}"
    );
    assert!(!out.contains("a guessed baseline run"), "{out}");
}
