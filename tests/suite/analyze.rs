//! `runner analyze` on the real binary: pairs from another harness become
//! an ordinary report folder; runner's own pairs.csv, imported, gives the
//! per-fork medians `report` gives; the report says the data was imported
//! and claims nothing about how it was measured; bad files are exit 2
//! naming the line and column.

use crate::common;
use common::*;
use std::path::Path;

fn analyze(dir: &Path, args: &[&str]) -> std::process::Output {
    runner()
        .current_dir(dir)
        .arg("analyze")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn runner_pairs_imported_give_the_per_fork_medians_report_gives() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let spec = write_spec(t, "small", SMALL_AA);
    runner()
        .current_dir(t)
        .args(["exec", spec.to_str().unwrap(), "--out", "run", "--quiet"])
        .assert()
        .success();
    // SMALL_AA: seed 7, 200 resamples, arms `memory`; the run's clock step
    // declared, so the import dithers D as `report` did.
    let resolution = read_json(&t.join("run/run.json"))["environment"]["clock"]["resolution_ns"]
        .as_u64()
        .unwrap()
        .to_string();
    let o = analyze(
        t,
        &[
            "run/pairs.csv",
            "--out",
            "imp",
            "--seed",
            "7",
            "--resamples",
            "200",
            "--baseline",
            "memory",
            "--treatment",
            "memory",
            "--clock-resolution-ns",
            &resolution,
        ],
    );
    assert!(o.status.success(), "{}", err_of(&o));
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert!(stdout.ends_with("report: imp/report.md\n"), "{stdout}");
    let (a, b) = (
        read_json(&t.join("run/analysis.json")),
        read_json(&t.join("imp/analysis.json")),
    );
    let cells = a["cells"].as_array().unwrap();
    assert_eq!(cells.len(), b["cells"].as_array().unwrap().len());
    for (ca, cb) in cells.iter().zip(b["cells"].as_array().unwrap()) {
        assert_eq!(ca["delay_ns"], cb["delay_ns"]);
        let forks = ca["forks"].as_array().unwrap();
        assert_eq!(forks.len(), 2);
        for (fa, fb) in forks.iter().zip(cb["forks"].as_array().unwrap()) {
            for k in [
                "median_ns",
                "baseline_median_ns",
                "treatment_median_ns",
                "ci_ns",
                "verdict",
            ] {
                assert_eq!(fa[k], fb[k], "cell {} fork {}: {k}", ca["cell"], fa["fork"]);
            }
        }
        assert_eq!(ca["pooled"], cb["pooled"]);
        assert_eq!(ca["over_forks"], cb["over_forks"]);
    }
    // The imported folder is an ordinary one: `report` re-renders it byte for byte.
    let before = std::fs::read(t.join("imp/report.md")).unwrap();
    let analysis = std::fs::read(t.join("imp/analysis.json")).unwrap();
    runner()
        .current_dir(t)
        .args(["report", "imp"])
        .assert()
        .success();
    assert_eq!(std::fs::read(t.join("imp/report.md")).unwrap(), before);
    assert_eq!(
        std::fs::read(t.join("imp/analysis.json")).unwrap(),
        analysis
    );
    let run = read_json(&t.join("imp/run.json"));
    assert_eq!(run["imported"]["file"], "run/pairs.csv");
    assert_eq!(run["imported"]["cells_by"], "delay");
    assert_eq!(
        run["spec"]["experiment"]["strategies"]["memory"]["kind"],
        "imported"
    );
}

const MINIMAL: &str = "\
cell,fork,pair,first,baseline_ns,treatment_ns
sort,1,0,baseline,1000,1100
sort,1,1,treatment,1010,1090.4
sort,1,2,baseline,990,1120
sort,2,0,treatment,1200,1290
sort,2,1,baseline,1190,1300
sort,2,2,treatment,1210,1280
grep,1,0,baseline,500,480
grep,1,1,treatment,510,490
grep,1,2,baseline,505,470
grep,2,0,baseline,520,500
grep,2,1,treatment,515,495
grep,2,2,baseline,530,505
";

#[test]
fn a_minimal_csv_becomes_a_report_that_says_it_was_imported() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    std::fs::write(t.join("jmh.csv"), MINIMAL).unwrap();
    let o = analyze(t, &["jmh.csv", "--seed", "1", "--resamples", "100"]);
    assert!(o.status.success(), "{}", err_of(&o));
    let dir = t.join("reports/jmh");
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.starts_with("# jmh (imported)\n"), "{report}");
    assert!(
        report.contains("- Data: imported by `runner analyze` from `jmh.csv` (12 rows"),
        "{report}"
    );
    assert!(
        report.contains("says nothing about how they were measured"),
        "{report}"
    );
    for claim in [
        "- Database:",
        "- Agreement:",
        "- Machine:",
        "padded",
        "fresh process",
        "warm-up +",
    ] {
        assert!(
            !report.contains(claim),
            "an imported report claims {claim:?}:\n{report}"
        );
    }
    // The command as the user ran it: here, the test's binary by its path.
    let binary = assert_cmd::cargo::cargo_bin("runner");
    assert!(
        report.contains(&format!(
            "{} analyze jmh.csv --resamples 100 --seed 1",
            binary.display()
        )),
        "{report}"
    );
    let a = read_json(&dir.join("analysis.json"));
    let cells = a["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    assert_eq!(cells[0]["params"]["cell"], "sort");
    // sort fork 1: D = 100, 80.4 -> 80 (whole ns), 130: median 100.
    assert_eq!(cells[0]["forks"][0]["median_ns"], 100.0);
    assert_eq!(cells[1]["forks"][1]["median_ns"], -20.0);
    let run = read_json(&dir.join("run.json"));
    assert_eq!(run["imported"]["forks"][1]["source"], "2");
    assert_eq!(run["imported"]["cells_by"], "cell");
    // Its pairs.csv is runner's format, with what the file did not give as 0.
    let pairs = std::fs::read_to_string(dir.join("pairs.csv")).unwrap();
    assert!(
        pairs
            .lines()
            .nth(2)
            .unwrap()
            .starts_with("0,0,measure,1,treatment,1010,1090,0,0,0,0"),
        "{pairs}"
    );
}

#[test]
fn bad_files_are_refused_naming_line_and_column() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let cases = [
        ("fork,pair,first,baseline_ns\n", "the header lacks `treatment_ns`"),
        (
            "fork,pair,first,baseline_ns,treatment_ns\n0,0,baseline,1,2\n",
            "neither `cell` nor `delay_ns`",
        ),
        (
            "cell,fork,pair,first,baseline_ns,treatment_ns\na,0,0,b,1,2\n",
            "bad.csv:2: column `first` must be `baseline` or `treatment`, got \"b\"",
        ),
        (
            "cell,fork,pair,first,baseline_ns,treatment_ns\na,0,0,baseline,-1,2\n",
            "bad.csv:2: column `baseline_ns` must be a non-negative number",
        ),
        (
            "cell,fork,pair,first,baseline_ns,treatment_ns\na,0,0,baseline,1,2\na,0,0,baseline,1,2\n",
            "has pair 0 twice",
        ),
        (
            "cell,fork,pair,first,baseline_ns,treatment_ns\na,0,0,baseline,1,2\na,0,1,baseline,1,2\na,1,0,baseline,1,2\n",
            "runner's design is uniform",
        ),
        (
            "cell,delay_ns,fork,pair,first,baseline_ns,treatment_ns\na,0,0,0,baseline,1,2\na,5,0,0,baseline,1,2\nb,0,0,0,baseline,1,2\n",
            "cell \"b\" has no rows at delay 5 ns",
        ),
        // A column named twice was read from its first copy.
        (
            "cell,fork,pair,first,baseline_ns,treatment_ns,baseline_ns\na,0,0,baseline,1,2,3\n",
            "bad.csv:1: the header names the column `baseline_ns` twice (columns 5 and 7)",
        ),
    ];
    for (text, says) in cases {
        std::fs::write(t.join("bad.csv"), text).unwrap();
        let o = analyze(t, &["bad.csv", "--out", "out"]);
        assert_eq!(o.status.code(), Some(2), "{says}: {}", err_of(&o));
        assert!(err_of(&o).contains(says), "{says}: {}", err_of(&o));
        assert!(!t.join("out").exists() && !t.join("out.partial").exists());
    }
    let o = analyze(t, &["bad.csv", "--resamples", "5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err_of(&o).contains("--resamples must be from 100"),
        "{}",
        err_of(&o)
    );
}

/// Without `--seed` (the documented form) runner draws one,
/// records it as drawn (run.json `seeds.drawn`, no seed in the spec, as
/// `exec` does), and `runner report` re-renders the folder byte for byte;
/// the Reproduce command pins the seed drawn.
#[test]
fn without_a_seed_one_is_drawn_and_recorded_consistently() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    std::fs::write(t.join("jmh.csv"), MINIMAL).unwrap();
    let o = analyze(t, &["jmh.csv", "--resamples", "100", "--out", "imp"]);
    assert!(o.status.success(), "{}", err_of(&o));
    let dir = t.join("imp");
    let run = read_json(&dir.join("run.json"));
    assert_eq!(run["seeds"]["drawn"], true);
    let master = run["seeds"]["master"].as_u64().unwrap();
    let toml = run["spec"]["toml"].as_str().unwrap();
    assert!(!toml.lines().any(|l| l.starts_with("seed")), "{toml}");
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        report.contains(&format!(
            "analyze jmh.csv --out imp --resamples 100 --seed {master}"
        )),
        "{report}"
    );
    let before = tree(&dir);
    std::fs::remove_file(dir.join("report.md")).unwrap();
    std::fs::remove_file(dir.join("analysis.json")).unwrap();
    let o = runner()
        .current_dir(t)
        .args(["report", "imp"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err_of(&o));
    assert_eq!(tree(&dir), before);
    // Two runs draw two seeds.
    let o = analyze(t, &["jmh.csv", "--resamples", "100", "--out", "imp2"]);
    assert!(o.status.success(), "{}", err_of(&o));
    let other = read_json(&t.join("imp2/run.json"))["seeds"]["master"].as_u64();
    assert_ne!(other, Some(master));
}

/// Ctrl-C while `analyze` reads a file of millions of rows is
/// answered at once (exit 1, the documented code for an interrupted run),
/// and nothing is written.
#[test]
fn a_signal_while_reading_a_large_csv_is_answered_at_once() {
    use common::faults::{wait_for, wait_output};
    use std::io::Write;
    use std::time::{Duration, Instant};
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    {
        let f = std::fs::File::create(t.join("big.csv")).unwrap();
        let mut w = std::io::BufWriter::new(f);
        writeln!(w, "cell,fork,pair,first,baseline_ns,treatment_ns").unwrap();
        for fork in 0..20 {
            for pair in 0..150_000 {
                writeln!(
                    w,
                    "a,{fork},{pair},baseline,{},{}",
                    1000 + pair % 7,
                    1003 + pair % 5
                )
                .unwrap();
            }
        }
    }
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("runner"))
        .current_dir(t)
        .args(["analyze", "big.csv", "--out", "out", "--seed", "1"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once runner catches SIGINT it is reading (seconds for 3 million rows).
    let pid = child.id();
    wait_for("the signal handler", Duration::from_secs(30), || {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .is_some_and(|m| m & (1 << (libc::SIGINT - 1)) != 0)
    });
    std::thread::sleep(Duration::from_millis(300));
    let signalled = Instant::now();
    assert!(common::leftovers::send_signal(pid as i32, libc::SIGINT));
    let o = wait_output(child, Duration::from_secs(60));
    let took = signalled.elapsed();
    let e = err_of(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.starts_with("error: interrupted (Ctrl-C or a termination signal)")
            && e.contains("nothing was written"),
        "{e}"
    );
    eprintln!("answered in {took:?}: {e}");
    // Generous for a loaded machine; before, 11.8 s for 10^7 rows.
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(!t.join("out").exists() && !t.join("out.partial").exists());
}
