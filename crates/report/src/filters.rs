//! Template filters: the rules of [`super::numbers`] made available to
//! templates, so a custom template prints numbers exactly as the default
//! report and the terminal summary do. Each filter is listed with examples
//! in `templates/README.md`.

use super::numbers;
use minijinja::value::{Kwargs, Rest};
use minijinja::{Environment, Error, ErrorKind, Value};

fn number(v: &Value) -> Result<f64, Error> {
    if v.is_none() || v.is_undefined() {
        return Ok(f64::NAN);
    }
    f64::try_from(v.clone()).map_err(|_| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("expected a number, got {v}"),
        )
    })
}

/// `[lo, hi]` as two numbers (NaN for none).
fn pair(v: &Value) -> Result<(f64, f64), Error> {
    if v.is_none() || v.is_undefined() {
        return Ok((f64::NAN, f64::NAN));
    }
    let lo = v.get_item_by_index(0).unwrap_or_default();
    let hi = v.get_item_by_index(1).unwrap_or_default();
    Ok((number(&lo)?, number(&hi)?))
}

/// A column style as the `column` function returns it.
#[derive(serde::Serialize)]
struct Style {
    unit: &'static str,
    divisor: f64,
    decimals: usize,
}

/// The `column=` argument of a filter; none without one.
fn style(kwargs: &Kwargs) -> Result<Option<numbers::Column>, Error> {
    let Some(v) = kwargs.get::<Option<Value>>("column")? else {
        return Ok(None);
    };
    let field = |k: &str| v.get_attr(k).unwrap_or_default();
    let unit = field("unit");
    let unit = ["ns", "µs", "ms", "s", "KiB", "MiB", "GiB"]
        .into_iter()
        .find(|u| unit.as_str() == Some(*u))
        .ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidOperation,
                format!("column= expects what the column() function returns, got {v}"),
            )
        })?;
    Ok(Some(numbers::Column {
        unit,
        divisor: number(&field("divisor"))?,
        decimals: usize::try_from(field("decimals")).unwrap_or(0),
    }))
}

/// The centre of an estimate object: its `median_ns`, or its
/// `estimate_ns` (a mean of fork medians, `cells[].over_forks`).
fn centre(v: &Value) -> Value {
    match v.get_attr("median_ns") {
        Ok(m) if !m.is_undefined() => m,
        _ => v.get_attr("estimate_ns").unwrap_or_default(),
    }
}

/// `{{ c.pooled | estimate }}` (an object with `median_ns` or
/// `estimate_ns`, and `ci_ns`) or
/// `{{ x_ns | estimate(ci_ns) }}`; `column=` prints it in its column's
/// style, and `unresolved="why"` says an all-zero estimate in words.
fn estimate(v: Value, ci: Option<Value>, kwargs: Kwargs) -> Result<String, Error> {
    let (m, ci) = match ci {
        Some(ci) => (number(&v)?, ci),
        None => (
            number(&centre(&v))?,
            v.get_attr("ci_ns").unwrap_or_default(),
        ),
    };
    let (lo, hi) = pair(&ci)?;
    if let Some(why) = kwargs.get::<Option<String>>("unresolved")? {
        if let Some(words) = numbers::unresolved(m, lo, hi, &why) {
            return Ok(words);
        }
    }
    let column = style(&kwargs)?
        .unwrap_or_else(|| numbers::Column::time(&[numbers::Entry::Estimate(m, lo, hi)]));
    kwargs.assert_all_used()?;
    Ok(column.estimate(m, lo, hi))
}

/// `row.a.b` for the path `a.b`.
fn path(row: &Value, p: &str) -> Value {
    p.split('.')
        .try_fold(row.clone(), |v, k| v.get_attr(k).ok())
        .unwrap_or_default()
}

/// The numbers of one row's cell: a number, a list of numbers, or an
/// estimate object (`median_ns` or `estimate_ns`, `ci_ns`), in order;
/// none/undefined skipped.
fn numbers(v: &Value, out: &mut Vec<f64>) -> Result<(), Error> {
    if v.is_none() || v.is_undefined() {
        return Ok(());
    }
    if v.as_str().is_none() {
        let m = centre(v);
        if !m.is_undefined() && !m.is_none() {
            numbers(&m, out)?;
            return numbers(&v.get_attr("ci_ns").unwrap_or_default(), out);
        }
    }
    if v.as_str().is_none() {
        if let Ok(items) = v.try_iter() {
            for item in items {
                numbers(&item, out)?;
            }
            return Ok(());
        }
    }
    out.push(number(v)?);
    Ok(())
}

/// `column(cells, "pooled")`, `column(cells, "spread.baseline_min_ns",
/// "spread.baseline_max_ns")`: the style of one table column, from the
/// cell at each path of every row (one number: a value; two: a range of
/// values; three, or an estimate object: an estimate with its interval). `size=true` for KiB,
/// `sqrt=true` for variances in ns² printed as standard deviations. Pass
/// it to a filter as `column=`.
fn column(rows: Value, paths: Rest<String>, kwargs: Kwargs) -> Result<Value, Error> {
    let size = kwargs.get::<Option<bool>>("size")?.unwrap_or(false);
    let sqrt = kwargs.get::<Option<bool>>("sqrt")?.unwrap_or(false);
    kwargs.assert_all_used()?;
    let mut entries = Vec::new();
    for row in rows.try_iter()? {
        let mut v = Vec::new();
        for p in paths.iter() {
            numbers(&path(&row, p), &mut v)?;
        }
        if sqrt {
            v = v.into_iter().map(|x| x.max(0.0).sqrt()).collect();
        }
        entries.push(match v[..] {
            [] => continue,
            [x] => numbers::Entry::Value(x),
            [lo, hi] => numbers::Entry::Span(lo, hi),
            [m, lo, hi, ..] => numbers::Entry::Estimate(m, lo, hi),
        });
    }
    let c = if size {
        numbers::Column::size(&entries)
    } else {
        numbers::Column::time(&entries)
    };
    Ok(Value::from_serialize(Style {
        unit: c.unit,
        divisor: c.divisor,
        decimals: c.decimals,
    }))
}

/// `{"plans": 40, "months": 60}` -> `plans = 40, months = 60`.
fn params(v: Value) -> Result<String, Error> {
    let mut parts = Vec::new();
    if let Ok(keys) = v.try_iter() {
        for k in keys {
            let val = v.get_item(&k).unwrap_or_default();
            parts.push(format!("{k} = {val}"));
        }
    }
    Ok(parts.join(", "))
}

/// One value in its `column=` style, or alone in the style `own` gives a
/// column of just that value (`duration` and `size`).
fn lone_value(
    v: &Value,
    kwargs: &Kwargs,
    own: fn(&[numbers::Entry]) -> numbers::Column,
) -> Result<String, Error> {
    let v = number(v)?;
    let c = style(kwargs)?.unwrap_or_else(|| own(&[numbers::Entry::Value(v)]));
    kwargs.assert_all_used()?;
    Ok(c.value(v))
}

/// Registers the filters `duration`, `size` (KiB), `delay`, `estimate`,
/// `interval`, `range`, `percent`, `correlation`, `ratio(ci)` (a speed
/// ratio and its interval in words), `sqrt_duration` (a
/// variance in ns² as a standard deviation), `params` and `pad(width)`
/// (left-aligned, for terminal tables), and the function `column`, whose
/// result `duration`, `size`, `estimate`, `interval`, `range` and
/// `sqrt_duration` take as `column=` to print a table column in one style.
pub(crate) fn register(env: &mut Environment<'_>) {
    env.add_function("column", column);
    env.add_filter("duration", |v: Value, kwargs: Kwargs| {
        lone_value(&v, &kwargs, numbers::Column::time)
    });
    env.add_filter("size", |v: Value, kwargs: Kwargs| {
        lone_value(&v, &kwargs, numbers::Column::size)
    });
    env.add_filter("delay", |v: Value| -> Result<String, Error> {
        Ok(numbers::delay(number(&v)?))
    });
    env.add_filter("estimate", estimate);
    env.add_filter(
        "interval",
        |v: Value, kwargs: Kwargs| -> Result<String, Error> {
            let (lo, hi) = pair(&v)?;
            let c = style(&kwargs)?
                .unwrap_or_else(|| numbers::Column::time(&[numbers::Entry::Interval(lo, hi)]));
            kwargs.assert_all_used()?;
            Ok(c.interval(lo, hi))
        },
    );
    env.add_filter(
        "range",
        |lo: Value, hi: Value, kwargs: Kwargs| -> Result<String, Error> {
            let (lo, hi) = (number(&lo)?, number(&hi)?);
            let c = style(&kwargs)?;
            kwargs.assert_all_used()?;
            Ok(c.map_or_else(|| numbers::range(lo, hi), |c| c.range(lo, hi)))
        },
    );
    env.add_filter("percent", |v: Value| -> Result<String, Error> {
        Ok(numbers::percent(number(&v)?))
    });
    env.add_filter("correlation", |v: Value| -> Result<String, Error> {
        Ok(numbers::correlation(number(&v)?))
    });
    env.add_filter(
        "sqrt_duration",
        |v: Value, kwargs: Kwargs| -> Result<String, Error> {
            let v = number(&v)?.max(0.0).sqrt();
            let c = style(&kwargs)?
                .unwrap_or_else(|| numbers::Column::time(&[numbers::Entry::Value(v)]));
            kwargs.assert_all_used()?;
            Ok(c.value(v))
        },
    );
    env.add_filter("ratio", |v: Value, ci: Value| -> Result<String, Error> {
        let (lo, hi) = pair(&ci)?;
        Ok(crate::effect::ratio_words(number(&v)?, [lo, hi]))
    });
    env.add_filter("params", params);
    env.add_filter("pad", |v: Value, width: usize| -> String {
        format!("{:<width$}", v.to_string())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(src: &str, ctx: serde_json::Value) -> String {
        let mut env = Environment::new();
        register(&mut env);
        env.render_str(src, ctx).unwrap()
    }

    #[test]
    fn filters_print_by_the_format_rules() {
        let ctx = serde_json::json!({
            "pooled": {"median_ns": 26300.0, "ci_ns": [23800.0, 29000.0]},
            "order": {"difference_ns": -470.0, "ci_ns": [-1300.0, 200.0]},
            "missing": {"difference_ns": null, "ci_ns": null},
        });
        assert_eq!(
            render("{{ pooled | estimate }}", ctx.clone()),
            "26.3 [23.8, 29.0] µs"
        );
        assert_eq!(
            render(
                "{{ order.difference_ns | estimate(order.ci_ns) }}",
                ctx.clone()
            ),
            "-0.5 [-1.3, 0.2] µs"
        );
        assert_eq!(
            render("{{ missing.difference_ns | estimate(missing.ci_ns) }}", ctx),
            "n/a"
        );
        let empty = serde_json::json!({});
        assert_eq!(
            render("{{ 510000 | range(746000) }}", empty.clone()),
            "510 to 746 µs"
        );
        assert_eq!(render("{{ 25000 | delay }}", empty.clone()), "25 µs");
        assert_eq!(render("{{ 0.996 | correlation }}", empty.clone()), "0.996");
        assert_eq!(render("{{ 0.95 | percent }}", empty.clone()), "95 %");
        assert_eq!(render("{{ 4000000 | sqrt_duration }}", empty), "2.00 µs");
    }

    #[test]
    fn a_column_prints_every_row_in_one_style() {
        let ctx = serde_json::json!({"cells": [
            {"pooled": {"median_ns": -3000.0, "ci_ns": [-11000.0, 4000.0]},
             "spread": {"lo": 2430000.0, "hi": 2770000.0},
             "usage": {"difference": 0, "ci": [0, 0], "kib": 6656}},
            {"pooled": {"median_ns": 501200.0, "ci_ns": [496500.0, 504900.0]},
             "spread": {"lo": 2400000.0, "hi": 4100000.0},
             "usage": {"difference": 4, "ci": [0, 12], "kib": 6758}},
        ]});
        let src = r#"{% set p = column(cells, "pooled") %}{% set s = column(cells, "spread.lo", "spread.hi") %}{% set d = column(cells, "usage.difference", "usage.ci", size=true) %}{% set m = column(cells, "usage.kib", size=true) %}{% for c in cells %}{{ c.pooled | estimate(column=p) }}; {{ c.spread.lo | range(c.spread.hi, column=s) }}; {{ c.usage.difference | estimate(c.usage.ci, column=d, unresolved="below the kernel's page resolution") }}; {{ c.usage.kib | size(column=m) }}
{% endfor %}"#;
        assert_eq!(
            render(src, ctx),
            "-3.0 [-11.0, 4.0] µs; 2.43 to 2.77 ms; 0 (below the kernel's page resolution); 6.50 MiB\n\
             501.2 [496.5, 504.9] µs; 2.40 to 4.10 ms; 4 [0, 12] KiB; 6.60 MiB\n"
        );
    }
}
