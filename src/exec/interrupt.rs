//! Ctrl-C and `kill`: the parent survives them long enough to stop the
//! worker, keep every finished fork, drop the run's schema, release the lock
//! and say how to resume.
//!
//! A terminal's Ctrl-C reaches the whole process group, but `kill -INT
//! <parent>` reaches the parent alone; so the handler kills the current
//! worker itself, or a hung worker would outlive the run.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// The running worker's pid, 0 when none.
static CHILD: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
    let pid = CHILD.load(Ordering::SeqCst);
    if pid > 0 {
        // kill(2) is async-signal-safe.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// Catches SIGINT, SIGTERM and SIGHUP for the rest of the process.
pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        unsafe {
            libc::signal(sig, on_signal as *const () as libc::sighandler_t);
        }
    }
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Registers the worker that a signal must stop; a signal that came just
/// before registration stops it here.
pub fn set_child(pid: i32) {
    CHILD.store(pid, Ordering::SeqCst);
    if interrupted() {
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// Called once the worker has been waited for, before its pid can be reused.
pub fn clear_child() {
    CHILD.store(0, Ordering::SeqCst);
}
