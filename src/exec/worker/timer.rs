//! Timing pairs: the state a fork accumulates, one method per ordering.
//!
//! One run of an arm: [`Strategy::before`] (untimed), then the timed
//! region (the strategy's [`Strategy::run`] and the injected busy-wait,
//! which waits d for the treatment and 0 for the baseline: both arms go
//! through the same calls and clock reads), then [`Strategy::after`]
//! (untimed). With `pad_baseline` the baseline is then followed by an
//! untimed wait of d, so both arms carry the same history into the next
//! run. A pair records as `spin_ns` the treatment's wait minus the
//! baseline's: exactly the part of D that the mechanism injected.

use super::draws::Draws;
use super::{wait_ns, Arms, JobRequest};
use crate::exec::fault::Fault;
use crate::placement::ArmCpus;
use crate::record::{Arm, PairRecord, PairUsage, Phase, RunUsage};
use crate::strategy::Strategy;
use anyhow::Result;
use std::hint::black_box;
use std::io::Write;
use std::time::{Duration, Instant};

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

/// One timed region; returns (elapsed ns, ns the wait mechanism took).
///
/// The wait is inlined so that the region's last clock read is also the
/// wait's: elapsed = (run) + (wait), with nothing of the mechanism left
/// outside what it reports. The exit of a long busy-wait loop costs more
/// than a loop that exits at once (a mispredicted branch, ~10 ns here);
/// measured up to the end of the region, that cost is counted in the wait
/// of the arm that paid it, so D - (treatment's wait - baseline's) is the
/// difference of the runs alone.
#[inline(never)]
pub fn timed_run(s: &mut dyn Strategy, input: u64, delay_ns: u64) -> Result<(u64, u64)> {
    let start = Instant::now();
    black_box(s.run(black_box(input)))?;
    let wait_start = Instant::now();
    let end = wait_start + Duration::from_nanos(black_box(delay_ns));
    while Instant::now() < end {
        std::hint::spin_loop();
    }
    let stop = Instant::now();
    Ok((
        (stop - start).as_nanos() as u64,
        (stop - wait_start).as_nanos() as u64,
    ))
}

/// One arm's run as recorded.
#[derive(Clone, Copy)]
struct Run {
    at: u64,
    elapsed: u64,
    spin: u64,
    usage: Option<RunUsage>,
}

pub(super) struct Timer<'a> {
    job: &'a JobRequest,
    pub(super) arms: Arms,
    /// Start of the fork's first timed run; `*_at_ns` count from here.
    pub(super) t0: Option<Instant>,
    pub(super) sum_b: Checksum,
    pub(super) sum_t: Checksum,
    /// The CPU each run ended on, per arm (placement's record).
    pub(super) cpus: ArmCpus,
    /// The `RUNNER_FAULT` test hook, when it targets this job.
    fault: Option<Fault>,
}

impl<'a> Timer<'a> {
    pub(super) fn new(job: &'a JobRequest, arms: Arms, fault: Option<Fault>) -> Self {
        Timer {
            job,
            arms,
            t0: None,
            sum_b: Checksum::default(),
            sum_t: Checksum::default(),
            cpus: ArmCpus::default(),
            fault,
        }
    }

    fn fault_before(&self, phase: Phase, pair: usize, out: &mut impl Write) -> Result<()> {
        match &self.fault {
            Some(f) if phase == Phase::Measure => f.at(Some(pair as u32), out),
            _ => Ok(()),
        }
    }

    fn run(&mut self, arm: Arm, input: u64) -> Result<Run> {
        let delay = if arm == Arm::Treatment {
            self.job.delay_ns
        } else {
            0
        };
        let s = self.arms.get(arm);
        s.before(input)?;
        let t0 = *self.t0.get_or_insert_with(Instant::now);
        let at = t0.elapsed().as_nanos() as u64;
        let (elapsed, spin) = timed_run(s, input, delay)?;
        let outcome = s.after()?;
        if let Some(cpu) = crate::placement::pin::current_cpu() {
            let runs = match arm {
                Arm::Baseline => &mut self.cpus.baseline,
                Arm::Treatment => &mut self.cpus.treatment,
            };
            *runs.entry(cpu).or_default() += 1;
        }
        match arm {
            Arm::Baseline => {
                self.sum_b.add(outcome.fingerprint);
                if self.job.pad_baseline && self.job.delay_ns > 0 {
                    wait_ns(self.job.delay_ns);
                }
            }
            Arm::Treatment => self.sum_t.add(outcome.fingerprint),
        }
        Ok(Run {
            at,
            elapsed,
            spin,
            usage: outcome.usage,
        })
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
            },
        }
    }

    /// Each pair: one input, a coin for which arm goes first.
    pub(super) fn paired_random(
        &mut self,
        phase: Phase,
        n: u32,
        draws: &mut Draws,
        out: &mut impl Write,
    ) -> Result<Vec<PairRecord>> {
        let mut records = Vec::with_capacity(n as usize);
        for i in 0..n as usize {
            self.fault_before(phase, i, out)?;
            let input = draws.input();
            let first = draws.first();
            let (b, t) = if first == Arm::Baseline {
                let b = self.run(Arm::Baseline, input)?;
                (b, self.run(Arm::Treatment, input)?)
            } else {
                let t = self.run(Arm::Treatment, input)?;
                (self.run(Arm::Baseline, input)?, t)
            };
            records.push(self.record(phase, i, first, b, t));
        }
        Ok(records)
    }

    /// All baseline runs of the phase, then all treatment runs, matched by index.
    pub(super) fn blocked(
        &mut self,
        phase: Phase,
        n: u32,
        draws: &mut Draws,
        out: &mut impl Write,
    ) -> Result<Vec<PairRecord>> {
        let inputs: Vec<u64> = (0..n).map(|_| draws.input()).collect();
        let mut b = Vec::with_capacity(inputs.len());
        for (i, &input) in inputs.iter().enumerate() {
            self.fault_before(phase, i, out)?;
            b.push(self.run(Arm::Baseline, input)?);
        }
        let t: Vec<Run> = inputs
            .iter()
            .map(|&input| self.run(Arm::Treatment, input))
            .collect::<Result<_>>()?;
        Ok((0..inputs.len())
            .map(|i| self.record(phase, i, Arm::Baseline, b[i], t[i]))
            .collect())
    }
}
