//! What `sql` with `clients = N` keeps of its runs, and its `{client}`
//! placeholder: the parts of it that are not the PostgreSQL clients
//! themselves (`sql_clients`), so a runner built without PostgreSQL still
//! reads and reports what one built with it recorded.

use runner_db::waits::Sample;
use runner_spec::placeholder::{self, Fill, CLIENT};

/// What an arm with clients kept of its timed runs (warm-up included).
pub struct ClientRecord {
    pub clients: u32,
    /// N per run, in run order.
    pub ns: Vec<u64>,
    /// (run, index into `db::waits::KINDS`) per sample of an active client.
    pub waits: Vec<Sample>,
}

/// `text` with `{client}` as client `i`, other placeholders kept.
pub(super) fn for_client(text: &str, i: usize) -> String {
    placeholder::substitute(text, false, |name| match name {
        CLIENT => Fill::With(i.to_string()),
        _ => Fill::Keep,
    })
    .text
}
