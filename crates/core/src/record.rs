//! One row of `pairs.csv`: the raw data every analysis is recomputed from.
//!
//! Shared by the worker (which produces it), the parent (which stores it) and
//! the analysis (which reads it back), so the column set lives in one place.

use serde::{Deserialize, Serialize};

mod row_error;
pub use row_error::RowError;

/// Whether a pair belongs to the warm-up (recorded, never analysed), is
/// measured, or was counted: run under an instruction counter beside the
/// timed pairs, in pairs of its own, whose times are those of the counted
/// runs (slowed by the counter) and are never analysed as time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Warmup,
    Measure,
    Count,
}

impl Phase {
    /// The word `pairs.csv` holds.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Warmup => "warmup",
            Phase::Measure => "measure",
            Phase::Count => "count",
        }
    }
}

/// One side of a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arm {
    Baseline,
    Treatment,
}

/// One pair as recorded. Times are integer nanoseconds; `*_at_ns` count from
/// the fork's first timed run, so order and elapsed time stay separable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairRecord {
    pub cell: u32,
    pub fork: u32,
    pub phase: Phase,
    pub pair: u32,
    /// Which arm ran first in this pair.
    pub first: Arm,
    pub baseline_ns: u64,
    pub treatment_ns: u64,
    /// The injected delay asked for.
    pub delay_ns: u64,
    /// The busy-wait actually spent inside the treatment's timed region.
    pub spin_ns: u64,
    pub baseline_at_ns: u64,
    pub treatment_at_ns: u64,
    /// CPU time and peak memory of each arm's run, for kinds that measure
    /// them (`command`); `None` for the others. Boxed: most runs record
    /// none, and a record is held per pair (millions of them in a large
    /// analysis), so the 64 bytes of an empty usage would nearly double
    /// its size. Read it with [`PairRecord::usage`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Box<PairUsage>>,
    /// What each arm's run executed, for a counted pair (`Phase::Count`,
    /// or a measured pair of a run that counts and does not time); `None`
    /// for pairs that were not counted. Boxed for the reason `usage` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<Box<PairCounts>>,
}

/// What one counted run executed: the instructions of every process of
/// its tree, summed, and with a simulated cache the misses of its first
/// level and its last level (instruction and data together).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunCount {
    pub instructions: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheMisses>,
}

/// A simulated cache's misses over a counted run (cachegrind's
/// `--cache-sim=yes`): L1 = I1mr + D1mr + D1mw, LL = ILmr + DLmr + DLmw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheMisses {
    pub l1: u64,
    pub ll: u64,
}

impl RunCount {
    /// The estimated cycles iai-callgrind prints from the same counts:
    /// an instruction costs 1, an L1 miss that hits the last level 10,
    /// a last-level miss 100 (its own model, not a measurement). `None`
    /// without a simulated cache.
    pub fn estimated_cycles(&self) -> Option<u64> {
        self.cache
            .map(|c| self.instructions + 10 * c.l1.saturating_sub(c.ll) + 100 * c.ll)
    }
}

/// The counts of both runs of a counted pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PairCounts {
    pub baseline: Option<RunCount>,
    pub treatment: Option<RunCount>,
}

impl PairCounts {
    /// What a [`PairRecord`] holds: nothing when neither arm was counted.
    pub fn boxed(self) -> Option<Box<PairCounts>> {
        (self.baseline.is_some() || self.treatment.is_some()).then(|| Box::new(self))
    }
}

/// What one run of a child process used, from `wait4`'s rusage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunUsage {
    /// User CPU time.
    pub user_ns: u64,
    /// System CPU time.
    pub sys_ns: u64,
    /// Peak resident set size, KiB (Linux's `ru_maxrss`).
    pub max_rss_kib: u64,
}

/// The usage of both runs of a pair; an arm whose kind measures none is `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PairUsage {
    pub baseline: Option<RunUsage>,
    pub treatment: Option<RunUsage>,
}

impl PairUsage {
    pub fn is_empty(&self) -> bool {
        self.baseline.is_none() && self.treatment.is_none()
    }

    /// What a [`PairRecord`] holds: nothing when neither arm recorded usage.
    pub fn boxed(self) -> Option<Box<PairUsage>> {
        (!self.is_empty()).then(|| Box::new(self))
    }
}

/// The header of `pairs.csv`, in column order (docs/guide/output-folder.md).
pub const CSV_HEADER: &str = "cell,fork,phase,pair,first,baseline_ns,treatment_ns,delay_ns,spin_ns,baseline_at_ns,treatment_at_ns";

/// Columns that follow [`CSV_HEADER`] when a run records per-run usage
/// (a `command` arm): empty fields for an arm that records none. Runs
/// without usage keep exactly the 11 columns above.
pub const USAGE_COLUMNS: &str = "baseline_user_ns,baseline_sys_ns,baseline_max_rss_kib,treatment_user_ns,treatment_sys_ns,treatment_max_rss_kib";

/// Columns that follow the ones above when a run counts instructions: an
/// arm's run that was not counted (every timed run) leaves its field empty.
pub const INSTRUCTION_COLUMNS: &str = "baseline_instructions,treatment_instructions";

/// Columns that follow the instructions when the counter simulated a
/// cache (`design.cache_sim`).
pub const CACHE_COLUMNS: &str =
    "baseline_l1_misses,baseline_ll_misses,treatment_l1_misses,treatment_ll_misses";

/// Which optional column groups a `pairs.csv` (or a fork's rows) has. A
/// run without usage or counts keeps exactly the 11 columns of
/// [`CSV_HEADER`], so files written before a group existed read as they
/// were.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Columns {
    /// [`USAGE_COLUMNS`].
    pub usage: bool,
    /// [`INSTRUCTION_COLUMNS`].
    pub instructions: bool,
    /// [`CACHE_COLUMNS`], after the instructions (so only with them).
    pub cache: bool,
}

impl Columns {
    /// Usage columns alone, or none.
    pub fn usage(usage: bool) -> Columns {
        Columns {
            usage,
            ..Columns::default()
        }
    }

    /// Both sets of columns: what a file holding rows of either needs.
    pub fn union(self, other: Columns) -> Columns {
        Columns {
            usage: self.usage || other.usage,
            instructions: self.instructions || other.instructions,
            cache: self.cache || other.cache,
        }
    }

    /// Every shape a header may have, the plainest first.
    fn all() -> impl Iterator<Item = Columns> {
        [false, true].into_iter().flat_map(|usage| {
            [(false, false), (true, false), (true, true)]
                .into_iter()
                .map(move |(instructions, cache)| Columns {
                    usage,
                    instructions,
                    cache,
                })
        })
    }

    /// Where each group starts, and how many fields a row has.
    fn layout(self) -> Layout {
        let mut at = PLAIN_COLUMNS;
        let mut group = |on: bool, width: usize| {
            let start = on.then_some(at);
            if on {
                at += width;
            }
            start
        };
        let usage = group(self.usage, 6);
        let instructions = group(self.instructions, 2);
        let cache = group(self.instructions && self.cache, 4);
        Layout {
            usage,
            instructions,
            cache,
            width: at,
        }
    }
}

/// [`Columns::layout`]: the first field of each group present.
struct Layout {
    usage: Option<usize>,
    instructions: Option<usize>,
    cache: Option<usize>,
    width: usize,
}

/// The header for a `pairs.csv` whose rows have `columns`.
pub fn csv_header(columns: Columns) -> String {
    let mut h = CSV_HEADER.to_string();
    if columns.usage {
        h = format!("{h},{USAGE_COLUMNS}");
    }
    if columns.instructions {
        h = format!("{h},{INSTRUCTION_COLUMNS}");
        if columns.cache {
            h = format!("{h},{CACHE_COLUMNS}");
        }
    }
    h
}

impl PairRecord {
    /// Both arms' usage (empty when the kind records none).
    pub fn usage(&self) -> PairUsage {
        self.usage.as_deref().copied().unwrap_or_default()
    }

    /// The usage to change in place, made empty first if there was none.
    pub fn usage_mut(&mut self) -> &mut PairUsage {
        self.usage.get_or_insert_with(Default::default)
    }

    /// Both arms' counts (empty when the pair was not counted).
    pub fn counts(&self) -> PairCounts {
        self.counts.as_deref().copied().unwrap_or_default()
    }

    /// D = treatment - baseline, signed.
    pub fn diff_ns(&self) -> i64 {
        self.treatment_ns as i64 - self.baseline_ns as i64
    }

    /// One CSV line without the trailing newline, in the columns a file
    /// of this row alone would have: [`CSV_HEADER`], then
    /// [`USAGE_COLUMNS`] when the pair has usage, then the counts'.
    pub fn to_csv_line(&self) -> String {
        let mut line = Vec::new();
        write_line(&mut line, self, self.columns());
        line.pop();
        String::from_utf8(line).expect("numbers and words are UTF-8")
    }
}

impl PairRecord {
    /// The columns this row needs to be written whole.
    pub fn columns(&self) -> Columns {
        let counts = self.counts();
        let cached = [counts.baseline, counts.treatment]
            .iter()
            .any(|c| c.is_some_and(|c| c.cache.is_some()));
        Columns {
            usage: self.usage.is_some(),
            instructions: self.counts.is_some(),
            cache: cached,
        }
    }
}

/// The rows' CSV lines (each ending in `\n`) in `columns` (empty fields
/// for a group a row has nothing in): the one writer of `pairs.csv` and of
/// a fork's rows, the csv crate's, the same that reads them back, so the
/// two cannot disagree about a field.
pub fn write_rows<'a, W: std::io::Write>(
    out: W,
    rows: impl IntoIterator<Item = &'a PairRecord>,
    columns: Columns,
) -> std::io::Result<W> {
    use std::fmt::Write as _;
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_writer(out);
    let mut field = String::new();
    let mut put = |w: &mut csv::Writer<W>, v: Option<u64>| -> csv::Result<()> {
        field.clear();
        if let Some(v) = v {
            write!(field, "{v}").expect("writing to a String");
        }
        w.write_field(&field)
    };
    let err = |e: csv::Error| std::io::Error::other(e.to_string());
    for r in rows {
        let phase = r.phase.as_str();
        let first = match r.first {
            Arm::Baseline => "baseline",
            Arm::Treatment => "treatment",
        };
        put(&mut w, Some(r.cell.into())).map_err(err)?;
        put(&mut w, Some(r.fork.into())).map_err(err)?;
        w.write_field(phase).map_err(err)?;
        put(&mut w, Some(r.pair.into())).map_err(err)?;
        w.write_field(first).map_err(err)?;
        for v in [
            r.baseline_ns,
            r.treatment_ns,
            r.delay_ns,
            r.spin_ns,
            r.baseline_at_ns,
            r.treatment_at_ns,
        ] {
            put(&mut w, Some(v)).map_err(err)?;
        }
        if columns.usage {
            let u = r.usage();
            for arm in [u.baseline, u.treatment] {
                put(&mut w, arm.map(|a| a.user_ns)).map_err(err)?;
                put(&mut w, arm.map(|a| a.sys_ns)).map_err(err)?;
                put(&mut w, arm.map(|a| a.max_rss_kib)).map_err(err)?;
            }
        }
        let c = r.counts();
        if columns.instructions {
            for arm in [c.baseline, c.treatment] {
                put(&mut w, arm.map(|a| a.instructions)).map_err(err)?;
            }
            if columns.cache {
                for arm in [c.baseline, c.treatment] {
                    let cache = arm.and_then(|a| a.cache);
                    put(&mut w, cache.map(|m| m.l1)).map_err(err)?;
                    put(&mut w, cache.map(|m| m.ll)).map_err(err)?;
                }
            }
        }
        w.write_record(None::<&[u8]>).map_err(err)?;
    }
    w.into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))
}

/// Appends one row's CSV line in `columns`, `\n` included, to `out` (see
/// [`write_rows`]).
pub fn write_line(out: &mut Vec<u8>, r: &PairRecord, columns: Columns) {
    write_rows(out, [r], columns).expect("writing to memory");
}

/// A whole `pairs.csv`: the header for `columns`, then the rows (see
/// [`write_rows`]).
pub fn write_csv<W: std::io::Write>(
    mut out: W,
    rows: &[PairRecord],
    columns: Columns,
) -> std::io::Result<()> {
    use std::io::Write as _;
    writeln!(out, "{}", csv_header(columns))?;
    write_rows(
        std::io::BufWriter::with_capacity(1 << 16, out),
        rows,
        columns,
    )?
    .flush()
}

/// How many columns a row without usage has: [`CSV_HEADER`]'s.
const PLAIN_COLUMNS: usize = 11;

/// Column names in order, for errors: [`CSV_HEADER`], [`USAGE_COLUMNS`],
/// [`INSTRUCTION_COLUMNS`] and [`CACHE_COLUMNS`] (a unit test holds them
/// together); in a row without a group, the later groups' fields sit at
/// lower positions, so a field's name is found through its group
/// ([`Layout::name`]).
const COLUMNS: [&str; 23] = [
    "cell",
    "fork",
    "phase",
    "pair",
    "first",
    "baseline_ns",
    "treatment_ns",
    "delay_ns",
    "spin_ns",
    "baseline_at_ns",
    "treatment_at_ns",
    "baseline_user_ns",
    "baseline_sys_ns",
    "baseline_max_rss_kib",
    "treatment_user_ns",
    "treatment_sys_ns",
    "treatment_max_rss_kib",
    "baseline_instructions",
    "treatment_instructions",
    "baseline_l1_misses",
    "baseline_ll_misses",
    "treatment_l1_misses",
    "treatment_ll_misses",
];

/// Where each group's names start in [`COLUMNS`].
const USAGE_NAMES: usize = 11;
const INSTRUCTION_NAMES: usize = 17;
const CACHE_NAMES: usize = 19;

impl Layout {
    /// The name of field `i` of a row in this layout.
    fn name(&self, i: usize) -> &'static str {
        let groups = [
            (self.usage, USAGE_NAMES),
            (self.instructions, INSTRUCTION_NAMES),
            (self.cache, CACHE_NAMES),
        ];
        groups
            .iter()
            .rev()
            .find_map(|&(start, names)| start.filter(|&s| i >= s).map(|s| COLUMNS[names + i - s]))
            .unwrap_or(COLUMNS[i.min(PLAIN_COLUMNS - 1)])
    }
}

/// One row read by position: the columns of [`csv_header`]`(columns)`, a
/// group's fields empty for an arm without its values. By position, not
/// by header name: the header is checked once, and a large run's 300,000
/// rows read in a fraction of the time serde's by-name matching takes.
fn row(rec: &Fields<'_>, columns: Columns) -> Result<PairRecord, RowError> {
    let layout = columns.layout();
    if rec.len() != layout.width {
        return Err(RowError::FieldCount {
            found: rec.len(),
            expected: layout.width,
        });
    }
    let name = |i: usize| layout.name(i);
    let text = |i: usize| -> Result<&str, RowError> {
        std::str::from_utf8(&rec[i]).map_err(|_| RowError::NotText { column: name(i) })
    };
    let number = |i: usize| -> Result<u64, RowError> {
        // Up to 19 plain digits cannot overflow: read them as they are;
        // anything else (a sign, an error) goes the way of `str::parse`.
        let digits = &rec[i];
        if !digits.is_empty() && digits.len() <= 19 && digits.iter().all(u8::is_ascii_digit) {
            return Ok(digits.iter().fold(0, |n, &d| n * 10 + u64::from(d - b'0')));
        }
        let t = text(i)?;
        t.parse().map_err(|_| RowError::NotANumber {
            column: name(i),
            text: t.into(),
        })
    };
    let small = |i: usize| -> Result<u32, RowError> {
        u32::try_from(number(i)?).map_err(|_| RowError::TooLarge { column: name(i) })
    };
    let optional = |i: usize| -> Result<Option<u64>, RowError> {
        if rec[i].is_empty() {
            Ok(None)
        } else {
            number(i).map(Some)
        }
    };
    let phase = one_of(
        2,
        text(2)?,
        &[
            ("warmup", Phase::Warmup),
            ("measure", Phase::Measure),
            ("count", Phase::Count),
        ],
        &["warmup", "measure", "count"],
    )?;
    let first = one_of(
        4,
        text(4)?,
        &[("baseline", Arm::Baseline), ("treatment", Arm::Treatment)],
        &["baseline", "treatment"],
    )?;
    // An arm's three usage columns: all there, or no usage for that arm.
    let arm_usage = |at: Option<usize>| -> Result<Option<RunUsage>, RowError> {
        let Some(at) = at else {
            return Ok(None);
        };
        Ok(
            match (optional(at)?, optional(at + 1)?, optional(at + 2)?) {
                (Some(user_ns), Some(sys_ns), Some(max_rss_kib)) => Some(RunUsage {
                    user_ns,
                    sys_ns,
                    max_rss_kib,
                }),
                _ => None,
            },
        )
    };
    // An arm's count: its instructions, and its misses when all there.
    let arm_count = |arm: usize| -> Result<Option<RunCount>, RowError> {
        let Some(at) = layout.instructions else {
            return Ok(None);
        };
        let Some(instructions) = optional(at + arm)? else {
            return Ok(None);
        };
        let cache = match layout.cache {
            Some(c) => match (optional(c + 2 * arm)?, optional(c + 2 * arm + 1)?) {
                (Some(l1), Some(ll)) => Some(CacheMisses { l1, ll }),
                _ => None,
            },
            None => None,
        };
        Ok(Some(RunCount {
            instructions,
            cache,
        }))
    };
    Ok(PairRecord {
        cell: small(0)?,
        fork: small(1)?,
        phase,
        pair: small(3)?,
        first,
        baseline_ns: number(5)?,
        treatment_ns: number(6)?,
        delay_ns: number(7)?,
        spin_ns: number(8)?,
        baseline_at_ns: number(9)?,
        treatment_at_ns: number(10)?,
        usage: PairUsage {
            baseline: arm_usage(layout.usage)?,
            treatment: arm_usage(layout.usage.map(|u| u + 3))?,
        }
        .boxed(),
        counts: PairCounts {
            baseline: arm_count(0)?,
            treatment: arm_count(1)?,
        }
        .boxed(),
    })
}

/// The value that column `i`'s `text` names among `words` (`valid`: the
/// words alone, for the error).
fn one_of<T: Copy>(
    i: usize,
    text: &str,
    words: &[(&'static str, T)],
    valid: &'static [&'static str],
) -> Result<T, RowError> {
    match words.iter().find(|(word, _)| *word == text) {
        Some(&(_, value)) => Ok(value),
        None => Err(RowError::NotOneOf {
            column: COLUMNS[i],
            text: text.into(),
            valid,
        }),
    }
}

/// One record as the CSV parser leaves it: its fields' bytes one after
/// the other, and where each field ends.
struct Fields<'a> {
    bytes: &'a [u8],
    ends: &'a [usize],
}

impl Fields<'_> {
    fn len(&self) -> usize {
        self.ends.len()
    }
}

impl std::ops::Index<usize> for Fields<'_> {
    type Output = [u8];
    fn index(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }
}

/// Parses header-less rows (a fork's file, or the body of `pairs.csv`)
/// whose columns are [`csv_header`]`(columns)`; an error gives the first bad
/// row, counted from 1, and what is wrong with it.
///
/// The rows are parsed by csv-core, the parser inside the csv crate,
/// straight from `bytes`: a `csv::Reader` per call would build the
/// parser's automaton again and copy the bytes through a buffer, which for
/// a fork's few hundred rows costs as much as the parsing (a large run
/// parses hundreds of forks). Each thread builds the automaton once and
/// resets it per call (csv-core's `Clone` of a parser does not copy the
/// whole automaton, so a clone cannot stand in).
pub fn parse_rows(bytes: &[u8], columns: Columns) -> Result<Vec<PairRecord>, (usize, RowError)> {
    thread_local! {
        static PARSER: std::cell::RefCell<csv_core::Reader> =
            std::cell::RefCell::new(csv_core::Reader::new());
    }
    PARSER.with(|parser| {
        let mut parser = parser.borrow_mut();
        parser.reset();
        parse_with(&mut parser, bytes, columns)
    })
}

/// [`parse_rows`] with a parser as new.
fn parse_with(
    parser: &mut csv_core::Reader,
    bytes: &[u8],
    columns: Columns,
) -> Result<Vec<PairRecord>, (usize, RowError)> {
    use csv_core::ReadRecordResult as Read;
    // A row per line, at most: one allocation.
    let mut out = Vec::with_capacity(memchr::memchr_iter(b'\n', bytes).count() + 1);
    let (mut input, mut fields, mut ends) = (bytes, vec![0u8; 256], vec![0usize; 32]);
    let (mut written, mut ended) = (0, 0);
    loop {
        let (result, read, w, e) =
            parser.read_record(input, &mut fields[written..], &mut ends[ended..]);
        input = &input[read..];
        (written, ended) = (written + w, ended + e);
        match result {
            Read::InputEmpty => {}
            Read::OutputFull => fields.resize(fields.len() * 2, 0),
            Read::OutputEndsFull => ends.resize(ends.len() * 2, 0),
            Read::Record => {
                let rec = Fields {
                    bytes: &fields[..written],
                    ends: &ends[..ended],
                };
                out.push(row(&rec, columns).map_err(|e| (out.len() + 1, e))?);
                (written, ended) = (0, 0);
            }
            Read::End => return Ok(out),
        }
    }
}

/// Why a whole `pairs.csv` could not be read (`read_pairs_csv`), each
/// naming the file.
#[derive(Debug, thiserror::Error)]
pub enum PairsCsvError {
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: the header {found:?} is not `{}` (with or without the usage and instruction columns)", .path.display(), csv_header(Columns::default()))]
    Header {
        path: std::path::PathBuf,
        found: String,
    },
    #[error("{}: bad row {}: {source}", .path.display(), .row + 1)]
    Row {
        path: std::path::PathBuf,
        /// Counted from 0, the header not included.
        row: usize,
        #[source]
        source: RowError,
    },
}

impl crate::error::Coded for PairsCsvError {
    /// A `pairs.csv` runner is given to read is the user's input (exit 2).
    fn failure(&self) -> crate::error::Failure {
        crate::error::Failure::BadInput
    }
}

/// The columns a `pairs.csv` header names; `None` for any other header.
pub fn header_columns(header: &str) -> Option<Columns> {
    Columns::all().find(|&c| csv_header(c) == header)
}

/// Reads a whole `pairs.csv` (with header) into records.
pub fn read_pairs_csv(path: &std::path::Path) -> Result<Vec<PairRecord>, PairsCsvError> {
    let bytes = std::fs::read(path).map_err(|source| PairsCsvError::Read {
        path: path.to_owned(),
        source,
    })?;
    let line_end = bytes
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or(bytes.len());
    let header = String::from_utf8_lossy(&bytes[..line_end]);
    let Some(columns) = header_columns(header.trim_end()) else {
        return Err(PairsCsvError::Header {
            path: path.to_owned(),
            found: header.trim_end().to_owned(),
        });
    };
    parse_rows(bytes.get(line_end + 1..).unwrap_or_default(), columns).map_err(|(row, source)| {
        PairsCsvError::Row {
            path: path.to_owned(),
            row,
            source,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_line_has_the_header_columns_in_order() {
        let r = PairRecord {
            cell: 1,
            fork: 2,
            phase: Phase::Measure,
            pair: 3,
            first: Arm::Treatment,
            baseline_ns: 10,
            treatment_ns: 7,
            delay_ns: 0,
            spin_ns: 0,
            baseline_at_ns: 100,
            treatment_at_ns: 50,
            usage: None,
            counts: None,
        };
        assert_eq!(r.to_csv_line(), "1,2,measure,3,treatment,10,7,0,0,100,50");
        assert_eq!(r.diff_ns(), -3);
        assert_eq!(CSV_HEADER.split(',').count(), 11);
    }

    /// Usage columns appear only when recorded, and read back as written,
    /// an arm without usage as empty fields.
    #[test]
    fn usage_columns_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = PairRecord {
            cell: 0,
            fork: 1,
            phase: Phase::Warmup,
            pair: 0,
            first: Arm::Baseline,
            baseline_ns: 5,
            treatment_ns: 6,
            delay_ns: 0,
            spin_ns: 0,
            baseline_at_ns: 0,
            treatment_at_ns: 9,
            usage: None,
            counts: None,
        };
        let plain = r.clone();
        r.usage_mut().treatment = Some(RunUsage {
            user_ns: 1000,
            sys_ns: 2000,
            max_rss_kib: 3,
        });
        assert_eq!(
            r.to_csv_line(),
            "0,1,warmup,0,baseline,5,6,0,0,0,9,,,,1000,2000,3"
        );
        for (rows, header) in [
            (vec![plain], csv_header(Columns::default())),
            (vec![r], csv_header(Columns::usage(true))),
        ] {
            let path = dir.path().join("pairs.csv");
            let mut text = header;
            text.push('\n');
            for row in &rows {
                text.push_str(&row.to_csv_line());
                text.push('\n');
            }
            std::fs::write(&path, text).unwrap();
            assert_eq!(read_pairs_csv(&path).unwrap(), rows);
        }
    }

    /// Counted rows carry each arm's instructions (and misses with a
    /// simulated cache) after the usage columns; a timed row of the same
    /// file leaves them empty, and a file without counts keeps its old
    /// header, so old files read as before.
    #[test]
    fn count_columns_round_trip() {
        let timed = PairRecord {
            cell: 0,
            fork: 0,
            phase: Phase::Measure,
            pair: 0,
            first: Arm::Baseline,
            baseline_ns: 5,
            treatment_ns: 6,
            delay_ns: 0,
            spin_ns: 0,
            baseline_at_ns: 0,
            treatment_at_ns: 9,
            usage: PairUsage {
                baseline: Some(RunUsage {
                    user_ns: 1,
                    sys_ns: 2,
                    max_rss_kib: 3,
                }),
                treatment: None,
            }
            .boxed(),
            counts: None,
        };
        let counted = PairRecord {
            phase: Phase::Count,
            usage: None,
            counts: PairCounts {
                baseline: Some(RunCount {
                    instructions: 1000,
                    cache: Some(CacheMisses { l1: 7, ll: 2 }),
                }),
                treatment: Some(RunCount {
                    instructions: 1050,
                    cache: Some(CacheMisses { l1: 8, ll: 3 }),
                }),
            }
            .boxed(),
            ..timed.clone()
        };
        let columns = timed.columns().union(counted.columns());
        assert_eq!(
            csv_header(columns),
            format!("{CSV_HEADER},{USAGE_COLUMNS},{INSTRUCTION_COLUMNS},{CACHE_COLUMNS}")
        );
        let mut bytes = Vec::new();
        write_line(&mut bytes, &timed, columns);
        write_line(&mut bytes, &counted, columns);
        assert_eq!(
            String::from_utf8(bytes.clone()).unwrap(),
            "0,0,measure,0,baseline,5,6,0,0,0,9,1,2,3,,,,,,,,,\n\
             0,0,count,0,baseline,5,6,0,0,0,9,,,,,,,1000,1050,7,2,8,3\n"
        );
        assert_eq!(
            parse_rows(&bytes, columns).unwrap(),
            vec![timed.clone(), counted.clone()]
        );
        assert_eq!(
            header_columns(&csv_header(columns)),
            Some(columns),
            "the header names its columns"
        );
        assert_eq!(header_columns(CSV_HEADER), Some(Columns::default()));
        assert_eq!(
            counted.counts().treatment.unwrap().estimated_cycles(),
            Some(1050 + 10 * 5 + 300)
        );
        // A bad count names its own column, wherever the groups put it.
        let (_, e) = parse_rows(
            b"0,0,count,0,baseline,5,6,0,0,0,9,1000,x\n",
            Columns {
                instructions: true,
                ..Columns::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("`treatment_instructions`"), "{e}");
    }

    /// A row the writer could not have written is refused with what is
    /// wrong and where: the column, the value, what would be valid.
    #[test]
    fn column_names_are_the_headers() {
        let all = Columns {
            usage: true,
            instructions: true,
            cache: true,
        };
        assert_eq!(COLUMNS.join(","), csv_header(all));
        assert_eq!(
            COLUMNS[USAGE_NAMES..INSTRUCTION_NAMES].join(","),
            USAGE_COLUMNS
        );
        assert_eq!(
            COLUMNS[INSTRUCTION_NAMES..CACHE_NAMES].join(","),
            INSTRUCTION_COLUMNS
        );
        assert_eq!(COLUMNS[CACHE_NAMES..].join(","), CACHE_COLUMNS);
        assert_eq!(COLUMNS[..PLAIN_COLUMNS].join(","), CSV_HEADER);
    }

    #[test]
    fn bad_rows_say_which_column_and_why() {
        let good = "0,1,measure,0,baseline,5,6,0,0,0,9";
        assert!(parse_rows(format!("{good}\n").as_bytes(), Columns::default()).is_ok());
        let cases = [
            (
                "0,1,measure,0,baseline,5,x6,0,0,0,9",
                "column `treatment_ns` holds \"x6\", which is not a whole number",
            ),
            (
                "0,1,timed,0,baseline,5,6,0,0,0,9",
                "column `phase` holds \"timed\", where `warmup`, `measure` or `count` would be valid",
            ),
            (
                "0,1,measure,0,both,5,6,0,0,0,9",
                "column `first` holds \"both\", where `baseline` or `treatment` would be valid",
            ),
            (
                "0,1,measure,0,baseline,5,6,0,0,0",
                "10 fields, where the header has 11",
            ),
            (
                "0,4294967296,measure,0,baseline,5,6,0,0,0,9",
                "column `fork` is larger than 4294967295",
            ),
            (
                "0,1,measure,0,baseline,-5,6,0,0,0,9",
                "column `baseline_ns` holds \"-5\"",
            ),
        ];
        for (line, want) in cases {
            let (row, e) =
                parse_rows(format!("{good}\n{line}\n").as_bytes(), Columns::default()).unwrap_err();
            assert_eq!(row, 2, "{line}");
            assert!(e.to_string().contains(want), "{line}: {e}");
        }
        // With usage: an arm's three columns are all there or all empty.
        let rows = parse_rows(
            b"0,1,measure,0,baseline,5,6,0,0,0,9,1,2,3,,,\n0,1,measure,1,baseline,5,6,0,0,0,9,1,,3,,,\n",
            Columns::usage(true),
        )
        .unwrap();
        let first = rows[0].usage();
        assert_eq!(
            (first.baseline.map(|u| u.max_rss_kib), first.treatment),
            (Some(3), None)
        );
        assert_eq!(rows[1].usage, None);
    }

    /// The csv crate's own reader, row by row, through the same `row`: what
    /// `parse_rows` read before it used csv-core directly.
    fn parse_with_csv_crate(
        bytes: &[u8],
        columns: Columns,
    ) -> Result<Vec<PairRecord>, (usize, RowError)> {
        let mut rows = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(bytes);
        let mut out = Vec::new();
        for rec in rows.byte_records() {
            // Reading bytes already in memory cannot fail.
            let rec = rec.expect("an in-memory read");
            let ends: Vec<usize> = (0..rec.len()).map(|i| rec.range(i).unwrap().end).collect();
            let fields = Fields {
                bytes: rec.as_slice(),
                ends: &ends,
            };
            out.push(row(&fields, columns).map_err(|e| (out.len() + 1, e))?);
        }
        Ok(out)
    }

    /// Quoting, CRLF, blank lines, a missing last newline, a byte-order
    /// mark, fields longer than the parser's first buffer and more fields
    /// than its first list of ends: read as the csv crate reads them, the
    /// same records or the same first error.
    #[test]
    fn rows_read_as_the_csv_crate_reads_them() {
        let good = "0,1,measure,0,baseline,5,6,0,0,0,9";
        let long = "7".repeat(300);
        let many = format!("{good}{}", ",1".repeat(40));
        let usage = Columns::usage(true);
        let plain = Columns::default();
        let counted = Columns {
            usage: true,
            instructions: true,
            cache: false,
        };
        let cases: Vec<(String, Columns)> = vec![
            (format!("{good}\n{good}\n"), plain),
            (format!("{good}\r\n{good}\r\n"), plain),
            (format!("{good}\n\n{good}"), plain),
            (format!("\u{feff}{good}\n"), plain),
            ("\"0\",1,\"measure\",0,baseline,5,6,0,0,0,9\n".into(), plain),
            ("0,1,\"mea\"\"sure\",0,baseline,5,6,0,0,0,9\n".into(), plain),
            ("0,1,\"measure\n\",0,baseline,5,6,0,0,0,9\n".into(), plain),
            (format!("0,1,measure,0,baseline,{long},6,0,0,0,9\n"), plain),
            (format!("{many}\n"), plain),
            (format!("{good},1,2,3,,,\n{good},,,,4,5,6\n"), usage),
            (format!("{good},1,2,3,,,\n{good},1,,3,,,\n"), usage),
            (String::new(), plain),
            ("\n\n".into(), plain),
            (format!("{good},1,2,3,,,,\n{good},,,,4,5,6,7,8\n"), counted),
            (format!("{good},1,2,3,,,,7\n"), counted),
            (format!("{good},1,2,3,4,5,6,x,8\n"), counted),
        ];
        for (text, columns) in cases {
            assert_eq!(
                parse_rows(text.as_bytes(), columns),
                parse_with_csv_crate(text.as_bytes(), columns),
                "{text:?}"
            );
        }
    }

    /// Plain digits are read without `str::parse`; every other spelling
    /// goes through it, so both read a field the same way.
    #[test]
    fn numbers_read_as_str_parse_reads_them() {
        let u64_max = u64::MAX.to_string();
        let over = "18446744073709551616".to_string();
        let fields = [
            "0",
            "007",
            "+5",
            "9999999999999999999",
            &u64_max,
            &over,
            "",
            " 5",
            "5 ",
            "1e3",
        ];
        for field in fields {
            let line = format!("0,1,measure,0,baseline,{field},6,0,0,0,9\n");
            let got = parse_rows(line.as_bytes(), Columns::default()).map(|r| r[0].baseline_ns);
            match field.parse::<u64>() {
                Ok(n) => assert_eq!(got, Ok(n), "{field:?}"),
                Err(_) => assert!(got.is_err(), "{field:?}: {got:?}"),
            }
        }
    }
}
