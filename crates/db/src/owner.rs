//! Who made a schema on the server: the run (or check) it is for, and the
//! process that made it, written into the schema's comment beside runner's
//! marker. A process killed with `kill -9` cleans nothing up, so any later
//! runner that opens the database drops the schemas whose owner is gone
//! (`pg::schema::sweep`), and `runner clean` lists and drops them.
//!
//! A pid alone does not say a process is gone: the kernel hands the number
//! to a new process in time. So the owner also records its start time (the
//! kernel's ticks since boot, `/proc/PID/stat` field 22) and the boot it
//! started in (`/proc/sys/kernel/random/boot_id`): the owner is alive only
//! if a process with that pid runs now, started at that tick, in this
//! boot. Schemas made on another host, or in another pid namespace of
//! this one (a container sharing the host's name), are never judged from
//! here: their pids mean other processes.

use std::fmt;

/// The maker of a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// The run id (`YYYYMMDD_HHMMSS_xxxxxx`) or `check_<hex>`.
    pub run: String,
    pub pid: u32,
    /// The kernel's start time of the process, in ticks since boot.
    pub started: u64,
    pub boot: String,
    /// The pid namespace the pid is a number in (`/proc/self/ns/pid`).
    pub ns: String,
    pub host: String,
}

/// What this host can say of an owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    /// Its process runs.
    Alive,
    /// Its process is gone (or the host rebooted since).
    Gone,
    /// Made on another host: not this host's to judge.
    Elsewhere,
}

impl Owner {
    /// This process, making a schema for `run`.
    pub fn me(run: &str) -> Owner {
        let pid = std::process::id();
        Owner {
            run: run.to_owned(),
            pid,
            started: start_time(pid).unwrap_or_default(),
            boot: boot_id(),
            ns: pid_namespace(),
            host: host(),
        }
    }

    /// Reads what [`Owner`]'s `Display` wrote; `None` for anything else.
    pub fn parse(text: &str) -> Option<Owner> {
        let rest = text.strip_prefix("run ")?;
        let (run, rest) = rest.split_once(", pid ")?;
        let (pid, rest) = rest.split_once(", started ")?;
        let (started, rest) = rest.split_once(", boot ")?;
        let (boot, rest) = rest.split_once(", ns ")?;
        let (ns, host) = rest.split_once(", host ")?;
        Some(Owner {
            run: run.to_owned(),
            pid: pid.parse().ok()?,
            started: started.parse().ok()?,
            boot: boot.to_owned(),
            ns: ns.to_owned(),
            host: host.to_owned(),
        })
    }

    pub fn liveness(&self) -> Liveness {
        if self.host != host() || self.ns != pid_namespace() {
            Liveness::Elsewhere
        } else if self.boot != boot_id() || start_time(self.pid) != Some(self.started) {
            Liveness::Gone
        } else {
            Liveness::Alive
        }
    }
}

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "run {}, pid {}, started {}, boot {}, ns {}, host {}",
            self.run, self.pid, self.started, self.boot, self.ns, self.host
        )
    }
}

/// A schema of runner's on a server, and the owner its comment names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunnerSchema {
    pub schema: String,
    /// `None`: made by a runner from before schemas named their owner.
    pub owner: Option<Owner>,
}

impl RunnerSchema {
    /// What this host can say of its owner; `None` without one.
    pub fn liveness(&self) -> Option<Liveness> {
        self.owner.as_ref().map(Owner::liveness)
    }

    /// Its owner is known to be gone: only then may a runner drop it unasked.
    pub fn abandoned(&self) -> bool {
        self.liveness() == Some(Liveness::Gone)
    }

    /// `runner_x (run x, pid 12)`, as a sentence lists it.
    pub fn said(&self) -> String {
        match &self.owner {
            Some(o) => format!(
                "{} (run {}, pid {} on {})",
                self.schema, o.run, o.pid, o.host
            ),
            None => format!("{} (owner not recorded)", self.schema),
        }
    }
}

/// The kernel's start time of `pid` (ticks since boot), `None` when no
/// such process runs: a zombie (killed, not yet reaped by whoever
/// inherited it) has ended too.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields start after
    // the last ')'; the state is field 3, the first after it, and
    // starttime field 22, the 20th.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    if matches!(fields.next(), Some("Z" | "X" | "x")) {
        return None;
    }
    fields.nth(18)?.parse().ok()
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

/// This process's pid namespace (`pid:[4026531836]`), empty where unreadable.
fn pid_namespace() -> String {
    std::fs::read_link("/proc/self/ns/pid")
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

/// The kernel's host name, in characters a comment keeps on one line.
fn host() -> String {
    let h = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    h.trim()
        .chars()
        .map(|c| if c.is_control() || c == '\'' { '_' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start_time_even_of_a_zombie(pid: u32) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let rest = &stat[stat.rfind(')').unwrap() + 1..];
        rest.split_whitespace().nth(19).unwrap().parse().unwrap()
    }

    #[test]
    fn an_owner_reads_back_and_only_a_live_process_with_its_start_is_alive() {
        let me = Owner::me("20260101_000000_abcdef");
        assert_eq!(Owner::parse(&me.to_string()), Some(me.clone()));
        assert_eq!(me.liveness(), Liveness::Alive);
        // The same pid, another start: a reused number.
        let reused = Owner {
            started: me.started + 1,
            ..me.clone()
        };
        assert_eq!(reused.liveness(), Liveness::Gone);
        // A process that ended.
        let child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let mut child = child;
        child.wait().unwrap();
        let ended = Owner { pid, ..me.clone() };
        assert_eq!(ended.liveness(), Liveness::Gone);
        // A killed process nobody has reaped yet (a zombie) is gone too.
        let mut zombie = std::process::Command::new("true").spawn().unwrap();
        let z = Owner {
            pid: zombie.id(),
            started: start_time_even_of_a_zombie(zombie.id()),
            ..me.clone()
        };
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert_eq!(z.liveness(), Liveness::Gone);
        zombie.wait().unwrap();
        // Another boot of this host, and another host.
        let rebooted = Owner {
            boot: "0".into(),
            ..me.clone()
        };
        assert_eq!(rebooted.liveness(), Liveness::Gone);
        let elsewhere = Owner {
            host: format!("{}-other", me.host),
            ..me.clone()
        };
        assert_eq!(elsewhere.liveness(), Liveness::Elsewhere);
        // A container of the same name: its pids are another namespace's.
        let container = Owner {
            ns: "pid:[1]".into(),
            pid: 999_999,
            ..me
        };
        assert_eq!(container.liveness(), Liveness::Elsewhere);
        for bad in ["", "run x", "run x, pid y, started 1, boot b, ns n, host h"] {
            assert_eq!(Owner::parse(bad), None, "{bad}");
        }
    }
}
