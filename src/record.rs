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
}

/// The header of `pairs.csv`, in column order (design section 5).
pub const CSV_HEADER: &str = "cell,fork,phase,pair,first,baseline_ns,treatment_ns,delay_ns,spin_ns,baseline_at_ns,treatment_at_ns";

impl PairRecord {
    /// D = treatment - baseline, signed.
    pub fn diff_ns(&self) -> i64 {
        self.treatment_ns as i64 - self.baseline_ns as i64
    }

    /// One CSV line without the trailing newline, columns as in [`CSV_HEADER`].
    pub fn to_csv_line(&self) -> String {
        let phase = match self.phase {
            Phase::Warmup => "warmup",
            Phase::Measure => "measure",
        };
        let first = match self.first {
            Arm::Baseline => "baseline",
            Arm::Treatment => "treatment",
        };
        format!(
            "{},{},{},{},{},{},{},{},{},{},{}",
            self.cell,
            self.fork,
            phase,
            self.pair,
            first,
            self.baseline_ns,
            self.treatment_ns,
            self.delay_ns,
            self.spin_ns,
            self.baseline_at_ns,
            self.treatment_at_ns
        )
    }
}

/// Reads a whole `pairs.csv` (with header) into records.
pub fn read_pairs_csv(path: &std::path::Path) -> anyhow::Result<Vec<PairRecord>> {
    use anyhow::Context;
    let mut reader =
        csv::Reader::from_path(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut out = Vec::new();
    for (i, row) in reader.deserialize().enumerate() {
        let rec: PairRecord =
            row.with_context(|| format!("{}: bad row {}", path.display(), i + 2))?;
        out.push(rec);
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
        };
        assert_eq!(r.to_csv_line(), "1,2,measure,3,treatment,10,7,0,0,100,50");
        assert_eq!(r.diff_ns(), -3);
        assert_eq!(CSV_HEADER.split(',').count(), 11);
    }
}
