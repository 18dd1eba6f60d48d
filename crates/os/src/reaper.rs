//! Nothing a run starts may outlive it (docs/safety.md).
//!
//! The worker and the exec parent are child subreapers
//! (`PR_SET_CHILD_SUBREAPER`): a process whose parent dies is re-parented
//! to the nearest subreaper above it instead of to init, so a descendant
//! that double-forks or calls `setsid` still ends up as our child and can be
//! found without knowing how it got away. Every process in the tree below a
//! subreaper is then either its child or below a live child, so killing the
//! children, reaping them, and repeating until none is left kills the whole
//! tree. Only children are signalled: a child that died stays a zombie until
//! it is reaped here, so its pid cannot have been reused by the time of the
//! kill.

use rustix::process::{self, Pid, Signal};
use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

/// How long a sweep keeps killing before it gives up (a process stuck in
/// uninterruptible sleep, or one that forks faster than it is killed).
const PATIENCE: Duration = Duration::from_secs(10);

/// Makes this process a child subreaper; false where the kernel refuses.
pub fn become_subreaper() -> bool {
    rustix::process::set_child_subreaper(Some(rustix::process::getpid())).is_ok()
}

/// Whether this process is a child subreaper: only then is every orphaned
/// descendant sure to come back here, and only then do the sweeps run (a
/// test binary calling the command strategy in-process must not kill its
/// other tests' children).
pub fn is_subreaper() -> bool {
    rustix::process::child_subreaper().is_ok_and(|on| on.is_some())
}

use crate::environment::procfs::{read_process, read_processes, task_children, PidStat};

/// This process's children (every thread's), zombies included. Reads
/// `/proc/self/task/*/children` (cheap: this is what runs after every
/// command run), else scans /proc for the parent pid.
pub fn children() -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut out: Vec<i32> = match task_children("/proc/self") {
        Some(pids) => pids.into_iter().map(|p| p as i32).collect(),
        None => read_processes()
            .into_iter()
            .filter(|p| p.ppid as i32 == me)
            .map(|p| p.pid as i32)
            .collect(),
    };
    out.sort_unstable();
    out.dedup();
    out
}

/// The live processes below this one (excluding the pids in `keep` and
/// everything below them), from one scan of /proc.
pub fn live_descendants(keep: &BTreeSet<i32>) -> Vec<PidStat> {
    let me = std::process::id() as i32;
    let procs = read_processes();
    let parent: HashMap<i32, i32> = procs
        .iter()
        .map(|p| (p.pid as i32, p.ppid as i32))
        .collect();
    procs
        .into_iter()
        .filter(|p| !p.zombie() && p.pid as i32 != me)
        .filter(|p| {
            let mut at = p.pid as i32;
            // A chain longer than this is a loop in a torn read of /proc.
            for _ in 0..4096 {
                if keep.contains(&at) {
                    return false;
                }
                match parent.get(&at) {
                    Some(&pp) if pp == me => return true,
                    Some(&pp) if pp > 1 => at = pp,
                    _ => return false,
                }
            }
            false
        })
        .collect()
}

/// Kills every child except those in `keep` (and, each round, the process
/// group `group` when given), reaps them, and repeats until no other child
/// is left: with this process a subreaper, that is every descendant.
/// Returns whether it finished within its patience, and the children it
/// found alive (each is looked at before anything is killed in its round,
/// so a process is counted even when a scan of /proc missed it).
pub fn kill_children(keep: &BTreeSet<i32>, group: Option<i32>) -> (bool, BTreeSet<i32>) {
    let started = Instant::now();
    let mut pause = Duration::from_micros(200);
    let mut seen = BTreeSet::new();
    loop {
        let others: Vec<i32> = children()
            .into_iter()
            .filter(|p| !keep.contains(p))
            .collect();
        seen.extend(
            others
                .iter()
                .filter(|&&p| read_process(p as u32).is_some_and(|s| !s.zombie())),
        );
        // The group's leader is an unreaped child of ours, so the group id
        // cannot have been reused.
        if let Some(g) = group.and_then(Pid::from_raw) {
            let _ = process::kill_process_group(g, Signal::KILL);
        }
        if others.is_empty() {
            return (true, seen);
        }
        // Each is our child and not reaped yet (only this loop and the
        // callers' own waits reap), so the pid is still its own.
        let others: Vec<Pid> = others.iter().filter_map(|&p| Pid::from_raw(p)).collect();
        for &p in &others {
            let _ = process::kill_process(p, Signal::KILL);
        }
        let mut reaped = false;
        for &p in &others {
            // Only this child, without blocking.
            if let Ok(Some(_)) = process::waitpid(Some(p), process::WaitOptions::NOHANG) {
                reaped = true;
            }
        }
        if started.elapsed() > PATIENCE {
            return (false, seen);
        }
        if !reaped {
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(20));
        }
    }
}

/// The exec parent's sweep after each worker: counts and kills whatever
/// the worker left (a worker killed on a timeout or a signal cannot clean
/// up after itself). `keep`: the children this process had before it
/// became a subreaper (someone's `cmd & exec runner`), never touched.
pub fn after_worker(keep: &BTreeSet<i32>) -> usize {
    if !is_subreaper() || children().iter().all(|p| keep.contains(p)) {
        return 0;
    }
    let mut left: BTreeSet<i32> = live_descendants(keep)
        .iter()
        .map(|p| p.pid as i32)
        .collect();
    left.extend(kill_children(keep, None).1);
    left.len()
}
