//! The integration tests, one module per concern, in one binary: each
//! test binary links the whole library, so one binary instead of sixty
//! keeps a clean build small and quick. The tests that must have their
//! process to themselves (tests/pool.rs counts its threads) or need a
//! tool from outside (tests/slurm.rs, tests/kubernetes.rs) are binaries of
//! their own.

// Helpers shared by this crate's modules are `pub` for them; nothing
// outside the test binary can reach them anyway.
#![allow(unreachable_pub)]

#[path = "../common/mod.rs"]
mod common;

mod ab;
mod analysis_properties;
mod analysis_reference;
mod analyze;
mod architecture;
mod bisect;
mod bounds;
mod ci_workflow;
mod cli;
mod command_safety;
mod compare;
mod database_doors;
mod database_safety;
mod env;
mod estimate;
mod exec;
mod exec_database;
mod faults;
mod faults_postgres;
mod file_guard;
mod gate;
mod grouping;
mod history;
mod instructions;
mod integrity;
mod integrity_props;
mod layout_bias;
mod links;
mod machines;
mod merge;
mod no_dead_ends;
mod nothing_left;
mod nothing_left_postgres;
mod output_folder;
mod own_command;
mod own_sql;
mod placement;
mod plots;
mod postgres;
mod postgres_guarded;
mod ratio;
mod readme;
mod reference;
mod report;
mod report_folders;
mod report_snapshots;
mod run_folder;
mod secrets;
mod sequential;
mod shards;
mod signals;
mod skips;
mod spec_errors;
mod spec_props;
mod sql_runs;
mod threads;
mod user_words;
