//! The file `runner ab` writes, checked by the validator exec uses.

use super::file::{derived_name, invocation, plan, text};
use crate::cli::ab::AbArgs;
use clap::Parser;

#[derive(Parser)]
struct Top {
    #[command(flatten)]
    ab: AbArgs,
}

fn args(argv: &[&str]) -> AbArgs {
    Top::try_parse_from(std::iter::once("ab").chain(argv.iter().copied()))
        .unwrap()
        .ab
}

/// The text `runner ab ARGV` writes, validated as a recorded spec is
/// (without looking at this machine's files and programs).
fn written(argv: &[&str]) -> (String, crate::spec::Experiment) {
    let a = args(argv);
    let p = plan(&a).unwrap();
    let t = text(&a, &p, &invocation(&a));
    let exp = crate::spec::parse_recorded(
        &format!("experiments/{}.toml", p.name),
        &t,
        &crate::spec::Recorded::default(),
    )
    .unwrap_or_else(|e| panic!("{e}\n{t}"));
    (t, exp)
}

#[test]
fn names_come_from_the_commands_unless_given() {
    let c = |v: &[&str]| derived_name(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert_eq!(c(&["gzip -1 -c", "gzip -2 -c"]), "gzip-1-c-vs-gzip-2-c");
    assert_eq!(c(&["sleep 0.004", "./x"]), "sleep-0.004-vs-x");
    assert_eq!(c(&["/", "|"]), "vs");
    assert_eq!(c(&["", ""]), "vs");
    assert!(c(&[&"a".repeat(100), "b"]).len() <= 80);
    assert!(plan(&args(&["--name", "../x", "a", "b"])).is_err());
    assert!(plan(&args(&["--name", ".hidden", "a", "b"])).is_err());
    assert_eq!(plan(&args(&["--name", "q", "a", "b"])).unwrap().name, "q");
}

#[test]
fn two_commands_are_a_sequential_ab_of_command_strategies() {
    let (t, exp) = written(&["--name", "q", "sleep 0.004", "sleep 0.002"]);
    assert!(
        t.starts_with(
            "# Written by `runner ab`:\n#     runner ab --name q 'sleep 0.004' 'sleep 0.002'\n"
        ),
        "{t}"
    );
    let d = &exp.design;
    assert_eq!(
        (d.baseline.as_str(), d.treatment.as_str()),
        ("sleep 0.004", "sleep 0.002")
    );
    // The counts of a fork's pairs are left to the trial runs, and the
    // stop is on the direction alone (a precision target this machine
    // may not reach is the user's to add).
    assert_eq!(
        d.runs_per_fork,
        Some(crate::spec::RunsPerFork {
            warmup_pairs: true,
            pairs: true,
            chosen: None
        })
    );
    let stop = d.stop.expect("a sequential design");
    assert!(stop.decide && stop.half_width.is_none());
    assert_eq!((stop.min_forks.get(), stop.max_forks.get()), (3, 10));
    let json = serde_json::to_value(&exp.strategies["sleep 0.004"])
        .unwrap()
        .to_string();
    assert!(json.contains("\"sleep\",\"0.004\""), "{json}");
    assert!(exp.grid.params.is_empty());
}

#[test]
fn options_become_keys() {
    let (t, exp) = written(&[
        "--setup",
        "make -s",
        "--prepare",
        "sync",
        "--input",
        "in.txt",
        "--warmup",
        "7",
        "--runs",
        "11",
        "--max-forks",
        "5",
        "--compare-output",
        "-L",
        "level",
        "2,6",
        "-L",
        "mode",
        "a,b",
        "gzip -1 -c",
        "gzip -{level} -c",
        "gzip -9 -c -- {mode}",
    ]);
    assert_eq!(
        exp.design.treatments,
        ["gzip -{level} -c", "gzip -9 -c -- {mode}"]
    );
    assert_eq!((exp.design.warmup_pairs, exp.design.pairs.get()), (7, 11));
    assert_eq!(exp.design.stop.unwrap().max_forks.get(), 5);
    assert_eq!(
        exp.grid.params["level"],
        [serde_json::json!("2"), serde_json::json!("6")]
    );
    assert_eq!(exp.grid.params["mode"].len(), 2);
    for line in [
        "setup = [\"make\", \"-s\"]",
        "prepare = [\"sync\"]",
        "stdin = \"in.txt\"",
    ] {
        assert_eq!(t.matches(line).count(), 3, "{line} in each strategy:\n{t}");
    }
    assert!(!t.contains("compare_output"), "{t}");
}

#[test]
fn a_shell_a_scan_and_per_command_prepare() {
    let (t, exp) = written(&[
        "--shell",
        "-P",
        "n",
        "1",
        "3",
        "--prepare",
        "true",
        "--prepare",
        "sync",
        "echo {n} | cat",
        "echo {n}",
    ]);
    assert!(t.contains("shell = \"echo {n} | cat\""), "{t}");
    assert!(t.contains("prepare = [\"sh\", \"-c\", \"true\"]"), "{t}");
    assert!(t.contains("prepare = [\"sh\", \"-c\", \"sync\"]"), "{t}");
    assert_eq!(exp.grid.params["n"].len(), 3);
}

#[test]
fn the_same_command_twice_is_an_a_a_of_one_strategy() {
    let (_, exp) = written(&["true", "true"]);
    assert!(exp.design.is_aa());
    assert_eq!(exp.strategies.len(), 1);
}

#[test]
fn bad_arguments_are_refused_before_anything_is_written() {
    for argv in [
        &["a", "b", "b"][..],
        &["-P", "n", "3", "1", "a {n}", "b"],
        &["-P", "n", "x", "1", "a {n}", "b"],
        &["-L", "a-b", "1,2", "a", "b"],
        &["-L", "n", "1", "-L", "n", "2", "a {n}", "b"],
        &["'unclosed", "b"],
        &[" ", "b"],
    ] {
        assert!(plan(&args(argv)).is_err(), "{argv:?}");
    }
}
