//! One machine check's result: which check, OK / WARN / N/A, what was
//! found and what to do. The checks themselves are in `checks`.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckKind {
    Governor,
    Turbo,
    Aslr,
    Swap,
    Load,
    BusyProcesses,
    CpuSteal,
}

impl CheckKind {
    pub fn label(self) -> &'static str {
        match self {
            CheckKind::Governor => "CPU frequency governor",
            CheckKind::Turbo => "turbo / boost",
            CheckKind::Aslr => "ASLR",
            CheckKind::Swap => "swap",
            CheckKind::Load => "load average",
            CheckKind::BusyProcesses => "other processes",
            CheckKind::CpuSteal => "CPU steal",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Ok,
    Warn,
    /// The machine does not expose what the check reads.
    Unknown,
}

impl Status {
    /// The tag `runner env` prints in front of the line.
    pub fn tag(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::Warn => "WARN",
            Status::Unknown => "N/A",
        }
    }
}

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub check: CheckKind,
    pub status: Status,
    /// What was found, e.g. "powersave on 8 of 8 CPUs".
    pub found: String,
    /// For WARN: why it matters and what to do; for N/A: why not known.
    pub advice: Option<String>,
}

impl Check {
    pub(crate) fn new(
        check: CheckKind,
        status: Status,
        found: String,
        advice: Option<&str>,
    ) -> Check {
        Check {
            check,
            status,
            found,
            advice: advice.map(str::to_string),
        }
    }
}
