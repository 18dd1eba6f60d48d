//! PostgreSQL (the `postgres` feature): connections, the run's schemas,
//! the preview's table, the `sql` strategy's sessions and the clients'
//! shared schema, private copies, the fingerprint taken on the server, the
//! catalog checks before anything runs, and stopping a fork's queries.
//!
//! The modules import downwards only: `connect` first, then `schema`,
//! then what builds on them.

pub mod cancel;
pub mod connect;
pub mod copies;
pub mod guard;
pub mod info;
pub mod locks;
pub mod preflight;
pub mod sampler;
pub mod schema;
pub mod session;
pub mod shared;
pub mod table;
