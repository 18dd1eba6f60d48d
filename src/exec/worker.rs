//! The worker: one fresh process per (cell, fork). It reads a [`JobRequest`]
//! on stdin, sets up its strategies, checks them, then times warm-up and
//! measured pairs and streams one [`WorkerMessage`] per line on stdout.
//!
//! The timed region of a run holds the strategy call and, for the treatment,
//! the injected busy-wait; nothing else (no allocation of records, no I/O).

use super::fault::Fault;
use super::protocol::{CheckReport, ForkSummary, JobRequest, WorkerMessage};
use crate::record::{Arm, PairRecord, Phase};
use crate::spec::{Ordering, StrategyKind};
use crate::strategy::{self, Outcome, Strategy};
use crate::workload::Overrides;
use anyhow::{bail, Context, Result};
use rand::Rng;
use rand::SeedableRng;
use rand_pcg::Pcg64;
use std::hint::black_box;
use std::io::{BufRead, BufWriter, Write};
use std::time::Instant;

/// Pairs sent to the parent at a time.
const STREAM_CHUNK: usize = 50;

/// Busy-waits `d_ns` and returns the time actually spent; d = 0 costs
/// nothing, so at d = 0 both arms run exactly the same code.
pub fn spin_ns(d_ns: u64) -> u64 {
    if d_ns == 0 {
        return 0;
    }
    crate::strategy::spin::spin_for(std::time::Duration::from_nanos(d_ns)).as_nanos() as u64
}

/// The two arms: one shared instance for an A/A design, else two.
struct Arms {
    baseline: Box<dyn Strategy>,
    treatment: Option<Box<dyn Strategy>>,
}

impl Arms {
    /// Test hook (`RUNNER_FAULT=wrong-result`): the treatment's previews
    /// (the shared instance's, in an A/A design) come back one ulp off.
    fn skewed(self) -> Arms {
        use super::fault::OffByOneUlp;
        match self.treatment {
            Some(t) => Arms {
                baseline: self.baseline,
                treatment: Some(Box::new(OffByOneUlp(t))),
            },
            None => Arms {
                baseline: Box::new(OffByOneUlp(self.baseline)),
                treatment: None,
            },
        }
    }

    /// The stored model's hash, from whichever arm keeps one in a database.
    fn content_hash(&mut self) -> Result<Option<String>> {
        let b = self.baseline.content_hash()?;
        match (&mut self.treatment, b) {
            (Some(t), None) => t.content_hash(),
            (_, b) => Ok(b),
        }
    }

    fn get(&mut self, arm: Arm) -> &mut dyn Strategy {
        match (arm, self.treatment.as_mut()) {
            (Arm::Treatment, Some(t)) => t.as_mut(),
            _ => self.baseline.as_mut(),
        }
    }
}

/// Folds results into a checksum that depends on their order.
#[derive(Default)]
struct Checksum(u64);

impl Checksum {
    fn add(&mut self, outcome: &Outcome) {
        let word = match outcome {
            Outcome::Preview(p) => {
                p.ending_mrr.to_bits()
                    ^ p.ending_cash.to_bits().rotate_left(17)
                    ^ p.lifetime_revenue.to_bits().rotate_left(31)
                    ^ (p.runway_month as u64).rotate_left(47)
            }
            Outcome::Nothing => 0x006e_6f74_6869_6e67,
        };
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x0100_0000_01b3);
    }
    fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}

/// One timed run; returns (elapsed ns, spin ns, outcome).
#[inline(never)]
pub fn timed_run(
    s: &mut dyn Strategy,
    input: &Overrides,
    delay_ns: u64,
) -> Result<(u64, u64, Outcome)> {
    let start = Instant::now();
    let outcome = black_box(s.run(black_box(input))?);
    let spin = spin_ns(delay_ns);
    let elapsed = start.elapsed().as_nanos() as u64;
    Ok((elapsed, spin, outcome))
}

/// Runs the job read from stdin; any error is reported as a `Failed` message.
pub fn main() -> Result<()> {
    let stdin = std::io::stdin();
    let mut line = String::new();
    stdin
        .lock()
        .read_line(&mut line)
        .context("reading the job from stdin")?;
    let job: JobRequest = serde_json::from_str(&line).context("parsing the job")?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let result = run_job(&job, &mut out);
    if let Err(e) = &result {
        send(
            &mut out,
            &WorkerMessage::Failed {
                message: format!("{e:#}"),
            },
        )?;
    }
    out.flush()?;
    result
}

fn send(out: &mut impl Write, msg: &WorkerMessage) -> Result<()> {
    serde_json::to_writer(&mut *out, msg)?;
    out.write_all(b"\n")?;
    Ok(())
}

fn build_arms(job: &JobRequest) -> Result<Arms> {
    let db = job.database.as_ref();
    let baseline = strategy::build(job.baseline, job.workload, db)
        .with_context(|| format!("setting up baseline strategy {}", job.baseline.label()))?;
    let treatment = if job.shared_instance {
        None
    } else {
        Some(
            strategy::build(job.treatment, job.workload, db).with_context(|| {
                format!("setting up treatment strategy {}", job.treatment.label())
            })?,
        )
    };
    Ok(Arms {
        baseline,
        treatment,
    })
}

/// The checks of design section 3, before any timing.
fn check(job: &JobRequest, arms: &mut Arms, rng: &mut Pcg64) -> Result<CheckReport> {
    let seeded_hash = arms.content_hash()?;
    let input = Overrides {
        delta: rng.gen_range(0.0..0.05),
    };
    let b1 = arms.get(Arm::Baseline).run(&input)?;
    let t1 = arms.get(Arm::Treatment).run(&input)?;
    let b2 = arms.get(Arm::Baseline).run(&input)?;
    let t2 = arms.get(Arm::Treatment).run(&input)?;
    if !b1.same_bits(&b2) {
        bail!(
            "strategy {} returned different results for the same input (delta = {}): {b1:?} then {b2:?}; it carries state from one run to the next",
            job.baseline.label(),
            input.delta
        );
    }
    if !t1.same_bits(&t2) {
        bail!(
            "strategy {} returned different results for the same input (delta = {}): {t1:?} then {t2:?}; it carries state from one run to the next",
            job.treatment.label(),
            input.delta
        );
    }
    let arms_agree = match (b1, t1) {
        (Outcome::Preview(_), Outcome::Preview(_)) => {
            if !b1.same_bits(&t1) {
                bail!(
                    "baseline {} and treatment {} disagree on the same input (delta = {}): {b1:?} vs {t1:?}",
                    job.baseline.label(),
                    job.treatment.label(),
                    input.delta
                );
            }
            Some(true)
        }
        _ => None,
    };
    // Every strategy that computes the preview must agree with the plain
    // in-memory calculation: a database round trip that loses a bit shows here.
    let mut reference = strategy::build(StrategyKind::InMemory, job.workload, None)?;
    let expected = reference.run(&input)?;
    let mut matches_in_memory = None;
    for (kind, got) in [(job.baseline, b1), (job.treatment, t1)] {
        if let Outcome::Preview(_) = got {
            if !got.same_bits(&expected) {
                bail!(
                    "strategy {} disagrees with the in-memory calculation on the same input (delta = {}): {got:?} vs {expected:?}",
                    kind.label(),
                    input.delta
                );
            }
            matches_in_memory = Some(true);
        }
    }
    Ok(CheckReport {
        arms_agree,
        matches_in_memory,
        repeatable: true,
        seeded_hash,
    })
}

fn run_job(job: &JobRequest, out: &mut impl Write) -> Result<()> {
    let fault = Fault::from_env(job.cell, job.fork)?;
    if let Some(f) = &fault {
        f.at(None, out)?;
    }
    let mut arms = build_arms(job)?;
    if fault.is_some_and(|f| f.kind == super::fault::Kind::WrongResult) {
        arms = arms.skewed();
    }
    let mut rng = Pcg64::seed_from_u64(job.seed);
    let report = check(job, &mut arms, &mut rng)?;
    let seeded_hash = report.seeded_hash.clone();
    send(out, &WorkerMessage::Checked(report))?;
    out.flush()?;

    let mut timer = Timer::new(job, arms, fault);
    let phases = [
        (Phase::Warmup, job.warmup_pairs),
        (Phase::Measure, job.pairs),
    ];
    for (phase, n) in phases {
        let deltas: Vec<f64> = (0..n).map(|_| rng.gen_range(0.0..0.05)).collect();
        let records = match job.ordering {
            Ordering::PairedRandom => timer.paired_random(phase, &deltas, &mut rng, out)?,
            Ordering::Blocked => timer.blocked(phase, &deltas, out)?,
        };
        for r in records {
            send(out, &WorkerMessage::Pair(r))?;
        }
        out.flush()?;
    }
    let final_hash = timer.arms.content_hash()?;
    let summary = ForkSummary {
        cell: job.cell,
        fork: job.fork,
        checksum_baseline: timer.sum_b.hex(),
        checksum_treatment: timer.sum_t.hex(),
        seeded_hash,
        final_hash,
        timed_ns: timer.t0.map_or(0, |t| t.elapsed().as_nanos() as u64),
    };
    if summary.checksum_baseline != summary.checksum_treatment
        && job.baseline.computes_preview()
        && job.treatment.computes_preview()
    {
        bail!(
            "the per-arm checksums differ ({} vs {}) although both arms saw the same inputs",
            summary.checksum_baseline,
            summary.checksum_treatment
        );
    }
    send(out, &WorkerMessage::Done(summary))?;
    Ok(())
}

/// Times runs and keeps the state a fork accumulates.
struct Timer<'a> {
    job: &'a JobRequest,
    arms: Arms,
    /// Start of the fork's first timed run; `*_at_ns` count from here.
    t0: Option<Instant>,
    sum_b: Checksum,
    sum_t: Checksum,
    /// The `RUNNER_FAULT` test hook, when it targets this job.
    fault: Option<Fault>,
}

impl<'a> Timer<'a> {
    fn new(job: &'a JobRequest, arms: Arms, fault: Option<Fault>) -> Self {
        Timer {
            job,
            arms,
            t0: None,
            sum_b: Checksum::default(),
            sum_t: Checksum::default(),
            fault,
        }
    }

    fn fault_before(&self, phase: Phase, pair: usize, out: &mut impl Write) -> Result<()> {
        match &self.fault {
            Some(f) if phase == Phase::Measure => f.at(Some(pair as u32), out),
            _ => Ok(()),
        }
    }

    /// One arm's run: returns (started at, elapsed, spin). The baseline is
    /// followed by an untimed wait of d when `pad_baseline` is set, so both
    /// arms carry the same history into the next run.
    fn run(&mut self, arm: Arm, delta: f64) -> Result<(u64, u64, u64)> {
        let t0 = *self.t0.get_or_insert_with(Instant::now);
        let at = t0.elapsed().as_nanos() as u64;
        let input = Overrides { delta };
        let delay = if arm == Arm::Treatment {
            self.job.delay_ns
        } else {
            0
        };
        let (elapsed, spin, outcome) = timed_run(self.arms.get(arm), &input, delay)?;
        match arm {
            Arm::Baseline => {
                self.sum_b.add(&outcome);
                if self.job.pad_baseline {
                    spin_ns(self.job.delay_ns);
                }
            }
            Arm::Treatment => self.sum_t.add(&outcome),
        }
        Ok((at, elapsed, spin))
    }

    fn record(
        &self,
        phase: Phase,
        pair: usize,
        first: Arm,
        b: (u64, u64, u64),
        t: (u64, u64, u64),
    ) -> PairRecord {
        PairRecord {
            cell: self.job.cell,
            fork: self.job.fork,
            phase,
            pair: pair as u32,
            first,
            baseline_ns: b.1,
            treatment_ns: t.1,
            delay_ns: self.job.delay_ns,
            spin_ns: t.2,
            baseline_at_ns: b.0,
            treatment_at_ns: t.0,
        }
    }

    /// Each pair: one input, a seeded coin for which arm goes first.
    fn paired_random(
        &mut self,
        phase: Phase,
        deltas: &[f64],
        rng: &mut Pcg64,
        out: &mut impl Write,
    ) -> Result<Vec<PairRecord>> {
        let mut records = Vec::with_capacity(deltas.len());
        for (i, &delta) in deltas.iter().enumerate() {
            self.fault_before(phase, i, out)?;
            let first = if rng.gen::<bool>() {
                Arm::Treatment
            } else {
                Arm::Baseline
            };
            let (b, t) = if first == Arm::Baseline {
                let b = self.run(Arm::Baseline, delta)?;
                (b, self.run(Arm::Treatment, delta)?)
            } else {
                let t = self.run(Arm::Treatment, delta)?;
                (self.run(Arm::Baseline, delta)?, t)
            };
            records.push(self.record(phase, i, first, b, t));
            // Stream in chunks, between pairs, so the parent's progress moves
            // without waking it on every pair.
            if records.len() == STREAM_CHUNK {
                for r in records.drain(..) {
                    send(out, &WorkerMessage::Pair(r))?;
                }
                out.flush()?;
            }
        }
        Ok(records)
    }

    /// All baseline runs of the phase, then all treatment runs, matched by index.
    fn blocked(
        &mut self,
        phase: Phase,
        deltas: &[f64],
        out: &mut impl Write,
    ) -> Result<Vec<PairRecord>> {
        let mut b = Vec::with_capacity(deltas.len());
        for (i, &d) in deltas.iter().enumerate() {
            self.fault_before(phase, i, out)?;
            b.push(self.run(Arm::Baseline, d)?);
        }
        let t: Vec<_> = deltas
            .iter()
            .map(|&d| self.run(Arm::Treatment, d))
            .collect::<Result<_>>()?;
        Ok((0..deltas.len())
            .map(|i| self.record(phase, i, Arm::Baseline, b[i], t[i]))
            .collect())
    }
}
