//! Waiting for a command's process: reaped with its rusage by `wait4`,
//! killed when it outlives `timeout_s` (a `poll` on a pidfd tells, without
//! reaping, whether it exited in time; it is not reaped before the kill,
//! so its pid cannot have been reused by then).

use crate::record::RunUsage;
use anyhow::{bail, Result};
use std::time::Duration;

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

/// Waits for `pid` and reaps it with its rusage; kills it after `timeout`.
pub(super) fn reap(pid: i32, timeout: Option<Duration>) -> Result<(i32, RunUsage)> {
    if let Some(t) = timeout {
        if !wait_exit(pid, t)? {
            // Not reaped yet, so the pid cannot have been reused.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            wait4(pid)?;
            bail!(
                "a run was still going after timeout_s = {} s and was killed",
                t.as_secs_f64()
            );
        }
    }
    wait4(pid)
}

/// Whether `pid` exited within `t`, without reaping it (poll on a pidfd).
fn wait_exit(pid: i32, t: Duration) -> Result<bool> {
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as i32;
    if fd < 0 {
        bail!(
            "timeout_s needs pidfd_open (Linux 5.3 or later): {}",
            std::io::Error::last_os_error()
        );
    }
    let ms = t.as_millis().clamp(1, i32::MAX as u128) as i32;
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ready = loop {
        let r = unsafe { libc::poll(&mut pfd, 1, ms) };
        if r >= 0 || errno() != libc::EINTR {
            break r;
        }
    };
    unsafe { libc::close(fd) };
    if ready < 0 {
        bail!("waiting for a command: {}", std::io::Error::last_os_error());
    }
    Ok(ready > 0)
}

fn wait4(pid: i32) -> Result<(i32, RunUsage)> {
    let mut status = 0;
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
