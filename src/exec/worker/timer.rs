//! Timing pairs: the state a fork accumulates, one method per ordering.
//!
//! One run of an arm: [`Strategy::before`] (untimed), then the run and
//! one busy-wait loop ([`timed_run`]), then [`Strategy::after`] (untimed).
//! The loop waits d for the treatment and, with `pad_baseline`, d for the
//! baseline too; the timed region ends at the loop's first clock read past
//! d for the treatment and at its first read for the baseline. Both arms
//! thus execute the same instructions in the same order, and differ only
//! in where the timer stops: every run is followed by the same wait and
//! then its `after`, whichever arm ran first. A pair records as `spin_ns`
//! the treatment's timed wait minus the baseline's: exactly the part of D
//! that the mechanism injected.
//!
//! One path: no branch on the way into a run depends on the arm (the order
//! and the waits are looked up, the loop keeps its stop with a mask), so
//! the branch predictor's history cannot carry the arm into the next run's
//! first predictions. docs/guide/how-a-run-works.md ("Both arms, one
//! history") has what branching on the arm did to the in-memory A/A test.

use super::draws::Draws;
use super::{Arms, JobRequest};
use crate::exec::fault::Fault;
use crate::strategy::error::Result;
use crate::strategy::failure::FailCode;
use crate::strategy::{CountWith, Strategy};
use runner_core::record::{Arm, PairCounts, PairRecord, PairUsage, Phase, RunCount, RunUsage};
use runner_folder::FailedRun;
use runner_os::placement::ArmCpus;
use std::hint::black_box;
use std::io::Write;
use std::time::Instant;

/// Folds fingerprints into a checksum that depends on their order.
#[derive(Default)]
pub(super) struct Checksum(u64);

impl Checksum {
    fn add(&mut self, fingerprint: u64) {
        self.0 = (self.0.rotate_left(5) ^ fingerprint).wrapping_mul(0x0100_0000_01b3);
    }

    pub(super) fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}

/// One timed region and the wait after it; returns (elapsed ns, ns of
/// the wait inside the region).
///
/// After the run, one busy-wait loop spins until `wait_ns` have passed;
/// the region ends at the loop's first clock read at or past `timed_ns`
/// (d for the treatment, 0 for the baseline), and the rest of the loop is
/// untimed (the baseline's pad). Elapsed = (run) + (timed wait), with
/// nothing of the mechanism left outside what it reports: D minus the
/// difference of the timed waits is the difference of the runs alone.
///
/// One loop serves both parts so that a padded baseline and the treatment
/// run the very same instructions, the same number of times: the history
/// the next run inherits (branch predictors, the loop's exit, the time
/// since the database last heard from the worker) is the arms' own only
/// through the run itself (docs/guide/how-a-run-works.md, "Both arms, one
/// history").
#[inline(never)]
pub fn timed_run(
    s: &mut dyn Strategy,
    input: u64,
    timed_ns: u64,
    wait_ns: u64,
) -> Result<(u64, u64)> {
    let start = Instant::now();
    black_box(s.run(black_box(input)))?;
    let wait_start = Instant::now();
    let timed_ns = black_box(timed_ns);
    let total_ns = black_box(wait_ns.max(timed_ns));
    // The first read at or past timed_ns, in ns since wait_start (u64::MAX
    // until then), kept with a mask rather than a branch: the loop takes
    // the same branches in both arms, so the history it leaves to the
    // next run does not depend on where the timer stopped ("one path").
    let mut stop_ns = u64::MAX;
    loop {
        let t = wait_start.elapsed().as_nanos() as u64;
        let first = u64::from(t >= timed_ns) & u64::from(stop_ns == u64::MAX);
        let mask = 0u64.wrapping_sub(first);
        stop_ns = (stop_ns & !mask) | (t & mask);
        if t >= total_ns {
            break;
        }
        std::hint::spin_loop();
    }
    // total_ns >= timed_ns: stop_ns was set by the last read at the latest.
    let run_ns = (wait_start - start).as_nanos() as u64;
    Ok((run_ns + stop_ns, stop_ns))
}

/// One arm's run as recorded.
#[derive(Clone, Copy)]
struct Run {
    at: u64,
    elapsed: u64,
    spin: u64,
    usage: Option<RunUsage>,
    fingerprint: u64,
    /// The CPU the run ended on, when the kernel says.
    cpu: Option<u32>,
    /// It failed, and its arm allows failures.
    failed: Option<FailCode>,
    /// A counted run's count (a counted run is never a timed one).
    count: Option<RunCount>,
}

impl Run {
    /// A slot before its run (overwritten before it is read).
    const NONE: Run = Run {
        at: 0,
        elapsed: 0,
        spin: 0,
        usage: None,
        fingerprint: 0,
        cpu: None,
        failed: None,
        count: None,
    };
}

pub(super) struct Timer<'a> {
    job: &'a JobRequest,
    pub(super) arms: Arms,
    /// Start of the fork's first timed run; `*_at_ns` count from here.
    pub(super) t0: Option<Instant>,
    pub(super) sum_b: Checksum,
    pub(super) sum_t: Checksum,
    /// The first pair whose arms' fingerprints differed: (pair, input).
    pub(super) first_mismatch: Option<(usize, u64)>,
    /// The CPU each run ended on, per arm (placement's record).
    pub(super) cpus: ArmCpus,
    /// Runs that failed where their arm allows it, in pair order.
    pub(super) failures: Vec<FailedRun>,
    /// The `RUNNER_FAULT` test hook, when it targets this job.
    fault: Option<Fault>,
    /// (timed, total) wait per arm, indexed by `Arm as usize`: looked up,
    /// not branched on ("one path").
    waits: [(u64, u64); 2],
}

impl<'a> Timer<'a> {
    pub(super) fn new(job: &'a JobRequest, arms: Arms, fault: Option<Fault>) -> Self {
        Timer {
            job,
            arms,
            t0: None,
            sum_b: Checksum::default(),
            sum_t: Checksum::default(),
            first_mismatch: None,
            cpus: ArmCpus::default(),
            failures: Vec::new(),
            fault,
            waits: {
                let d = job.delay_ns;
                let pad = if job.pad_baseline { d } else { 0 };
                let mut w = [(0, 0); 2];
                w[Arm::Baseline as usize] = (0, pad);
                w[Arm::Treatment as usize] = (d, d);
                w
            },
        }
    }

    fn fault_before(&self, phase: Phase, pair: usize, out: &mut impl Write) -> Result<()> {
        match &self.fault {
            Some(f) if phase == Phase::Measure => f.at(Some(pair as u32), out),
            _ => Ok(()),
        }
    }

    fn run(&mut self, arm: Arm, input: u64) -> Result<Run> {
        let (timed, wait) = self.waits[arm as usize];
        let s = self.arms.get(arm);
        s.before(input)?;
        let t0 = *self.t0.get_or_insert_with(Instant::now);
        let at = t0.elapsed().as_nanos() as u64;
        let (elapsed, spin) = timed_run(s, input, timed, wait)?;
        let outcome = s.after()?;
        Ok(Run {
            at,
            elapsed,
            spin,
            usage: outcome.usage,
            fingerprint: outcome.fingerprint,
            cpu: runner_os::placement::pin::current_cpu(),
            failed: outcome.failed,
            count: None,
        })
    }

    /// One counted run: the arm's command under the counter, no wait and
    /// no timed region; its elapsed time is the counted run's whole, what
    /// the counter cost, never a timing of the command.
    fn count(&mut self, arm: Arm, input: u64, with: &CountWith) -> Result<Run> {
        let t0 = *self.t0.get_or_insert_with(Instant::now);
        let at = t0.elapsed().as_nanos() as u64;
        let counted = self.arms.get(arm).count(input, with)?;
        Ok(Run {
            at,
            elapsed: t0.elapsed().as_nanos() as u64 - at,
            spin: 0,
            usage: None,
            fingerprint: counted.fingerprint,
            cpu: runner_os::placement::pin::current_cpu(),
            failed: None,
            count: Some(counted.count),
        })
    }

    /// A timed run, or with `counter` a counted one.
    fn one(&mut self, arm: Arm, input: u64, counter: Option<&CountWith>) -> Result<Run> {
        match counter {
            None => self.run(arm, input),
            Some(with) => self.count(arm, input, with),
        }
    }

    /// A pair's bookkeeping, once both runs are done and always baseline
    /// first: between two timed regions the worker then does the same
    /// whichever arm ran, so neither arm's run follows writes to its own
    /// checksum or CPU counts (in an A/A design the arms are one instance,
    /// and only such bookkeeping could tell them apart).
    fn account(&mut self, phase: Phase, b: &Run, t: &Run, pair: usize, input: u64) {
        for (arm, run) in [(Arm::Baseline, b), (Arm::Treatment, t)] {
            if let Some(code) = &run.failed {
                self.failures.push(FailedRun {
                    phase,
                    pair: pair as u32,
                    arm,
                    code: code.as_str().to_owned(),
                });
            }
        }
        self.sum_b.add(b.fingerprint);
        self.sum_t.add(t.fingerprint);
        if b.fingerprint != t.fingerprint && self.first_mismatch.is_none() {
            self.first_mismatch = Some((pair, input));
        }
        if let Some(cpu) = b.cpu {
            *self.cpus.baseline.entry(cpu).or_default() += 1;
        }
        if let Some(cpu) = t.cpu {
            *self.cpus.treatment.entry(cpu).or_default() += 1;
        }
    }

    fn record(&self, phase: Phase, pair: usize, first: Arm, b: Run, t: Run) -> PairRecord {
        PairRecord {
            cell: self.job.cell,
            fork: self.job.fork,
            phase,
            pair: pair as u32,
            first,
            baseline_ns: b.elapsed,
            treatment_ns: t.elapsed,
            delay_ns: self.job.delay_ns,
            // At d = 0 nothing is injected; the two waits differ by clock jitter only.
            spin_ns: if self.job.delay_ns == 0 {
                0
            } else {
                t.spin.saturating_sub(b.spin)
            },
            baseline_at_ns: b.at,
            treatment_at_ns: t.at,
            usage: PairUsage {
                baseline: b.usage,
                treatment: t.usage,
            }
            .boxed(),
            counts: PairCounts {
                baseline: b.count,
                treatment: t.count,
            }
            .boxed(),
        }
    }

    /// Each pair: one input, a coin for which arm goes first. With
    /// `counter`, the pairs are counted rather than timed, drawn the same
    /// way from the fork's stream.
    pub(super) fn paired_random(
        &mut self,
        phase: Phase,
        n: u32,
        draws: &mut Draws,
        out: &mut impl Write,
        counter: Option<&CountWith>,
    ) -> Result<Vec<PairRecord>> {
        let mut records = Vec::with_capacity(n as usize);
        for i in 0..n as usize {
            self.fault_before(phase, i, out)?;
            let input = draws.input();
            let order = draws.order();
            let first = order[0];
            // One call site for both runs, the arm a value: the code that
            // leads into each run is the same whichever arm goes first.
            let mut runs = [Run::NONE; 2];
            for (slot, arm) in runs.iter_mut().zip(order) {
                *slot = self.one(arm, input, counter)?;
            }
            let [b, t] = match first {
                Arm::Baseline => runs,
                Arm::Treatment => [runs[1], runs[0]],
            };
            self.account(phase, &b, &t, i, input);
            records.push(self.record(phase, i, first, b, t));
        }
        Ok(records)
    }

    /// All baseline runs of the phase, then all treatment runs, matched by
    /// index (counted with `counter`, as [`Timer::paired_random`]).
    pub(super) fn blocked(
        &mut self,
        phase: Phase,
        n: u32,
        draws: &mut Draws,
        out: &mut impl Write,
        counter: Option<&CountWith>,
    ) -> Result<Vec<PairRecord>> {
        let inputs: Vec<u64> = (0..n).map(|_| draws.input()).collect();
        let mut b = Vec::with_capacity(inputs.len());
        for (i, &input) in inputs.iter().enumerate() {
            self.fault_before(phase, i, out)?;
            b.push(self.one(Arm::Baseline, input, counter)?);
        }
        let t: Vec<Run> = inputs
            .iter()
            .map(|&input| self.one(Arm::Treatment, input, counter))
            .collect::<Result<_>>()?;
        for (i, (b, t)) in b.iter().zip(&t).enumerate() {
            self.account(phase, b, t, i, inputs[i]);
        }
        Ok((0..inputs.len())
            .map(|i| self.record(phase, i, Arm::Baseline, b[i], t[i]))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::Noop;

    /// A padded baseline waits as long as the treatment, outside its timed
    /// region; the treatment's whole wait is inside. The bounds hold by
    /// construction (the loop returns only past `wait_ns`); the one timing
    /// margin, a baseline region under 150 ms, would need the test to be
    /// descheduled for that long between two clock reads.
    #[test]
    fn the_pad_is_waited_but_not_timed() {
        const D: u64 = 200_000_000;
        let mut s = Noop;
        let call = Instant::now();
        let (elapsed, spin) = timed_run(&mut s, 1, 0, D).unwrap();
        let took = call.elapsed().as_nanos() as u64;
        assert!(took >= D, "the pad was waited: {took} ns");
        assert!(
            spin <= elapsed && elapsed < D * 3 / 4,
            "untimed: {elapsed} ns"
        );

        let call = Instant::now();
        let (elapsed, spin) = timed_run(&mut s, 1, D, D).unwrap();
        let took = call.elapsed().as_nanos() as u64;
        assert!(
            spin >= D && elapsed >= spin && took >= elapsed,
            "{spin} {elapsed} {took}"
        );

        let (elapsed, spin) = timed_run(&mut s, 1, 0, 0).unwrap();
        assert!(spin <= elapsed, "unpadded: {spin} {elapsed}");
    }
}
