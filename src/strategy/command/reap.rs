//! A command's process from its exit to its reaping, and everything it
//! started. Each run is the leader of its own process group (set by
//! posix_spawn, the same for both arms). Its exit is seen without reaping
//! it (`waitid(WNOWAIT)`, or a `poll` on a pidfd when there is a deadline),
//! so inside the timed region nothing else happens; then, untimed,
//! [`finish`] counts what the run left running, kills its group and, in a
//! worker (a child subreaper), every other descendant, and only then reaps
//! the leader: while it is unreaped, neither its pid nor its group id can
//! have been reused, so the kills cannot reach a stranger.

use crate::reaper as sweep;
use crate::record::RunUsage;
use anyhow::{bail, Result};
use std::collections::BTreeSet;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Processes that this process's command runs left running (then killed).
static LEFT: AtomicU64 = AtomicU64::new(0);

/// How many processes the command runs of this worker left behind so far.
pub fn left_behind() -> u64 {
    LEFT.load(Ordering::SeqCst)
}

pub(super) fn succeeded(status: i32) -> bool {
    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}

/// `exit N` or `signal N (NAME)`.
pub fn describe(status: i32) -> String {
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
        // SAFETY: waits for one child of ours; WNOWAIT leaves it unreaped.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        loop {
            let r = unsafe {
                libc::waitid(
                    libc::P_PID,
                    pid as libc::id_t,
                    &mut info,
                    libc::WEXITED | libc::WNOWAIT,
                )
            };
            if r == 0 {
                return Ok(true);
            }
            if errno() != libc::EINTR {
                bail!("waiting for a command: {}", std::io::Error::last_os_error());
            }
        }
    };
    let fd = pidfd(pid)?;
    let ready = poll(&mut [pollfd(fd)], Some(Instant::now() + t));
    // SAFETY: our own descriptor, closed once.
    unsafe { libc::close(fd) };
    Ok(ready? > 0)
}

fn pidfd(pid: i32) -> Result<RawFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a descriptor.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as RawFd;
    if fd < 0 {
        bail!(
            "timeout_s and the output check need pidfd_open (Linux 5.3 or later): {}",
            std::io::Error::last_os_error()
        );
    }
    Ok(fd)
}

fn pollfd(fd: RawFd) -> libc::pollfd {
    libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }
}

/// `poll` until `deadline` (forever when `None`), retried on EINTR;
/// returns how many descriptors are ready (0: the deadline passed).
fn poll(fds: &mut [libc::pollfd], deadline: Option<Instant>) -> Result<i32> {
    loop {
        let ms = match deadline {
            None => -1,
            Some(d) => d
                .saturating_duration_since(Instant::now())
                .as_millis()
                .clamp(0, i32::MAX as u128) as i32,
        };
        // SAFETY: fds is a valid slice of pollfd.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if r >= 0 {
            return Ok(r);
        }
        if errno() != libc::EINTR {
            bail!("waiting for a command: {}", std::io::Error::last_os_error());
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
    pipe: RawFd,
    deadline: Option<Instant>,
    sink: &mut impl FnMut(&[u8]),
) -> Result<Read> {
    let pfd = pidfd(pid)?;
    let result = (|| {
        let mut fds = [pollfd(pipe), pollfd(pfd)];
        loop {
            if poll(&mut fds, deadline)? == 0 {
                return Ok(Read::TimedOut);
            }
            if fds[0].revents != 0 && !read_some(pipe, sink)? {
                // End of output: only the exit is left to wait for.
                fds[0].fd = -1;
            }
            if fds[1].revents != 0 {
                return Ok(Read::Exited);
            }
        }
    })();
    // SAFETY: our own descriptor, closed once.
    unsafe { libc::close(pfd) };
    result
}

/// Reads what `pipe` has after the run and everything it started were
/// killed; false when it was still open at `deadline` (a process beyond
/// runner's reach holds it).
pub(super) fn drain(pipe: RawFd, deadline: Instant, sink: &mut impl FnMut(&[u8])) -> Result<bool> {
    let mut fds = [pollfd(pipe)];
    loop {
        if poll(&mut fds, Some(deadline))? == 0 {
            return Ok(false);
        }
        if !read_some(pipe, sink)? {
            return Ok(true);
        }
    }
}

/// One read into `sink`; false at the end of the output.
fn read_some(fd: RawFd, sink: &mut impl FnMut(&[u8])) -> Result<bool> {
    let mut buf = [0u8; 1 << 16];
    loop {
        // SAFETY: reads at most buf.len() bytes into buf.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n > 0 {
            sink(&buf[..n as usize]);
            return Ok(true);
        }
        if n == 0 {
            return Ok(false);
        }
        match errno() {
            libc::EINTR => continue,
            libc::EAGAIN => return Ok(true),
            _ => bail!(
                "reading a command's stdout: {}",
                std::io::Error::last_os_error()
            ),
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
        // SAFETY: `pid` is our unreaped child, so its group id is its own.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        wait_exit(pid, None)?;
    }
    if subreaper {
        // A scan of /proc can miss a process that forked and exited while
        // it read; the sweep sees every survivor as a child before it kills.
        let (done, seen) = sweep::kill_children(&keep, Some(pid));
        left.extend(seen);
        if !done {
            crate::console::warn(&format!(
                "processes started by a command (pid {pid}) would not die within 10 s of SIGKILL"
            ));
        }
    }
    // SAFETY: `pid` is our unreaped child, so its group id is its own.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    let (status, usage) = wait4(pid)?;
    LEFT.fetch_add(left.len() as u64, Ordering::SeqCst);
    Ok(Ended { status, usage })
}

/// Live processes other than the leader in its group or, in a subreaper,
/// anywhere below this process.
fn leftovers(pid: i32, exited: bool, subreaper: bool) -> BTreeSet<i32> {
    // The common case, without a scan of /proc: the leader exited, so all
    // it left was re-parented here, and this process has no other child.
    if subreaper && exited && sweep::children().iter().all(|&c| c == pid) {
        return BTreeSet::new();
    }
    let mut found: BTreeSet<i32> = crate::environment::procfs::read_processes()
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

fn wait4(pid: i32) -> Result<(i32, RunUsage)> {
    let mut status = 0;
    // SAFETY: rusage is plain data filled by wait4.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            break;
        }
        if r < 0 && errno() == libc::EINTR {
            continue;
        }
        bail!("waiting for a command: {}", std::io::Error::last_os_error());
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
