//! `runner`: performance experiments you can trust and commit.
//!
//! Flow: `spec` (TOML -> Experiment) -> `plan` (cells, jobs, seeds) -> `exec`
//! (fresh worker processes measure pairs) -> `analysis` (every statistic) ->
//! `report` (Markdown, plots).

pub mod analysis;
pub mod db;
pub mod exec;
pub mod record;
pub mod report;
pub mod seed;
pub mod spec;
pub mod stats;
pub mod strategy;
pub mod workload;
