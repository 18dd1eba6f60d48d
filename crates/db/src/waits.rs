//! What the clients of `clients = N` wait on, as recorded: the kinds of
//! wait PostgreSQL reports and one sample. The sampling itself is
//! `pg::sampler`.

/// The wait event types PostgreSQL reports, and `CPU` for none.
pub const KINDS: [&str; 10] = [
    "CPU",
    "Lock",
    "LWLock",
    "IO",
    "IPC",
    "BufferPin",
    "Timeout",
    "Client",
    "Extension",
    "Activity",
];

/// One sample of one active client: the run it fell in, and an index
/// into [`KINDS`].
pub type Sample = (u32, u8);
