//! Other processes: who used the CPUs while runner watched, from two
//! samples of every /proc/PID/stat and of /proc/stat a window apart.

use super::check_result::{Check, CheckKind, Status};
use super::procfs::{CpuTimes, PidStat};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// Share of all CPUs' time used by other processes above which a fork is
/// flagged (`sentinel`). On the 2-CPU machines runner is developed on, 10 % is a fifth
/// of a core: enough to put a competing thread on the worker's or its
/// database's CPU; an idle machine's daemons stay under 2 %.
pub const OUTSIDE_SHARE_FLAG: f64 = 0.10;

/// Another process using this share of one CPU during the sample window
/// competes with a run for a core (on a 2-CPU VM, for half of what the
/// worker and its database need).
pub const BUSY_PROCESS_SHARE_WARN: f64 = 0.10;
/// All other work together above this share of the machine's CPU time
/// (the per-fork sentinel's threshold, for the same reason).
pub const OUTSIDE_SHARE_WARN: f64 = OUTSIDE_SHARE_FLAG;
/// How many of the busiest other processes are recorded.
pub const BUSIEST_KEPT: usize = 5;

/// Another process and the share of one CPU it used in the sample window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BusyProcess {
    pub pid: u32,
    pub name: String,
    /// 0.5 = half of one CPU.
    pub cpu_share: f64,
}

/// Every process's stat and /proc/stat, sampled twice, a window apart.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProcessSample {
    pub stat_before: Option<String>,
    pub stat_after: Option<String>,
    pub before: Vec<PidStat>,
    pub after: Vec<PidStat>,
}

/// Other processes' CPU use between two samples of every /proc/PID/stat,
/// `window_ticks` (USER_HZ ticks of one CPU) apart. Processes in `ours`
/// (this process and its children) are left out. A process seen only in
/// the second sample started during the window: all its time counts.
/// `outside_share` is the machine-wide share of CPU time others used in the
/// window (see `sentinel`): in a container, /proc shows only the
/// container's processes, but /proc/stat counts the whole machine.
pub fn busy_processes(
    before: &[PidStat],
    after: &[PidStat],
    window_ticks: u64,
    ours: &HashSet<u32>,
    outside_share: Option<f64>,
) -> (Check, Vec<BusyProcess>) {
    let kind = CheckKind::BusyProcesses;
    if window_ticks == 0 || after.is_empty() {
        let c = Check::new(
            kind,
            Status::Unknown,
            "not sampled".into(),
            Some("/proc could not be read"),
        );
        return (c, Vec::new());
    }
    let earlier: HashMap<u32, &PidStat> = before.iter().map(|p| (p.pid, p)).collect();
    let mut busy: Vec<BusyProcess> = after
        .iter()
        .filter(|p| !ours.contains(&p.pid))
        .map(|p| {
            let was = earlier.get(&p.pid).map_or(0, |b| b.own_ticks());
            BusyProcess {
                pid: p.pid,
                name: p.comm.clone(),
                cpu_share: p.own_ticks().saturating_sub(was) as f64 / window_ticks as f64,
            }
        })
        .filter(|b| b.cpu_share > 0.0)
        .collect();
    busy.sort_by(|a, b| b.cpu_share.total_cmp(&a.cpu_share).then(a.pid.cmp(&b.pid)));
    busy.truncate(BUSIEST_KEPT);
    let over: Vec<&BusyProcess> = busy
        .iter()
        .filter(|b| b.cpu_share >= BUSY_PROCESS_SHARE_WARN)
        .collect();
    let list = |v: &[&BusyProcess]| {
        v.iter()
            .map(|b| format!("{} (pid {}) {:.0} %", b.name, b.pid, 100.0 * b.cpu_share))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let machine = outside_share
        .map(|s| format!("; all others together {:.0} % of the CPUs", 100.0 * s))
        .unwrap_or_default();
    let check = if !over.is_empty() {
        Check::new(
            kind,
            Status::Warn,
            format!("{}{machine}", list(&over)),
            Some("these compete with a run for the CPUs: stop them, or run elsewhere"),
        )
    } else if outside_share.is_some_and(|s| s > OUTSIDE_SHARE_WARN) {
        Check::new(
            kind,
            Status::Warn,
            format!(
                "no single process seen here above {:.0} % of a CPU{machine}",
                100.0 * BUSY_PROCESS_SHARE_WARN
            ),
            Some(
                "the CPUs are busy with work this process cannot see (another container, or many \
                 small processes): it competes with a run",
            ),
        )
    } else {
        let found = match busy.first() {
            Some(top) => format!(
                "none above {:.0} % of a CPU (busiest: {}){machine}",
                100.0 * BUSY_PROCESS_SHARE_WARN,
                list(&[top])
            ),
            None => format!("none used any CPU{machine}"),
        };
        Check::new(kind, Status::Ok, found, None)
    };
    (check, busy)
}

/// `roots` and every process below them, from the parent links in `procs`.
pub fn descendants(procs: &[PidStat], roots: &[u32]) -> HashSet<u32> {
    let mut set: HashSet<u32> = roots.iter().copied().collect();
    loop {
        let before = set.len();
        for p in procs {
            if set.contains(&p.ppid) {
                set.insert(p.pid);
            }
        }
        if set.len() == before {
            return set;
        }
    }
}

/// Ticks of one CPU between two /proc/stat samples (all CPUs' ticks over
/// their number).
pub fn window_ticks(before: &CpuTimes, after: &CpuTimes, logical_cpus: usize) -> u64 {
    after.since(before).total() / logical_cpus.max(1) as u64
}
