//! What a worker does about placement: pin itself before anything else
//! starts (threads and child processes inherit the mask), then pin the
//! database backends its arms connected to, and sample the CPUs used.

use super::pin;
use super::record::{Backend, DatabaseSide};
use super::{Claim, Cpus, Placement};
use crate::environment::procfs;

/// Why the worker could not be placed as its job says.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    #[error("placement \"{placement}\": {why}")]
    Unplaceable {
        placement: Placement,
        #[source]
        why: super::Unplaceable,
    },
    #[error("placement \"{placement}\": cannot pin the worker to CPU {cpu}: {source}")]
    Pin {
        placement: Placement,
        cpu: u32,
        #[source]
        source: std::io::Error,
    },
}

/// Pins the calling worker as `placement` asks on this machine, at the
/// CPUs the parent `claimed` for it (`lock`) when it did; returns where the
/// backend should go and whether the worker was pinned. An impossible
/// placement is an error here too (a resume on another machine).
pub fn pin_worker(placement: Placement, claimed: Option<&Claim>) -> Result<(Cpus, bool), PinError> {
    let cpus = match claimed {
        Some(c) => c.cpus,
        None => placement
            .cpus(&pin::allowed_cpus())
            .map_err(|why| PinError::Unplaceable { placement, why })?,
    };
    let pinned = match cpus.worker {
        Some(cpu) => {
            pin::pin(0, cpu).map_err(|source| PinError::Pin {
                placement,
                cpu,
                source,
            })?;
            true
        }
        None => false,
    };
    Ok((cpus, pinned))
}

/// Pins each backend in `pids` to `cpu` (when the placement names one) and
/// says, per backend, why it could not be.
pub fn pin_backends(pids: &[u32], cpu: Option<u32>) -> Vec<Backend> {
    pids.iter()
        .map(|&pid| {
            let Some(c) = cpu else {
                return Backend {
                    pid,
                    pinned: false,
                    reason: None,
                };
            };
            let refused = if !pin::is_local_postgres(pid) {
                Some(format!(
                    "backend pid {pid} is not a postgres process on this host (a remote server, or one in another PID namespace)"
                ))
            } else {
                pin::pin(pid, c).err().map(|e| {
                    format!("pinning backend pid {pid} to CPU {c} was refused: {e} (it needs root, CAP_SYS_NICE or the server's own user)")
                })
            };
            Backend {
                pid,
                pinned: refused.is_none(),
                reason: refused,
            }
        })
        .collect()
}

/// The database side of a fork from its arms' backend pids and whether it
/// uses an embedded database.
pub fn database_side(pids: &[u32], backends: Vec<Backend>, embedded: bool) -> DatabaseSide {
    if !pids.is_empty() {
        DatabaseSide::Server { backends }
    } else if embedded {
        DatabaseSide::Embedded
    } else {
        DatabaseSide::None
    }
}

/// CPU ticks (user + system) the processes have used so far; a process
/// that cannot be read counts 0.
pub fn ticks(pids: &[u32]) -> u64 {
    pids.iter()
        .filter_map(|pid| procfs::read(format!("/proc/{pid}/stat")))
        .filter_map(|t| procfs::pid_stat(&t))
        .map(|s| s.own_ticks())
        .sum()
}
