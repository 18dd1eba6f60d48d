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
    let mut reader = open(path, &shown)?;
    let header = reader
        .headers()
        .map_err(|source| ImportError::Header {
            file: shown.clone(),
            source,
        })?
        .clone();
    let columns: Vec<String> = header.iter().map(String::from).collect();
    no_column_twice(&columns, header.position().map_or(1, |p| p.line()), &shown)?;
    let at = Layout::of(&columns, &shown)?;
    // Room for every row at once: grown by doubling, the rows of a large
    // file would take up to twice their size at the peak.
    let capacity = line_count(path).unwrap_or(0).min(MAX_ROWS) as usize;
    let body = read_rows(&mut reader, &at, capacity, &shown)?;
    if body.rows.is_empty() {
        return Err(ImportError::NoRows { file: shown }.into());
    }
    let sha256 = runner_folder::output::hex(&reader.into_inner().hasher.finalize());
    Ok(Table {
        labels: body.labels.names,
        fork_ids: body.fork_ids.names,
        lines: body.lines,
        has_cell: at.cell.is_some(),
        has_delay: at.delay_ns.is_some() || at.delay_us.is_some(),
        has_spin: at.spin.is_some(),
        has_start_times: at.b_at.is_some() && at.t_at.is_some(),
        columns,
        rows: body.rows,
        sha256,
    })
}

/// Opens the file behind the hasher, so its SHA-256 comes from the one
/// pass that reads its rows.
fn open(path: &Path, shown: &str) -> Result<csv::Reader<Hashing<std::fs::File>>> {
    let file = std::fs::File::open(path).map_err(|source| ImportError::Unreadable {
        file: shown.to_string(),
        source,
    })?;
    Ok(csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .buffer_capacity(1 << 16)
        .from_reader(Hashing {
            inner: file,
            hasher: Sha256::new(),
        }))
}

/// Refuses a header that names a column twice: which of the two holds the
/// values would be a guess.
fn no_column_twice(columns: &[String], header_line: u64, shown: &str) -> Result<()> {
    for (i, c) in columns.iter().enumerate() {
        if let Some(j) = columns[i + 1..]
            .iter()
            .position(|o| o == c && !c.is_empty())
        {
            return Err(ImportError::ColumnTwice {
                file: shown.to_string(),
                line: header_line,
                column: c.clone(),
                first: i + 1,
                second: i + j + 2,
            }
            .into());
        }
    }
    Ok(())
}

/// Where each column runner reads sits in the header, found once so that
/// a row is read by index rather than by name.
struct Layout {
    fork: usize,
    pair: usize,
    first: usize,
    base: usize,
    treat: usize,
    cell: Option<usize>,
    delay_ns: Option<usize>,
    delay_us: Option<usize>,
    phase: Option<usize>,
    spin: Option<usize>,
    b_at: Option<usize>,
    t_at: Option<usize>,
}

impl Layout {
    /// Checks the header before any row, so a file without the columns
    /// every pair needs is refused at its first line.
    fn of(columns: &[String], shown: &str) -> Result<Layout> {
        let at = |name: &str| columns.iter().position(|c| c == name);
        let missing: Vec<&str> = REQUIRED
            .iter()
            .copied()
            .filter(|c| at(c).is_none())
            .collect();
        if !missing.is_empty() {
            return Err(ImportError::MissingColumns {
                file: shown.to_string(),
                missing,
                required: &REQUIRED,
                found: columns.to_vec(),
            }
            .into());
        }
        let (cell, delay_ns, delay_us) = (at("cell"), at("delay_ns"), at("delay_us"));
        if cell.is_none() && delay_ns.is_none() && delay_us.is_none() {
            return Err(ImportError::NoCellColumn {
                file: shown.to_string(),
            }
            .into());
        }
        let col = |name: &str| at(name).expect("required columns are present");
        Ok(Layout {
            fork: col("fork"),
            pair: col("pair"),
            first: col("first"),
            base: col("baseline_ns"),
            treat: col("treatment_ns"),
            cell,
            delay_ns,
            delay_us,
            phase: at("phase"),
            spin: at("spin_ns"),
            b_at: at("baseline_at_ns"),
            t_at: at("treatment_at_ns"),
        })
    }
}

/// The rows read so far, with the ids they name kept once each (see
/// [`Table`]).
struct Body {
    rows: Vec<PairRecord>,
    lines: Vec<u32>,
    labels: Interner,
    fork_ids: Interner,
}

/// Reads every row after the header, so the caller only checks that there
/// were some and finishes the hash.
fn read_rows(
    reader: &mut csv::Reader<Hashing<std::fs::File>>,
    at: &Layout,
    capacity: usize,
    shown: &str,
) -> Result<Body> {
    let mut body = Body {
        rows: Vec::with_capacity(capacity),
        lines: Vec::with_capacity(capacity),
        labels: Interner::default(),
        fork_ids: Interner::default(),
    };
    body.labels.id("");
    let mut record = csv::StringRecord::new();
    while let Some(line) = next_record(reader, &mut record, body.rows.len(), shown)? {
        let row = Row {
            record: &record,
            line,
            file: shown,
        };
        let pair = row.pair_record(at, &mut body.labels, &mut body.fork_ids)?;
        body.rows.push(pair);
        body.lines.push(u32::try_from(line).unwrap_or(u32::MAX));
    }
    body.rows.shrink_to_fit();
    body.lines.shrink_to_fit();
    Ok(body)
}

/// The next row's line, or `None` at the end of the file; `read` rows came
/// before it. Between rows is where a signal and a file too long to hold
/// are answered.
fn next_record(
    reader: &mut csv::Reader<Hashing<std::fs::File>>,
    record: &mut csv::StringRecord,
    read: usize,
    shown: &str,
) -> Result<Option<u64>> {
    // A file of millions of rows takes seconds: a signal is answered
    // within a few thousand rows.
    if read.is_multiple_of(INTERRUPT_ROWS) && runner_os::interrupt::interrupted() {
        return Err(ImportError::InterruptedReading {
            signal: runner_os::interrupt::Interrupted,
            file: shown.to_string(),
        }
        .into());
    }
    let more = reader
        .read_record(record)
        .map_err(|source| ImportError::Csv {
            file: shown.to_string(),
            source,
        })?;
    if !more {
        return Ok(None);
    }
    let line = record.position().map_or(0, |p| p.line());
    if read as u64 >= MAX_ROWS {
        return Err(ImportError::TooManyRows {
            file: shown.to_string(),
            line,
            most: MAX_ROWS,
        }
        .into());
    }
    Ok(Some(line))
}

/// One row of the file, so that every value it refuses is named with the
/// file, the line and the column.
struct Row<'a> {
    record: &'a csv::StringRecord,
    line: u64,
    file: &'a str,
}

/// A value of a row, or the sentence that refuses it.
type Value<T> = std::result::Result<T, ImportError>;

impl<'a> Row<'a> {
    /// The row as the record it becomes. Its values are read in the order
    /// of the columns below, so a row with several bad values is refused
    /// for the same one each time.
    fn pair_record(
        &self,
        at: &Layout,
        labels: &mut Interner,
        fork_ids: &mut Interner,
    ) -> Value<PairRecord> {
        let delay = self.delay(at)?;
        if self.get(at.fork).is_empty() {
            return Err(self.bad("fork", "a fork id (any text)", ""));
        }
        Ok(PairRecord {
            cell: at.cell.map_or(0, |i| labels.id(self.get(i))),
            delay_ns: delay.unwrap_or(0),
            fork: fork_ids.id(self.get(at.fork)),
            phase: self.phase(at.phase)?,
            pair: self.get(at.pair).parse().map_err(|_| {
                self.bad(
                    "pair",
                    "a whole number from 0 to 4294967295",
                    self.get(at.pair),
                )
            })?,
            first: self.first(at.first)?,
            baseline_ns: self.ns(at.base, "baseline_ns")?,
            treatment_ns: self.ns(at.treat, "treatment_ns")?,
            spin_ns: self.opt_ns(at.spin, "spin_ns")?,
            baseline_at_ns: self.opt_ns(at.b_at, "baseline_at_ns")?,
            treatment_at_ns: self.opt_ns(at.t_at, "treatment_at_ns")?,
            usage: None,
            counts: None,
        })
    }

    /// A column's text; a short row reads as empty, which each column then
    /// refuses in its own words.
    fn get(&self, i: usize) -> &'a str {
        self.record.get(i).unwrap_or_default()
    }

    /// The one sentence every refused value is said in.
    fn bad(&self, column: &'static str, what: &'static str, got: &str) -> ImportError {
        ImportError::BadValue {
            file: self.file.to_string(),
            line: self.line,
            column,
            what,
            got: got.to_string(),
        }
    }

    /// A time column, which runner keeps in whole nanoseconds.
    fn ns(&self, i: usize, column: &'static str) -> Value<u64> {
        nanos(self.get(i), 1.0)
            .ok_or_else(|| self.bad(column, "a non-negative number of nanoseconds", self.get(i)))
    }

    /// An optional time column: 0 without it, as pairs.csv then says.
    fn opt_ns(&self, i: Option<usize>, column: &'static str) -> Value<u64> {
        i.map_or(Ok(0), |i| self.ns(i, column))
    }

    /// The delay, from `delay_ns` when the file has both columns, so one
    /// file never has two delays per row.
    fn delay(&self, at: &Layout) -> Value<Option<u64>> {
        match (at.delay_ns, at.delay_us) {
            (Some(i), _) => Some(self.ns(i, "delay_ns")).transpose(),
            (None, Some(i)) => nanos(self.get(i), 1e3)
                .ok_or_else(|| {
                    self.bad(
                        "delay_us",
                        "a non-negative number of microseconds",
                        self.get(i),
                    )
                })
                .map(Some),
            (None, None) => Ok(None),
        }
    }

    /// The phase, measured without a `phase` column: a file that does not
    /// say has no warm-up.
    fn phase(&self, i: Option<usize>) -> Value<Phase> {
        match i.map(|i| self.get(i)) {
            None | Some("measure") => Ok(Phase::Measure),
            Some("warmup") => Ok(Phase::Warmup),
            Some(other) => Err(self.bad("phase", "`warmup` or `measure`", other)),
        }
    }

    /// The arm that ran first, which runner's order effects are read from.
    fn first(&self, i: usize) -> Value<Arm> {
        match self.get(i) {
            "baseline" => Ok(Arm::Baseline),
            "treatment" => Ok(Arm::Treatment),
            other => Err(self.bad("first", "`baseline` or `treatment`", other)),
        }
    }
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
