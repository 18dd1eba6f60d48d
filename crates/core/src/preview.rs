//! The preview model and its calculator (docs/guide/experiment-file.md).
//!
//! The model is a flat map of named numbers because that is what a database
//! row set is; [`Model`] keeps it as vectors indexed by plan so the calculator
//! never depends on the order rows came back in, and a model read from any
//! backend gives the bit-identical [`Projection`] as the in-memory one.

use std::fmt;

/// The calculator's result. Compared bit for bit between strategies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Projection {
    pub ending_mrr: f64,
    pub ending_cash: f64,
    pub lifetime_revenue: f64,
    /// First month (1-based) with cash < 0, else -1.
    pub runway_month: i32,
}

/// A slider position: the overrides one preview applies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Overrides {
    pub delta: f64,
}

/// How many plans get a growth override: the slider moves the first three.
fn overridden_plans(plans: usize) -> usize {
    plans.min(3)
}

fn base_growth(p: usize) -> f64 {
    0.04 + 0.01 * (p % 5) as f64
}

impl Overrides {
    /// The slider position of a pair's input (docs/guide/experiment-file.md: uniform in
    /// [0, 0.05)): the input's top 53 bits as a fraction of 2^53, times
    /// 0.05. Inputs are below 2^63 (see `exec::worker::draws`), so
    /// `input >> 10` has exactly 53 bits.
    pub fn from_input(input: u64) -> Overrides {
        let unit = ((input & (u64::MAX >> 1)) >> 10) as f64 * (1.0 / (1u64 << 53) as f64);
        Overrides { delta: unit * 0.05 }
    }

    /// The overridden fields as (name, value), in [`Overrides::field_names`] order.
    pub fn fields(&self, plans: u32) -> Vec<(String, f64)> {
        let mut values = vec![0.0; Self::field_count(plans)];
        self.write_values(plans, &mut values);
        Self::field_names(plans).into_iter().zip(values).collect()
    }

    /// Number of fields one preview writes: growth of the first plans, then fixed_burn.
    pub fn field_count(plans: u32) -> usize {
        overridden_plans(plans as usize) + 1
    }

    /// Names of the overridden fields; fixed per model size, so a database
    /// strategy binds them once at setup and only the values change per run.
    pub fn field_names(plans: u32) -> Vec<String> {
        let mut names: Vec<String> = (0..overridden_plans(plans as usize))
            .map(|p| format!("growth_{p}"))
            .collect();
        names.push("fixed_burn".to_owned());
        names
    }

    /// Writes the values in [`Overrides::field_names`] order without allocating.
    /// `out` must have [`Overrides::field_count`] elements.
    pub fn write_values(&self, plans: u32, out: &mut [f64]) {
        let k = overridden_plans(plans as usize);
        assert_eq!(out.len(), k + 1, "override buffer has the wrong size");
        for (p, v) in out[..k].iter_mut().enumerate() {
            *v = base_growth(p) + self.delta;
        }
        out[k] = 65000.0 + 100000.0 * self.delta;
    }

    /// Applies the overrides to `model` in place (the in-memory strategy).
    pub fn apply(&self, model: &mut Model) {
        let k = overridden_plans(model.plans());
        for p in 0..k {
            model.growth[p] = base_growth(p) + self.delta;
        }
        model.fixed_burn = 65000.0 + 100000.0 * self.delta;
    }
}

/// The model: `starting_cash`, `fixed_burn`, and per plan p `price_p`,
/// `growth_p`, `churn_p`, `subs_p`.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    pub starting_cash: f64,
    pub fixed_burn: f64,
    pub price: Vec<f64>,
    pub growth: Vec<f64>,
    pub churn: Vec<f64>,
    pub subs: Vec<f64>,
}

/// A field name the model does not have, or a row set that does not cover it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError(pub String);

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ModelError {}

impl Model {
    /// The seeded model of docs/guide/experiment-file.md.
    pub fn new(plans: u32) -> Model {
        let n = plans as usize;
        Model {
            starting_cash: 900000.0,
            fixed_burn: 65000.0,
            price: (0..n).map(|p| 29.0 + 17.0 * p as f64).collect(),
            growth: (0..n).map(base_growth).collect(),
            churn: (0..n).map(|p| 0.012 + 0.006 * (p % 4) as f64).collect(),
            subs: (0..n).map(|p| 120.0 + 9.0 * p as f64).collect(),
        }
    }

    pub fn plans(&self) -> usize {
        self.price.len()
    }

    /// Number of named fields, i.e. rows in `model_field`.
    pub fn field_count(&self) -> usize {
        2 + 4 * self.plans()
    }

    /// Every field as (name, value): the rows a database is seeded with.
    pub fn fields(&self) -> Vec<(String, f64)> {
        let mut out = Vec::with_capacity(self.field_count());
        out.push(("starting_cash".to_owned(), self.starting_cash));
        out.push(("fixed_burn".to_owned(), self.fixed_burn));
        for p in 0..self.plans() {
            out.push((format!("price_{p}"), self.price[p]));
            out.push((format!("growth_{p}"), self.growth[p]));
            out.push((format!("churn_{p}"), self.churn[p]));
            out.push((format!("subs_{p}"), self.subs[p]));
        }
        out
    }

    /// Copies `other` into `self` reusing the allocations (same plan count).
    pub fn copy_from(&mut self, other: &Model) {
        self.starting_cash = other.starting_cash;
        self.fixed_burn = other.fixed_burn;
        self.price.copy_from_slice(&other.price);
        self.growth.copy_from_slice(&other.growth);
        self.churn.copy_from_slice(&other.churn);
        self.subs.copy_from_slice(&other.subs);
    }

    /// Sets one field by name; parses without allocating (used per preview).
    pub fn set(&mut self, name: &str, value: f64) -> Result<(), ModelError> {
        match name {
            "starting_cash" => self.starting_cash = value,
            "fixed_burn" => self.fixed_burn = value,
            _ => {
                let slot = name
                    .rsplit_once('_')
                    .and_then(|(kind, p)| Some((kind, p.parse::<usize>().ok()?)))
                    .and_then(|(kind, p)| {
                        let column = match kind {
                            "price" => &mut self.price,
                            "growth" => &mut self.growth,
                            "churn" => &mut self.churn,
                            "subs" => &mut self.subs,
                            _ => return None,
                        };
                        column.get_mut(p)
                    });
                match slot {
                    Some(v) => *v = value,
                    None => return Err(ModelError(format!("unknown model field {name:?}"))),
                }
            }
        }
        Ok(())
    }
}

/// Runs the calculator with a reusable cohort buffer, so a preview does not
/// allocate.
#[derive(Debug, Clone)]
pub struct Calculator {
    months: usize,
    cohorts: Vec<f64>,
}

impl Calculator {
    pub fn new(months: u32) -> Calculator {
        Calculator {
            months: months as usize,
            cohorts: vec![0.0; months as usize],
        }
    }

    /// The projection step by step, with no shortcut: O(months^2 x plans) on
    /// purpose, so a run has real work that no cache can skip (every
    /// override changes the grid).
    pub fn calculate(&mut self, model: &Model) -> Projection {
        let months = self.months;
        let mut ending_mrr = 0.0;
        let mut lifetime_revenue = 0.0;
        for p in 0..model.plans() {
            let (growth, price) = (model.growth[p], model.price[p]);
            let keep = 1.0 - model.churn[p];
            let mut subs = model.subs[p];
            for m in 0..months {
                let intake = subs * growth;
                self.cohorts[m] = intake;
                subs += intake;
                let mut active = 0.0;
                for cohort in &mut self.cohorts[..=m] {
                    *cohort *= keep;
                    active += *cohort;
                }
                let mrr = active * price;
                lifetime_revenue += mrr;
                if m + 1 == months {
                    ending_mrr += mrr;
                }
            }
        }
        let mut cash = model.starting_cash;
        let mut runway_month = -1;
        for m in 0..months {
            cash += lifetime_revenue / months as f64 - model.fixed_burn;
            if cash < 0.0 && runway_month < 0 {
                runway_month = m as i32 + 1;
            }
        }
        Projection {
            ending_mrr,
            ending_cash: cash,
            lifetime_revenue,
            runway_month,
        }
    }
}

/// One-shot calculation; strategies keep a [`Calculator`] instead.
pub fn calculate(model: &Model, months: u32) -> Projection {
    Calculator::new(months).calculate(model)
}

#[cfg(test)]
mod tests;
