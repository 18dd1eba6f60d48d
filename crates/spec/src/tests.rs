//! One test per rule of docs/reference.md, through the same path as `load`
//! minus the file read, with a fake environment.

use super::context::Context;
use super::*;

const MIN: &str =
    "[strategies.a]\nkind = \"noop\"\n\n[design]\nbaseline = \"a\"\ntreatment = \"a\"\n";

fn run(text: &str, flags: &[&str], env: Option<&str>) -> Result<(Experiment, String), SpecError> {
    let flags: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
    let ctx = Context {
        stem: "stem",
        env_url: env,
        files: super::context::Files::Here,
    };
    load_text("x.toml", text.to_string(), &flags, &ctx)
}

fn ok(text: &str) -> Experiment {
    run(text, &[], None).unwrap().0
}

fn err(text: &str) -> String {
    run(text, &[], None).unwrap_err().message
}

#[test]
fn minimal_spec_gets_every_default() {
    let e = ok(MIN);
    assert_eq!(
        (e.name.as_str(), e.title.as_str(), e.description.as_str()),
        ("stem", "stem", "")
    );
    assert_eq!(e.seed, None);
    assert_eq!(
        e.workload,
        WorkloadParams {
            plans: 40,
            months: 60
        }
    );
    assert_eq!(
        e.database,
        DatabaseConfig {
            backend: Backend::Auto,
            url: None,
            sqlite_file: None,
            private_copies: Vec::new(),
            explain: false,
            strict: false,
            check_inputs: None,
        }
    );
    let d = &e.design;
    // The counts of a fork's pairs are left to the trial runs; until they
    // run, the fewest they may choose.
    assert_eq!((d.forks.get(), d.warmup_pairs, d.pairs.get()), (10, 0, 5));
    assert_eq!(
        d.runs_per_fork,
        Some(RunsPerFork {
            warmup_pairs: true,
            pairs: true,
            min_forks: false,
            chosen: None
        })
    );
    assert_eq!(
        (d.ordering, d.schedule, d.pad_baseline, d.fork_timeout_s),
        (Ordering::PairedRandom, Schedule::Shuffled, true, 1800)
    );
    assert_eq!(
        (e.grid.delay_ns.clone(), e.grid.workload.len()),
        (vec![0], 0)
    );
    assert_eq!(
        e.analysis,
        AnalysisConfig {
            resamples: 2000,
            confidence: 0.95
        }
    );
    assert_eq!(e.report.template, None);
}

#[test]
fn title_defaults_to_an_explicit_name() {
    assert_eq!(ok(&format!("name = \"aa\"\n{MIN}")).title, "aa");
    assert!(err(&format!("name = \"../x\"\n{MIN}"))
        .starts_with("x.toml:1:8: name must be a folder name"));
}

#[test]
fn empty_file_reports_the_first_required_key() {
    assert_eq!(
        err(""),
        "x.toml: design.baseline is required; set it to the name of a [strategies.*] table"
    );
    let no_strategies = "[design]\nbaseline = \"a\"\ntreatment = \"a\"\n";
    assert!(err(no_strategies).starts_with("x.toml: strategies must define at least one strategy"));
}

#[test]
fn unknown_keys_are_named_with_their_table() {
    assert!(err(&format!("{MIN}forkz = 1\n")).starts_with(
        "x.toml:7:1: unknown key `design.forkz`; did you mean `forks`? valid keys here are: baseline, treatment, treatments, forks"
    ));
    assert!(err(&format!("desgn = 1\n{MIN}")).starts_with(
        "x.toml:1:1: unknown key `desgn`; did you mean `design`? valid keys here are: name, title"
    ));
    assert!(err(&format!("{MIN}[report]\nx = 1\n"))
        .contains("x.toml:8:1: unknown key `report.x`; valid keys here are: template"));
}

#[test]
fn counts_must_be_positive() {
    assert!(err(&format!("{MIN}forks = 0\n"))
        .starts_with("x.toml:7:9: design.forks must be a positive integer"));
    assert!(err(&format!("{MIN}pairs = -3\n")).contains(
        "design.pairs must be a positive integer up to 1000000 (a fork's pairs are held in memory by the analysis, default: chosen from trial runs), got -3"
    ));
    assert!(err(&format!("{MIN}fork_timeout_s = 0\n")).contains(
        "design.fork_timeout_s must be a positive integer number of seconds, at most 604800 (a week; default 1800), got 0"
    ));
    assert!(err(&format!("{MIN}warmup_pairs = -1\n"))
        .contains("design.warmup_pairs must be a non-negative integer"));
    assert_eq!(
        ok(&format!("{MIN}warmup_pairs = 0\n")).design.warmup_pairs,
        0
    );
    assert!(err(&format!("[workload]\nmonths = 0\n{MIN}"))
        .contains("x.toml:2:10: workload.months must be a positive integer"));
    assert!(err(&format!("{MIN}forks = 2.0\n")).contains("got 2.0"));
}

#[test]
fn enums_and_booleans_list_valid_values() {
    assert!(err(&format!("{MIN}ordering = \"random\"\n"))
        .contains("design.ordering must be one of \"paired-random\", \"blocked\", got \"random\""));
    assert!(err(&format!("{MIN}schedule = 1\n"))
        .contains("design.schedule must be one of \"shuffled\", \"sequential\", got 1"));
    assert!(err(&format!("{MIN}pad_baseline = \"yes\"\n"))
        .contains("design.pad_baseline must be true or false (default true)"));
    let e = ok(&format!(
        "{MIN}ordering = \"blocked\"\nschedule = \"sequential\"\npad_baseline = false\n"
    ));
    assert_eq!(
        (e.design.ordering, e.design.schedule, e.design.pad_baseline),
        (Ordering::Blocked, Schedule::Sequential, false)
    );
}

#[test]
fn baseline_and_treatment_must_name_strategies() {
    let text = MIN.replace("treatment = \"a\"", "treatment = \"b\"");
    assert_eq!(err(&text), "x.toml:6:13: design.treatment names strategy `b`, which is not defined; defined strategies are: a");
}

#[test]
fn strategy_kinds_and_their_keys() {
    let spin = "[strategies.s]\nkind = \"spin\"\nduration_us = 2.5\n";
    assert_eq!(
        ok(&format!("{MIN}{spin}")).strategies["s"],
        StrategyKind::Spin { duration_ns: 2500 }
    );
    assert!(err(&format!("{MIN}[strategies.s]\nkind = \"spin\"\n"))
        .contains("x.toml:7:1: strategies.s.duration_us is required for kind = \"spin\""));
    assert!(err(&format!(
        "{MIN}[strategies.s]\nkind = \"noop\"\nduration_us = 1\n"
    ))
    .contains("x.toml:9:1: unknown key `strategies.s.duration_us`; valid keys here (kind = \"noop\") are: kind"));
    assert!(err(&format!("{MIN}[strategies.s]\nkind = \"python\"\n")).contains("strategies.s.kind must be one of \"in-memory\", \"tx-rollback\", \"spin\", \"noop\", \"command\", \"sql\", got \"python\""));
    assert!(err(&format!("{MIN}[strategies.s]\n")).contains("strategies.s.kind is required"));
}

#[test]
fn delays_are_converted_checked_and_unique() {
    let e = ok(&format!("{MIN}[grid]\ndelay_us = [0, 0.1, 5]\n"));
    assert_eq!(
        (e.grid.delay_ns, e.grid.delay_us),
        (vec![0, 100, 5000], vec![0.0, 0.1, 5.0])
    );
    assert!(err(&format!("{MIN}[grid]\ndelay_us = [0, -5]\n"))
        .contains("x.toml:8:16: grid.delay_us[1] must be a non-negative number"));
    assert!(err(&format!("{MIN}[grid]\ndelay_us = [5, 5.0]\n")).contains("x.toml:8:16: grid.delay_us[1] = 5.0 is the same delay as grid.delay_us[0] = 5 (5000 ns)"));
    assert!(err(&format!("{MIN}[grid]\ndelay_us = []\n"))
        .contains("grid.delay_us must be a non-empty array"));
    assert!(err(&format!("{MIN}[grid]\ndelay_us = 5\n")).contains("got 5"));
}

#[test]
fn workload_keys_can_be_swept() {
    let preview = MIN.replace("noop", "in-memory");
    let e = ok(&format!("{preview}[grid]\nplans = [10, 40]\n"));
    assert_eq!(e.grid.workload.get("plans"), Some(&vec![10, 40]));
    assert!(!e.grid.workload.contains_key("months"));
    assert!(err(&format!("{MIN}[grid]\nmonths = [12, 12]\n"))
        .contains("grid.months[1] = 12 repeats grid.months[0]"));
    assert!(err(&format!("{MIN}[grid]\nplans = [0]\n"))
        .contains("grid.plans[0] must be a positive integer"));
}

#[test]
fn analysis_ranges() {
    assert!(err(&format!("{MIN}[analysis]\nresamples = 99\n"))
        .contains("analysis.resamples must be an integer from 100 to 100000 (the analysis costs resamples x pairs per interval, and more resamples do not change the digits a report prints; default 2000), got 99"));
    assert!(err(&format!("{MIN}[analysis]\nconfidence = 1.0\n"))
        .contains("must be a number from 0.5 to 0.999"));
    assert!(err(&format!("{MIN}[analysis]\nconfidence = 0\n")).contains("got 0"));
    assert_eq!(
        ok(&format!(
            "{MIN}[analysis]\nresamples = 100\nconfidence = 0.5\n"
        ))
        .analysis
        .resamples,
        100
    );
}

#[test]
fn seed_is_a_u64() {
    assert_eq!(ok(&format!("seed = 7\n{MIN}")).seed, Some(7));
    assert!(err(&format!("seed = -1\n{MIN}"))
        .starts_with("x.toml:1:8: seed must be a non-negative integer"));
    assert!(err(&format!("seed = 99999999999999999999\n{MIN}"))
        .starts_with("x.toml:1:8: TOML syntax error"));
}

// Its files run on both databases.
#[cfg(all(feature = "sqlite", feature = "postgres"))]
#[test]
fn database_rules() {
    let rb = "[strategies.r]\nkind = \"tx-rollback\"\n";
    let pg = "[database]\nbackend = \"postgres\"\n";
    assert!(err(&format!("{pg}{rb}{MIN}")).starts_with("x.toml:2:11: database.backend = \"postgres\" has no URL, but strategy `r` (tx-rollback) needs a database"));
    assert!(run(&format!("{pg}{rb}{MIN}"), &[], Some("postgres://u@h/db")).is_ok());
    let bad = "[database]\nurl = \"not a url\"\n";
    assert!(err(&format!("{bad}{MIN}"))
        .starts_with("x.toml:2:7: database.url is not a valid PostgreSQL connection string"));
    assert!(run(&format!("{rb}{MIN}"), &[], Some("x y"))
        .unwrap_err()
        .message
        .starts_with("x.toml: RUNNER_DATABASE_URL is not a valid"));
    // sqlite and auto are always usable, and a bad env var does not matter without a database strategy.
    assert!(ok(&format!("[database]\nbackend = \"sqlite\"\n{rb}{MIN}"))
        .strategies
        .contains_key("r"));
    assert!(run(MIN, &[], Some("x y")).is_ok());
}

#[test]
fn template_must_be_a_file() {
    assert!(err(&format!("{MIN}[report]\ntemplate = \"no/such.j2\"\n"))
        .contains("x.toml:8:12: report.template \"no/such.j2\" does not exist"));
    let e = ok(&format!("{MIN}[report]\ntemplate = \"Cargo.toml\"\n"));
    assert_eq!(
        e.report.template.as_deref(),
        Some(std::path::Path::new("Cargo.toml"))
    );
}

#[test]
fn overrides_apply_and_are_named_in_errors() {
    let (e, text) = run(
        &format!("{MIN}forks = 4 # keep\n"),
        &[
            "design.forks=2",
            "grid.delay_us=[0,100]",
            "design.ordering=blocked",
        ],
        None,
    )
    .unwrap();
    assert_eq!(
        (
            e.design.forks.get(),
            e.grid.delay_ns.clone(),
            e.design.ordering
        ),
        (2, vec![0, 100_000], Ordering::Blocked)
    );
    assert!(text.contains("forks = 2 # keep"), "{text}");
    assert_eq!(run(MIN, &["design.forks=0"], None).unwrap_err().message, "x.toml: --set design.forks=0: design.forks must be a positive integer up to 10000 (each fork is a fresh process and a record in run.json, default 10), got 0");
    assert!(run(MIN, &["design.forks"], None)
        .unwrap_err()
        .message
        .starts_with("x.toml: --set design.forks: no `=`"));
    // A key added by --set shifts no line of the errors that follow it.
    let shifted = run(
        &format!("{MIN}[analysis]\nresamples = 5\n"),
        &["design.pairs=9"],
        None,
    )
    .unwrap_err()
    .message;
    assert!(
        shifted.starts_with("x.toml:8:13: analysis.resamples"),
        "{shifted}"
    );
}

#[test]
fn errors_are_one_line() {
    let e = run(MIN, &["design.ordering=\"a\\nb\""], None)
        .unwrap_err()
        .message;
    assert!(!e.contains('\n'), "{e}");
}

#[test]
fn every_bad_key_is_reported_in_one_pass() {
    let text = format!(
        "colour = \"red\"\n{MIN}forks = 0\nforkz = 3\n[analysis]\nconfidence = 1.5\n[grid]\ndelay_us = [-1]\n"
    );
    let e = err(&text);
    let lines: Vec<&str> = e.lines().collect();
    assert_eq!(lines.len(), 5, "{e}");
    // In the file's order, whatever order validation found them in.
    for (line, says) in [
        (0, "x.toml:1:1: unknown key `colour`"),
        (1, "x.toml:8:9: design.forks must be a positive integer"),
        (
            2,
            "x.toml:9:1: unknown key `design.forkz`; did you mean `forks`?",
        ),
        (3, "x.toml:11:14: analysis.confidence must be a number"),
        (
            4,
            "x.toml:13:13: grid.delay_us[0] must be a non-negative number",
        ),
    ] {
        assert!(lines[line].starts_with(says), "line {line}: {e}");
    }
    // A problem that follows from an earlier one is not listed: the
    // baseline names a strategy whose table is wrong.
    let e = err("[strategies.a]\nkind = \"nope\"\n[design]\nbaseline = \"a\"\ntreatment = \"a\"\n");
    assert_eq!(e.lines().count(), 1, "{e}");
}

/// Mistakes in every strategy and section of one file, each named once:
/// a problem of one strategy is not taken for a consequence of another's,
/// and a key named in a list of valid ones is not taken for the subject.
// Its files run on both databases.
#[cfg(all(feature = "sqlite", feature = "postgres"))]
#[test]
fn every_strategy_and_section_is_checked_in_one_run() {
    let text = "[strategies.a]\nkind = \"command\"\nargv = [\"true\"]\ntimeout = 3\ncolour = 1\n\n[strategies.b]\nkind = \"sql\"\nrun = \"SELECT {rowz}\"\nserach_path = [\"x\"]\n\n[strategies.c]\nkind = \"spinn\"\nduration_us = 5\n\n[design]\nbaseline = \"a\"\ntreatments = [\"b\", \"d\", \"c\"]\nforks = 0\nordering = \"random\"\n\n[grid]\ndelay_us = [-1]\nrows = [1, 2]\n\n[analysis]\nconfidense = 0.9\n";
    let e = err(text);
    let lines: Vec<&str> = e.lines().collect();
    let expected = [
        "x.toml:4:1: unknown key `strategies.a.timeout`; did you mean `timeout_s`?",
        "x.toml:5:1: unknown key `strategies.a.colour`; valid keys",
        "x.toml:9:15: strategies.b.run uses the placeholder {rowz}, which names no [grid] key and is not runner's; did you mean {rows}?",
        "x.toml:10:1: unknown key `strategies.b.serach_path`; did you mean `search_path`?",
        "x.toml:13:8: strategies.c.kind must be one of",
        "x.toml:18:20: design.treatments[1] names strategy `d`, which is not defined",
        "x.toml:19:9: design.forks must be a positive integer",
        "x.toml:20:12: design.ordering must be one of",
        "x.toml:23:13: grid.delay_us[0] must be a non-negative number",
        "x.toml:27:1: unknown key `analysis.confidense`; did you mean `confidence`?",
    ];
    assert_eq!(lines.len(), expected.len(), "{e}");
    for (line, want) in lines.iter().zip(expected) {
        assert!(line.starts_with(want), "{want}\n{e}");
    }
}

/// An arm on a backend this build lacks is refused at the file's check,
/// naming the arm, its key and the feature to build with. Runs in a build
/// without the feature (`cargo test --no-default-features --lib`).
#[cfg(not(feature = "sqlite"))]
#[test]
fn an_arm_on_a_backend_not_built_is_refused_naming_the_feature() {
    let e = err(
        "[strategies.a]\nkind = \"tx-rollback\"\n\n[design]\nbaseline = \"a\"\ntreatment = \"a\"\n",
    );
    // Line 2 column 8: the value of strategies.a.kind.
    assert!(
        e.starts_with("x.toml:2:8: strategy `a` (tx-rollback)"),
        "{e}"
    );
    assert!(e.contains("built without it (its `sqlite` feature)"), "{e}");
    assert!(e.contains("--features sqlite"), "{e}");
}

#[cfg(not(feature = "postgres"))]
#[test]
fn a_server_url_needs_the_postgres_feature() {
    let text = "[database]\nurl = \"postgres://u@127.0.0.1/db\"\n\n[strategies.a]\nkind = \"tx-rollback\"\n\n[design]\nbaseline = \"a\"\ntreatment = \"a\"\n";
    let e = run(text, &[], None).unwrap_err().message;
    assert!(e.contains("runs on PostgreSQL"), "{e}");
    assert!(e.contains("its `postgres` feature"), "{e}");
}
