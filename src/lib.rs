//! `runner`: performance experiments you can trust and commit.
//!
//! Flow: `spec` (TOML -> Experiment) -> `plan` (cells, jobs, seeds) -> `exec`
//! (fresh worker processes measure pairs) -> `analysis` (every statistic) ->
//! `report` (Markdown, plots). Over many machines, `shard` cuts the plan
//! (`exec --shard I/N`) and `merge` joins the shards into one run again.

pub(crate) mod ab;
pub mod binary;
pub(crate) mod check;
pub(crate) mod clean;
pub mod cli;
pub mod compare;
pub mod dispatch;
pub(crate) mod env;
pub mod exec;
pub(crate) mod history;
pub(crate) mod import;
pub(crate) mod merge;

pub(crate) mod shard;
pub mod strategy;
