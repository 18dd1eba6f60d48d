//! The instruction counters this machine offers: valgrind (the program,
//! found on `PATH`) and a hardware counter (the CPU's performance
//! monitoring unit, as the kernel exposes it to `perf_event_open`).
//!
//! A count of instructions is what a shared CI runner can still measure
//! honestly: another tenant's load stretches a run's time but not the
//! instructions it executes. valgrind counts them by running the program
//! on its own simulated CPU (`--tool=cachegrind`), 20 to 50 times slower
//! and the same on every machine of one architecture; a hardware counter
//! counts them at full speed, but cloud runners rarely expose one
//! (virtual machines hide the PMU). Both are detected here, read-only:
//! `runner env` lists them, and a run that counts records which it used.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The Debian package that provides valgrind, named in the error a run
/// that counts gives where it is missing.
pub const VALGRIND_PACKAGE: &str = "valgrind";

/// What the machine offers to count instructions with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    /// valgrind, when found on `PATH`.
    pub valgrind: Option<Valgrind>,
    /// The CPU's instruction counter as `perf_event_open` would reach it.
    pub hardware: Hardware,
    /// What counted this run's instructions (`cachegrind`); none in
    /// `runner env`, which counts nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used: Option<String>,
}

/// A valgrind program and the version it reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Valgrind {
    pub path: PathBuf,
    /// `valgrind --version`, e.g. `valgrind-3.19.0`.
    pub version: String,
}

/// Whether a hardware instruction counter is there, and why (not).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hardware {
    pub available: bool,
    /// One clause: the PMU's events file, or what is missing.
    pub detail: String,
}

/// Both counters, as this machine has them now.
pub fn detect() -> Counters {
    Counters {
        valgrind: valgrind(),
        hardware: hardware(Path::new("/sys/bus/event_source/devices"), paranoid()),
        used: None,
    }
}

/// valgrind on `PATH`, when it runs and says its version.
pub fn valgrind() -> Option<Valgrind> {
    let path = on_path("valgrind")?;
    let out = std::process::Command::new(&path)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && version.starts_with("valgrind")).then_some(Valgrind { path, version })
}

/// The first executable file called `name` in a folder of `PATH`.
fn on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// `/proc/sys/kernel/perf_event_paranoid`; none where unreadable.
fn paranoid() -> Option<i64> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The CPU PMU's `instructions` event under `devices` (`cpu`, or a hybrid
/// CPU's `cpu_core`), and whether an unprivileged process may count its
/// own children with it (perf_event_paranoid at most 2: user-space counts
/// of one's own processes).
pub fn hardware(devices: &Path, paranoid: Option<i64>) -> Hardware {
    let event = ["cpu", "cpu_core", "cpu_atom"]
        .iter()
        .map(|pmu| devices.join(pmu).join("events/instructions"))
        .find(|p| p.is_file());
    match (event, paranoid) {
        (None, _) => Hardware {
            available: false,
            detail: format!(
                "no CPU performance monitoring unit under {} (a virtual machine usually hides it)",
                devices.display()
            ),
        },
        (Some(e), Some(level)) if level <= 2 => Hardware {
            available: true,
            detail: format!("{} (perf_event_paranoid {level})", e.display()),
        },
        (Some(e), level) => Hardware {
            available: false,
            detail: format!(
                "{} exists, but perf_event_paranoid is {} (at most 2 lets a process count its own children)",
                e.display(),
                level.map_or("unreadable".to_string(), |l| l.to_string())
            ),
        },
    }
}

impl Counters {
    /// One line per counter, as `runner env` prints them.
    pub fn lines(&self) -> Vec<String> {
        let valgrind = match &self.valgrind {
            Some(v) => format!("valgrind   {} ({})", v.version, v.path.display()),
            None => format!(
                "valgrind   not found on PATH (apt-get install {VALGRIND_PACKAGE}); `measure = [\"instructions\"]` needs it"
            ),
        };
        let hardware = format!(
            "hardware   {}: {}",
            if self.hardware.available {
                "instruction counter available"
            } else {
                "no instruction counter"
            },
            self.hardware.detail
        );
        vec![valgrind, hardware]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The PMU is read from sysfs as the kernel lays it out: its events
    /// file, and the paranoid level that lets a process count its own.
    #[test]
    fn a_hardware_counter_needs_the_pmu_and_a_paranoid_level_of_two_at_most() {
        let dir = tempfile::tempdir().unwrap();
        let none = hardware(dir.path(), Some(1));
        assert!(!none.available);
        assert!(none.detail.contains("no CPU performance monitoring unit"));
        std::fs::create_dir_all(dir.path().join("cpu/events")).unwrap();
        std::fs::write(dir.path().join("cpu/events/instructions"), "event=0xc0\n").unwrap();
        assert!(hardware(dir.path(), Some(2)).available);
        let locked = hardware(dir.path(), Some(3));
        assert!(!locked.available);
        assert!(
            locked.detail.contains("perf_event_paranoid is 3"),
            "{}",
            locked.detail
        );
        assert!(!hardware(dir.path(), None).available);
    }

    /// A missing valgrind is named with the package that provides it.
    #[test]
    fn a_missing_valgrind_names_its_package() {
        let c = Counters {
            valgrind: None,
            hardware: Hardware {
                available: false,
                detail: "none".into(),
            },
            used: None,
        };
        assert!(c.lines()[0].contains("apt-get install valgrind"));
    }
}
