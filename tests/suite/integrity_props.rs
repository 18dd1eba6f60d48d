//! Property: random corruptions of a finished folder's files (a
//! byte flipped, a row dropped or duplicated, a file truncated) are always
//! either refused by `runner report` with exit 2, leaving every file as it
//! was, or provably harmless: the report renders and every number in it,
//! `analysis.json`, is byte for byte the original's. Any change to
//! `pairs.csv` must be refused. So no number is ever computed from data
//! that does not match its digests.

use crate::common;
use common::*;
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const FILES: [&str; 4] = ["pairs.csv", "run.json", "report.md", "analysis.json"];

/// One finished folder for every case (kept for the whole test binary).
fn original() -> &'static (tempfile::TempDir, PathBuf) {
    static FOLDER: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    FOLDER.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let spec = write_spec(tmp.path(), "small", SMALL_AA);
        let out = exec_ok(tmp.path(), &spec, "fin", &[]);
        (tmp, out)
    })
}

#[derive(Debug, Clone)]
enum Damage {
    FlipByte { at: f64, xor: u8 },
    DropLine { at: f64 },
    DuplicateLine { at: f64 },
    Truncate { at: f64 },
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (0.0..1.0f64, 1..=255u8).prop_map(|(at, xor)| Damage::FlipByte { at, xor }),
        (0.0..1.0f64).prop_map(|at| Damage::DropLine { at }),
        (0.0..1.0f64).prop_map(|at| Damage::DuplicateLine { at }),
        (0.0..1.0f64).prop_map(|at| Damage::Truncate { at }),
    ]
}

fn apply(bytes: &[u8], d: &Damage) -> Vec<u8> {
    let index = |at: f64, n: usize| ((at * n as f64) as usize).min(n.saturating_sub(1));
    let lines = || -> Vec<Vec<u8>> {
        bytes
            .split_inclusive(|&b| b == b'\n')
            .map(<[u8]>::to_vec)
            .collect()
    };
    match *d {
        Damage::FlipByte { at, xor } => {
            let mut b = bytes.to_vec();
            let i = index(at, b.len());
            b[i] ^= xor;
            b
        }
        Damage::DropLine { at } => {
            let mut l = lines();
            let i = index(at, l.len());
            l.remove(i);
            l.concat()
        }
        Damage::DuplicateLine { at } => {
            let mut l = lines();
            let i = index(at, l.len());
            let line = l[i].clone();
            l.insert(i, line);
            l.concat()
        }
        Damage::Truncate { at } => bytes[..index(at, bytes.len())].to_vec(),
    }
}

fn check(file: &str, d: &Damage) -> Result<(), TestCaseError> {
    let (_keep, original) = original();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("fin");
    copy_tree(original, &dir);
    let path: &Path = &dir.join(file);
    let bytes = std::fs::read(path).unwrap();
    let damaged = apply(&bytes, d);
    prop_assume!(damaged != bytes);
    std::fs::write(path, &damaged).unwrap();
    let before = tree(&dir);
    let o = run_in(tmp.path(), &["report", "fin"]);
    let err = err_of(&o);
    prop_assert!(!err.contains("panicked"), "{file} {d:?}: {err}");
    match o.status.code() {
        Some(2) => {
            prop_assert!(err.starts_with("error: "), "{err}");
            prop_assert_eq!(tree(&dir), before, "a refused report changed the folder");
        }
        Some(0) => {
            prop_assert!(
                file != "pairs.csv",
                "{d:?}: a changed pairs.csv was rendered"
            );
            prop_assert_eq!(
                std::fs::read(dir.join("analysis.json")).unwrap(),
                std::fs::read(original.join("analysis.json")).unwrap(),
                "{} {:?}: rendered numbers that are not the run's",
                file,
                d
            );
        }
        other => prop_assert!(false, "{file} {d:?}: exit {other:?}: {err}"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn corruptions_are_refused_or_harmless(file in 0..FILES.len(), d in damage()) {
        check(FILES[file], &d)?;
    }

    /// pairs.csv and run.json hold everything the numbers come from: more
    /// cases there.
    #[test]
    fn corruptions_of_the_raw_data_are_refused_or_harmless(raw in 0..2usize, d in damage()) {
        check(FILES[raw], &d)?;
    }
}
