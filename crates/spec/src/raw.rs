//! The experiment file exactly as TOML gives it, before any rule is applied.
//!
//! Tables are typed so serde rejects unknown keys (`deny_unknown_fields`);
//! leaves stay `toml::Value` so that a wrong type gets the same sentence as a
//! wrong range ("must be a positive integer, got \"ten\"") instead of serde's
//! "invalid type: string, expected u32". The field order is the order in which
//! the error for an unknown key lists the valid ones.

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Value;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSpec {
    pub name: Option<Value>,
    pub title: Option<Value>,
    pub description: Option<Value>,
    pub seed: Option<Value>,
    pub workload: Option<RawWorkload>,
    pub database: Option<RawDatabase>,
    pub strategies: Option<BTreeMap<String, RawStrategy>>,
    pub design: Option<RawDesign>,
    pub grid: Option<RawGrid>,
    pub analysis: Option<RawAnalysis>,
    pub report: Option<RawReport>,
    pub gate: Option<RawGate>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawWorkload {
    pub plans: Option<Value>,
    pub months: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawDatabase {
    pub backend: Option<Value>,
    pub url: Option<Value>,
    pub sqlite_file: Option<Value>,
    pub private_copies: Option<Value>,
    pub explain: Option<Value>,
    pub strict: Option<Value>,
    pub check_inputs: Option<Value>,
}

/// One `[strategies.NAME]` table. Which keys are valid depends on `kind`,
/// so validation (not serde) rejects unknown ones, listing the kind's keys.
pub(crate) type RawStrategy = toml::Table;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawDesign {
    pub baseline: Option<Value>,
    pub treatment: Option<Value>,
    pub treatments: Option<Value>,
    pub forks: Option<Value>,
    pub warmup_pairs: Option<Value>,
    pub pairs: Option<Value>,
    pub measure: Option<Value>,
    pub counted_pairs: Option<Value>,
    pub cache_sim: Option<Value>,
    pub ordering: Option<Value>,
    pub pad_baseline: Option<Value>,
    pub schedule: Option<Value>,
    pub fork_timeout_s: Option<Value>,
    pub placement: Option<Value>,
    pub layout: Option<Value>,
    pub stop: Option<RawStop>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawStop {
    pub half_width: Option<Value>,
    pub decide: Option<Value>,
    pub min_forks: Option<Value>,
    pub max_forks: Option<Value>,
    pub max_time: Option<Value>,
}

/// Swept parameters: `delay_us`, the `[workload]` keys, any other bare key
/// (read by `{name}` placeholders) and strategy keys, written either
/// `"strategies.NAME.KEY" = [...]` or as a nested `strategies.NAME.KEY`.
pub(crate) type RawGrid = toml::Table;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAnalysis {
    pub resamples: Option<Value>,
    pub confidence: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawReport {
    pub template: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGate {
    pub max_slowdown: Option<Value>,
    pub metric: Option<Value>,
    pub statistic: Option<Value>,
    pub min_power: Option<Value>,
    pub max_false_block: Option<Value>,
    pub self_check: Option<Value>,
    pub max_retry_factor: Option<Value>,
    pub allow_overrides: Option<Value>,
}
