//! The parsers and checks on /proc and /sys text recorded on real machines:
//! the 2-vCPU cloud VM runner is developed on (no cpufreq, steal column
//! present, no swap) and an 8-thread Intel laptop (intel_pstate, powersave,
//! turbo on, swap in use).

use super::checks::{self, MachineText};
use super::processes::{self, ProcessSample};
use super::procfs::{self, CpuTimes};
use super::sentinel::{self, Flag, Snapshot};
use super::{CheckKind, Status};
use std::collections::HashSet;

const VM_STAT: &str = "cpu  88628 0 19164 158731 1235 0 145 191 0 0
cpu0 41637 0 8950 83050 282 0 21 83 0 0
cpu1 46991 0 10214 75680 952 0 124 107 0 0
intr 11279367 0 9 0 0 0 0 0 0 0
ctxt 24183745
btime 1767772230
processes 32573
procs_running 3
procs_blocked 0
";
const VM_LOADAVG: &str = "1.36 1.18 0.81 3/101 32531\n";
const VM_MEMINFO: &str = "MemTotal:       24683664 kB
MemFree:        22047212 kB
MemAvailable:   23911876 kB
SwapCached:            0 kB
SwapTotal:             0 kB
SwapFree:              0 kB
";

const LAPTOP_STAT: &str = "cpu  4705129 15021 1120334 16250871 52012 0 29120 0 0 0
cpu0 593193 1877 141301 2030107 6480 0 10511 0 0 0
cpu1 587742 1904 139920 2032877 6514 0 2611 0 0 0
cpu2 588011 1866 140122 2033120 6511 0 2564 0 0 0
cpu3 587003 1879 139806 2033989 6529 0 2558 0 0 0
cpu4 587771 1871 139866 2030894 6497 0 2701 0 0 0
cpu5 586800 1875 139611 2030021 6492 0 2717 0 0 0
cpu6 587204 1874 139902 2029755 6497 0 2732 0 0 0
cpu7 587405 1875 139806 2030108 6492 0 2726 0 0 0
intr 412034110 9 0 0 0 0 0 0 0 1
";
const LAPTOP_LOADAVG: &str = "0.31 0.52 0.60 1/1204 88812\n";
const LAPTOP_MEMINFO: &str = "MemTotal:       16121604 kB
MemFree:          812332 kB
MemAvailable:    5321000 kB
Buffers:          402112 kB
SwapCached:        91232 kB
SwapTotal:       8388604 kB
SwapFree:        7340028 kB
";

/// A line of /proc/PID/stat recorded on the VM (`cat /proc/self/stat`).
const CAT_STAT: &str = "32536 (cat) R 32527 32527 11338 0 -1 4194304 98 0 0 0 0 0 0 0 20 0 1 0 \
    134742 3133440 405 18446744073709551615 94475384725504 94475384745385 140720644431920 0 0 0 0 \
    0 0 0 0 0 17 0 0 0 0 0 0 94475384761392 94475384763008 94476348616704 140720644434462 \
    140720644434482 140720644434482 140720644435947 0";

/// A stat line with the fields checks use: pid, comm, ppid, and times.
fn stat_line(pid: u32, comm: &str, ppid: u32, times: [u64; 4]) -> String {
    let [ut, st, cut, cst] = times;
    format!("{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 4194560 100 0 0 0 {ut} {st} {cut} {cst} 20 0 1 0 5000 1000 100")
}

fn ps(pid: u32, comm: &str, ppid: u32, times: [u64; 4]) -> procfs::PidStat {
    procfs::pid_stat(&stat_line(pid, comm, ppid, times)).unwrap()
}

#[test]
fn proc_stat_cpu_line() {
    let t = procfs::cpu_times(VM_STAT).unwrap();
    assert_eq!(
        t,
        CpuTimes {
            user: 88628,
            nice: 0,
            system: 19164,
            idle: 158731,
            iowait: 1235,
            irq: 0,
            softirq: 145,
            steal: 191
        }
    );
    assert_eq!(t.total(), 268_094);
    assert_eq!(t.busy(), 107_937);
    assert_eq!(procfs::cpu_count(VM_STAT), 2);
    assert_eq!(procfs::cpu_count(LAPTOP_STAT), 8);
    // A kernel before 2.6.11 has four columns and no steal.
    let old = procfs::cpu_times("cpu  10 1 5 100\ncpu0 10 1 5 100\n").unwrap();
    assert_eq!((old.steal, old.total()), (0, 116));
    assert_eq!(procfs::cpu_times("cpu  x y\n"), None);
    assert_eq!(procfs::cpu_times(""), None);
}

#[test]
fn loadavg_and_meminfo() {
    let l = procfs::loadavg(VM_LOADAVG).unwrap();
    assert_eq!(
        (l.averages, l.runnable, l.total),
        ([1.36, 1.18, 0.81], 3, 101)
    );
    assert_eq!(procfs::loadavg("1.0 2.0"), None);
    assert_eq!(
        procfs::meminfo_kib(LAPTOP_MEMINFO, "SwapFree"),
        Some(7_340_028)
    );
    assert_eq!(procfs::meminfo_kib(LAPTOP_MEMINFO, "Swap"), None);
    assert_eq!(procfs::meminfo_kib(VM_MEMINFO, "SwapTotal"), Some(0));
}

#[test]
fn pid_stat_fields_and_awkward_names() {
    let p = procfs::pid_stat(CAT_STAT).unwrap();
    assert_eq!((p.pid, p.comm.as_str(), p.ppid), (32536, "cat", 32527));
    assert_eq!((p.utime, p.stime, p.cutime, p.cstime), (0, 0, 0, 0));
    // Names may hold spaces and parentheses: fields follow the last ')'.
    let p = procfs::pid_stat(&stat_line(7, "Web Content", 1, [120, 30, 0, 0])).unwrap();
    assert_eq!(
        (p.comm.as_str(), p.utime, p.stime),
        ("Web Content", 120, 30)
    );
    let p = procfs::pid_stat(&stat_line(8, "a) b (c", 7, [1, 2, 3, 4])).unwrap();
    assert_eq!((p.comm.as_str(), p.ppid, p.cstime), ("a) b (c", 7, 4));
    assert_eq!(p.own_ticks(), 3);
    assert_eq!(procfs::pid_stat("12 (x) R 1"), None);
}

#[test]
fn governor_check() {
    let c = checks::governor(&[]);
    assert_eq!(c.status, Status::Unknown);
    assert!(c.advice.unwrap().contains("virtual machine"));
    let powersave = vec!["powersave".to_string(); 8];
    let c = checks::governor(&powersave);
    assert_eq!(
        (c.status, c.found.as_str()),
        (Status::Warn, "powersave on 8 of 8 CPUs")
    );
    assert!(c.advice.unwrap().contains("cpupower"));
    let mixed: Vec<String> = ["performance", "schedutil", "performance", "ondemand"]
        .map(String::from)
        .to_vec();
    let c = checks::governor(&mixed);
    assert_eq!(c.found, "ondemand, schedutil on 2 of 4 CPUs");
    let c = checks::governor(&vec!["performance".to_string(); 2]);
    assert_eq!(
        (c.status, c.found.as_str()),
        (Status::Ok, "performance on all 2 CPUs")
    );
}

#[test]
fn turbo_check() {
    let c = checks::turbo(Some("0\n"), None);
    assert_eq!(c.status, Status::Warn);
    assert!(c.advice.unwrap().contains("intel_pstate/no_turbo"));
    assert_eq!(checks::turbo(Some("1\n"), None).status, Status::Ok);
    let amd = checks::turbo(None, Some("1\n"));
    assert_eq!(
        (amd.status, amd.found.as_str()),
        (Status::Warn, "on (cpufreq/boost = 1)")
    );
    assert_eq!(checks::turbo(None, Some("0\n")).status, Status::Ok);
    assert_eq!(checks::turbo(None, None).status, Status::Unknown);
}

#[test]
fn aslr_check() {
    assert_eq!(checks::aslr(Some("2\n")).status, Status::Ok);
    assert_eq!(checks::aslr(Some("1\n")).status, Status::Warn);
    let off = checks::aslr(Some("0\n"));
    assert_eq!((off.status, off.found.as_str()), (Status::Warn, "off"));
    assert_eq!(checks::aslr(None).status, Status::Unknown);
}

#[test]
fn swap_check() {
    let vm = checks::swap(Some(VM_MEMINFO));
    assert_eq!(
        (vm.status, vm.found.as_str()),
        (Status::Ok, "none configured")
    );
    let laptop = checks::swap(Some(LAPTOP_MEMINFO));
    assert_eq!(laptop.status, Status::Warn);
    assert_eq!(laptop.found, "1024 MiB of 8191 MiB in use");
    let little = "SwapTotal: 1000000 kB\nSwapFree: 999000 kB\n";
    assert_eq!(checks::swap(Some(little)).status, Status::Ok);
    assert_eq!(checks::swap(None).status, Status::Unknown);
}

/// 2 CPUs: the limit is max(0.25 x 2, 0.5) = 0.5; 8 CPUs: 2.0.
#[test]
fn load_check() {
    let vm = checks::load(Some(VM_LOADAVG), 2);
    assert_eq!(vm.status, Status::Warn);
    assert_eq!(vm.found, "1.36 over the last minute on 2 CPUs");
    assert!(vm.advice.unwrap().contains("0.50"));
    assert_eq!(checks::load(Some(LAPTOP_LOADAVG), 8).status, Status::Ok);
    assert_eq!(checks::load(Some("1.99 0 0 1/2 3"), 8).status, Status::Ok);
    assert_eq!(checks::load(Some("2.00 0 0 1/2 3"), 8).status, Status::Warn);
    assert_eq!(checks::load(Some("garbage"), 8).status, Status::Unknown);
}

/// VM: 191 of 268 094 ticks stolen, 0.07 %.
#[test]
fn steal_check() {
    let vm = checks::steal(Some(VM_STAT));
    assert_eq!(
        (vm.status, vm.found.as_str()),
        (Status::Ok, "0.07 % of CPU time since boot")
    );
    let noisy = "cpu  900 0 100 700 0 0 0 300 0 0\n";
    let c = checks::steal(Some(noisy));
    assert_eq!(
        (c.status, c.found.as_str()),
        (Status::Warn, "15.00 % of CPU time since boot")
    );
    assert_eq!(checks::steal(Some(LAPTOP_STAT)).status, Status::Ok);
    assert_eq!(checks::steal(None).status, Status::Unknown);
}

#[test]
fn busy_processes_leave_out_our_own_tree() {
    let before = vec![
        ps(1, "systemd", 0, [500, 200, 0, 0]),
        ps(50, "postgres", 1, [1000, 100, 0, 0]),
        ps(70, "cargo", 1, [40, 10, 0, 0]),
        ps(100, "runner", 70, [10, 0, 0, 0]),
    ];
    let after = vec![
        ps(1, "systemd", 0, [500, 201, 0, 0]),
        ps(50, "postgres", 1, [1010, 102, 0, 0]),
        ps(70, "cargo", 1, [40, 10, 0, 0]),
        ps(100, "runner", 70, [30, 0, 0, 0]),
        ps(101, "runner", 100, [25, 0, 0, 0]),
        ps(200, "rustc", 70, [6, 1, 0, 0]),
    ];
    let ours = processes::descendants(&after, &[100]);
    assert_eq!(ours, HashSet::from([100, 101]));
    // 25 ticks of one CPU: postgres 12 ticks (48 %), rustc started in the
    // window, 7 ticks (28 %), systemd 1 (4 %); runner and its child not.
    let (c, busiest) = processes::busy_processes(&before, &after, 25, &ours, None);
    let names: Vec<(&str, f64)> = busiest
        .iter()
        .map(|b| (b.name.as_str(), b.cpu_share))
        .collect();
    assert_eq!(
        names,
        [("postgres", 0.48), ("rustc", 0.28), ("systemd", 0.04)]
    );
    assert_eq!(c.status, Status::Warn);
    assert_eq!(c.found, "postgres (pid 50) 48 %, rustc (pid 200) 28 %");
    let quiet = vec![ps(1, "systemd", 0, [500, 201, 0, 0])];
    let (c, _) = processes::busy_processes(&before[..1], &quiet, 25, &ours, None);
    assert_eq!(c.status, Status::Ok);
    assert_eq!(
        c.found,
        "none above 10 % of a CPU (busiest: systemd (pid 1) 4 %)"
    );
    let none = processes::busy_processes(&before, &after, 0, &ours, None).0;
    assert_eq!(none.status, Status::Unknown);
}

/// In a container /proc lists only its own processes, while /proc/stat
/// counts the whole machine: the machine-wide share still warns.
#[test]
fn busy_machine_with_no_visible_culprit_warns() {
    let quiet = vec![ps(1, "sh", 0, [5, 0, 0, 0])];
    let (c, busiest) = processes::busy_processes(&quiet, &quiet, 25, &HashSet::new(), Some(0.45));
    assert_eq!((c.status, busiest.len()), (Status::Warn, 0));
    assert_eq!(
        c.found,
        "no single process seen here above 10 % of a CPU; all others together 45 % of the CPUs"
    );
    let (c, _) = processes::busy_processes(&quiet, &quiet, 25, &HashSet::new(), Some(0.04));
    assert_eq!(c.status, Status::Ok);
}

#[test]
fn window_ticks_are_per_cpu() {
    let a = procfs::cpu_times("cpu  100 0 0 100 0 0 0 0\n").unwrap();
    let b = procfs::cpu_times("cpu  130 0 0 120 0 0 0 0\n").unwrap();
    assert_eq!(processes::window_ticks(&a, &b, 2), 25);
}

#[test]
fn all_checks_on_the_recorded_vm() {
    let text = MachineText {
        governors: vec![],
        intel_no_turbo: None,
        cpufreq_boost: None,
        randomize_va_space: Some("2\n".into()),
        meminfo: Some(VM_MEMINFO.into()),
        loadavg: Some(VM_LOADAVG.into()),
        proc_stat: Some(VM_STAT.into()),
    };
    let sample = ProcessSample {
        stat_before: Some("cpu  100 0 0 100 0 0 0 0\n".into()),
        stat_after: Some("cpu  110 0 0 140 0 0 0 0\n".into()),
        before: vec![ps(9, "sshd", 1, [0, 0, 0, 0])],
        after: vec![
            ps(9, "sshd", 1, [1, 0, 0, 0]),
            ps(10, "runner", 9, [20, 0, 0, 0]),
        ],
    };
    let (checks, busiest) = checks::all(&text, &sample, 10);
    let got: Vec<(CheckKind, Status)> = checks.iter().map(|c| (c.check, c.status)).collect();
    assert_eq!(
        got,
        [
            (CheckKind::Governor, Status::Unknown),
            (CheckKind::Turbo, Status::Unknown),
            (CheckKind::Aslr, Status::Ok),
            (CheckKind::Swap, Status::Ok),
            (CheckKind::Load, Status::Warn),
            (CheckKind::BusyProcesses, Status::Ok),
            (CheckKind::CpuSteal, Status::Ok),
        ]
    );
    // Window: 50 ticks over 2 CPUs = 25 per CPU; sshd used 1 (4 %). The
    // machine was busy 10 ticks, runner (ours) 20: nothing outside.
    assert_eq!(busiest.len(), 1);
    assert!(checks[5]
        .found
        .ends_with("all others together 0 % of the CPUs"));
    assert_eq!(
        (busiest[0].name.as_str(), busiest[0].cpu_share),
        ("sshd", 0.04)
    );
    let json = serde_json::to_value(&checks[4]).unwrap();
    assert_eq!(json["check"], "load");
    assert_eq!(json["status"], "warn");
}

/// runner (100) with a worker (101) that is reaped between the snapshots:
/// its 30 ticks move from its own utime into runner's cutime and count
/// once. 200 ticks of both CPUs passed; the machine was busy 70, we 35
/// (runner 5 more, the worker 30), so others took 35: 17.5 % > 10 %.
#[test]
fn sentinel_counts_a_reaped_worker_once_and_flags_outside_load() {
    let before = Snapshot::from_text(
        "cpu  1000 0 200 5000 0 0 0 10\n",
        Some("0.50 0.40 0.30 1/90 500\n"),
        &[
            ps(100, "runner", 1, [10, 2, 0, 0]),
            ps(101, "runner", 100, [0, 0, 0, 0]),
            ps(300, "stress", 1, [400, 0, 0, 0]),
        ],
        &[100],
    )
    .unwrap();
    assert_eq!(before.own_ticks, 12);
    let after = Snapshot::from_text(
        "cpu  1060 0 210 5127 0 0 0 13\n",
        Some("0.90 0.50 0.35 2/90 510\n"),
        &[
            ps(100, "runner", 1, [14, 3, 28, 2]),
            ps(300, "stress", 1, [435, 0, 0, 0]),
        ],
        &[100],
    )
    .unwrap();
    assert_eq!(after.own_ticks, 47);
    let s = sentinel::compare(&before, &after);
    assert_eq!(s.window_ticks, 200);
    assert_eq!(s.outside_share, 0.175);
    assert_eq!(s.steal_share, 0.015);
    assert_eq!(s.flags, [Flag::OutsideLoad]);
    assert_eq!(s.load_before, Some([0.5, 0.4, 0.3]));
    assert_eq!(s.load_after, Some([0.9, 0.5, 0.35]));
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["flags"][0], "outside-load");
}

#[test]
fn sentinel_flags_steal_but_not_short_forks() {
    let snap = |stat: &str| Snapshot::from_text(stat, None, &[], &[1]).unwrap();
    let a = snap("cpu  1000 0 0 1000 0 0 0 0\n");
    let stolen = sentinel::compare(&a, &snap("cpu  1050 0 0 1140 0 0 0 10\n"));
    assert_eq!(stolen.steal_share, 0.05);
    assert_eq!(stolen.flags, [Flag::Steal, Flag::OutsideLoad]);
    let short = sentinel::compare(&a, &snap("cpu  1030 0 0 1010 0 0 0 10\n"));
    assert_eq!(short.window_ticks, 50);
    assert!(short.steal_share > 0.1 && short.flags.is_empty());
    assert_eq!((short.load_before, short.load_after), (None, None));
}

/// Reading this machine's files works and the sample finds this process's
/// own tree; the statuses depend on the machine, so only the shape is
/// checked.
#[test]
fn checks_read_this_machine() {
    let text = MachineText::read();
    // Without /proc (not Linux) there is nothing to read, and it says so.
    assert_eq!(
        text.proc_stat.is_some(),
        std::path::Path::new("/proc/stat").exists()
    );
    match Snapshot::take(&[std::process::id()]) {
        None => assert!(
            text.proc_stat.is_none(),
            "/proc/stat reads, the snapshot does not"
        ),
        Some(now) => {
            assert!(now.cpu.total() > 0);
            let me = procfs::read_processes();
            assert!(me.iter().any(|p| p.pid == std::process::id()));
        }
    }
}

/// The sentinel's walk of its own tree finds this process and a child it
/// started, as the walk of every process does.
#[test]
fn the_tree_walk_finds_this_process_and_its_child() {
    let me = std::process::id();
    let mut child = std::process::Command::new("sleep")
        .arg("5")
        .spawn()
        .unwrap();
    let tree = procfs::read_tree(&[me]);
    let all = procfs::read_processes();
    child.kill().unwrap();
    child.wait().unwrap();
    let ours = processes::descendants(&all, &[me]);
    assert!(ours.contains(&child.id()));
    match tree {
        // A kernel without CONFIG_PROC_CHILDREN: none of this process's
        // tasks has a children file, and the walk says so.
        None => assert_eq!(procfs::task_children(&format!("/proc/{me}")), None),
        Some(tree) => {
            let walked: HashSet<u32> = tree.iter().map(|p| p.pid).collect();
            assert!(
                walked.contains(&me) && walked.contains(&child.id()),
                "{walked:?}"
            );
        }
    }
}

#[test]
fn pid_stat_reads_state_and_process_group_for_the_sweep() {
    let p = ps(4242, "sleep (x) y", 1, [1, 2, 3, 4]);
    assert_eq!((p.state, p.ppid, p.pgrp), ('S', 1, 4242));
    assert!(!p.zombie());
    let z = procfs::pid_stat("77 (sh) Z 5 70 70 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0").unwrap();
    assert!(z.zombie());
    assert_eq!(z.pgrp, 70);
}

#[test]
fn a_sentinel_says_which_window_it_watched() {
    let snap = |busy: u64| Snapshot {
        cpu: procfs::cpu_times(&format!("cpu  {busy} 0 0 1000 0 0 0 0 0 0\n")).unwrap(),
        load: None,
        own_ticks: 0,
    };
    // Runs made now watch the fork's timing, and run.json says so.
    let s = sentinel::compare(&snap(10), &snap(20));
    assert_eq!(s.window, sentinel::Window::Timing);
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["window"], "timing");
    // A record from before the go has no `window`: the worker's whole life.
    let mut old = json.clone();
    old.as_object_mut().unwrap().remove("window");
    let back: sentinel::ForkSentinel = serde_json::from_value(old).unwrap();
    assert_eq!(back.window, sentinel::Window::Worker);
    assert!(serde_json::to_value(&back).unwrap().get("window").is_none());
}
