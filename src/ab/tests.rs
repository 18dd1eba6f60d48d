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
fn written(argv: &[&str]) -> (String, runner_spec::Experiment) {
    let a = args(argv);
    let p = plan(&a).unwrap();
    let t = text(&a, &p, &invocation(&a));
    let exp = runner_spec::parse_recorded(
        &format!("experiments/{}.toml", p.name),
        &t,
        &runner_spec::Recorded::default(),
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
        Some(runner_spec::RunsPerFork {
            warmup_pairs: true,
            pairs: true,
            min_forks: true,
            chosen: None
        })
    );
    let stop = d.stop.expect("a sequential design");
    assert!(stop.decide && stop.half_width.is_none());
    // min_forks is left out: 3 until the trial runs choose the first look.
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

/// What each arm of a written file runs, `{{` read back as `{` and every
/// placeholder left in place (the last step exec takes before a run).
fn runs(exp: &runner_spec::Experiment, arm: &str) -> (Vec<String>, bool) {
    use runner_spec::placeholder::{substitute, Fill};
    let runner_spec::StrategyKind::Command(c) = &exp.strategies[arm] else {
        panic!("{arm} is not a command strategy");
    };
    let shell = matches!(c.program, runner_spec::Program::Shell(_));
    let words = c
        .program
        .argv()
        .iter()
        .map(|w| substitute(w, true, |_| Fill::Keep).text)
        .collect();
    (words, shell)
}

/// The file of `commands` (each run as typed) read back: the arms' names
/// and what they run are the commands, whatever they hold.
fn round_trip(commands: &[&str], shell: bool) {
    let mut argv = vec!["--name", "q"];
    if shell {
        argv.push("--shell");
    }
    argv.extend(commands);
    let (t, exp) = written(&argv);
    let long = commands.iter().any(|c| c.chars().count() > 60);
    let names: Vec<String> = std::iter::once(exp.design.baseline.clone())
        .chain(exp.design.variants().iter().map(|v| v.to_string()))
        .collect();
    for (i, c) in commands.iter().enumerate() {
        if !long {
            assert_eq!(names[i], c.trim(), "{t}");
        }
        let (words, is_shell) = runs(&exp, &names[i]);
        if shell {
            assert!(is_shell, "{t}");
            assert_eq!(words[2], *c, "{t}");
        } else {
            assert_eq!(words, shlex::split(c).unwrap(), "{t}");
        }
    }
    assert_eq!(exp.title, commands.join(" vs "), "{t}");
}

#[test]
fn quotes_newlines_backslashes_and_unicode_read_back_as_typed() {
    // Both quote kinds in one command, and a newline in another.
    round_trip(&["echo \"a'b\"", "echo 'x\ny'"], false);
    round_trip(&["echo \"a'b\" | cat", "printf 'x\\ny\\n'\necho z"], true);
    round_trip(
        &[r#"printf '%s\n' "a\"b" 'c\d'"#, "echo é 💡 \t tab"],
        false,
    );
    round_trip(&["echo \u{7f}\u{1b}[0m", "echo \"\"\"\"''''"], true);
    // A name of over 60 characters gives the arms short names.
    let long = format!("echo {}\"'\\", "x".repeat(70));
    round_trip(&[&long, "true"], true);
}

#[test]
fn braces_run_as_typed_and_only_parameters_are_placeholders() {
    round_trip(&["awk '{print $1}'", "jq -c {a} {{b}}"], false);
    round_trip(&["echo {x} {{", "echo '{}' {input}"], true);
    let (t, exp) = written(&["-L", "n", "1,2", "echo {n} {m}", "echo {{n}}"]);
    let (words, _) = runs(&exp, "echo {n} {m}");
    assert_eq!(words, ["echo", "{n}", "{m}"], "{t}");
    assert!(t.contains(r#"argv = ["echo", "{n}", "{{m}"]"#), "{t}");
    let (words, _) = runs(&exp, "echo {{n}}");
    assert_eq!(words, ["echo", "{{n}}"], "{t}");
}

#[test]
fn a_scan_is_bounded_and_never_overflows() {
    let refused = |lo: &str, hi: &str| {
        let e = plan(&args(&["-P", "x", lo, hi, "a {x}", "b"]))
            .unwrap_err()
            .to_string();
        assert!(!e.contains('\n'), "one sentence: {e}");
        e
    };
    let e = refused("-9223372036854775808", "9223372036854775807");
    assert!(
        e.contains("18446744073709551616 values") && e.contains("at most 100"),
        "{e}"
    );
    assert!(refused("0", "100").contains("101 values"));
    assert!(refused("5", "4").contains("MIN must be at most MAX"));
    assert!(refused("0", "99999999999999999999").contains("must be integers"));
    let (_, exp) = written(&["-P", "x", "-1", "98", "echo {x}", "true"]);
    assert_eq!(exp.grid.params["x"].len(), 100);
    let (_, exp) = written(&[
        "-P",
        "x",
        "9223372036854775806",
        "9223372036854775807",
        "echo {x}",
        "true",
    ]);
    assert_eq!(
        exp.grid.params["x"][1],
        serde_json::json!(9223372036854775807i64)
    );
}

mod properties {
    use super::round_trip;
    use proptest::prelude::*;

    /// Commands built from the characters that break quoting.
    fn command() -> impl Strategy<Value = String> {
        let c = prop_oneof![
            4 => prop::char::range('a', 'z'),
            2 => Just(' '),
            1 => prop::sample::select(vec![
                '"', '\'', '\\', '\n', '\t', '\r', '{', '}', '$', '|', '#', '=', '[', ']', 'é',
                '💡', '\u{7f}', '\u{1b}', '\u{85}', '\u{2028}',
            ]),
        ];
        prop::collection::vec(c, 1..30)
            .prop_map(|v| format!("x{}", v.into_iter().collect::<String>()))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn any_command_reads_back_as_typed(a in command(), b in command()) {
            prop_assume!(a.trim() != b.trim());
            round_trip(&[&a, &b], true);
            if shlex::split(&a).is_some_and(|w| !w.is_empty())
                && shlex::split(&b).is_some_and(|w| !w.is_empty())
            {
                round_trip(&[&a, &b], false);
            }
        }
    }
}

/// An export runner wrote may be written again (a second run of one line);
/// a file beside it that runner did not write may not.
#[test]
fn an_earlier_export_may_be_replaced_and_a_users_file_not() {
    use super::export::{check_target, Own};
    let tmp = tempfile::tempdir().unwrap();
    let (h, mine) = (tmp.path().join("h.json"), tmp.path().join("mine.json"));
    runner_folder::output::guard::write(&h, b"{}\n").unwrap();
    std::fs::write(&mine, "{}\n").unwrap();
    let own = Own {
        spec: &tmp.path().join("experiments/x.toml"),
        out_dir: &tmp.path().join("reports/x"),
    };
    check_target("--export-json", &h, &own).unwrap();
    let e = check_target("--export-json", &mine, &own).unwrap_err();
    assert!(e.to_string().contains("is not a file runner wrote"), "{e}");
    // The same, inside the run's own folder (where a later run writes).
    std::fs::create_dir_all(tmp.path().join("reports/x")).unwrap();
    let inside = tmp.path().join("reports/x/h.json");
    let e = check_target("--export-json", &inside, &own).unwrap_err();
    assert!(e.to_string().contains("own report folder"), "{e}");
}

/// `--instructions` writes `measure` beside time into the file and
/// records the flag in its header, so the file reads back as it ran.
#[test]
fn instructions_are_counted_beside_time() {
    let (t, exp) = written(&["--instructions", "--name", "q", "gzip -1 -c", "gzip -2 -c"]);
    assert!(t.contains("measure = [\"time\", \"instructions\"]"), "{t}");
    assert!(t.contains("#     runner ab --name q --instructions"), "{t}");
    let c = exp.design.counting.expect("counts");
    assert!(c.time && !c.cache_sim);
    assert_eq!(c.pairs, runner_spec::Counting::DEFAULT_PAIRS);
    let (plain, exp) = written(&["--name", "q", "gzip -1 -c", "gzip -2 -c"]);
    assert!(!plain.contains("measure ="), "{plain}");
    assert!(exp.design.counting.is_none());
}
