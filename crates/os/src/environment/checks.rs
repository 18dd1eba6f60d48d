//! Machine checks: is this machine in a state where small timing
//! differences mean something? Like `pyperf system show` and Krun's
//! checks, each check reads what the kernel exposes and says OK, WARN (with
//! what to do), or N/A (could not tell, e.g. a VM exposes no cpufreq).
//!
//! Every check here is a pure function of recorded /proc and /sys text;
//! [`super::capture`] reads the files; the busiest other processes are in
//! [`super::processes`]. The thresholds are named constants
//! with the reason for their value beside them.

pub use super::check_result::{Check, CheckKind, Status};
use super::processes::{busy_processes, descendants, window_ticks, BusyProcess, ProcessSample};
use super::procfs::{self, PidStat};

/// A 1-minute load average at or above this many runnable processes per
/// logical CPU is a busy machine. One busy process on four CPUs already
/// shares caches, memory bandwidth and the turbo budget with a run.
pub const LOAD_PER_CPU_WARN: f64 = 0.25;
/// ... but never warn below half a runnable process: a quiet machine shows
/// a load of a few tenths from daemons and the shell itself.
pub const LOAD_MIN_WARN: f64 = 0.5;
/// Swap in use above this is a machine that was short of memory: pages of
/// the worker or the database may be paged back in during a run. A few
/// pages swapped out long ago are harmless, hence not 0.
pub const SWAP_IN_USE_WARN_KIB: u64 = 16 * 1024;
/// CPU steal since boot above this share of CPU time: the hypervisor gives
/// this VM's CPUs to other guests often enough that 1 in 50 timed runs
/// could include a stolen slice (a quiet cloud VM shows well under 0.5 %).
pub const STEAL_SHARE_WARN: f64 = 0.02;

/// `scaling_governor` of each CPU that has one (empty: no cpufreq).
pub fn governor(governors: &[String]) -> Check {
    let kind = CheckKind::Governor;
    if governors.is_empty() {
        return Check::new(
            kind,
            Status::Unknown,
            "not exposed".into(),
            Some(
                "no cpufreq driver: usual in a virtual machine, where the host sets the frequency",
            ),
        );
    }
    let n = governors.len();
    let performance = governors.iter().filter(|g| *g == "performance").count();
    let mut others: Vec<&str> = governors
        .iter()
        .map(String::as_str)
        .filter(|g| *g != "performance")
        .collect();
    others.sort_unstable();
    others.dedup();
    if others.is_empty() {
        return Check::new(
            kind,
            Status::Ok,
            format!("performance on all {n} CPUs"),
            None,
        );
    }
    Check::new(
        kind,
        Status::Warn,
        format!("{} on {} of {n} CPUs", others.join(", "), n - performance),
        Some(
            "the clock speed follows the load, so a run's time depends on what ran before it; \
             set the performance governor (`sudo cpupower frequency-set -g performance`)",
        ),
    )
}

/// intel_pstate's `no_turbo` (1 = turbo off) or cpufreq's `boost` (1 = on).
pub fn turbo(intel_no_turbo: Option<&str>, cpufreq_boost: Option<&str>) -> Check {
    let kind = CheckKind::Turbo;
    let advice = "turbo raises the clock while the chip is cool and idle, so speed drifts \
                  with temperature and with what else runs";
    match (
        intel_no_turbo.map(str::trim),
        cpufreq_boost.map(str::trim),
    ) {
        (Some("1"), _) => Check::new(kind, Status::Ok, "off (intel_pstate/no_turbo = 1)".into(), None),
        (Some("0"), _) => Check::new(
            kind,
            Status::Warn,
            "on (intel_pstate/no_turbo = 0)".into(),
            Some(&format!(
                "{advice}; turn it off: `echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo`"
            )),
        ),
        (_, Some("0")) => Check::new(kind, Status::Ok, "off (cpufreq/boost = 0)".into(), None),
        (_, Some("1")) => Check::new(
            kind,
            Status::Warn,
            "on (cpufreq/boost = 1)".into(),
            Some(&format!(
                "{advice}; turn it off: `echo 0 | sudo tee /sys/devices/system/cpu/cpufreq/boost`"
            )),
        ),
        _ => Check::new(
            kind,
            Status::Unknown,
            "not exposed".into(),
            Some("neither intel_pstate/no_turbo nor cpufreq/boost exists (usual in a virtual machine)"),
        ),
    }
}

/// /proc/sys/kernel/randomize_va_space. Randomization on is what runner
/// wants: each fork gets its own memory layout, so layout effects (Mytkowicz
/// et al. 2009) become fork-to-fork variance that the analysis measures,
/// instead of one layout's bias shared by every fork.
pub fn aslr(randomize_va_space: Option<&str>) -> Check {
    let kind = CheckKind::Aslr;
    let advice = "every fork then shares one memory layout, and its bias; \
                  enable it: `sudo sysctl kernel.randomize_va_space=2`";
    match randomize_va_space.map(str::trim) {
        Some("2") => Check::new(kind, Status::Ok, "full randomization".into(), None),
        Some("1") => Check::new(
            kind,
            Status::Warn,
            "partial (randomize_va_space = 1: no heap randomization)".into(),
            Some(advice),
        ),
        Some("0") => Check::new(kind, Status::Warn, "off".into(), Some(advice)),
        _ => Check::new(
            kind,
            Status::Unknown,
            "not exposed".into(),
            Some("/proc/sys/kernel/randomize_va_space is unreadable"),
        ),
    }
}

/// Swap in use, from /proc/meminfo.
pub fn swap(meminfo: Option<&str>) -> Check {
    let kind = CheckKind::Swap;
    let get = |k| meminfo.and_then(|m| procfs::meminfo_kib(m, k));
    let (Some(total), Some(free)) = (get("SwapTotal"), get("SwapFree")) else {
        return Check::new(
            kind,
            Status::Unknown,
            "not exposed".into(),
            Some("/proc/meminfo is unreadable"),
        );
    };
    if total == 0 {
        return Check::new(kind, Status::Ok, "none configured".into(), None);
    }
    let used = total.saturating_sub(free);
    let found = format!("{} MiB of {} MiB in use", used / 1024, total / 1024);
    if used > SWAP_IN_USE_WARN_KIB {
        Check::new(
            kind,
            Status::Warn,
            found,
            Some(
                "the machine has been short of memory; pages of the worker or the database may \
                 be read back from swap during a run: free memory first",
            ),
        )
    } else {
        Check::new(kind, Status::Ok, found, None)
    }
}

/// The 1-minute load average against the logical CPUs.
pub fn load(loadavg: Option<&str>, logical_cpus: usize) -> Check {
    let kind = CheckKind::Load;
    let Some(l) = loadavg.and_then(procfs::loadavg) else {
        return Check::new(
            kind,
            Status::Unknown,
            "not exposed".into(),
            Some("/proc/loadavg is unreadable"),
        );
    };
    let limit = (LOAD_PER_CPU_WARN * logical_cpus as f64).max(LOAD_MIN_WARN);
    let found = format!(
        "{:.2} over the last minute on {logical_cpus} CPUs",
        l.averages[0]
    );
    if l.averages[0] >= limit {
        Check::new(
            kind,
            Status::Warn,
            found,
            Some(&format!(
                "at or above {limit:.2}: other work shares the CPUs with a run; wait for it to \
                 finish or stop it (see the busiest processes)"
            )),
        )
    } else {
        Check::new(kind, Status::Ok, found, None)
    }
}

/// CPU steal since boot, from the `cpu` line of /proc/stat.
pub fn steal(proc_stat: Option<&str>) -> Check {
    let kind = CheckKind::CpuSteal;
    let Some(t) = proc_stat
        .and_then(procfs::cpu_times)
        .filter(|t| t.total() > 0)
    else {
        return Check::new(
            kind,
            Status::Unknown,
            "not exposed".into(),
            Some("/proc/stat is unreadable"),
        );
    };
    let share = t.steal as f64 / t.total() as f64;
    let found = format!("{:.2} % of CPU time since boot", 100.0 * share);
    if share >= STEAL_SHARE_WARN {
        Check::new(
            kind,
            Status::Warn,
            found,
            Some(
                "the hypervisor often runs other guests on this VM's CPUs; timed runs can include \
                 a stolen slice: use a dedicated or less shared instance",
            ),
        )
    } else {
        Check::new(kind, Status::Ok, found, None)
    }
}

/// The /proc and /sys text the checks read, as found at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MachineText {
    /// `scaling_governor` of each CPU that has one, in CPU order.
    pub governors: Vec<String>,
    pub intel_no_turbo: Option<String>,
    pub cpufreq_boost: Option<String>,
    pub randomize_va_space: Option<String>,
    pub meminfo: Option<String>,
    pub loadavg: Option<String>,
    pub proc_stat: Option<String>,
}

impl MachineText {
    /// Reads the files now.
    pub fn read() -> MachineText {
        let cpu = "/sys/devices/system/cpu";
        let mut cpus: Vec<u32> = std::fs::read_dir(cpu)
            .map(|dir| {
                dir.filter_map(|e| {
                    e.ok()?
                        .file_name()
                        .to_str()?
                        .strip_prefix("cpu")?
                        .parse()
                        .ok()
                })
                .collect()
            })
            .unwrap_or_default();
        cpus.sort_unstable();
        MachineText {
            governors: cpus
                .iter()
                .filter_map(|n| procfs::read(format!("{cpu}/cpu{n}/cpufreq/scaling_governor")))
                .map(|g| g.trim().to_string())
                .collect(),
            intel_no_turbo: procfs::read(format!("{cpu}/intel_pstate/no_turbo")),
            cpufreq_boost: procfs::read(format!("{cpu}/cpufreq/boost")),
            randomize_va_space: procfs::read("/proc/sys/kernel/randomize_va_space"),
            meminfo: procfs::read("/proc/meminfo"),
            loadavg: procfs::read("/proc/loadavg"),
            proc_stat: procfs::read("/proc/stat"),
        }
    }
}

/// Every check, in the order `runner env` prints them, and the busiest
/// other processes; `own_pid`'s process tree is not "other".
pub fn all(
    text: &MachineText,
    sample: &ProcessSample,
    own_pid: u32,
) -> (Vec<Check>, Vec<BusyProcess>) {
    let stat = |s: &Option<String>| s.as_deref().and_then(procfs::cpu_times);
    let cpus = text.proc_stat.as_deref().map_or(0, procfs::cpu_count);
    let window = match (stat(&sample.stat_before), stat(&sample.stat_after)) {
        (Some(b), Some(a)) => window_ticks(&b, &a, cpus),
        _ => 0,
    };
    let ours = descendants(&sample.after, &[own_pid]);
    let snapshot = |stat: &Option<String>, procs: &[PidStat]| {
        super::Snapshot::from_text(stat.as_deref()?, None, procs, &[own_pid])
    };
    let outside = match (
        snapshot(&sample.stat_before, &sample.before),
        snapshot(&sample.stat_after, &sample.after),
    ) {
        (Some(b), Some(a)) => Some(super::sentinel::compare(&b, &a).outside_share),
        _ => None,
    };
    let (busy_check, busiest) =
        busy_processes(&sample.before, &sample.after, window, &ours, outside);
    let checks = vec![
        governor(&text.governors),
        turbo(
            text.intel_no_turbo.as_deref(),
            text.cpufreq_boost.as_deref(),
        ),
        aslr(text.randomize_va_space.as_deref()),
        swap(text.meminfo.as_deref()),
        load(text.loadavg.as_deref(), cpus),
        busy_check,
        steal(text.proc_stat.as_deref()),
    ];
    (checks, busiest)
}
