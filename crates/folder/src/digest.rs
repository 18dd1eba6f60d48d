//! Binding the raw data to its run. Each fork's rows get a SHA-256 as they
//! are written (recorded with the fork and then in `run.json`), and
//! `pairs.csv` gets one when it is assembled. Every reader (`report`,
//! `--resume`, the end of `exec`) checks, per fork: the digest, the number
//! of rows (warm-up + pairs + counted pairs), the pair indices (warm-up
//! 0.., then measured 0.., then counted 0.., each once, in order) and that every row belongs to that fork; then
//! the digest of the whole file. Data that fails any of these is refused
//! (exit 2) naming the fork, and no number is computed from it.

use super::{file_stem, hex, FolderError, ForkRecord, RunInfo};
use crate::output::io_err;
use runner_core::error::Result;
use runner_core::record::{csv_header, PairRecord, Phase};
use runner_spec::Experiment;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// A running digest of rows as they are written.
#[derive(Default)]
pub struct RowDigest {
    hasher: Sha256,
    rows: u64,
}

impl RowDigest {
    /// One row: its CSV line including the final `\n`.
    pub fn push(&mut self, line: &[u8]) {
        self.hasher.update(line);
        self.rows += 1;
    }

    /// (rows, hex SHA-256).
    pub fn finish(self) -> (u64, String) {
        (self.rows, hex(&self.hasher.finalize()))
    }
}

/// Checks one fork's rows (`bytes`: its CSV lines, no header) against its
/// record and the spec, and parses them. `name` says where the rows are,
/// for the error.
pub(crate) fn check_fork(
    bytes: &[u8],
    rec: &ForkRecord,
    exp: &Experiment,
    name: &str,
) -> std::result::Result<Vec<PairRecord>, FolderError> {
    let (cell, fork) = (rec.summary.cell, rec.summary.fork);
    if crate::sha256_bytes(bytes) != rec.sha256 {
        return Err(FolderError::Rows(format!(
            "{name}: the SHA-256 differs from the one recorded when cell {cell} fork {fork} finished, so the rows were changed afterwards"
        )));
    }
    if rec.rows != exp.design.rows_per_fork() {
        return Err(FolderError::Rows(format!(
            "cell {cell} fork {fork} is recorded with {} rows, but the spec gives every fork {}",
            rec.rows,
            rows_said(exp)
        )));
    }
    let rows =
        runner_core::record::parse_rows(bytes, rec.summary.columns()).map_err(|(row, error)| {
            FolderError::Row {
                name: name.into(),
                row,
                error,
            }
        })?;
    if rec.rows != rows.len() as u64 {
        return Err(FolderError::Rows(format!(
            "{name} has {} rows, but cell {cell} fork {fork} finished with {}",
            rows.len(),
            rec.rows
        )));
    }
    check_rows(&rows, cell, fork, exp, name)?;
    Ok(rows)
}

/// Checks one fork's rows as they were measured (or parsed): warm-up +
/// pairs of them, the warm-up's indices 0.. then the measured pairs' 0..,
/// each once, in order, every one of cell `cell` fork `fork`. The check
/// every reader makes of a stored fork, made by exec of the rows a worker
/// just streamed, which it keeps in memory for the analysis.
pub fn check_rows(
    rows: &[PairRecord],
    cell: u32,
    fork: u32,
    exp: &Experiment,
    name: &str,
) -> std::result::Result<(), FolderError> {
    let warmup = u64::from(exp.design.warmup_pairs);
    let pairs = u64::from(exp.design.pairs.get());
    if rows.len() as u64 != exp.design.rows_per_fork() {
        return Err(FolderError::Rows(format!(
            "cell {cell} fork {fork} has {} rows, but the spec gives every fork {}",
            rows.len(),
            rows_said(exp)
        )));
    }
    for (i, r) in rows.iter().enumerate() {
        let i = i as u64;
        let (phase, index) = if i < warmup {
            (Phase::Warmup, i)
        } else if i < warmup + pairs {
            (Phase::Measure, i - warmup)
        } else {
            (Phase::Count, i - warmup - pairs)
        };
        if r.cell != cell || r.fork != fork || r.phase != phase || u64::from(r.pair) != index {
            return Err(FolderError::Rows(format!(
                "{name}, row {}: expected cell {cell} fork {fork} {} pair {index}, found cell {} fork {} {} pair {}",
                i + 1,
                phase_name(phase),
                r.cell,
                r.fork,
                phase_name(r.phase),
                r.pair
            )));
        }
    }
    Ok(())
}

fn phase_name(p: Phase) -> &'static str {
    p.as_str()
}

/// A fork's rows as the spec sets them, in words.
fn rows_said(exp: &Experiment) -> String {
    let d = &exp.design;
    let counted = match d.counted_pairs() {
        0 => String::new(),
        n => format!(" + {n} counted pairs"),
    };
    format!("{} warm-up + {} pairs{counted}", d.warmup_pairs, d.pairs)
}

/// The columns of a run's `pairs.csv`: every fork's.
pub fn run_columns(forks: &[ForkRecord]) -> runner_core::record::Columns {
    forks
        .iter()
        .fold(runner_core::record::Columns::default(), |c, f| {
            c.union(f.summary.columns())
        })
}

/// Reads `DIR/pairs.csv` and checks it against `info` (see the module doc).
pub fn read_pairs(dir: &Path, info: &RunInfo) -> Result<Vec<PairRecord>> {
    let path = dir.join("pairs.csv");
    let bytes = std::fs::read(&path).map_err(|e| io_err("read", &path, e))?;
    check_pairs(&bytes, info).map_err(|e| {
        FolderError::InFile {
            path,
            error: Box::new(e),
        }
        .into()
    })
}

/// [`read_pairs`] on bytes already in memory.
pub fn check_pairs(
    bytes: &[u8],
    info: &RunInfo,
) -> std::result::Result<Vec<PairRecord>, FolderError> {
    let exp = &info.spec.experiment;
    let header = format!("{}\n", csv_header(run_columns(&info.forks)));
    let Some(body) = bytes.strip_prefix(header.as_bytes()) else {
        return Err(FolderError::Rows(format!(
            "the first line is not the header `{}`",
            header.trim_end()
        )));
    };
    let mut groups = blocks_of(body)?;
    let mut blocks = Vec::with_capacity(info.forks.len());
    for rec in &info.forks {
        let key = (rec.summary.cell, rec.summary.fork);
        let rows = groups.remove(&key).map(|(start, end)| &body[start..end]);
        blocks.push((rec, rows));
    }
    // Hashing and parsing are most of reading a large run (reports/validity:
    // 300,000 rows, hashed once per fork and once whole): the forks are
    // checked on the analysis's threads and the whole file is hashed beside
    // them. The first failing fork in run.json's order is the one reported,
    // whatever the thread count.
    let check = |(rec, rows): &(&ForkRecord, Option<&[u8]>)| {
        let (c, f) = (rec.summary.cell, rec.summary.fork);
        let rows = rows.ok_or_else(|| {
            FolderError::Rows(format!(
                "there are no rows of cell {c} fork {f}, which run.json lists as finished"
            ))
        })?;
        let name = format!(
            "the rows of cell {c} fork {f} (fork file {}.csv)",
            file_stem(c, f)
        );
        check_fork(rows, rec, exp, &name)
    };
    let (checked, whole) = runner_stats::pool::join(
        || runner_stats::pool::map_in_order(&blocks, check),
        || crate::sha256_bytes(bytes),
    );
    let per_fork = checked
        .into_iter()
        .collect::<std::result::Result<Vec<_>, FolderError>>()?;
    let out = runner_stats::pool::concat(&per_fork);
    drop(per_fork);
    if let Some((c, f)) = groups.keys().next() {
        return Err(FolderError::Rows(format!(
            "there are rows of cell {c} fork {f}, which is not a finished fork of this run"
        )));
    }
    super::recorded::check_against_rows(
        info,
        out.iter().flat_map(|r| [r.baseline_ns, r.treatment_ns]),
    )?;
    match &info.pairs_sha256 {
        Some(d) if *d == whole => Ok(out),
        Some(_) => Err(FolderError::Rows("the file does not match pairs_sha256 in run.json (its rows are the run's, so the header or the order of forks was changed)".into())),
        None => Err(FolderError::Rows("run.json records no pairs_sha256, so nothing binds this file to the run".into())),
    }
}

/// (cell, fork) -> the byte range of its rows.
type Blocks = BTreeMap<(u32, u32), (usize, usize)>;

/// Where the rows of each (cell, fork) lie in `body` (pairs.csv without
/// its header): one contiguous run of lines each, or an error.
fn blocks_of(body: &[u8]) -> std::result::Result<Blocks, FolderError> {
    let mut groups = Blocks::new();
    let mut close =
        |key: (u32, u32), start: usize, end: usize| -> std::result::Result<(), FolderError> {
            if groups.insert(key, (start, end)).is_some() {
                return Err(FolderError::Rows(format!(
                    "the rows of cell {} fork {} are not in one block",
                    key.0, key.1
                )));
            }
            Ok(())
        };
    let mut at = 0;
    let mut current: Option<((u32, u32), usize)> = None;
    // The `cell,fork,` prefix of the current block's last parsed row: a
    // row that starts with the same bytes has the same key, and is not
    // parsed again (a row that spells the numbers otherwise is parsed and,
    // if its key is the same, stays in the block).
    let mut prefix: &[u8] = &[];
    while at < body.len() {
        let end = memchr::memchr(b'\n', &body[at..]).map_or(body.len(), |n| at + n + 1);
        let line = &body[at..end];
        if !prefix.is_empty() && line.starts_with(prefix) {
            at = end;
            continue;
        }
        let key = line_key(line).ok_or_else(|| {
            let shown = String::from_utf8_lossy(&body[at..end.min(at + 80)]);
            FolderError::Rows(format!(
                "a row does not start with a cell and a fork: {:?}",
                shown.trim_end()
            ))
        })?;
        match current {
            Some((k, _)) if k == key => {}
            Some((k, start)) => {
                close(k, start, at)?;
                current = Some((key, at));
            }
            None => current = Some((key, at)),
        }
        prefix = key_prefix(line);
        at = end;
    }
    if let Some((k, start)) = current {
        close(k, start, body.len())?;
    }
    Ok(groups)
}

/// The bytes of `line` up to and including its second comma, which every
/// row of the same block starts with; empty for a line without two commas
/// (the next line is then parsed, not matched).
fn key_prefix(line: &[u8]) -> &[u8] {
    let mut commas = memchr::memchr_iter(b',', line);
    match (commas.next(), commas.next()) {
        (Some(_), Some(second)) => &line[..=second],
        _ => &[],
    }
}

/// `(cell, fork)` from the first two fields of a row (the rest of the row
/// is the parser's to check).
fn line_key(line: &[u8]) -> Option<(u32, u32)> {
    let mut fields = line.splitn(3, |&b| b == b',');
    let mut number = || -> Option<u32> { std::str::from_utf8(fields.next()?).ok()?.parse().ok() };
    Some((number()?, number()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use runner_core::record::Arm;

    fn experiment() -> Experiment {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.toml");
        std::fs::write(
            &path,
            "[strategies.n]\nkind = \"noop\"\n[design]\nbaseline = \"n\"\ntreatment = \"n\"\nwarmup_pairs = 1\npairs = 2\n",
        )
        .unwrap();
        runner_spec::load(&path, &[]).unwrap().experiment
    }

    fn row(fork: u32, phase: Phase, pair: u32) -> PairRecord {
        PairRecord {
            cell: 3,
            fork,
            phase,
            pair,
            first: Arm::Baseline,
            baseline_ns: 10,
            treatment_ns: 12,
            delay_ns: 0,
            spin_ns: 0,
            baseline_at_ns: 0,
            treatment_at_ns: 20,
            usage: Default::default(),
            counts: Default::default(),
        }
    }

    /// Blocks are found by the bytes their rows start with, and a row is
    /// parsed only where those change: the same blocks and errors as
    /// parsing every row.
    #[test]
    fn blocks_are_the_runs_of_rows_of_one_fork() {
        let body = b"3,1,measure\n3,1,x\n3,17,a\n+3,17,b\n4,1,z";
        let blocks = blocks_of(body).unwrap();
        let lines =
            |(start, end): (usize, usize)| String::from_utf8_lossy(&body[start..end]).into_owned();
        assert_eq!(lines(blocks[&(3, 1)]), "3,1,measure\n3,1,x\n");
        assert_eq!(lines(blocks[&(3, 17)]), "3,17,a\n+3,17,b\n");
        assert_eq!(lines(blocks[&(4, 1)]), "4,1,z");
        assert_eq!(blocks.len(), 3);
        assert_eq!(
            blocks_of(b"3,1,a\n3,2,b\n3,1,c\n").unwrap_err().to_string(),
            "the rows of cell 3 fork 1 are not in one block"
        );
        assert_eq!(
            blocks_of(b"3,1,a\n3,1,b\n3,x,c\n").unwrap_err().to_string(),
            "a row does not start with a cell and a fork: \"3,x,c\""
        );
        assert!(blocks_of(b"3,1,a\n3,1\n").is_err());
        assert!(blocks_of(b"").unwrap().is_empty());
    }

    /// The rows a worker streams are held to what a reader of the fork's
    /// file checks: the count, the phases and indices in order, the fork.
    #[test]
    fn rows_as_measured_are_checked_like_a_stored_fork() {
        let exp = experiment();
        let good = vec![
            row(1, Phase::Warmup, 0),
            row(1, Phase::Measure, 0),
            row(1, Phase::Measure, 1),
        ];
        check_rows(&good, 3, 1, &exp, "f").unwrap();
        let e = check_rows(&good[..2], 3, 1, &exp, "f")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("has 2 rows, but the spec gives every fork 1 warm-up + 2 pairs"),
            "{e}"
        );
        let mut swapped = good.clone();
        swapped.swap(1, 2);
        let e = check_rows(&swapped, 3, 1, &exp, "f")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "f, row 2: expected cell 3 fork 1 measure pair 0, found cell 3 fork 1 measure pair 1"
        );
        let e = check_rows(&good, 3, 2, &exp, "f").unwrap_err().to_string();
        assert!(
            e.starts_with("f, row 1: expected cell 3 fork 2 warmup pair 0"),
            "{e}"
        );
    }
}
