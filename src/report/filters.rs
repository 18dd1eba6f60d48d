//! Template filters: the rules of [`super::format`] made available to
//! templates, so a custom template prints numbers exactly as the default
//! report and the terminal summary do. Each filter is listed with examples
//! in `templates/README.md`.

use super::format;
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

/// `{{ c.pooled | estimate }}` (an object with `median_ns` and `ci_ns`) or
/// `{{ x_ns | estimate(ci_ns) }}`.
fn estimate(v: Value, ci: Option<Value>) -> Result<String, Error> {
    let (m, ci) = match ci {
        Some(ci) => (number(&v)?, ci),
        None => (
            number(&v.get_attr("median_ns").unwrap_or_default())?,
            v.get_attr("ci_ns").unwrap_or_default(),
        ),
    };
    let (lo, hi) = pair(&ci)?;
    Ok(format::estimate(m, lo, hi))
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

/// Registers `duration`, `delay`, `estimate`, `interval`, `range`,
/// `percent`, `correlation`, `sqrt_duration` (a variance in ns² as a
/// standard deviation), `params` and `pad(width)` (left-aligned, for
/// terminal tables).
pub fn register(env: &mut Environment<'_>) {
    env.add_filter("duration", |v: Value| -> Result<String, Error> {
        Ok(format::duration(number(&v)?))
    });
    env.add_filter("delay", |v: Value| -> Result<String, Error> {
        Ok(format::delay(number(&v)?))
    });
    env.add_filter("estimate", estimate);
    env.add_filter("interval", |v: Value| -> Result<String, Error> {
        let (lo, hi) = pair(&v)?;
        Ok(format::interval(lo, hi))
    });
    env.add_filter("range", |lo: Value, hi: Value| -> Result<String, Error> {
        Ok(format::range(number(&lo)?, number(&hi)?))
    });
    env.add_filter("percent", |v: Value| -> Result<String, Error> {
        Ok(format::percent(number(&v)?))
    });
    env.add_filter("correlation", |v: Value| -> Result<String, Error> {
        Ok(format::correlation(number(&v)?))
    });
    env.add_filter("sqrt_duration", |v: Value| -> Result<String, Error> {
        Ok(format::duration(number(&v)?.max(0.0).sqrt()))
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
}
