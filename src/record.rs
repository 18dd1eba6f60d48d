//! One row of `pairs.csv`: the raw data every analysis is recomputed from.
//!
//! Shared by the worker (which produces it), the parent (which stores it) and
//! the analysis (which reads it back), so the column set lives in one place.

use serde::{Deserialize, Serialize};

/// Whether a pair belongs to the warm-up (recorded, never analysed) or is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Warmup,
    Measure,
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

/// The header for a `pairs.csv` whose rows do (or do not) carry usage.
pub fn csv_header(usage: bool) -> String {
    if usage {
        format!("{CSV_HEADER},{USAGE_COLUMNS}")
    } else {
        CSV_HEADER.to_string()
    }
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

    /// D = treatment - baseline, signed.
    pub fn diff_ns(&self) -> i64 {
        self.treatment_ns as i64 - self.baseline_ns as i64
    }

    /// One CSV line without the trailing newline, columns as in
    /// [`CSV_HEADER`], then [`USAGE_COLUMNS`] when the pair has usage.
    pub fn to_csv_line(&self) -> String {
        let mut line = Vec::new();
        write_line(&mut line, self);
        line.pop();
        String::from_utf8(line).expect("numbers and words are UTF-8")
    }
}

/// The rows' CSV lines (each ending in `\n`), columns as in
/// [`CSV_HEADER`], then [`USAGE_COLUMNS`] for a pair with usage: the one
/// writer of `pairs.csv` and of a fork's rows, the csv crate's, the same
/// that reads them back, so the two cannot disagree about a field.
pub fn write_rows<'a, W: std::io::Write>(
    out: W,
    rows: impl IntoIterator<Item = &'a PairRecord>,
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
        let phase = match r.phase {
            Phase::Warmup => "warmup",
            Phase::Measure => "measure",
        };
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
        if let Some(u) = r.usage.as_deref() {
            for arm in [u.baseline, u.treatment] {
                put(&mut w, arm.map(|a| a.user_ns)).map_err(err)?;
                put(&mut w, arm.map(|a| a.sys_ns)).map_err(err)?;
                put(&mut w, arm.map(|a| a.max_rss_kib)).map_err(err)?;
            }
        }
        w.write_record(None::<&[u8]>).map_err(err)?;
    }
    w.into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))
}

/// Appends one row's CSV line, `\n` included, to `out` (see [`write_rows`]).
pub fn write_line(out: &mut Vec<u8>, r: &PairRecord) {
    write_rows(out, [r]).expect("writing to memory");
}

/// A whole `pairs.csv`: the header for rows with (or without) usage, then
/// the rows (see [`write_rows`]).
pub fn write_csv<W: std::io::Write>(
    mut out: W,
    rows: &[PairRecord],
    usage: bool,
) -> std::io::Result<()> {
    use std::io::Write as _;
    writeln!(out, "{}", csv_header(usage))?;
    write_rows(std::io::BufWriter::with_capacity(1 << 16, out), rows)?.flush()
}

/// A `pairs.csv` row as read: the usage columns are optional.
#[derive(Deserialize)]
struct CsvRow {
    cell: u32,
    fork: u32,
    phase: Phase,
    pair: u32,
    first: Arm,
    baseline_ns: u64,
    treatment_ns: u64,
    delay_ns: u64,
    spin_ns: u64,
    baseline_at_ns: u64,
    treatment_at_ns: u64,
    #[serde(default)]
    baseline_user_ns: Option<u64>,
    #[serde(default)]
    baseline_sys_ns: Option<u64>,
    #[serde(default)]
    baseline_max_rss_kib: Option<u64>,
    #[serde(default)]
    treatment_user_ns: Option<u64>,
    #[serde(default)]
    treatment_sys_ns: Option<u64>,
    #[serde(default)]
    treatment_max_rss_kib: Option<u64>,
}

fn usage(user: Option<u64>, sys: Option<u64>, rss: Option<u64>) -> Option<RunUsage> {
    Some(RunUsage {
        user_ns: user?,
        sys_ns: sys?,
        max_rss_kib: rss?,
    })
}

impl From<CsvRow> for PairRecord {
    fn from(r: CsvRow) -> PairRecord {
        PairRecord {
            cell: r.cell,
            fork: r.fork,
            phase: r.phase,
            pair: r.pair,
            first: r.first,
            baseline_ns: r.baseline_ns,
            treatment_ns: r.treatment_ns,
            delay_ns: r.delay_ns,
            spin_ns: r.spin_ns,
            baseline_at_ns: r.baseline_at_ns,
            treatment_at_ns: r.treatment_at_ns,
            usage: PairUsage {
                baseline: usage(
                    r.baseline_user_ns,
                    r.baseline_sys_ns,
                    r.baseline_max_rss_kib,
                ),
                treatment: usage(
                    r.treatment_user_ns,
                    r.treatment_sys_ns,
                    r.treatment_max_rss_kib,
                ),
            }
            .boxed(),
        }
    }
}

/// Parses header-less rows (a fork's file, or the body of `pairs.csv`)
/// whose columns are [`csv_header`]`(usage)`; errors count rows from 1.
pub fn parse_rows(bytes: &[u8], usage: bool) -> Vec<Result<PairRecord, csv::Error>> {
    let mut text = csv_header(usage).into_bytes();
    text.push(b'\n');
    text.extend_from_slice(bytes);
    csv::Reader::from_reader(text.as_slice())
        .deserialize::<CsvRow>()
        .map(|r| r.map(PairRecord::from))
        .collect()
}

/// Reads a whole `pairs.csv` (with header) into records.
pub fn read_pairs_csv(path: &std::path::Path) -> anyhow::Result<Vec<PairRecord>> {
    use anyhow::Context;
    let mut reader =
        csv::Reader::from_path(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut out = Vec::new();
    for (i, row) in reader.deserialize().enumerate() {
        let rec: CsvRow = row.with_context(|| format!("{}: bad row {}", path.display(), i + 2))?;
        out.push(rec.into());
    }
    Ok(out)
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
            (vec![plain], csv_header(false)),
            (vec![r], csv_header(true)),
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
}
