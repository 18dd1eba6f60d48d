//! A command's run under valgrind's cachegrind: the instructions every
//! process of its tree executed, summed.
//!
//! `valgrind --tool=cachegrind --cache-sim=no --trace-children=yes`
//! follows every `exec` of the run (a shell's programs, a pipeline's
//! stages) and writes one file per process, named by its pid
//! (`--cachegrind-out-file=DIR/cg.%p`), into a private folder of runner's
//! temporary folder; each file's `summary:` line is that process's total
//! over the `events:` it names (`Ir` alone, or with `--cache-sim=yes` the
//! L1 and last-level misses too). The run's count is their sum. A process
//! that forks without `exec` writes its own file too, which holds what its
//! parent executed before the fork as well: such a program's count
//! includes that part twice, the same way in both arms.

use runner_core::record::{CacheMisses, RunCount};
use std::path::Path;

/// The options before the command's argv (`--` ends them).
pub(super) fn options(out_dir: &Path, cache_sim: bool) -> Vec<std::ffi::OsString> {
    let mut out_file = std::ffi::OsString::from("--cachegrind-out-file=");
    out_file.push(out_dir.join("cg.%p"));
    [
        "--tool=cachegrind".into(),
        if cache_sim {
            "--cache-sim=yes"
        } else {
            "--cache-sim=no"
        }
        .into(),
        "--trace-children=yes".into(),
        // Errors only on stderr: a failing run's tail is the command's.
        "--quiet".into(),
        out_file,
        "--".into(),
    ]
    .into()
}

/// Why a run's counts could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CountError {
    #[error("valgrind wrote no count file (cachegrind output) into {0}")]
    NoFiles(String),
    #[error("{file}: {why}")]
    Bad { file: String, why: String },
    #[error("{file}: {why}")]
    File { file: String, why: FileError },
}

/// Why a file lacks its summary: valgrind writes it when the process ends.
fn ended(key: &str) -> &'static str {
    if key == "summary:" {
        " (the process did not end normally)"
    } else {
        ""
    }
}

/// What is wrong with one count file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FileError {
    #[error("it has no `{0}` line{why}", why = ended(.0))]
    Missing(&'static str),
    #[error("`summary:` holds {0:?}")]
    NotANumber(String),
    #[error("`summary:` has {values} values for the {events} events")]
    Count { values: usize, events: usize },
    #[error("its events do not include Ir")]
    NoInstructions,
}

/// The sum over every count file in `dir`.
pub(super) fn read_all(dir: &Path) -> Result<RunCount, CountError> {
    let shown = |p: &Path| p.display().to_string();
    let entries = std::fs::read_dir(dir).map_err(|e| CountError::Bad {
        file: shown(dir),
        why: e.to_string(),
    })?;
    let mut total: Option<RunCount> = None;
    for entry in entries.flatten() {
        let path = entry.path();
        if !entry.file_name().to_string_lossy().starts_with("cg.") {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|e| CountError::Bad {
            file: shown(&path),
            why: e.to_string(),
        })?;
        let one = parse(&text).map_err(|why| CountError::File {
            file: shown(&path),
            why,
        })?;
        total = Some(match total {
            None => one,
            Some(t) => add(t, one),
        });
    }
    total.ok_or_else(|| CountError::NoFiles(shown(dir)))
}

fn add(a: RunCount, b: RunCount) -> RunCount {
    RunCount {
        instructions: a.instructions + b.instructions,
        cache: match (a.cache, b.cache) {
            (Some(x), Some(y)) => Some(CacheMisses {
                l1: x.l1 + y.l1,
                ll: x.ll + y.ll,
            }),
            _ => None,
        },
    }
}

/// One cachegrind output file's totals: its `summary:` line read by the
/// names of its `events:` line.
pub(super) fn parse(text: &str) -> Result<RunCount, FileError> {
    let field = |key: &'static str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .map(str::split_whitespace)
            .ok_or(FileError::Missing(key))
    };
    let events: Vec<&str> = field("events:")?.collect();
    let values: Vec<u64> = field("summary:")?
        .map(|v| {
            v.parse::<u64>()
                .map_err(|_| FileError::NotANumber(v.into()))
        })
        .collect::<Result<_, _>>()?;
    if values.len() != events.len() {
        return Err(FileError::Count {
            values: values.len(),
            events: events.len(),
        });
    }
    let get = |name: &str| events.iter().position(|e| *e == name).map(|i| values[i]);
    let instructions = get("Ir").ok_or(FileError::NoInstructions)?;
    let l1 = ["I1mr", "D1mr", "D1mw"].map(get);
    let ll = ["ILmr", "DLmr", "DLmw"].map(get);
    let sum = |v: [Option<u64>; 3]| v.iter().copied().sum::<Option<u64>>();
    Ok(RunCount {
        instructions,
        cache: match (sum(l1), sum(ll)) {
            (Some(l1), Some(ll)) => Some(CacheMisses { l1, ll }),
            _ => None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Files as cachegrind 3.19 writes them, with and without the cache
    /// simulation: the totals come from the summary, by event name.
    #[test]
    fn a_count_file_is_read_by_its_event_names() {
        let plain = "desc: I1 cache: 32768 B\ncmd: /usr/bin/awk\nevents: Ir\nfl=x.c\nfn=main\n3 7\nsummary: 31103853\n";
        assert_eq!(
            parse(plain),
            Ok(RunCount {
                instructions: 31_103_853,
                cache: None
            })
        );
        let cached =
            "events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\nsummary: 1000 5 2 400 30 4 200 10 1\n";
        assert_eq!(
            parse(cached),
            Ok(RunCount {
                instructions: 1000,
                cache: Some(CacheMisses { l1: 45, ll: 7 })
            })
        );
        let said = |t: &str| parse(t).unwrap_err().to_string();
        assert!(said("events: Ir\n").contains("no `summary:` line"));
        assert!(said("events: Ir Dr\nsummary: 5\n").contains("1 values for the 2 events"));
        assert!(said("events: Dr\nsummary: 5\n").contains("do not include Ir"));
        assert!(said("events: Ir\nsummary: x\n").contains("\"x\""));
    }

    /// Every process's file counts; other files in the folder do not.
    #[test]
    fn a_run_is_the_sum_of_its_processes() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(read_all(dir.path()), Err(CountError::NoFiles(_))));
        std::fs::write(dir.path().join("cg.10"), "events: Ir\nsummary: 100\n").unwrap();
        std::fs::write(dir.path().join("cg.11"), "events: Ir\nsummary: 23\n").unwrap();
        std::fs::write(dir.path().join("other"), "not a count").unwrap();
        assert_eq!(read_all(dir.path()).unwrap().instructions, 123);
        std::fs::write(dir.path().join("cg.12"), "events: Ir\n").unwrap();
        let e = read_all(dir.path()).unwrap_err().to_string();
        assert!(e.contains("cg.12") && e.contains("summary"), "{e}");
    }
}
