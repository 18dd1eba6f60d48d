//! Upper bounds on every count of an experiment. Each says why, because a
//! bound is only useful if the user can tell whether they should raise it
//! (they cannot: it is in the code) or rethink the experiment (they should).
//! Without them, `forks = 4294967295` aborted in an allocation of 64 GiB and
//! `forks = 10000000` wrote a 3.7 GB run.json.

use super::experiment::{Design, Grid};
use super::location::{KeyPath, Problem};
use super::values::integer;
use toml::Value;

/// A bound on one count, with the reason given in its error.
pub(crate) struct Limit {
    pub max: u32,
    pub why: &'static str,
}

pub(crate) const FORKS: Limit = Limit {
    max: 10_000,
    why: "each fork is a fresh process and a record in run.json",
};
pub(crate) const PAIRS: Limit = Limit {
    max: 1_000_000,
    why: "a fork's pairs are held in memory by the analysis",
};
pub(crate) const WARMUP: Limit = Limit {
    max: 1_000_000,
    why: "warm-up pairs are recorded in pairs.csv like measured ones",
};
pub(crate) const PLANS: Limit = Limit {
    max: 10_000,
    why: "one preview costs months² x plans steps",
};
pub(crate) const MONTHS: Limit = Limit {
    max: 1_200,
    why: "one preview costs months² x plans steps; 1200 is a century",
};
pub(crate) const RESAMPLES: Limit = Limit {
    max: 100_000,
    why: "the analysis costs resamples x pairs per interval, and more resamples do not change the digits a report prints",
};
/// Every (cell, fork) job is a process and an entry in run.json.
pub(crate) const MAX_JOBS: u64 = 100_000;
/// Rows of pairs.csv (about 60 bytes each), all read by the analysis.
pub const MAX_ROWS: u64 = 20_000_000;
/// Grid combinations.
pub(crate) const MAX_CELLS: u64 = 1_000;
/// One second: longer than any delay a paired measurement needs to find.
pub const MAX_DELAY_NS: u64 = 1_000_000_000;
/// A week.
pub(crate) const FORK_TIMEOUT_S: i64 = 7 * 24 * 3600;
/// `analysis.confidence`, inclusive.
pub(crate) const CONFIDENCE: (f64, f64) = (0.5, 0.999);
/// The experiment file, read whole: no spec needs more, and `/dev/zero`
/// must be refused rather than read forever.
pub(crate) const MAX_SPEC_BYTES: u64 = 1 << 20;

/// A positive integer up to `limit.max`.
pub(crate) fn count(
    v: &Value,
    path: &KeyPath,
    limit: &Limit,
    default: &str,
) -> Result<u32, Problem> {
    let what = format!(
        "a positive integer up to {} ({}{default})",
        limit.max, limit.why
    );
    integer(v, path, 1, limit.max.into(), &what).map(|i| i as u32)
}

/// `design.warmup_pairs`: zero allowed.
pub(crate) fn warmup(v: &Value, path: &KeyPath) -> Result<u32, Problem> {
    let what = format!(
        "a non-negative integer up to {} ({}; 0 allowed; default: chosen from trial runs)",
        WARMUP.max, WARMUP.why
    );
    integer(v, path, 0, WARMUP.max.into(), &what).map(|i| i as u32)
}

/// Bounds on products of counts, which no single key shows.
pub(crate) fn check_totals(
    design: &Design,
    grid: &Grid,
    gate: Option<&super::Gate>,
) -> Result<(), Problem> {
    let groups = grid
        .workload
        .values()
        .map(|v| v.len() as u64)
        .product::<u64>()
        * grid
            .params
            .values()
            .map(|v| v.len() as u64)
            .product::<u64>()
        * grid
            .strategy_keys
            .iter()
            .map(|k| k.values.len() as u64)
            .product::<u64>();
    // A gate's self-check adds two cells per combination of the non-delay keys.
    let self_check = gate.is_some_and(|g| g.self_check);
    let cells = groups * grid.delay_ns.len() as u64 + if self_check { 2 * groups } else { 0 };
    let grid_path = KeyPath::root().child("grid");
    if cells > MAX_CELLS {
        return Err(Problem::value(
            &grid_path,
            format!("grid: {cells} combinations (cells); at most {MAX_CELLS} are allowed, since every cell is analysed and reported on its own: sweep fewer values"),
        ));
    }
    let forks = u64::from(design.forks.get());
    let jobs = cells * forks;
    let forks_path = KeyPath::root().child("design").child("forks");
    if jobs > MAX_JOBS {
        return Err(Problem::value(
            &forks_path,
            format!("design.forks: {cells} cells x {forks} forks = {jobs} jobs; at most {MAX_JOBS} are allowed (each job is a fresh process and a record in run.json): use fewer forks or cells"),
        ));
    }
    let rows = jobs * (u64::from(design.warmup_pairs) + u64::from(design.pairs.get()));
    if rows > MAX_ROWS {
        return Err(Problem::value(
            &KeyPath::root().child("design").child("pairs"),
            format!("design.pairs: {jobs} jobs x ({} warm-up + {} pairs) = {rows} rows of pairs.csv; at most {MAX_ROWS} are allowed (the analysis reads them all into memory): use fewer pairs, forks or cells", design.warmup_pairs, design.pairs),
        ));
    }
    Ok(())
}
