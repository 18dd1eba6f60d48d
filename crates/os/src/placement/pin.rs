//! The system calls behind placement (Linux): which CPUs runner may use,
//! pinning a process to one, and which CPU a process is on now.

use rustix::thread::{sched_getaffinity, sched_setaffinity, CpuSet};
use std::io;

/// The CPUs this process may run on, ascending (its affinity mask, which
/// `taskset`, cgroups' cpusets and container limits narrow). Empty where
/// the kernel does not say.
pub fn allowed_cpus() -> Vec<u32> {
    let Ok(set) = sched_getaffinity(None) else {
        return Vec::new();
    };
    (0..CpuSet::MAX_CPU)
        .filter(|&c| set.is_set(c))
        .map(|c| c as u32)
        .collect()
}

/// Pins `pid` (0: this thread's process) to `cpu` alone.
pub fn pin(pid: u32, cpu: u32) -> io::Result<()> {
    if cpu as usize >= CpuSet::MAX_CPU {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let mut set = CpuSet::new();
    set.set(cpu as usize);
    let pid = rustix::process::Pid::from_raw(pid as i32);
    sched_setaffinity(pid, &set).map_err(io::Error::from)
}

/// The CPU the calling thread runs on now (a vDSO call, tens of ns).
pub fn current_cpu() -> Option<u32> {
    u32::try_from(rustix::thread::sched_getcpu()).ok()
}

/// The CPU another process last ran on: field 39 (`processor`) of
/// /proc/PID/stat. None when the process is gone or not visible.
pub fn process_cpu(pid: u32) -> Option<u32> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_processor(&text)
}

/// Field 39 of a /proc/PID/stat line; the command name (field 2) is in
/// parentheses and may itself hold spaces, so fields are counted after its
/// closing parenthesis.
pub fn stat_processor(stat: &str) -> Option<u32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    // After ')' comes field 3 (state); field 39 is the 37th from there.
    rest.split_whitespace().nth(36)?.parse().ok()
}

/// Whether `pid` is a PostgreSQL server process on this host (its command
/// name, as the kernel keeps it, is `postgres`).
pub fn is_local_postgres(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|c| c.trim() == "postgres")
        .unwrap_or(false)
}

/// `0-3,6`: CPU numbers as ranges, as `taskset -c` writes them.
pub fn cpu_list(cpus: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}-{}", cpus[i], cpus[j])
        } else {
            cpus[i].to_string()
        });
        i = j + 1;
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_print_as_ranges() {
        assert_eq!(cpu_list(&[0, 1]), "0-1");
        assert_eq!(cpu_list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert_eq!(cpu_list(&[3]), "3");
        assert_eq!(cpu_list(&[]), "none");
    }

    /// A recorded /proc/PID/stat line (a postgres backend, with a space in
    /// its command name to show why fields are counted after ')').
    #[test]
    fn processor_is_field_39_of_proc_stat() {
        let line = "4242 (postgres: bench) S 4200 4200 4200 0 -1 4194560 1082 0 0 0 \
                    31 12 0 0 20 0 1 0 88231 224579584 3001 18446744073709551615 1 1 0 0 0 \
                    0 0 4096 1260 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0";
        assert_eq!(stat_processor(line), Some(1));
        assert_eq!(stat_processor("garbage"), None);
    }

    #[test]
    fn this_process_sees_its_own_cpu_among_the_allowed() {
        let allowed = allowed_cpus();
        assert!(!allowed.is_empty());
        assert!(allowed.contains(&current_cpu().unwrap()));
        let me = std::process::id();
        assert!(allowed.contains(&process_cpu(me).unwrap()));
    }
}
