//! `[grid]`: every combination of its values is one cell (docs/reference.md
//! and 8). Keys are of three sorts:
//!
//! - `delay_us`: the injected delay (always read, by the harness);
//! - bare keys (`plans`, `months`, `rows`, ...): cell parameters, read by the
//!   preview (`plans`, `months`) and by `{name}` placeholders;
//! - `strategies.NAME.KEY` (quoted, or as a nested table): that strategy key,
//!   one validated value per cell;
//! - `placement`, `layout` and `clients`: design keys, one value per cell
//!   (`clients` sets every `sql` arm's concurrent clients at once, so the
//!   arms of a cell always contend alike).
//!
//! Whether each key is read by someone is checked later, in `uses`.

use super::context::Files;
use super::experiment::{Grid, SweptKey};
use super::kinds::StrategyKind;
use super::location::{KeyPath, Problem};
use super::raw::RawGrid;
use super::strategies::{field, keys_of};
use super::values::{array, describe, first_duplicate, micros};
use std::collections::BTreeMap;
use toml::Value;

/// Names a placeholder can never mean a grid key by.
pub(crate) const RESERVED: [&str; 3] = [
    super::placeholder::INPUT,
    super::placeholder::SCRATCH,
    super::placeholder::CLIENT,
];

/// A TOML value as JSON, for a cell's `params`.
pub(crate) fn to_json(v: &Value) -> serde_json::Value {
    match v {
        Value::String(s) => s.clone().into(),
        Value::Integer(i) => (*i).into(),
        Value::Float(f) => {
            serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, Into::into)
        }
        Value::Boolean(b) => (*b).into(),
        Value::Datetime(d) => d.to_string().into(),
        Value::Array(a) => a.iter().map(to_json).collect::<Vec<_>>().into(),
        Value::Table(t) => t
            .iter()
            .map(|(k, v)| (k.clone(), to_json(v)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
    }
}

fn unique<T: PartialEq>(
    path: &KeyPath,
    values: &[T],
    shown: impl Fn(usize) -> String,
) -> Result<(), Problem> {
    match first_duplicate(values) {
        Some((i, j)) => Err(Problem::value(
            &path.at(j),
            format!(
                "{} = {} repeats {}; swept values must be unique",
                path.at(j),
                shown(j),
                path.at(i)
            ),
        )),
        None => Ok(()),
    }
}

pub(crate) fn grid(
    raw: RawGrid,
    strategies: &BTreeMap<String, StrategyKind>,
    files: Files,
) -> Result<Grid, Problem> {
    let base = KeyPath::root().child("grid");
    let (delay_us, delay_ns) = delays(raw.get("delay_us"), &base.child("delay_us"))?;
    let mut grid = Grid {
        delay_ns,
        delay_us,
        workload: BTreeMap::new(),
        params: BTreeMap::new(),
        strategy_keys: Vec::new(),
        placement: Vec::new(),
        layout: Vec::new(),
        clients: Vec::new(),
        labels: BTreeMap::new(),
    };
    for (key, v) in &raw {
        let path = base.child(key);
        match key.as_str() {
            "delay_us" => {}
            "placement" => {
                let values = array(
                    v,
                    &path,
                    runner_os::placement::VALID,
                    super::values::placement,
                )?;
                unique(&path, &values, |j| format!("\"{}\"", values[j]))?;
                grid.placement = values;
            }
            "layout" => {
                let values = array(
                    v,
                    &path,
                    runner_os::memory_layout::VALID,
                    super::values::layout,
                )?;
                unique(&path, &values, |j| format!("\"{}\"", values[j]))?;
                grid.layout = values;
            }
            super::experiment::CLIENTS_KEY => {
                let values = array(v, &path, "integers from 1 to 64", super::sql::clients)?;
                unique(&path, &values, |j| values[j].to_string())?;
                grid.clients = values;
            }
            "plans" | "months" => {
                let limit = if key == "plans" {
                    &super::limits::PLANS
                } else {
                    &super::limits::MONTHS
                };
                let values = array(v, &path, "positive integers", |e, p| {
                    super::limits::count(e, p, limit, "")
                })?;
                unique(&path, &values, |j| values[j].to_string())?;
                grid.workload.insert(key.clone(), values);
            }
            "strategies" => nested(v, &path, strategies, &mut grid, files)?,
            "labels" => {}
            dotted if dotted.starts_with("strategies.") => {
                let rest = &dotted["strategies.".len()..];
                let Some((name, k)) = rest.rsplit_once('.') else {
                    return Err(Problem::key(
                        &path,
                        format!("grid key {dotted:?} must be \"strategies.NAME.KEY\""),
                    ));
                };
                grid.strategy_keys
                    .push(swept(name, k, v, &path, strategies, files)?);
            }
            bare => {
                grid.params.insert(bare.to_string(), param(bare, v, &path)?);
            }
        }
    }
    grid.strategy_keys.sort_by_key(SweptKey::label);
    if let Some(v) = raw.get("labels") {
        grid.labels = labels(v, &base.child("labels"), &grid)?;
    }
    Ok(grid)
}

/// `[grid.labels]`: for a swept key, one short, unique name per value, in
/// the order of its values (`"strategies.fast.argv" = ["gzip -1", "gzip -6"]`).
fn labels(
    v: &Value,
    path: &KeyPath,
    grid: &Grid,
) -> Result<BTreeMap<String, Vec<String>>, Problem> {
    let Value::Table(t) = v else {
        return Err(Problem::value(
            path,
            format!(
                "{path} must be a table of swept keys to their labels, e.g. [grid.labels] \"strategies.fast.argv\" = [\"gzip -1\", \"gzip -6\"]"
            ),
        ));
    };
    let swept = grid.swept();
    let mut out = BTreeMap::new();
    for (key, v) in flatten_labels(t) {
        let at = path.child(&key);
        let Some((_, values)) = swept.iter().find(|(k, _)| *k == key) else {
            let keys: Vec<&str> = swept.iter().map(|(k, _)| k.as_str()).collect();
            return Err(Problem::key(
                &at,
                format!(
                    "{at} labels a key that [grid] does not sweep; swept keys are: {}",
                    if keys.is_empty() {
                        "none".to_string()
                    } else {
                        keys.join(", ")
                    }
                ),
            ));
        };
        let names = array(v, &at, "short names, one per swept value", |e, p| match e {
            Value::String(s) if !s.trim().is_empty() && !s.contains(['\n', '|', '`']) => {
                Ok(s.clone())
            }
            other => Err(super::values::got(
                p,
                "a short name on one line, without | or `",
                other,
            )),
        })?;
        if names.len() != values.len() {
            return Err(Problem::value(
                &at,
                format!(
                    "{at} has {} labels for {} swept values; give one label per value, in the order of the values",
                    names.len(),
                    values.len()
                ),
            ));
        }
        unique(&at, &names, |j| format!("\"{}\"", names[j]))?;
        out.insert(key, names);
    }
    Ok(out)
}

/// `[grid.labels]` keys as dotted names: a nested `strategies.fast.argv`
/// table and a quoted `"strategies.fast.argv"` key mean the same.
fn flatten_labels(t: &toml::Table) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    for (k, v) in t {
        match v {
            Value::Table(inner) => {
                for (rest, v) in flatten_labels(inner) {
                    out.push((format!("{k}.{rest}"), v));
                }
            }
            _ => out.push((k.clone(), v)),
        }
    }
    out
}

fn delays(v: Option<&Value>, path: &KeyPath) -> Result<(Vec<f64>, Vec<u64>), Problem> {
    let delays = match v {
        None => vec![(0.0, 0)],
        Some(v) => array(
            v,
            path,
            "non-negative microseconds (e.g. [0, 5, 0.1])",
            micros,
        )?,
    };
    let ns: Vec<u64> = delays.iter().map(|d| d.1).collect();
    let written = |i: usize| match v {
        Some(Value::Array(a)) => a.get(i).map(describe).unwrap_or_default(),
        _ => String::new(),
    };
    if let Some(i) = ns.iter().position(|&d| d > super::limits::MAX_DELAY_NS) {
        return Err(Problem::value(
            &path.at(i),
            format!(
                "{} must be at most {} microseconds (one second: the delay is a busy-wait inside every treatment run), got {}",
                path.at(i),
                super::limits::MAX_DELAY_NS / 1000,
                written(i)
            ),
        ));
    }
    if let Some((i, j)) = first_duplicate(&ns) {
        return Err(Problem::value(
            &path.at(j),
            format!(
                "{} = {} is the same delay as {} = {} ({} ns); delays must be unique",
                path.at(j),
                written(j),
                path.at(i),
                written(i),
                ns[j]
            ),
        ));
    }
    Ok((delays.iter().map(|d| d.0).collect(), ns))
}

/// A bare key: a placeholder's values (numbers, strings or booleans).
fn param(key: &str, v: &Value, path: &KeyPath) -> Result<Vec<serde_json::Value>, Problem> {
    let is_name = super::placeholder::names(&format!("{{{key}}}")).len() == 1;
    if !is_name {
        return Err(Problem::key(path, format!("grid key {key:?} cannot be read by a placeholder; besides delay_us and strategies.NAME.KEY, grid keys are {{name}} placeholders, so a name is letters, digits and _ (not starting with a digit)")));
    }
    if RESERVED.contains(&key) {
        return Err(Problem::key(
            path,
            format!("grid.{key} is reserved: {{{key}}} is filled by runner itself"),
        ));
    }
    let values = array(
        v,
        path,
        "numbers, strings or booleans (one per cell)",
        |e, p| match e {
            Value::Integer(_) | Value::Float(_) | Value::String(_) | Value::Boolean(_) => {
                Ok(to_json(e))
            }
            other => Err(Problem::value(
                p,
                format!(
                    "{p} must be a number, a string or a boolean, got {}",
                    describe(other)
                ),
            )),
        },
    )?;
    unique(path, &values, |j| values[j].to_string())?;
    Ok(values)
}

/// `[grid.strategies.NAME] KEY = [...]` (or `strategies.NAME.KEY = [...]`
/// unquoted, which TOML reads the same way).
fn nested(
    v: &Value,
    path: &KeyPath,
    strategies: &BTreeMap<String, StrategyKind>,
    grid: &mut Grid,
    files: Files,
) -> Result<(), Problem> {
    let shape = "grid.strategies must hold strategies.NAME.KEY = [values]";
    let Value::Table(names) = v else {
        return Err(Problem::value(path, shape));
    };
    for (name, keys) in names {
        let Value::Table(keys) = keys else {
            return Err(Problem::value(&path.child(name), shape));
        };
        for (key, values) in keys {
            let here = path.child(name).child(key);
            grid.strategy_keys
                .push(swept(name, key, values, &here, strategies, files)?);
        }
    }
    Ok(())
}

fn swept(
    name: &str,
    key: &str,
    v: &Value,
    path: &KeyPath,
    strategies: &BTreeMap<String, StrategyKind>,
    files: Files,
) -> Result<SweptKey, Problem> {
    let Some(kind) = strategies.get(name) else {
        let defined: Vec<&str> = strategies.keys().map(String::as_str).collect();
        return Err(Problem::key(
            path,
            format!(
                "{path} sweeps strategy `{name}`, which is not defined; defined strategies are: {}",
                defined.join(", ")
            ),
        ));
    };
    if key == "kind" {
        return Err(Problem::key(path, format!("{path}: kind cannot be swept; define one strategy per kind and choose them in [design]")));
    }
    let keys = keys_of(kind);
    if !keys.contains(&key) {
        let valid = if keys.is_empty() {
            "none".to_string()
        } else {
            keys.join(", ")
        };
        return Err(Problem::key(path, format!("{path}: strategy `{name}` (kind = \"{}\") has no key `{key}`; keys that can be swept: {valid}", kind.label())));
    }
    let items = match v {
        Value::Array(a) if !a.is_empty() => a,
        other => {
            return Err(Problem::value(
                path,
                format!(
                "{path} must be a non-empty array of values for strategies.{name}.{key}, got {}",
                describe(other)
            ),
            ))
        }
    };
    let mut values = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        values.push(field(kind, key, item, &path.at(i), files)?);
    }
    let written: Vec<serde_json::Value> = items.iter().map(to_json).collect();
    unique(path, &written, |j| describe(&items[j]))?;
    Ok(SweptKey {
        strategy: name.to_string(),
        key: key.to_string(),
        values,
        written,
        at: path.segments.clone(),
    })
}
