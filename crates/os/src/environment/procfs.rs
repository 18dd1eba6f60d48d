//! Parsers for the /proc and /sys text the checks and sentinels read.
//!
//! Pure functions of the file contents (see proc(5)), so they are tested on
//! recorded text from real machines; `read_*` are the only functions here
//! that touch the file system. Anything unparsable is `None`: a check that
//! cannot read its input says so instead of failing the run.

use std::path::Path;

/// The aggregate `cpu` line of /proc/stat, in USER_HZ ticks, summed over
/// all CPUs since boot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    /// Time the hypervisor ran something else while this VM wanted to run.
    pub steal: u64,
}

impl CpuTimes {
    /// Every tick, busy or not (guest time is already inside user and nice).
    pub fn total(&self) -> u64 {
        self.busy() + self.idle + self.iowait + self.steal
    }

    /// Ticks spent running something in this system: processes and the
    /// kernel's interrupt work.
    pub fn busy(&self) -> u64 {
        self.user + self.nice + self.system + self.irq + self.softirq
    }

    /// `self - earlier`, field by field (0 where a counter went back).
    pub fn since(&self, earlier: &CpuTimes) -> CpuTimes {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        CpuTimes {
            user: d(self.user, earlier.user),
            nice: d(self.nice, earlier.nice),
            system: d(self.system, earlier.system),
            idle: d(self.idle, earlier.idle),
            iowait: d(self.iowait, earlier.iowait),
            irq: d(self.irq, earlier.irq),
            softirq: d(self.softirq, earlier.softirq),
            steal: d(self.steal, earlier.steal),
        }
    }
}

/// The `cpu` line of /proc/stat. Kernels before 2.6.11 have no steal
/// column; it is then 0.
pub fn cpu_times(proc_stat: &str) -> Option<CpuTimes> {
    let line = proc_stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    (v.len() >= 4).then(|| CpuTimes {
        user: at(0),
        nice: at(1),
        system: at(2),
        idle: at(3),
        iowait: at(4),
        irq: at(5),
        softirq: at(6),
        steal: at(7),
    })
}

/// The number of CPUs /proc/stat lists (`cpu0`, `cpu1`, ...): the online ones.
pub fn cpu_count(proc_stat: &str) -> usize {
    proc_stat
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count()
}

/// /proc/loadavg: the 1, 5 and 15 minute load averages, and the number of
/// runnable scheduling entities and of all of them (`3/101`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadAvg {
    pub averages: [f64; 3],
    pub runnable: u32,
    pub total: u32,
}

pub fn loadavg(text: &str) -> Option<LoadAvg> {
    let mut f = text.split_whitespace();
    let mut avg = || f.next()?.parse::<f64>().ok();
    let averages = [avg()?, avg()?, avg()?];
    let (runnable, total) = f.next()?.split_once('/')?;
    Some(LoadAvg {
        averages,
        runnable: runnable.parse().ok()?,
        total: total.parse().ok()?,
    })
}

/// A `Key:   1234 kB` value of /proc/meminfo, in KiB.
pub fn meminfo_kib(meminfo: &str, key: &str) -> Option<u64> {
    meminfo.lines().find_map(|l| {
        let (k, rest) = l.split_once(':')?;
        (k == key).then(|| rest.split_whitespace().next()?.parse().ok())?
    })
}

/// The fields of /proc/PID/stat the checks and the sweep (`reaper`) use;
/// times in USER_HZ ticks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PidStat {
    pub pid: u32,
    /// The executable's name as the kernel keeps it (at most 15 bytes).
    pub comm: String,
    /// `R`, `S`, `Z`, ... (proc(5)).
    pub state: char,
    pub ppid: u32,
    /// Its process group.
    pub pgrp: u32,
    pub utime: u64,
    pub stime: u64,
    /// CPU time of children this process has waited for.
    pub cutime: u64,
    pub cstime: u64,
}

impl PidStat {
    /// Dead: a zombie waiting to be reaped, or on its way out.
    pub fn zombie(&self) -> bool {
        matches!(self.state, 'Z' | 'X')
    }

    /// Its own CPU time.
    pub fn own_ticks(&self) -> u64 {
        self.utime + self.stime
    }
}

/// One /proc/PID/stat line. `comm` is in parentheses and may itself hold
/// spaces and parentheses, so the fields after it are found from the last
/// `)`.
pub fn pid_stat(text: &str) -> Option<PidStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    let comm = text.get(open + 1..close)?.to_string();
    // Fields after comm, numbered as in proc(5) from 3 (state).
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    let field = |n: usize| -> Option<u64> { rest.get(n - 3)?.parse().ok() };
    Some(PidStat {
        pid,
        comm,
        state: rest.first()?.chars().next()?,
        ppid: field(4)? as u32,
        pgrp: field(5)? as u32,
        utime: field(14)?,
        stime: field(15)?,
        cutime: field(16)?,
        cstime: field(17)?,
    })
}

/// Whole-file text, or `None` when the file is missing or unreadable.
pub fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// Every process's /proc/PID/stat that could be read (processes come and
/// go while the directory is walked; those are skipped).
pub fn read_processes() -> Vec<PidStat> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let name = e.ok()?.file_name();
        let name = name.to_str()?;
        name.bytes().all(|b| b.is_ascii_digit()).then_some(())?;
        read_process(name.parse().ok()?)
    })
    .collect()
}

/// The process trees under `roots`, read by walking each task's
/// `/proc/PID/task/TID/children` instead of every process on the machine:
/// the sentinel reads its own tree twice per fork, and a full walk of
/// /proc costs a millisecond or more each time on a busy machine, all of
/// it in the fork's wall time. `None` when a root's children file cannot
/// be read (a kernel without CONFIG_PROC_CHILDREN): use [`read_processes`].
pub fn read_tree(roots: &[u32]) -> Option<Vec<PidStat>> {
    let mut out = Vec::new();
    let mut todo: Vec<u32> = roots.to_vec();
    let mut seen = std::collections::HashSet::new();
    while let Some(pid) = todo.pop() {
        if !seen.insert(pid) {
            continue;
        }
        let Some(stat) = read_process(pid) else {
            continue; // exited while the tree was walked
        };
        out.push(stat);
        match task_children(&format!("/proc/{pid}")) {
            Some(children) => todo.extend(children),
            None if roots.contains(&pid) => return None,
            None => {}
        }
    }
    Some(out)
}

/// The children of every thread of the process at `proc_dir` (`/proc/PID`
/// or `/proc/self`), zombies included, from each task's `children` file;
/// `None` when no such file could be read (a kernel without
/// CONFIG_PROC_CHILDREN, or the process is gone).
pub fn task_children(proc_dir: &str) -> Option<Vec<u32>> {
    let tasks = std::fs::read_dir(format!("{proc_dir}/task")).ok()?;
    let mut out = Vec::new();
    let mut read_any = false;
    for task in tasks.flatten() {
        if let Some(text) = read(task.path().join("children")) {
            read_any = true;
            out.extend(
                text.split_whitespace()
                    .filter_map(|c| c.parse::<u32>().ok()),
            );
        }
    }
    read_any.then_some(out)
}

/// One process's /proc/PID/stat, if it can be read.
pub fn read_process(pid: u32) -> Option<PidStat> {
    pid_stat(&read(format!("/proc/{pid}/stat"))?)
}
