//! Per-fork sentinels: what else the machine did while one fork measured.
//!
//! The parent takes a [`Snapshot`] just before it tells a worker to go and
//! one when the worker's first record arrives (records are sent only after
//! the timed runs): the window is the fork's timing, and in it runner has
//! only the measuring worker, its backends and the waiting parent.
//! [`compare`] turns the two into the fork's [`ForkSentinel`]. A snapshot is
//! /proc/stat's `cpu` line (every CPU's ticks by kind, steal included),
//! /proc/loadavg, and the CPU time of our own processes: the roots given
//! (runner itself) and everything below them. Own time counts utime +
//! stime + cutime + cstime of each, so a worker counts while it runs (its
//! own times) and after it has been reaped (in its parent's cutime /
//! cstime), and is never counted twice. A PostgreSQL backend that serves the
//! worker is not our child: the worker reports its CPU time in the window,
//! and [`Snapshot::with_own_ticks`] counts it as ours.
//!
//! From the differences: *steal share* = stolen ticks / all ticks; *outside
//! share* = (busy ticks of the whole machine - our own ticks) / all ticks,
//! i.e. the share of the machine's CPU time that other processes (and
//! interrupt work) took. A fork over a threshold is flagged, never dropped.
//! A database backend not reported by the worker counts as outside.

use super::procfs::{self, CpuTimes, LoadAvg, PidStat};
use serde::{Deserialize, Serialize};

/// Stolen share of CPU time above which a fork is flagged: 1 in 50 ms
/// of CPU time went to another guest, far more than the smallest effects
/// runner is asked to resolve in a single run (and a quiet cloud VM shows
/// well under 0.5 %).
pub const STEAL_SHARE_FLAG: f64 = 0.02;
/// Forks shorter than this many ticks (summed over CPUs; USER_HZ is 100,
/// so 100 ticks is one CPU-second) are not flagged: every counter is whole
/// ticks, and below that one tick of rounding is a percent or more.
pub const MIN_WINDOW_TICKS: u64 = 100;

/// The machine's counters at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub cpu: CpuTimes,
    pub load: Option<LoadAvg>,
    /// CPU ticks of our own process trees (see the module docs).
    pub own_ticks: u64,
}

impl Snapshot {
    /// Reads /proc now; `roots` are the pids whose process trees are ours.
    /// `None` when /proc/stat is unreadable (not Linux).
    pub fn take(roots: &[u32]) -> Option<Snapshot> {
        Snapshot::from_text(
            &procfs::read("/proc/stat")?,
            procfs::read("/proc/loadavg").as_deref(),
            &procfs::read_tree(roots).unwrap_or_else(procfs::read_processes),
            roots,
        )
    }

    /// The snapshot that this text describes (pure; see [`Snapshot::take`]).
    pub fn from_text(
        proc_stat: &str,
        loadavg: Option<&str>,
        processes: &[PidStat],
        roots: &[u32],
    ) -> Option<Snapshot> {
        let ours = super::processes::descendants(processes, roots);
        let own_ticks = processes
            .iter()
            .filter(|p| ours.contains(&p.pid))
            .map(|p| p.utime + p.stime + p.cutime + p.cstime)
            .sum();
        Some(Snapshot {
            cpu: procfs::cpu_times(proc_stat)?,
            load: loadavg.and_then(procfs::loadavg),
            own_ticks,
        })
    }
}

impl Snapshot {
    /// This snapshot with `ticks` more counted as runner's own: the CPU
    /// time of a database backend that served the worker and has exited.
    pub fn with_own_ticks(mut self, ticks: u64) -> Snapshot {
        self.own_ticks += ticks;
        self
    }
}

/// Why a fork was flagged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Flag {
    /// The steal share crossed [`STEAL_SHARE_FLAG`].
    Steal,
    /// The outside share crossed [`super::processes::OUTSIDE_SHARE_FLAG`].
    OutsideLoad,
}

/// Which part of a fork the two snapshots bracket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Window {
    /// The worker's whole life, from its start to its exit: runs recorded
    /// before the worker waited for the parent's go.
    #[default]
    Worker,
    /// The fork's timing: from the parent's go to the first record.
    Timing,
}

impl Window {
    fn is_worker(&self) -> bool {
        *self == Window::Worker
    }
}

/// What the machine did during one fork, as run.json records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForkSentinel {
    /// What the snapshots bracket; absent (the worker's life) in runs
    /// recorded before the go.
    #[serde(default, skip_serializing_if = "Window::is_worker")]
    pub window: Window,
    /// All CPUs' ticks between the snapshots.
    pub window_ticks: u64,
    pub steal_share: f64,
    pub outside_share: f64,
    /// 1-, 5- and 15-minute load averages at each snapshot, when readable.
    pub load_before: Option<[f64; 3]>,
    pub load_after: Option<[f64; 3]>,
    /// Empty when the fork was quiet or shorter than [`MIN_WINDOW_TICKS`].
    pub flags: Vec<Flag>,
}

/// The sentinel of the fork that ran between `before` and `after`.
pub fn compare(before: &Snapshot, after: &Snapshot) -> ForkSentinel {
    let d = after.cpu.since(&before.cpu);
    let total = d.total();
    let share = |ticks: u64| {
        if total == 0 {
            0.0
        } else {
            ticks as f64 / total as f64
        }
    };
    let own = after.own_ticks.saturating_sub(before.own_ticks);
    let steal_share = share(d.steal);
    let outside_share = share(d.busy().saturating_sub(own));
    let mut flags = Vec::new();
    if total >= MIN_WINDOW_TICKS {
        if steal_share > STEAL_SHARE_FLAG {
            flags.push(Flag::Steal);
        }
        if outside_share > super::processes::OUTSIDE_SHARE_FLAG {
            flags.push(Flag::OutsideLoad);
        }
    }
    ForkSentinel {
        window: Window::Timing,
        window_ticks: total,
        steal_share,
        outside_share,
        load_before: before.load.map(|l| l.averages),
        load_after: after.load.map(|l| l.averages),
        flags,
    }
}
