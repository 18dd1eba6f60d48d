//! How another harness's rows map onto runner's design: cells (by label,
//! by delay, or a grid of both), forks (numbered 0.. per cell, by their id
//! in the file) and pairs (renumbered 0.. per phase, in `pair` order), and
//! the check that the design is uniform (equal forks, equal pairs).

use super::table::{self, Row};
use crate::error::{bad_input, Result};
use crate::plan::Cell;
use crate::record::Phase;
use std::collections::BTreeMap;

/// (label, delay) -> rows, and how the cells were told apart.
pub(super) struct Cells {
    pub delays: Vec<u64>,
    pub labels: Vec<String>,
    pub by: &'static str,
}

pub(super) fn cells_of(t: &table::Table, shown: &str) -> Result<Cells> {
    let mut labels: Vec<String> = Vec::new();
    let mut delays: Vec<u64> = Vec::new();
    let mut combos: BTreeMap<(String, u64), u64> = BTreeMap::new();
    for r in &t.rows {
        let l = r.cell.clone().unwrap_or_default();
        if !labels.contains(&l) {
            labels.push(l.clone());
        }
        let d = r.delay_ns.unwrap_or(0);
        if !delays.contains(&d) {
            delays.push(d);
        }
        combos.entry((l, d)).or_insert(r.line);
    }
    delays.sort_unstable();
    if !t.has_cell {
        return Ok(Cells {
            delays,
            labels: Vec::new(),
            by: "delay",
        });
    }
    if !t.has_delay {
        return Ok(Cells {
            delays,
            labels,
            by: "cell",
        });
    }
    // A label per delay and a delay per label: the labels only name the delays.
    if combos.len() == labels.len() && combos.len() == delays.len() {
        return Ok(Cells {
            delays,
            labels: Vec::new(),
            by: "delay",
        });
    }
    if combos.len() == labels.len() * delays.len() {
        return Ok(Cells {
            delays,
            labels,
            by: "cell x delay",
        });
    }
    let missing = labels
        .iter()
        .flat_map(|l| delays.iter().map(move |d| (l.clone(), *d)))
        .find(|k| !combos.contains_key(k))
        .expect("not a full grid");
    Err(bad_input(format!(
        "{shown}: cell {:?} has no rows at delay {} ns; runner's cells are a grid (every cell label at every delay), so give every label every delay, or only one of the `cell` and delay columns",
        missing.0, missing.1
    )))
}

/// The runner cell of each (label, delay).
pub(super) fn cell_ids(cells: &[Cell], by_label: bool) -> BTreeMap<(String, u64), u32> {
    cells
        .iter()
        .map(|c| {
            let label = if by_label {
                c.params
                    .get("cell")
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_string()
            } else {
                String::new()
            };
            ((label, c.delay_ns), c.cell)
        })
        .collect()
}

/// Each runner (cell, fork)'s rows: warm-up then measured, each by pair.
pub(super) type Forks<'a> = BTreeMap<(u32, u32), (String, Vec<&'a Row>, Vec<&'a Row>)>;

pub(super) fn forks<'a>(
    t: &'a table::Table,
    ids: &BTreeMap<(String, u64), u32>,
    by_label: bool,
    shown: &str,
) -> Result<(Forks<'a>, u32, u32, u32)> {
    let key = |r: &Row| {
        let l = if by_label {
            r.cell.clone().unwrap_or_default()
        } else {
            String::new()
        };
        ids[&(l, r.delay_ns.unwrap_or(0))]
    };
    let mut per_cell: BTreeMap<u32, Vec<&Row>> = BTreeMap::new();
    for r in &t.rows {
        per_cell.entry(key(r)).or_default().push(r);
    }
    let mut out: Forks<'a> = BTreeMap::new();
    let mut shape: Option<(u32, u32, u32, u32)> = None; // (cell, forks, warmup, pairs)
    for (&cell, rows) in &per_cell {
        let order = table::fork_order(&rows.iter().map(|r| r.fork.as_str()).collect::<Vec<_>>());
        for (f, id) in order.iter().enumerate() {
            let mut warm: Vec<&Row> = Vec::new();
            let mut meas: Vec<&Row> = Vec::new();
            for r in rows.iter().filter(|r| &r.fork == id) {
                match r.phase {
                    Phase::Warmup => warm.push(r),
                    Phase::Measure => meas.push(r),
                }
            }
            for list in [&mut warm, &mut meas] {
                list.sort_by_key(|r| r.pair);
                if let Some(w) = list.windows(2).find(|w| w[0].pair == w[1].pair) {
                    return Err(bad_input(format!(
                        "{shown}:{}: fork {id:?} has pair {} twice (also on line {}) in one phase",
                        w[1].line, w[1].pair, w[0].line
                    )));
                }
            }
            let this = (
                cell,
                order.len() as u32,
                warm.len() as u32,
                meas.len() as u32,
            );
            if meas.is_empty() {
                return Err(bad_input(format!(
                    "{shown}: fork {id:?} has no measured pairs (phase `measure`)"
                )));
            }
            match shape {
                None => shape = Some(this),
                Some(s) if (s.1, s.2, s.3) != (this.1, this.2, this.3) => {
                    return Err(bad_input(format!(
                        "{shown}: runner's design is uniform, but fork {id:?} has {} warm-up + {} measured pairs in a cell of {} forks, where the first fork read has {} + {} in a cell of {}; import forks of equal size",
                        this.2, this.3, this.1, s.2, s.3, s.1
                    )))
                }
                Some(_) => {}
            }
            out.insert((cell, f as u32), (id.clone(), warm, meas));
        }
    }
    let s = shape.expect("rows exist");
    Ok((out, s.1, s.2, s.3))
}
