//! CPU placement: which CPU the worker runs on and, for a database server
//! on this host, which CPU its backend serving the worker runs on. On the 2-vCPU VM runner is developed on, a worker and its
//! PostgreSQL backend on different CPUs pay a cross-CPU wake-up on every
//! statement, and the scheduler moving them adds "slow forks"; pinning both
//! to one CPU cut aa's wall time 2.2x and its per-fork intervals 2-3x
//! (`reports/placement-postgres`). So placement is a design key, sweepable in `[grid]`, and
//! what was pinned (and what could not be, and why) is recorded per fork.
//!
//! [`pin`] does the system calls, [`apply`] what a worker does with them,
//! [`lock`] keeps runners on one machine on different CPUs, [`record`]
//! what run.json keeps; this file is the value and its rules.

pub mod apply;
pub mod lock;
pub mod pin;
pub mod record;

pub use lock::Claim;
pub use record::{ArmCpus, Backend, DatabaseSide, ForkPlacement};

use serde::{Deserialize, Serialize};
use std::fmt;

/// Why a placement cannot be made on this machine, given the CPUs runner
/// may use there (`allowed`, as a CPU list). The validator puts the
/// `Display` after the key; the worker after the placement's name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unplaceable {
    #[error("no CPU is allowed to runner here")]
    NoCpu,
    #[error("\"separate-cores\" needs two CPUs, and runner may use only CPU {allowed} here")]
    OneCpu { allowed: String },
    #[error("CPU {cpu} is not one runner may use here (allowed: {allowed})")]
    NotAllowed { cpu: u32, allowed: String },
}

/// Where the worker and its database backend run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Placement {
    /// Both left to the scheduler (runner's behaviour before placement).
    None,
    /// The worker and its backend on one CPU: a query and its reply never
    /// cross CPUs.
    SameCore,
    /// The worker on one CPU, its backend on another.
    SeparateCores,
    /// Explicit CPU numbers: the worker's, and optionally the backend's.
    Cpus { worker: u32, backend: Option<u32> },
}

/// The placement of an experiment that names none. Chosen from
/// `experiments/placement.toml` on PostgreSQL and SQLite
/// (docs/guide/placement.md).
pub const DEFAULT: Placement = Placement::SameCore;

/// The spellings `design.placement` accepts, for error messages.
pub const VALID: &str = "\"none\", \"same-core\", \"separate-cores\" or \"cpus:W\" / \"cpus:W,B\" (CPU numbers for the worker and its database backend)";

impl Placement {
    pub fn parse(s: &str) -> Option<Placement> {
        match s {
            "none" => return Some(Placement::None),
            "same-core" => return Some(Placement::SameCore),
            "separate-cores" => return Some(Placement::SeparateCores),
            _ => {}
        }
        let cpus = s.strip_prefix("cpus:")?;
        let number = |t: &str| -> Option<u32> {
            let t = t.trim();
            (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
                .then(|| t.parse().ok())
                .flatten()
        };
        match cpus.split_once(',') {
            None => Some(Placement::Cpus {
                worker: number(cpus)?,
                backend: None,
            }),
            Some((w, b)) => Some(Placement::Cpus {
                worker: number(w)?,
                backend: Some(number(b)?),
            }),
        }
    }

    /// The CPUs this placement pins to on a machine whose allowed CPUs are
    /// `allowed` (ascending): the worker's and the backend's, `None` for
    /// "left to the scheduler". same-core and separate-cores take the
    /// highest allowed CPUs: CPU 0 is where many kernels and hypervisors
    /// steer interrupts and housekeeping by default.
    pub fn cpus(self, allowed: &[u32]) -> Result<Cpus, Unplaceable> {
        let highest = allowed.last().copied();
        let has = |c: u32| allowed.contains(&c);
        let shown = pin::cpu_list(allowed);
        match self {
            Placement::None => Ok(Cpus::default()),
            Placement::SameCore => {
                let c = highest.ok_or(Unplaceable::NoCpu)?;
                Ok(Cpus {
                    worker: Some(c),
                    backend: Some(c),
                })
            }
            Placement::SeparateCores => match allowed {
                [.., b, w] => Ok(Cpus {
                    worker: Some(*w),
                    backend: Some(*b),
                }),
                _ => Err(Unplaceable::OneCpu { allowed: shown }),
            },
            Placement::Cpus { worker, backend } => {
                for c in std::iter::once(worker).chain(backend) {
                    if !has(c) {
                        return Err(Unplaceable::NotAllowed {
                            cpu: c,
                            allowed: shown,
                        });
                    }
                }
                Ok(Cpus {
                    worker: Some(worker),
                    backend,
                })
            }
        }
    }
}

/// Where one fork pins its worker and its backend (`None`: not pinned).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cpus {
    pub worker: Option<u32>,
    pub backend: Option<u32>,
}

impl fmt::Display for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Placement::None => f.write_str("none"),
            Placement::SameCore => f.write_str("same-core"),
            Placement::SeparateCores => f.write_str("separate-cores"),
            Placement::Cpus {
                worker,
                backend: None,
            } => write!(f, "cpus:{worker}"),
            Placement::Cpus {
                worker,
                backend: Some(b),
            } => write!(f, "cpus:{worker},{b}"),
        }
    }
}

impl Serialize for Placement {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Placement {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Placement::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("placement {s:?}: expected {VALID}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_parses_and_prints_back() {
        for s in ["none", "same-core", "separate-cores", "cpus:3", "cpus:0,1"] {
            assert_eq!(Placement::parse(s).unwrap().to_string(), s);
        }
        for bad in [
            "",
            "same",
            "cpus:",
            "cpus:a",
            "cpus:1,",
            "cpus:-1",
            "cpus:1,2,3",
        ] {
            assert_eq!(Placement::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn named_placements_take_the_highest_allowed_cpus() {
        let two = [0, 1];
        let c = Placement::SameCore.cpus(&two).unwrap();
        assert_eq!((c.worker, c.backend), (Some(1), Some(1)));
        let c = Placement::SeparateCores.cpus(&two).unwrap();
        assert_eq!((c.worker, c.backend), (Some(1), Some(0)));
        assert_eq!(Placement::None.cpus(&two).unwrap(), Cpus::default());
        let c = Placement::parse("cpus:0").unwrap().cpus(&two).unwrap();
        assert_eq!((c.worker, c.backend), (Some(0), None));
    }

    #[test]
    fn impossible_placements_say_why() {
        let e = Placement::SeparateCores.cpus(&[3]).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("needs two CPUs") && text.contains("CPU 3"),
            "{e}"
        );
        let e = Placement::parse("cpus:0,9")
            .unwrap()
            .cpus(&[0, 1])
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "CPU 9 is not one runner may use here (allowed: 0-1)"
        );
    }
}
