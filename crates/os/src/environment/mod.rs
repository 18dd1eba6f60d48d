//! The machine a run measured on (docs/guide/output-folder.md, `run.json`).
//!
//! Numbers mean little without the machine: cores, governor, load and the
//! clock's own cost are what a reader needs to judge a floor or a spread.
//! [`capture`] records them with the machine checks of [`checks`] (OK /
//! WARN, like `pyperf system show`) and the busiest other processes
//! ([`processes`]); [`sentinel`] measures what else the machine did during
//! one fork. [`procfs`] parses the kernel's text.

pub mod check_result;
pub mod checks;
pub mod code;
pub mod counters;
pub mod processes;
pub mod procfs;
pub mod sentinel;

pub use checks::{Check, CheckKind, Status};
pub use code::{Code, Repository};
pub use processes::BusyProcess;
pub use sentinel::{ForkSentinel, Snapshot};

use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// How long [`capture`] watches other processes' CPU use: long enough for
/// a process busy a tenth of the time to show (25 ticks of one CPU at
/// USER_HZ 100), short enough not to delay a run.
pub const SAMPLE_WINDOW: Duration = Duration::from_millis(250);

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Environment {
    pub os: String,
    pub kernel: String,
    pub hostname: String,
    pub cpu_model: String,
    pub logical_cores: usize,
    pub physical_cores: Option<usize>,
    pub memory_bytes: u64,
    pub cpu_frequency_mhz: Option<u64>,
    /// `scaling_governor` of cpu0, when the kernel exposes it.
    pub cpu_governor: Option<String>,
    /// 1, 5 and 15 minute load averages when the run started.
    pub load_before: [f64; 3],
    /// The same when it ended (`None` until then).
    pub load_after: Option<[f64; 3]>,
    pub rustc: String,
    pub runner_version: String,
    /// The commit runner itself was built from.
    pub git_commit: String,
    /// The user's code the run measured ([`code`]), beside runner's own
    /// build above.
    pub code: Code,
    pub clock: ClockInfo,
    /// The machine checks when the run started (a version 0 run.json
    /// from before runner had them reads as none: runner's format
    /// migration adds the key).
    pub checks: Vec<Check>,
    /// The busiest other processes over [`SAMPLE_WINDOW`] at the start.
    pub busiest_processes: Vec<BusyProcess>,
    /// The instruction counters the machine offered and the one the run
    /// used ([`counters`]); absent for a run that counted nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<counters::Counters>,
}

/// What one `Instant::now()` costs and the smallest step it shows.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct ClockInfo {
    /// Mean cost of one clock read, ns.
    pub read_cost_ns: f64,
    /// Smallest non-zero difference between consecutive reads, ns.
    pub resolution_ns: u64,
}

/// Measures the clock: 200 000 back-to-back reads.
pub fn measure_clock() -> ClockInfo {
    const N: u32 = 200_000;
    let mut min_step = u64::MAX;
    let start = Instant::now();
    let mut prev = start;
    for _ in 0..N {
        let now = Instant::now();
        let step = now.duration_since(prev).as_nanos() as u64;
        if step > 0 && step < min_step {
            min_step = step;
        }
        prev = now;
    }
    let total = prev.duration_since(start).as_nanos() as f64;
    ClockInfo {
        read_cost_ns: total / f64::from(N),
        resolution_ns: if min_step == u64::MAX { 0 } else { min_step },
    }
}

/// The 1, 5 and 15 minute load averages, from /proc/loadavg like the
/// machine check and the sentinels (one source, so the figures recorded
/// before and after a run and the ones its checks judge cannot disagree);
/// zeros where the file is unreadable.
pub fn load_average() -> [f64; 3] {
    procfs::read("/proc/loadavg")
        .as_deref()
        .and_then(procfs::loadavg)
        .map_or([0.0; 3], |l| l.averages)
}

fn governor() -> Option<String> {
    std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
        .ok()
        .map(|s| s.trim().to_string())
}

/// The binary that measures, as its build recorded it: the runner crate
/// knows its compiler and commit (its build script), this crate does not.
#[derive(Debug, Clone, Copy)]
pub struct Binary {
    pub rustc: &'static str,
    pub version: &'static str,
    pub git_commit: &'static str,
}

/// Captures everything but `load_after` and the user's code (which the
/// caller knows where to find: [`Code::capture`]); takes [`SAMPLE_WINDOW`].
pub fn capture(binary: &Binary) -> Environment {
    use sysinfo::{CpuRefreshKind, MemoryRefreshKind, RefreshKind, System};
    let started = Instant::now();
    let mut sample = processes::ProcessSample {
        stat_before: procfs::read("/proc/stat"),
        before: procfs::read_processes(),
        ..Default::default()
    };
    let sys = System::new_with_specifics(
        RefreshKind::nothing()
            .with_cpu(CpuRefreshKind::nothing().with_frequency())
            .with_memory(MemoryRefreshKind::nothing().with_ram()),
    );
    let cpu = sys.cpus().first();
    let clock = measure_clock();
    std::thread::sleep(SAMPLE_WINDOW.saturating_sub(started.elapsed()));
    sample.after = procfs::read_processes();
    sample.stat_after = procfs::read("/proc/stat");
    let (checks, busiest_processes) =
        checks::all(&checks::MachineText::read(), &sample, std::process::id());
    Environment {
        os: System::long_os_version().unwrap_or_else(|| std::env::consts::OS.into()),
        kernel: System::kernel_version().unwrap_or_default(),
        hostname: System::host_name().unwrap_or_default(),
        cpu_model: cpu
            .map(|c| c.brand().trim().to_string())
            .unwrap_or_default(),
        logical_cores: sys.cpus().len(),
        physical_cores: sys.physical_core_count(),
        memory_bytes: sys.total_memory(),
        cpu_frequency_mhz: cpu.map(|c| c.frequency()).filter(|&f| f > 0),
        cpu_governor: governor(),
        load_before: load_average(),
        load_after: None,
        rustc: binary.rustc.into(),
        runner_version: binary.version.into(),
        git_commit: binary.git_commit.into(),
        code: Code::NotRecorded,
        clock,
        checks,
        busiest_processes,
        counters: None,
    }
}

#[cfg(test)]
mod tests;
