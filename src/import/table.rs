//! Reading another harness's pairs: a CSV with a header, one row per pair.
//!
//! Columns (by name, in any order; others are ignored and listed in
//! run.json): `fork`, `pair`, `first` (`baseline` | `treatment`),
//! `baseline_ns`, `treatment_ns`, and `cell` (any label) or a delay
//! (`delay_ns`, or `delay_us`), or both. Optional: `phase` (`warmup` |
//! `measure`, default measure), `spin_ns`, `baseline_at_ns`,
//! `treatment_at_ns`. Times are nanoseconds; a fraction is rounded to the
//! nearest one (runner's own data is whole nanoseconds). Every error names
//! the file, the line and the column.

use super::error::ImportError;
use runner_core::error::Result;
use runner_core::record::{Arm, PairRecord, Phase};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;

/// Rows past this are refused, as `pairs.csv` rows are (the analysis reads
/// them all into memory).
const MAX_ROWS: u64 = 20_000_000;
/// Rows read between two looks at the signal count.
const INTERRUPT_ROWS: usize = 4096;

/// The file as read. Each row is held as the record it will become, with
/// provisional keys: `cell` is the row's label (an index into `labels`),
/// `fork` its fork id (an index into `fork_ids`), `pair` the file's pair
/// number and `delay_ns` its delay (0 without a delay column). Ids are
/// kept once each rather than per row: a file of millions of rows holds a
/// few hundred distinct ones, and a string per row would double the
/// memory an import needs. Absent optional columns read as 0.
pub(crate) struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<PairRecord>,
    /// The line each row starts on, for messages (4 bytes: a file of at
    /// most `MAX_ROWS` rows has fewer lines than that, but for quoted line
    /// breaks, which saturate).
    pub lines: Vec<u32>,
    pub labels: Vec<String>,
    pub fork_ids: Vec<String>,
    pub sha256: String,
    pub has_cell: bool,
    pub has_delay: bool,
    pub has_spin: bool,
    pub has_start_times: bool,
}

/// Hashes what passes through, so the file is read once, in a buffer,
/// instead of whole into memory first.
struct Hashing<R> {
    inner: R,
    hasher: Sha256,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

/// The file's `\n`s: at least its rows, as no row is without one but the
/// last (which the header's newline makes up for).
fn line_count(path: &Path) -> std::io::Result<u64> {
    let mut file = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 1 << 16];
    let mut n = 0u64;
    loop {
        let got = file.read(&mut buf)?;
        if got == 0 {
            return Ok(n);
        }
        n += buf[..got].iter().filter(|&&b| b == b'\n').count() as u64;
    }
}

/// One index per distinct text, in order of first appearance.
#[derive(Default)]
struct Interner {
    names: Vec<String>,
    index: HashMap<String, u32>,
}

impl Interner {
    fn id(&mut self, text: &str) -> u32 {
        if let Some(&i) = self.index.get(text) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(text.to_string());
        self.index.insert(text.to_string(), i);
        i
    }
}

const REQUIRED: [&str; 5] = ["fork", "pair", "first", "baseline_ns", "treatment_ns"];

/// A non-negative number of nanoseconds, rounded to a whole one.
fn nanos(text: &str, scale: f64) -> Option<u64> {
    let v: f64 = text.trim().parse().ok()?;
    let ns = (v * scale).round();
    (v.is_finite() && v >= 0.0 && ns < 9.0e18).then_some(ns as u64)
}

pub(crate) fn read(path: &Path) -> Result<Table> {
    let shown = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|source| ImportError::Unreadable {
        file: shown.clone(),
        source,
    })?;
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .buffer_capacity(1 << 16)
        .from_reader(Hashing {
            inner: file,
            hasher: Sha256::new(),
        });
    let header = reader
        .headers()
        .map_err(|source| ImportError::Header {
            file: shown.clone(),
            source,
        })?
        .clone();
    let columns: Vec<String> = header.iter().map(String::from).collect();
    let header_line = header.position().map_or(1, |p| p.line());
    for (i, c) in columns.iter().enumerate() {
        if let Some(j) = columns[i + 1..]
            .iter()
            .position(|o| o == c && !c.is_empty())
        {
            return Err(ImportError::ColumnTwice {
                file: shown,
                line: header_line,
                column: c.clone(),
                first: i + 1,
                second: i + j + 2,
            }
            .into());
        }
    }
    let at = |name: &str| columns.iter().position(|c| c == name);
    let missing: Vec<&str> = REQUIRED
        .iter()
        .copied()
        .filter(|c| at(c).is_none())
        .collect();
    if !missing.is_empty() {
        return Err(ImportError::MissingColumns {
            file: shown,
            missing,
            required: &REQUIRED,
            found: columns,
        }
        .into());
    }
    let (cell, delay_ns, delay_us) = (at("cell"), at("delay_ns"), at("delay_us"));
    if cell.is_none() && delay_ns.is_none() && delay_us.is_none() {
        return Err(ImportError::NoCellColumn { file: shown }.into());
    }
    let col = |name: &str| at(name).expect("required columns are present");
    let (fork, pair, first, base, treat) = (
        col("fork"),
        col("pair"),
        col("first"),
        col("baseline_ns"),
        col("treatment_ns"),
    );
    let (phase, spin, b_at, t_at) = (
        at("phase"),
        at("spin_ns"),
        at("baseline_at_ns"),
        at("treatment_at_ns"),
    );
    // Room for every row at once: grown by doubling, the rows of a large
    // file would take up to twice their size at the peak.
    let capacity = line_count(path).unwrap_or(0).min(MAX_ROWS) as usize;
    let mut rows: Vec<PairRecord> = Vec::with_capacity(capacity);
    let mut lines: Vec<u32> = Vec::with_capacity(capacity);
    let (mut labels, mut fork_ids) = (Interner::default(), Interner::default());
    labels.id("");
    let mut record = csv::StringRecord::new();
    loop {
        // A file of millions of rows takes seconds: a signal is answered
        // within a few thousand rows.
        if rows.len().is_multiple_of(INTERRUPT_ROWS) && runner_os::interrupt::interrupted() {
            return Err(ImportError::InterruptedReading {
                signal: runner_os::interrupt::Interrupted,
                file: shown,
            }
            .into());
        }
        let more = reader
            .read_record(&mut record)
            .map_err(|source| ImportError::Csv {
                file: shown.clone(),
                source,
            })?;
        if !more {
            break;
        }
        let line = record.position().map_or(0, |p| p.line());
        if rows.len() as u64 >= MAX_ROWS {
            return Err(ImportError::TooManyRows {
                file: shown,
                line,
                most: MAX_ROWS,
            }
            .into());
        }
        let get = |i: usize| record.get(i).unwrap_or_default();
        let bad = |column: &'static str, what: &'static str, got: &str| ImportError::BadValue {
            file: shown.clone(),
            line,
            column,
            what,
            got: got.to_string(),
        };
        let ns = |i: usize, c: &'static str| {
            nanos(get(i), 1.0).ok_or_else(|| bad(c, "a non-negative number of nanoseconds", get(i)))
        };
        let opt_ns = |i: Option<usize>, c: &'static str| i.map_or(Ok(0), |i| ns(i, c));
        let delay =
            match (delay_ns, delay_us) {
                (Some(i), _) => Some(ns(i, "delay_ns")?),
                (None, Some(i)) => Some(nanos(get(i), 1e3).ok_or_else(|| {
                    bad("delay_us", "a non-negative number of microseconds", get(i))
                })?),
                (None, None) => None,
            };
        if get(fork).is_empty() {
            return Err(bad("fork", "a fork id (any text)", "").into());
        }
        rows.push(PairRecord {
            cell: cell.map_or(0, |i| labels.id(get(i))),
            delay_ns: delay.unwrap_or(0),
            fork: fork_ids.id(get(fork)),
            phase: match phase.map(get) {
                None | Some("measure") => Phase::Measure,
                Some("warmup") => Phase::Warmup,
                Some(other) => return Err(bad("phase", "`warmup` or `measure`", other).into()),
            },
            pair: get(pair)
                .parse()
                .map_err(|_| bad("pair", "a whole number from 0 to 4294967295", get(pair)))?,
            first: match get(first) {
                "baseline" => Arm::Baseline,
                "treatment" => Arm::Treatment,
                other => return Err(bad("first", "`baseline` or `treatment`", other).into()),
            },
            baseline_ns: ns(base, "baseline_ns")?,
            treatment_ns: ns(treat, "treatment_ns")?,
            spin_ns: opt_ns(spin, "spin_ns")?,
            baseline_at_ns: opt_ns(b_at, "baseline_at_ns")?,
            treatment_at_ns: opt_ns(t_at, "treatment_at_ns")?,
            usage: None,
            counts: None,
        });
        lines.push(u32::try_from(line).unwrap_or(u32::MAX));
    }
    if rows.is_empty() {
        return Err(ImportError::NoRows { file: shown }.into());
    }
    rows.shrink_to_fit();
    lines.shrink_to_fit();
    let sha256 = runner_folder::output::hex(&reader.into_inner().hasher.finalize());
    Ok(Table {
        labels: labels.names,
        fork_ids: fork_ids.names,
        lines,
        has_cell: cell.is_some(),
        has_delay: delay_ns.is_some() || delay_us.is_some(),
        has_spin: spin.is_some(),
        has_start_times: b_at.is_some() && t_at.is_some(),
        columns,
        rows,
        sha256,
    })
}

/// Fork ids in runner's order: by number when every id is a whole number,
/// else in order of first appearance.
pub(crate) fn fork_order(ids: &[&str]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let mut known = std::collections::HashSet::new();
    for id in ids {
        if known.insert(*id) {
            seen.push(id.to_string());
        }
    }
    let numbers: Option<Vec<u64>> = seen.iter().map(|s| s.parse().ok()).collect();
    if let Some(n) = numbers {
        let mut by: BTreeMap<u64, String> = BTreeMap::new();
        for (k, s) in n.into_iter().zip(seen) {
            by.insert(k, s);
        }
        return by.into_values().collect();
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanoseconds_round_and_refuse_negatives() {
        assert_eq!(nanos("12", 1.0), Some(12));
        assert_eq!(nanos(" 12.6 ", 1.0), Some(13));
        assert_eq!(nanos("0.5", 1e3), Some(500));
        assert_eq!(nanos("-1", 1.0), None);
        assert_eq!(nanos("NaN", 1.0), None);
        assert_eq!(nanos("ten", 1.0), None);
    }

    #[test]
    fn forks_by_number_or_by_appearance() {
        assert_eq!(fork_order(&["10", "2", "10", "1"]), ["1", "2", "10"]);
        assert_eq!(fork_order(&["b", "a", "b"]), ["b", "a"]);
        assert_eq!(fork_order(&["1", "x"]), ["1", "x"]);
    }
}
