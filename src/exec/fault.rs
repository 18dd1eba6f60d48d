//! A test hook: `RUNNER_FAULT` makes a worker fail on purpose, so the
//! integration tests can prove the parent keeps every finished fork and says
//! how to resume. Only the worker reads it; nothing else in runner does.
//!
//! Only debug builds read it (`cargo test` runs the debug binary): in a
//! release build [`Fault::from_env`] is compiled without the read and never
//! returns a fault, so the binary users measure with cannot be made to sleep
//! or fail inside its timed loop. A debug build records the profile and the
//! hook's value in run.json (`build`), and the report says so.
//!
//! Syntax: `KIND[@SELECTOR,...]`, where KIND is one of
//!
//! - `panic`       the worker panics
//! - `exit=N`      the worker exits with code N
//! - `sigkill`     the worker sends itself SIGKILL
//! - `hang`        the worker sleeps forever (until the fork timeout or Ctrl-C)
//! - `garbage`     the worker prints a line that is not a protocol message
//! - `pause=MS`    the worker sleeps MS milliseconds, then carries on (gives a
//!   test time to act on the worker's database connection)
//! - `wrong-result` the treatment's outputs come back wrong: previews one ulp
//!   off, every run's fingerprint one bit off (the shared instance's, in an
//!   A/A design), to prove the agreement checks stop the run
//!
//! and the selectors `cell=C`, `fork=F`, `pair=P` (each optional) pick where
//! it fires: in the job (C, F), just before measured pair P (0-based, the
//! `pair` column of `phase = measure`), or before the checks when no pair is
//! given. Example: `RUNNER_FAULT='exit=3@cell=0,fork=1,pair=10'`.

use crate::strategy::error::{fail, Doing, Result, StrategyError};
use crate::strategy::{Observation, Outcome, Strategy};
use std::io::Write;

pub(crate) const ENV: &str = runner_core::settings::FAULT;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Panic,
    Exit(i32),
    Sigkill,
    Hang,
    Garbage,
    Pause(u64),
    WrongResult,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fault {
    pub kind: Kind,
    pub cell: Option<u32>,
    pub fork: Option<u32>,
    pub pair: Option<u32>,
}

impl Fault {
    /// The fault for this worker's job, if `RUNNER_FAULT` names one.
    pub(crate) fn from_env(cell: u32, fork: u32) -> Result<Option<Fault>> {
        // The one read of the hook, absent from a release build.
        #[cfg(not(debug_assertions))]
        let text: Option<String> = None;
        #[cfg(debug_assertions)]
        let text = runner_core::settings::get().fault.clone();
        let Some(text) = text else {
            return Ok(None);
        };
        if text.trim().is_empty() {
            return Ok(None);
        }
        let fault = parse(&text).doing(|| format!("{ENV}={text:?}"))?;
        let hit = fault.cell.is_none_or(|c| c == cell) && fault.fork.is_none_or(|f| f == fork);
        Ok(hit.then_some(fault))
    }

    /// Fires when `pair` (None: before the checks) is where this fault sits.
    pub(crate) fn at(&self, pair: Option<u32>, out: &mut impl Write) -> Result<()> {
        if self.pair != pair {
            return Ok(());
        }
        out.flush()?;
        match self.kind {
            Kind::Panic => panic!("injected fault ({ENV}): panic"),
            Kind::Exit(code) => {
                eprintln!("injected fault ({ENV}): exit {code}");
                std::process::exit(code)
            }
            Kind::Sigkill => {
                let _ = rustix::process::kill_process(
                    rustix::process::getpid(),
                    rustix::process::Signal::KILL,
                );
                unreachable!("SIGKILL cannot be caught");
            }
            Kind::Hang => loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            },
            Kind::Garbage => {
                writeln!(out, "injected fault: this line is not a protocol message")?;
                out.flush()?;
            }
            Kind::Pause(ms) => std::thread::sleep(std::time::Duration::from_millis(ms)),
            // Acts through [`OffByOneUlp`], set up with the strategies.
            Kind::WrongResult => {}
        }
        Ok(())
    }
}

/// A strategy whose previews are one ulp off and whose fingerprints are one
/// bit off: the smallest wrong answer, as a stand-in for a strategy that
/// computes something else.
pub(crate) struct OffByOneUlp(pub Box<dyn Strategy>);

impl Strategy for OffByOneUlp {
    fn before(&mut self, input: u64) -> Result<()> {
        self.0.before(input)
    }

    fn run(&mut self, input: u64) -> Result<()> {
        self.0.run(input)
    }

    fn after(&mut self) -> Result<Outcome> {
        let mut o = self.0.after()?;
        o.fingerprint ^= 1;
        Ok(o)
    }

    fn observe(&mut self, input: u64) -> Result<Observation> {
        Ok(match self.0.observe(input)? {
            Observation::Preview(mut p) => {
                p.ending_cash = f64::from_bits(p.ending_cash.to_bits() ^ 1);
                Observation::Preview(p)
            }
            other => other,
        })
    }

    fn content_hash(&mut self) -> Result<Option<String>> {
        self.0.content_hash()
    }

    fn teardown(&mut self) -> Result<()> {
        self.0.teardown()
    }
}

pub(crate) fn parse(text: &str) -> Result<Fault> {
    let (kind, selectors) = text.trim().split_once('@').unwrap_or((text.trim(), ""));
    let number = |v: &str, what: &str| -> Result<u64> {
        v.parse().map_err(|e: std::num::ParseIntError| {
            StrategyError::Failed(format!(
                "{what} needs a non-negative integer, got {v:?}: {e}"
            ))
        })
    };
    let kind = match kind.split_once('=') {
        None if kind == "panic" => Kind::Panic,
        None if kind == "sigkill" => Kind::Sigkill,
        None if kind == "hang" => Kind::Hang,
        None if kind == "garbage" => Kind::Garbage,
        None if kind == "wrong-result" => Kind::WrongResult,
        Some(("exit", n)) => Kind::Exit(number(n, "exit")? as i32),
        Some(("pause", ms)) => Kind::Pause(number(ms, "pause")?),
        _ => fail!("unknown fault {kind:?}; use panic, exit=N, sigkill, hang, garbage, pause=MS or wrong-result"),
    };
    let mut fault = Fault {
        kind,
        cell: None,
        fork: None,
        pair: None,
    };
    for sel in selectors.split(',').filter(|s| !s.trim().is_empty()) {
        let (key, value) = sel
            .trim()
            .split_once('=')
            .doing(|| format!("selector {sel:?} is not key=value"))?;
        let v = number(value, key)? as u32;
        match key {
            "cell" => fault.cell = Some(v),
            "fork" => fault.fork = Some(v),
            "pair" => fault.pair = Some(v),
            _ => fail!("unknown selector {key:?}; use cell, fork or pair"),
        }
    }
    Ok(fault)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kinds_and_selectors() {
        let f = parse("exit=3@cell=0,fork=1,pair=10").unwrap();
        assert_eq!(
            f,
            Fault {
                kind: Kind::Exit(3),
                cell: Some(0),
                fork: Some(1),
                pair: Some(10)
            }
        );
        assert_eq!(parse("hang").unwrap().kind, Kind::Hang);
        assert_eq!(parse("pause=250@fork=2").unwrap().kind, Kind::Pause(250));
        assert!(parse("explode").is_err());
        assert!(parse("panic@row=1").is_err());
        assert!(parse("panic@cell=x").is_err());
    }
}
