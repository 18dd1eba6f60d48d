//! A command's process from its exit to its reaping, and everything it
//! started. Each run is the leader of its own process group (set by
//! posix_spawn, the same for both arms). Its exit is seen without reaping
//! it (`waitid(WNOWAIT)`, or a `poll` on a pidfd when there is a deadline),
//! so inside the timed region nothing else happens; then, untimed,
//! [`finish`] counts what the run left running, kills its group and, in a
//! worker (a child subreaper), every other descendant, and only then reaps
//! the leader: while it is unreaped, neither its pid nor its group id can
//! have been reused, so the kills cannot reach a stranger.

use crate::strategy::error::{fail, Result, StrategyError};
use runner_core::record::RunUsage;
use runner_os::reaper as sweep;
use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::io::Errno;
use rustix::process::{pidfd_open, waitid, Pid, PidfdFlags, WaitId, WaitIdOptions};
use std::collections::BTreeSet;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Processes that this process's command runs left running (then killed).
static LEFT: AtomicU64 = AtomicU64::new(0);

/// How many processes the command runs of this worker left behind so far.
pub(crate) fn left_behind() -> u64 {
    LEFT.load(Ordering::SeqCst)
}

pub(super) fn succeeded(status: i32) -> bool {
    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}

/// `exit N` or `signal N (NAME)`.
pub(crate) fn describe(status: i32) -> String {
    if libc::WIFEXITED(status) {
        format!("exit {}", libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        let name = match sig {
            libc::SIGKILL => " (SIGKILL)",
            libc::SIGTERM => " (SIGTERM)",
            libc::SIGSEGV => " (SIGSEGV)",
            libc::SIGABRT => " (SIGABRT)",
            libc::SIGINT => " (SIGINT)",
            libc::SIGPIPE => " (SIGPIPE)",
            _ => "",
        };
        format!("signal {sig}{name}")
    } else {
        format!("wait status {status}")
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// A reaped run.
pub(super) struct Ended {
    pub status: i32,
    pub usage: RunUsage,
}

/// Waits for `pid` up to `timeout` (forever when `None`), then kills what
/// the run left and reaps it: its wait status, or `None` when the timeout
/// passed first (and it was killed with everything it started).
pub(super) fn run_out(pid: i32, timeout: Option<Duration>) -> Result<Option<i32>> {
    let exited = wait_exit(pid, timeout)?;
    let status = finish(pid, exited)?.status;
    Ok(exited.then_some(status))
}

/// Whether `pid` exited within `timeout` (forever when `None`), without
/// reaping it.
pub(super) fn wait_exit(pid: i32, timeout: Option<Duration>) -> Result<bool> {
    let Some(t) = timeout else {
        let Some(p) = Pid::from_raw(pid) else {
            fail!("waiting for a command: no process {pid}");
        };
        // One child of ours; NOWAIT leaves it unreaped.
        loop {
            match waitid(
                WaitId::Pid(p),
                WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
            ) {
                Ok(_) => return Ok(true),
                Err(Errno::INTR) => continue,
                Err(e) => fail!("waiting for a command: {}", std::io::Error::from(e)),
            }
        }
    };
    let fd = pidfd(pid)?;
    let ready = poll(&mut [pollfd(fd.as_fd())], Some(Instant::now() + t))?;
    Ok(ready > 0)
}

fn pidfd(pid: i32) -> Result<OwnedFd> {
    let opened = Pid::from_raw(pid)
        .ok_or(Errno::SRCH)
        .and_then(|p| pidfd_open(p, PidfdFlags::empty()));
    opened.map_err(|e| {
        StrategyError::Failed(format!(
            "timeout_s and the output check need pidfd_open (Linux 5.3 or later): {}",
            std::io::Error::from(e)
        ))
    })
}

fn pollfd(fd: BorrowedFd<'_>) -> PollFd<'_> {
    PollFd::from_borrowed_fd(fd, PollFlags::IN)
}

/// `poll` until `deadline` (forever when `None`), retried on EINTR;
/// returns how many descriptors are ready (0: the deadline passed).
fn poll(fds: &mut [PollFd<'_>], deadline: Option<Instant>) -> Result<usize> {
    loop {
        let left = deadline.map(|d| {
            let t = d.saturating_duration_since(Instant::now());
            Timespec {
                tv_sec: t.as_secs() as i64,
                tv_nsec: i64::from(t.subsec_nanos()),
            }
        });
        match rustix::event::poll(fds, left.as_ref()) {
            Ok(n) => return Ok(n),
            Err(Errno::INTR) => continue,
            Err(e) => fail!("waiting for a command: {}", std::io::Error::from(e)),
        }
    }
}

/// What reading a run's stdout came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Read {
    /// The process exited (its output may not be at its end yet).
    Exited,
    /// The deadline passed first.
    TimedOut,
}

/// Reads `pipe` into `sink` as it comes until `pid` exits or `deadline`
/// passes: the output never has to fit in memory, and a process that
/// keeps its stdout open cannot make the read outlast the deadline.
pub(super) fn read_while_running(
    pid: i32,
    pipe: BorrowedFd<'_>,
    deadline: Option<Instant>,
    sink: &mut impl FnMut(&[u8]),
) -> Result<Read> {
    let pfd = pidfd(pid)?;
    let mut open = true;
    loop {
        let mut fds = vec![pollfd(pfd.as_fd())];
        if open {
            fds.push(pollfd(pipe));
        }
        if poll(&mut fds, deadline)? == 0 {
            return Ok(Read::TimedOut);
        }
        let exited = !fds[0].revents().is_empty();
        let readable = open && !fds[1].revents().is_empty();
        drop(fds);
        if readable && !read_some(pipe, sink)? {
            // End of output: only the exit is left to wait for.
            open = false;
        }
        if exited {
            return Ok(Read::Exited);
        }
    }
}

/// Reads what `pipe` has after the run and everything it started were
/// killed; false when it was still open at `deadline` (a process beyond
/// runner's reach holds it).
pub(super) fn drain(
    pipe: BorrowedFd<'_>,
    deadline: Instant,
    sink: &mut impl FnMut(&[u8]),
) -> Result<bool> {
    loop {
        if poll(&mut [pollfd(pipe)], Some(deadline))? == 0 {
            return Ok(false);
        }
        if !read_some(pipe, sink)? {
            return Ok(true);
        }
    }
}

/// One read into `sink`; false at the end of the output.
fn read_some(fd: BorrowedFd<'_>, sink: &mut impl FnMut(&[u8])) -> Result<bool> {
    let mut buf = [0u8; 1 << 16];
    loop {
        match rustix::io::read(fd, &mut buf) {
            Ok(0) => return Ok(false),
            Ok(n) => {
                sink(&buf[..n]);
                return Ok(true);
            }
            Err(Errno::INTR) => continue,
            Err(Errno::AGAIN) => return Ok(true),
            Err(e) => fail!("reading a command's stdout: {}", std::io::Error::from(e)),
        }
    }
}

/// Ends run `pid` (exited or not, not yet reaped): counts the processes
/// it leaves, kills its process group and, in a subreaper, every other
/// descendant, then reaps it with its rusage. Outside any timed region.
pub(super) fn finish(pid: i32, exited: bool) -> Result<Ended> {
    let subreaper = sweep::is_subreaper();
    let mut left = leftovers(pid, exited, subreaper);
    let keep = BTreeSet::from([pid]);
    if !exited {
        // Dead but unreaped: what it started outside its group is then
        // re-parented here, where the sweep finds it.
        kill_group(pid);
        wait_exit(pid, None)?;
    }
    if subreaper {
        // A scan of /proc can miss a process that forked and exited while
        // it read; the sweep sees every survivor as a child before it kills.
        let (done, seen) = sweep::kill_children(&keep, Some(pid));
        left.extend(seen);
        if !done {
            runner_core::console::warn(&format!(
                "processes started by a command (pid {pid}) would not die within 10 s of SIGKILL"
            ));
        }
    }
    kill_group(pid);
    let (status, usage) = wait4(pid)?;
    LEFT.fetch_add(left.len() as u64, Ordering::SeqCst);
    Ok(Ended { status, usage })
}

/// SIGKILL to the group `pid` leads: `pid` is our unreaped child, so its
/// group id is its own.
fn kill_group(pid: i32) {
    if let Some(p) = Pid::from_raw(pid) {
        let _ = rustix::process::kill_process_group(p, rustix::process::Signal::KILL);
    }
}

/// Live processes other than the leader in its group or, in a subreaper,
/// anywhere below this process.
fn leftovers(pid: i32, exited: bool, subreaper: bool) -> BTreeSet<i32> {
    // The common case, without a scan of /proc: the leader exited, so all
    // it left was re-parented here, and this process has no other child.
    if subreaper && exited && sweep::children().iter().all(|&c| c == pid) {
        return BTreeSet::new();
    }
    let mut found: BTreeSet<i32> = runner_os::environment::procfs::read_processes()
        .into_iter()
        .filter(|p| p.pgrp as i32 == pid && p.pid as i32 != pid && !p.zombie())
        .map(|p| p.pid as i32)
        .collect();
    if subreaper {
        found.extend(
            sweep::live_descendants(&BTreeSet::from([pid]))
                .into_iter()
                .map(|p| p.pid as i32),
        );
    }
    found
}

#[allow(unsafe_code)]
fn wait4(pid: i32) -> Result<(i32, RunUsage)> {
    let mut status = 0;
    // rustix has no wait4 (nor another way to a child's rusage).
    // SAFETY: wait4 writes an int and a rusage, plain data, at our pointers.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: as above; `pid` is our child, waited for alone.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            break;
        }
        if r < 0 && errno() == libc::EINTR {
            continue;
        }
        fail!("waiting for a command: {}", std::io::Error::last_os_error());
    }
    let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000;
    Ok((
        status,
        RunUsage {
            user_ns: ns(ru.ru_utime),
            sys_ns: ns(ru.ru_stime),
            max_rss_kib: ru.ru_maxrss.max(0) as u64,
        },
    ))
}
