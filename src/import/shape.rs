//! How another harness's rows map onto runner's design: cells (by label,
//! by delay, or a grid of both), forks (numbered 0.. per cell, by their id
//! in the file) and pairs (renumbered 0.. per phase, in `pair` order), and
//! the check that the design is uniform (equal forks, equal pairs).

use super::error::ImportError;
use super::table;
use runner_core::error::Result;
use runner_core::record::{PairRecord, Phase};
use runner_plan::Cell;
use std::collections::{BTreeMap, HashMap};

/// (label, delay) -> rows, and how the cells were told apart.
pub(super) struct Cells {
    pub delays: Vec<u64>,
    pub labels: Vec<String>,
    pub by: &'static str,
}

pub(super) fn cells_of(t: &table::Table, shown: &str) -> Result<Cells> {
    let mut labels: Vec<String> = Vec::new();
    let mut delays: Vec<u64> = Vec::new();
    // (label index, delay) -> the first line with it.
    let mut combos: BTreeMap<(u32, u64), u32> = BTreeMap::new();
    for (r, &line) in t.rows.iter().zip(&t.lines) {
        let first = combos.entry((r.cell, r.delay_ns)).or_insert(line);
        *first = (*first).min(line);
    }
    // Labels in order of first appearance in the file.
    let mut first_line: BTreeMap<u32, u32> = BTreeMap::new();
    for (&(l, d), &line) in &combos {
        let at = first_line.entry(l).or_insert(line);
        *at = (*at).min(line);
        if !delays.contains(&d) {
            delays.push(d);
        }
    }
    let mut by_line: Vec<(u32, u32)> = first_line.into_iter().map(|(l, at)| (at, l)).collect();
    by_line.sort_unstable();
    labels.extend(by_line.iter().map(|&(_, l)| t.labels[l as usize].clone()));
    let combos: BTreeMap<(String, u64), u32> = combos
        .into_iter()
        .map(|((l, d), line)| ((t.labels[l as usize].clone(), d), line))
        .collect();
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
    Err(ImportError::NotAGrid {
        file: shown.to_string(),
        label: missing.0,
        delay_ns: missing.1,
    }
    .into())
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

/// Each runner (cell, fork) in order: the fork's id in the file, and how
/// many warm-up and measured rows it has (they follow each other in
/// `t.rows` once [`forks`] has sorted them).
pub(super) type Forks = BTreeMap<(u32, u32), (String, u32, u32)>;

/// Puts `t.rows` in runner's order and numbering, in place: each row's
/// `cell` and `fork` become runner's, the rows sorted by (cell, fork,
/// phase, pair) and each phase's pairs renumbered from 0. Checks that no
/// fork has a pair twice in one phase and that the design is uniform.
/// Returns the forks and (forks per cell, warm-up pairs, measured pairs).
pub(super) fn forks(
    t: &mut table::Table,
    ids: &BTreeMap<(String, u64), u32>,
    by_label: bool,
    shown: &str,
) -> Result<(Forks, u32, u32, u32)> {
    let cell_of = runner_cells(t, ids, by_label);
    let appearance = forks_by_appearance(t, &cell_of);
    let (fork_of, mut out) = number_forks(t, &appearance);
    for r in t.rows.iter_mut() {
        let cell = cell_of[&(r.cell, r.delay_ns)];
        r.fork = fork_of[&(cell, r.fork)];
        r.cell = cell;
    }
    let mut order = sorted_order(t, &out, shown)?;
    count_pairs(&t.rows, &order, &mut out);
    let shape = uniform_shape(&out, &appearance, shown)?;
    permute(&mut t.rows, &mut order);
    t.lines = Vec::new();
    renumber_pairs(&mut t.rows);
    Ok((out, shape.0, shape.1, shape.2))
}

/// Runner's cell of each (label, delay) seen, looked up once per pair of
/// keys rather than per row.
fn runner_cells(
    t: &table::Table,
    ids: &BTreeMap<(String, u64), u32>,
    by_label: bool,
) -> HashMap<(u32, u64), u32> {
    let mut cell_of: HashMap<(u32, u64), u32> = HashMap::new();
    for r in &t.rows {
        cell_of.entry((r.cell, r.delay_ns)).or_insert_with(|| {
            let l = if by_label {
                t.labels[r.cell as usize].clone()
            } else {
                String::new()
            };
            ids[&(l, r.delay_ns)]
        });
    }
    cell_of
}

/// Each runner cell's fork ids (the file's) in order of first appearance,
/// the order runner falls back on when the ids are not all numbers.
fn forks_by_appearance(
    t: &table::Table,
    cell_of: &HashMap<(u32, u64), u32>,
) -> BTreeMap<u32, Vec<u32>> {
    let mut appearance: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    let mut seen: std::collections::HashSet<(u32, u32)> = Default::default();
    for r in &t.rows {
        let cell = cell_of[&(r.cell, r.delay_ns)];
        if seen.insert((cell, r.fork)) {
            appearance.entry(cell).or_default().push(r.fork);
        }
    }
    appearance
}

/// Runner's fork number of each (cell, file fork id), in runner's order of
/// the ids (by number when every id is one), and each fork listed with its
/// id and no pairs counted yet.
fn number_forks(
    t: &table::Table,
    appearance: &BTreeMap<u32, Vec<u32>>,
) -> (HashMap<(u32, u32), u32>, Forks) {
    let mut fork_of: HashMap<(u32, u32), u32> = HashMap::new();
    let mut out: Forks = BTreeMap::new();
    for (&cell, list) in appearance {
        let names: Vec<&str> = list
            .iter()
            .map(|&f| t.fork_ids[f as usize].as_str())
            .collect();
        let order = table::fork_order(&names);
        let index: HashMap<&str, u32> = list
            .iter()
            .map(|&f| (t.fork_ids[f as usize].as_str(), f))
            .collect();
        for (n, id) in order.iter().enumerate() {
            fork_of.insert((cell, index[id.as_str()]), n as u32);
            out.insert((cell, n as u32), (id.clone(), 0, 0));
        }
    }
    (fork_of, out)
}

/// The rows' indices in runner's order, refusing a pair twice in a phase
/// of a fork, since which row is the pair would be a guess. A permutation
/// (4 bytes a row) is sorted instead of the rows, so the file's line of
/// each row stays at hand for messages.
fn sorted_order(t: &table::Table, out: &Forks, shown: &str) -> Result<Vec<u32>> {
    let key = |i: u32| {
        let r = &t.rows[i as usize];
        (r.cell, r.fork, r.phase == Phase::Measure, r.pair, i)
    };
    let mut order: Vec<u32> = (0..t.rows.len() as u32).collect();
    order.sort_unstable_by_key(|&i| key(i));
    for w in order.windows(2) {
        let (a, b) = (key(w[0]), key(w[1]));
        if (a.0, a.1, a.2, a.3) == (b.0, b.1, b.2, b.3) {
            let id = &out[&(a.0, a.1)].0;
            return Err(ImportError::PairTwice {
                file: shown.to_string(),
                line: t.lines[w[1] as usize],
                fork: id.clone(),
                pair: a.3,
                also: t.lines[w[0] as usize],
            }
            .into());
        }
    }
    Ok(order)
}

/// Counts each fork's warm-up and measured pairs, which the uniform
/// design is checked on.
fn count_pairs(rows: &[PairRecord], order: &[u32], out: &mut Forks) {
    for &i in order {
        let r = &rows[i as usize];
        let counts = out
            .get_mut(&(r.cell, r.fork))
            .expect("every fork is listed");
        match r.phase {
            Phase::Warmup => counts.1 += 1,
            // Another harness's table has no counted pairs (`analyze`
            // reads `warmup` and `measure` only).
            Phase::Measure | Phase::Count => counts.2 += 1,
        }
    }
}

/// The (forks, warm-up pairs, measured pairs) every fork shares, refusing
/// a fork without measured pairs or of another shape: runner's design is
/// uniform.
fn uniform_shape(
    out: &Forks,
    appearance: &BTreeMap<u32, Vec<u32>>,
    shown: &str,
) -> Result<(u32, u32, u32)> {
    let mut shape: Option<(u32, u32, u32)> = None; // (forks, warmup, pairs)
    for (&(cell, _), (id, warm, meas)) in out {
        if *meas == 0 {
            return Err(ImportError::NoMeasured {
                file: shown.to_string(),
                fork: id.clone(),
            }
            .into());
        }
        let this = (appearance[&cell].len() as u32, *warm, *meas);
        match shape {
            None => shape = Some(this),
            Some(s) if s != this => {
                return Err(ImportError::NotUniform {
                    file: shown.to_string(),
                    fork: id.clone(),
                    this,
                    first: s,
                }
                .into())
            }
            Some(_) => {}
        }
    }
    Ok(shape.expect("rows exist"))
}

/// Pairs numbered from 0 in each phase of each fork, as runner numbers its
/// own; `rows` are sorted, each phase's pairs one after the other.
fn renumber_pairs(rows: &mut [PairRecord]) {
    let mut next = 0u32;
    let mut last: Option<(u32, u32, Phase)> = None;
    for r in rows.iter_mut() {
        if last != Some((r.cell, r.fork, r.phase)) {
            next = 0;
            last = Some((r.cell, r.fork, r.phase));
        }
        r.pair = next;
        next += 1;
    }
}

/// Reorders `rows` in place so that row i becomes the old row `order[i]`,
/// one cycle of the permutation at a time (`order` is used up: every
/// entry ends as its own index).
fn permute<T>(rows: &mut [T], order: &mut [u32]) {
    for start in 0..rows.len() {
        let mut cur = start;
        while order[cur] as usize != cur {
            let next = order[cur] as usize;
            order[cur] = cur as u32;
            if next == start {
                break;
            }
            rows.swap(cur, next);
            cur = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::permute;

    #[test]
    fn a_permutation_moves_each_row_to_its_place() {
        let old = ["a", "b", "c", "d", "e", "f"];
        let order = [3u32, 0, 4, 1, 2, 5];
        let mut rows = old;
        let mut o = order;
        permute(&mut rows, &mut o);
        let want: Vec<&str> = order.iter().map(|&i| old[i as usize]).collect();
        assert_eq!(rows.to_vec(), want);
        assert!(o.iter().enumerate().all(|(i, &x)| x as usize == i));
    }
}
