//! `design.measure`: what each run is measured by, time (the default)
//! and instructions (docs/guide/instructions.md), and the rules that tie
//! it to the arms, the grid and the gate.
//!
//! ```toml
//! [design]
//! measure = ["time", "instructions"]   # or ["instructions"]: counted alone
//! counted_pairs = 3                    # counted pairs per fork beside the timed ones
//! cache_sim = false                    # true: simulated L1/LL misses and estimated cycles too
//!
//! [gate]
//! metric = "instructions"              # judge the instructions' ratio ("time" by default)
//! ```

use super::experiment::{Counting, Design, Grid};
use super::gate::{Gate, Metric};
use super::kinds::StrategyKind;
use super::location::{KeyPath, Problem};
use super::raw::RawDesign;
use super::values::{array, boolean, describe};
use std::collections::BTreeMap;
use toml::Value;

/// What `design.measure` may hold.
const WHAT: &str =
    "\"time\" and/or \"instructions\" (e.g. [\"time\", \"instructions\"]; default [\"time\"])";

/// The most counted pairs a fork may make: each is two runs under
/// valgrind, 20 to 50 times a run's time.
const MAX_COUNTED_PAIRS: i64 = 1_000;

/// `design.measure`, `design.counted_pairs` and `design.cache_sim`: how
/// the design counts, or `None` for time alone.
pub(crate) fn counting(raw: &RawDesign, base: &KeyPath) -> Result<Option<Counting>, Problem> {
    let path = base.child("measure");
    let (time, instructions) = match &raw.measure {
        None => (true, false),
        Some(v) => {
            let words = array(v, &path, WHAT, |e, p| match e {
                Value::String(s) if s == "time" || s == "instructions" => Ok(s.clone()),
                other => Err(Problem::value(
                    p,
                    format!(
                        "{p} must be \"time\" or \"instructions\", got {}",
                        describe(other)
                    ),
                )),
            })?;
            if let Some((_, j)) = super::values::first_duplicate(&words) {
                return Err(Problem::value(
                    &path.at(j),
                    format!(
                        "{} repeats \"{}\"; name each measure once",
                        path.at(j),
                        words[j]
                    ),
                ));
            }
            let has = |w: &str| words.iter().any(|x| x == w);
            (has("time"), has("instructions"))
        }
    };
    let counted = base.child("counted_pairs");
    let cache = base.child("cache_sim");
    if !instructions {
        for (key, given) in [(&counted, &raw.counted_pairs), (&cache, &raw.cache_sim)] {
            if given.is_some() {
                return Err(Problem::key(
                    key,
                    format!("{key} applies only when instructions are counted; add \"instructions\" to design.measure, or remove {key}"),
                ));
            }
        }
        return Ok(None);
    }
    let pairs = match (&raw.counted_pairs, time) {
        (Some(_), false) => {
            return Err(Problem::key(
                &counted,
                format!("{counted} counts pairs beside timed ones, and design.measure = [\"instructions\"] times none: every measured pair is counted, so set design.pairs (default {}) instead", Counting::DEFAULT_PAIRS),
            ))
        }
        (Some(v), true) => super::values::integer(
            v,
            &counted,
            1,
            MAX_COUNTED_PAIRS,
            &format!(
                "a positive integer up to {MAX_COUNTED_PAIRS} (each is two runs under valgrind; default {})",
                Counting::DEFAULT_PAIRS
            ),
        )? as u32,
        (None, true) => Counting::DEFAULT_PAIRS,
        (None, false) => 0,
    };
    Ok(Some(Counting {
        time,
        pairs,
        cache_sim: boolean(raw.cache_sim.as_ref(), &cache, false)?,
    }))
}

/// The rules between `design.measure` and the rest of the file: only
/// `command` arms are counted; a gate's metric is measured and its
/// threshold fits it; without time, no delay and no stop in time units.
pub(crate) fn check(
    design: &Design,
    strategies: &BTreeMap<String, StrategyKind>,
    grid: &Grid,
    gate: Option<&Gate>,
) -> Result<(), Problem> {
    let measure = KeyPath::root().child("design").child("measure");
    let metric = gate.map_or(Metric::Time, |g| g.metric);
    let Some(c) = design.counting else {
        if metric == Metric::Instructions {
            let path = KeyPath::root().child("gate").child("metric");
            return Err(Problem::value(
                &path,
                format!("{path} = \"instructions\" judges counts that this run does not make; add design.measure = [\"time\", \"instructions\"] (or [\"instructions\"])"),
            ));
        }
        return Ok(());
    };
    for name in design.arms() {
        let Some(kind) = strategies.get(name) else {
            continue;
        };
        if !matches!(kind, StrategyKind::Command(_)) {
            let why = match kind {
                StrategyKind::Sql(_) | StrategyKind::TxRollback => "its work is done by the database server, another process, whose instructions a count of the arm's own process tree cannot see",
                _ => "it runs inside runner's worker, whose instructions are runner's as much as the arm's",
            };
            return Err(Problem::value(
                &measure,
                format!("{measure} counts instructions, but strategy `{name}` is of kind \"{}\": only `command` arms are counted, since {why}; measure time alone, or compare commands", kind.label()),
            ));
        }
    }
    if !c.time {
        if metric == Metric::Time {
            if let Some(g) = gate {
                let path = KeyPath::root().child("gate").child("metric");
                return Err(Problem::value(
                    &path,
                    format!("[gate] judges time (gate.metric, default \"time\"), which design.measure = [\"instructions\"] does not measure; set gate.metric = \"instructions\" (max_slowdown = \"{}\" is then of the instructions) or add \"time\" to design.measure", g.max_slowdown),
                ));
            }
        }
        if let Some(i) = grid.delay_ns.iter().position(|&d| d > 0) {
            let path = KeyPath::root().child("grid").child("delay_us").at(i);
            return Err(Problem::value(
                &path,
                format!("{path} injects a delay, which is time, and design.measure = [\"instructions\"] measures none: a count does not see it; remove the delays or add \"time\" to design.measure"),
            ));
        }
        if let Some(super::HalfWidth::Ns(_)) = design.stop.and_then(|s| s.half_width) {
            let path = KeyPath::root()
                .child("design")
                .child("stop")
                .child("half_width");
            return Err(Problem::value(
                &path,
                format!("{path} is a duration, and design.measure = [\"instructions\"] measures no time; give it as a percentage (\"1%\") of the instructions"),
            ));
        }
    }
    Ok(())
}
