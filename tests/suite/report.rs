//! `runner report DIR` redraws a folder from its raw data: the report, the
//! analysis and every plot, byte for byte.

use crate::common;
use common::*;

const FILES: [&str; 5] = [
    "report.md",
    "analysis.json",
    "detection.svg",
    "forest.svg",
    "medians.svg",
];

#[test]
fn report_reproduces_the_report_and_plots_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "small", SMALL_AA);
    let out = exec_ok(tmp.path(), &spec, "r", &[]);
    let before: Vec<Vec<u8>> = FILES
        .iter()
        .map(|f| std::fs::read(out.join(f)).unwrap_or_else(|e| panic!("{f}: {e}")))
        .collect();
    for f in FILES {
        std::fs::remove_file(out.join(f)).unwrap();
    }
    runner()
        .current_dir(tmp.path())
        .arg("report")
        .arg(&out)
        .assert()
        .success();
    for (f, bytes) in FILES.iter().zip(&before) {
        assert_eq!(&std::fs::read(out.join(f)).unwrap(), bytes, "{f} differs");
    }
    let report = String::from_utf8(before[0].clone()).unwrap();
    for svg in ["detection.svg", "forest.svg", "medians.svg"] {
        assert!(report.contains(&format!("]({svg})")), "report links {svg}");
    }
}

#[test]
fn plots_go_beside_a_report_written_elsewhere() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), "small", SMALL_AA);
    let out = exec_ok(tmp.path(), &spec, "r", &[]);
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    runner()
        .current_dir(tmp.path())
        .arg("report")
        .arg(&out)
        .arg("--out")
        .arg(elsewhere.join("copy.md"))
        .assert()
        .success();
    for svg in ["detection.svg", "forest.svg", "medians.svg"] {
        assert_eq!(
            std::fs::read(elsewhere.join(svg)).unwrap(),
            std::fs::read(out.join(svg)).unwrap(),
            "{svg}"
        );
    }
}

/// Every report folder committed under `reports/` is what `runner report`
/// renders from its own raw data with this build: a template, filter,
/// analysis or plot change that forgot to re-render them fails here.
#[test]
fn committed_report_folders_are_reproduced_byte_for_byte() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports");
    let mut checked = 0;
    for entry in std::fs::read_dir(&root).unwrap().flatten() {
        let dir = entry.path();
        if !dir.join("run.json").is_file() {
            continue;
        }
        let tmp = tempfile::tempdir().unwrap();
        let copy = tmp.path().join("copy");
        std::fs::create_dir(&copy).unwrap();
        for f in ["run.json", "pairs.csv"] {
            std::fs::copy(dir.join(f), copy.join(f)).unwrap();
        }
        runner()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .arg("report")
            .arg(&copy)
            .assert()
            .success();
        // The plots of the folder's kind: a study's or a comparison's.
        let svgs = |d: &std::path::Path| -> std::collections::BTreeSet<String> {
            std::fs::read_dir(d)
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".svg"))
                .collect()
        };
        let drawn = svgs(&copy);
        assert_eq!(
            svgs(&dir),
            drawn,
            "{} holds other plots than `runner report` draws for it; re-render it and remove the others",
            dir.display()
        );
        let files = ["report.md", "analysis.json"]
            .into_iter()
            .chain(drawn.iter().map(String::as_str));
        for f in files {
            assert!(
                std::fs::read(copy.join(f)).unwrap() == std::fs::read(dir.join(f)).unwrap(),
                "{}/{f} is not what `runner report` renders; re-render it with `cargo run --release -- report {}`",
                dir.display(),
                dir.display()
            );
        }
        checked += 1;
    }
    assert!(
        checked >= 4,
        "expected the study's report folders, found {checked}"
    );
}

/// Every committed report answers on its first screen: at most 40 lines
/// before its Setup, not counting what `<details>` folds (GitHub renders
/// it closed), so the Finding, the gate and the primary plot come first.
#[test]
fn every_committed_report_answers_within_40_lines_before_its_setup() {
    let reports = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports");
    let mut read = 0;
    for entry in std::fs::read_dir(&reports).unwrap().flatten() {
        let path = entry.path().join("report.md");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let (mut shown, mut folded) = (0, false);
        for line in text.lines().take_while(|l| !l.starts_with("## Setup")) {
            if line.starts_with("<details") {
                folded = true;
            }
            if !folded {
                shown += 1;
            }
            if line.starts_with("</details>") {
                folded = false;
            }
        }
        assert!(
            shown <= 40,
            "{}: {shown} lines before the Setup",
            path.display()
        );
        read += 1;
    }
    assert!(read > 10, "read {read} reports");
}

/// A `<` in a strategy's name shows as typed inside the report's code
/// spans (where an entity would show as `&lt;`) and stays an entity
/// outside them, where it could open a tag.
#[test]
fn code_spans_keep_a_tag_as_typed_and_text_outside_them_escapes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(
        tmp.path(),
        "lt",
        r#"
seed = 3
[strategies."spin<b>"]
kind = "spin"
duration_us = 1
[strategies."spin<i>"]
kind = "spin"
duration_us = 2
[design]
baseline = "spin<b>"
treatment = "spin<i>"
forks = 2
warmup_pairs = 1
pairs = 10
[analysis]
resamples = 200
"#,
    );
    let out = exec_ok(tmp.path(), &spec, "r", &[]);
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("`spin<i>`"), "{report}");
    assert!(!report.contains("`spin&lt;"), "{report}");
    // Outside code spans (and fenced blocks), no tag: every `<b>` and
    // `<i>` left is in a span.
    let mut outside = String::new();
    let mut fenced = false;
    for line in report.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            outside.extend(line.split('`').step_by(2));
        }
    }
    assert!(
        !outside.contains("<b>") && !outside.contains("<i>"),
        "{outside}"
    );
    // The plots are XML: the name there is an entity.
    let svg = std::fs::read_to_string(out.join("effect.svg")).unwrap();
    assert!(svg.contains("spin&lt;i&gt;"), "{svg}");
    // And it re-renders byte for byte.
    let before = std::fs::read(out.join("report.md")).unwrap();
    runner().arg("report").arg(&out).assert().success();
    assert_eq!(std::fs::read(out.join("report.md")).unwrap(), before);
}
