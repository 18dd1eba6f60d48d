//! The worker: one fresh process per (cell, fork). It reads a [`JobRequest`]
//! on stdin, sets up its strategies, checks them, waits for the parent's
//! [`GO`](super::protocol::GO), then times warm-up and measured pairs and,
//! when the fork's timing is over, writes one [`WorkerMessage`] per line on
//! stdout.
//!
//! Files: `draws` (each pair's input and coin from the job seed), `check`
//! (the agreement checks before timing), `timer` (the timed runs and the
//! two orderings). The timed region of a run holds the strategy's run and
//! the wait mechanism (d for the treatment, 0 for the baseline); nothing
//! else (no allocation of records, no I/O).

mod agreement;
pub(crate) mod draws;
mod timer;
mod trial_job;

pub use timer::timed_run;
pub use trial_job::RUNS as TRIAL_RUNS;

use super::fault::Fault;
use super::protocol::{ForkSummary, JobRequest, WorkerMessage};
use crate::strategy::error::{fail, Doing, Result};
use crate::strategy::{self, Setting, Strategy};
use runner_core::record::{Arm, Phase};
use runner_db::DbTarget;
use runner_os::placement::{apply, pin, ForkPlacement};
use runner_spec::{Ordering, StrategyKind};
use std::collections::BTreeMap;
use std::io::{BufRead, BufWriter, Write};

/// The two arms: one shared instance for an A/A design, else two.
struct Arms {
    baseline: Box<dyn Strategy>,
    treatment: Option<Box<dyn Strategy>>,
    /// Teardown ran (or must not run again).
    done: bool,
}

impl Arms {
    /// Test hook (`RUNNER_FAULT=wrong-result`): the treatment's outputs
    /// (the shared instance's, in an A/A design) come back one ulp off.
    fn skewed(mut self) -> Arms {
        use super::fault::OffByOneUlp;
        let noop = || -> Box<dyn Strategy> { Box::new(strategy::Noop) };
        let done = std::mem::replace(&mut self.done, true);
        let baseline = std::mem::replace(&mut self.baseline, noop());
        let treatment = self.treatment.take();
        match treatment {
            Some(t) => Arms {
                baseline,
                treatment: Some(Box::new(OffByOneUlp(t))),
                done,
            },
            None => Arms {
                baseline: Box::new(OffByOneUlp(baseline)),
                treatment: None,
                done,
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

    /// The arm's instance. With one shared instance (A/A) the arm is not
    /// looked at: no branch on it runs on the way into a timed region, so
    /// the branch predictor's history entering a run cannot tell the arms
    /// apart (`timer`, "one path").
    fn get(&mut self, arm: Arm) -> &mut dyn Strategy {
        match self.treatment.as_mut() {
            None => self.baseline.as_mut(),
            Some(t) if arm == Arm::Treatment => t.as_mut(),
            Some(_) => self.baseline.as_mut(),
        }
    }

    /// The database server processes serving the arms (none embedded).
    fn backend_pids(&mut self) -> Result<Vec<u32>> {
        let mut pids: Vec<u32> = self.baseline.backend_pid()?.into_iter().collect();
        if let Some(t) = &mut self.treatment {
            pids.extend(t.backend_pid()?);
        }
        pids.dedup();
        Ok(pids)
    }

    /// Every database server process serving the arms (each concurrent
    /// client's too): the CPU time that is the fork's own.
    fn serving_pids(&mut self) -> Result<Vec<u32>> {
        let mut pids = self.baseline.serving_pids()?;
        if let Some(t) = &mut self.treatment {
            pids.extend(t.serving_pids()?);
        }
        pids.sort_unstable();
        pids.dedup();
        Ok(pids)
    }

    /// Once per fork, after the last run: each instance's teardown.
    fn teardown(&mut self) -> Result<()> {
        self.done = true;
        self.baseline.teardown()?;
        if let Some(t) = &mut self.treatment {
            t.teardown()?;
        }
        Ok(())
    }
}

impl crate::strategy::agreement::ArmPair for Arms {
    fn observe(&mut self, arm: Arm, input: u64) -> Result<crate::strategy::Observation> {
        self.get(arm).observe(input)
    }

    fn shared(&self) -> bool {
        self.treatment.is_none()
    }
}

impl Drop for Arms {
    /// A fork that failed still tears down (best effort): a command's
    /// `teardown` may clean up something outside runner.
    fn drop(&mut self) {
        if !self.done {
            let _ = self.teardown();
        }
    }
}

/// Runs the job read from stdin; any error is reported as a `Failed` message
/// and returned, for `runner worker` to print as its chain.
pub fn main() -> Result<()> {
    super::spawn::die_with_parent()?;
    let mut stdin = std::io::stdin().lock();
    let mut line = String::new();
    stdin
        .read_line(&mut line)
        .doing(|| "reading the job from stdin".into())?;
    let job: JobRequest = serde_json::from_str(&line).doing(|| "parsing the job".into())?;
    if let Some(dir) = &job.temp_dir {
        runner_os::temp::set_root(dir.clone());
    }
    // Whatever a command starts comes back here when its parent dies, so
    // it can be found and killed (`reaper::after_worker`).
    runner_os::reaper::become_subreaper();
    // Each database connection is told to the parent at once, before any
    // SQL runs on it, so a fork stopped mid-query can have it cancelled.
    #[cfg(feature = "postgres")]
    runner_db::pg::connect::announce_backends(|pid| {
        let mut raw = std::io::stdout().lock();
        let _ = send(&mut raw, &WorkerMessage::Backend { pid });
        let _ = raw.flush();
    });
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let result = run_job(&job, &mut stdin, &mut out);
    // Every run cleans up after itself; this catches what a failure cut short.
    if runner_os::reaper::is_subreaper() {
        runner_os::reaper::kill_children(&Default::default(), None);
    }
    if let Err(e) = &result {
        send(
            &mut out,
            &WorkerMessage::Failed {
                message: e.chain(),
                disagreement: e.is_disagreement(),
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
    let tables = [
        super::tables::premade(job, "b"),
        super::tables::premade(job, "t"),
    ];
    let at = |slot: &'static str, name| Setting {
        workload: job.workload,
        db,
        slot,
        name,
        table: tables[usize::from(slot == "t")].as_deref(),
        sql: &job.sql,
    };
    let baseline = strategy::build(&job.baseline, &at("b", &job.baseline_name)).doing(|| {
        format!(
            "setting up baseline strategy `{}` ({})",
            job.baseline_name,
            job.baseline.label()
        )
    })?;
    let mut arms = Arms {
        baseline,
        treatment: None,
        done: false,
    };
    if !job.shared_instance {
        arms.treatment = Some(
            strategy::build(&job.treatment, &at("t", &job.treatment_name)).doing(|| {
                format!(
                    "setting up treatment strategy `{}` ({})",
                    job.treatment_name,
                    job.treatment.label()
                )
            })?,
        );
    }
    Ok(arms)
}

/// After the measured runs, untimed: the arms' private copies, and with
/// `explain = true` their plans for one more input of the job's stream.
fn sql_record(
    job: &JobRequest,
    arms: &mut Arms,
    draws: &mut draws::Draws,
    failures: Vec<runner_folder::FailedRun>,
) -> Result<Option<Box<runner_folder::ForkSql>>> {
    let mut copies = arms.baseline.copies();
    if let Some(t) = &arms.treatment {
        copies.extend(t.copies());
    }
    let plans = if job.sql.explain {
        let input = draws.input();
        let baseline = arms.baseline.explain(input)?;
        let treatment = match &mut arms.treatment {
            Some(t) => t.explain(input)?,
            None => None,
        };
        (baseline.is_some() || treatment.is_some()).then(|| runner_folder::ArmPlans {
            baseline: baseline.unwrap_or_default(),
            treatment,
        })
    } else {
        None
    };
    // Warm-up runs come first in each instance; one shared instance (A/A)
    // ran both arms of every pair.
    let warmup = job.warmup_pairs as usize * if job.shared_instance { 2 } else { 1 };
    let measured = |s: &mut Box<dyn Strategy>| -> Result<Option<runner_folder::ClientTimes>> {
        Ok(s.client_times()?.map(|r| {
            let mut waits = BTreeMap::new();
            for (run, kind) in r.waits {
                if run as usize >= warmup {
                    let name = runner_db::waits::KINDS[usize::from(kind)];
                    *waits.entry(name.to_string()).or_default() += 1;
                }
            }
            runner_folder::ClientTimes {
                clients: r.clients,
                ns: r
                    .ns
                    .get(warmup * r.clients as usize..)
                    .unwrap_or_default()
                    .to_vec(),
                waits,
            }
        }))
    };
    let baseline = measured(&mut arms.baseline)?;
    let treatment = match arms.treatment.as_mut() {
        Some(t) => measured(t)?,
        None => None,
    };
    let clients =
        (baseline.is_some() || treatment.is_some()).then_some(runner_folder::ArmClients {
            baseline,
            treatment,
        });
    Ok(
        (!copies.is_empty() || plans.is_some() || !failures.is_empty() || clients.is_some()).then(
            || {
                Box::new(runner_folder::ForkSql {
                    copies,
                    plans,
                    failures,
                    clients,
                })
            },
        ),
    )
}

/// Whether the two arms' fingerprints must match run for run: both compute
/// the preview, or both run SQL with as many clients (whose rows the check
/// found equal) and neither may fail (a run allowed to fail may fail in one arm only). A
/// command's fingerprint is only its exit status, already checked per run.
fn same_fingerprints(a: &StrategyKind, b: &StrategyKind) -> bool {
    let never_fails = |k: &StrategyKind| matches!(k, StrategyKind::Sql(s) if !s.allow_failure);
    // A run of N clients folds N clients' rows: comparable only with N.
    let clients = |k: &StrategyKind| match k {
        StrategyKind::Sql(s) => s.clients,
        _ => 0,
    };
    (a.computes_preview() && b.computes_preview())
        || (never_fails(a) && never_fails(b) && clients(a) == clients(b))
}

/// Blocks until the parent's go (a line on stdin); the parent holds it back
/// until nothing else of runner's runs (docs/guide/how-a-run-works.md).
fn wait_for_go(stdin: &mut impl BufRead) -> Result<()> {
    let mut line = String::new();
    stdin
        .read_line(&mut line)
        .doing(|| "waiting for the parent's go".into())?;
    if line.trim_end() != super::protocol::GO {
        fail!("the parent ended the fork before its timing started");
    }
    Ok(())
}

fn run_job(job: &JobRequest, stdin: &mut impl BufRead, out: &mut impl Write) -> Result<()> {
    let fault = Fault::from_env(job.cell, job.fork)?;
    if let Some(f) = &fault {
        f.at(None, out)?;
    }
    // Pinned before anything else starts: threads, connections and a
    // command's children inherit the worker's CPU.
    let (cpus, worker_pinned) = apply::pin_worker(job.placement, job.claim.as_ref())?;
    // The heap offset is taken before the strategies allocate anything and
    // held until the fork ends, so everything they allocate sits behind it.
    let held = job.layout.map(runner_os::memory_layout::Held::start);
    let mut fork = set_up_and_check(job, fault, cpus.backend, out)?;
    wait_for_go(stdin)?;
    if job.trial {
        return trial_job::run(job, fork.arms, &mut fork.draws, out, fork.setup_ns);
    }
    let mut timer = timer::Timer::new(job, fork.arms, fault);
    let pinned = (cpus, worker_pinned);
    let timed = time_fork(job, &mut timer, &mut fork.draws, out, fork.backends, pinned)?;
    let usage = send_records(out, timed.records)?;
    let mismatch = recheck_mismatch(job, &mut timer);
    let failures = std::mem::take(&mut timer.failures);
    let sql = sql_record(job, &mut timer.arms, &mut fork.draws, failures)?;
    let final_hash = timer.arms.content_hash()?;
    timer.arms.teardown()?;
    let summary = ForkSummary {
        cell: job.cell,
        fork: job.fork,
        checksum_baseline: timer.sum_b.hex(),
        checksum_treatment: timer.sum_t.hex(),
        seeded_hash: fork.seeded_hash,
        final_hash,
        timed_ns: timed.timed_ns,
        resource_usage: usage || job.baseline.measures_usage() || job.treatment.measures_usage(),
        placement: Some(Box::new(timed.placement)),
        left_processes: strategy::command::left_behind(),
        commands_contained: [&job.baseline, &job.treatment]
            .iter()
            .any(|k| matches!(k, StrategyKind::Command(_))),
        layout: held.as_ref().map(|h| Box::new(h.record(timed.stack_page))),
        sql,
        counted: job.count.as_ref().map(|c| runner_folder::ForkCounted {
            tool: crate::strategy::CountWith::TOOL.into(),
            cache_sim: c.with.cache_sim,
        }),
    };
    refuse_differing_results(job, &summary, mismatch.as_deref())?;
    send(out, &WorkerMessage::Done(summary))?;
    Ok(())
}

/// A fork as its set-up leaves it, checked and waiting for the go: what
/// the timing and the summary after the go need of the set-up, which the
/// worker does before the go so that none of it runs inside the parent's
/// window.
struct SetUp {
    arms: Arms,
    draws: draws::Draws,
    /// The arms' database server processes, and how pinning them went.
    backends: Backends,
    setup_ns: u64,
    /// The stored model's hash at the check, for the summary to compare
    /// with the hash after the last run.
    seeded_hash: Option<String>,
}

/// The arms' database server processes, kept from the set-up to the end
/// of the timing: placement's record samples their CPUs around the timed
/// runs and says how pinning them went.
struct Backends {
    pids: Vec<u32>,
    pinned: Vec<runner_os::placement::Backend>,
}

/// Everything before the go that the parent waits for: the arms set up
/// (their backends pinned where the placement puts them), checked on the
/// fork's first input, and the check reported, so that a fork whose arms
/// cannot run or disagree fails before anything is timed.
fn set_up_and_check(
    job: &JobRequest,
    fault: Option<Fault>,
    backend_cpu: Option<u32>,
    out: &mut impl Write,
) -> Result<SetUp> {
    let set_up = std::time::Instant::now();
    let mut arms = build_arms(job)?;
    let pids = arms.backend_pids()?;
    let pinned = apply::pin_backends(&pids, backend_cpu);
    if fault.is_some_and(|f| f.kind == super::fault::Kind::WrongResult) {
        arms = arms.skewed();
    }
    let mut draws = draws::Draws::new(job.seed);
    let first = draws.input();
    let report = agreement::check(job, &mut arms, first)?;
    agreement::check_more(job, &mut arms, first)?;
    let setup_ns = set_up.elapsed().as_nanos() as u64;
    let seeded_hash = report.seeded_hash.clone();
    send(out, &WorkerMessage::Checked(report))?;
    out.flush()?;
    Ok(SetUp {
        arms,
        draws,
        backends: Backends { pids, pinned },
        setup_ns,
        seeded_hash,
    })
}

/// What the fork's timing leaves for its summary, carried as one value
/// because the summary is built only after the untimed work that follows
/// (the records' sending, the re-check of a mismatch, teardown).
struct Timed {
    /// Held until the timing is over, then sent.
    records: Vec<runner_core::record::PairRecord>,
    /// Where the timed runs' frame fell in its page (the layout's record).
    stack_page: u32,
    timed_ns: u64,
    placement: ForkPlacement,
}

/// The go to the end of the last timed run, with placement's record of
/// it in the same step: the record's CPU samples and tick counts must
/// bracket the timed runs and nothing else.
fn time_fork(
    job: &JobRequest,
    timer: &mut timer::Timer,
    draws: &mut draws::Draws,
    out: &mut impl Write,
    backends: Backends,
    (cpus, worker_pinned): (runner_os::placement::Cpus, bool),
) -> Result<Timed> {
    // The backends' CPU time from here to the end of the timed runs falls
    // inside the parent's sentinel window (go to the first record).
    let serving = timer.arms.serving_pids()?;
    let backend_ticks_at_go = apply::ticks(&serving);
    let mut backend_cpus = BTreeMap::new();
    let sample = |into: &mut BTreeMap<u32, u32>| {
        for cpu in backends.pids.iter().filter_map(|&p| pin::process_cpu(p)) {
            *into.entry(cpu).or_default() += 1;
        }
    };
    sample(&mut backend_cpus);
    let (records, stack_page) = time_pairs(job, timer, draws, out)?;
    let timed_ns = timer.t0.map_or(0, |t| t.elapsed().as_nanos() as u64);
    sample(&mut backend_cpus);
    let embedded = matches!(
        job.database,
        Some(DbTarget::Sqlite | DbTarget::SqliteFile { .. })
    ) && (job.baseline.needs_database() || job.treatment.needs_database());
    let placement = ForkPlacement {
        placement: job.placement,
        planned: cpus,
        worker_pinned,
        contention: job.claim.as_ref().and_then(|c| c.note.clone()),
        database: apply::database_side(&backends.pids, backends.pinned, embedded),
        cpus: std::mem::take(&mut timer.cpus),
        backend_cpus,
        backend_ticks: apply::ticks(&serving).saturating_sub(backend_ticks_at_go),
    };
    Ok(Timed {
        records,
        stack_page,
        timed_ns,
        placement,
    })
}

/// The warm-up, measured and counted pairs, with the timed runs' frames
/// `stack_offset_bytes` deeper, since that offset is the layout's
/// treatment of the stack; returns the records and where the frame fell.
fn time_pairs(
    job: &JobRequest,
    timer: &mut timer::Timer,
    draws: &mut draws::Draws,
    out: &mut impl Write,
) -> Result<(Vec<runner_core::record::PairRecord>, u32)> {
    // The fork's records stay here until its last timed run: the parent
    // does no work while a worker measures (docs/guide/how-a-run-works.md), and no run
    // is preceded by a flush the others did not have. A fork is small
    // (a few thousand records).
    let counted = job.count.as_ref().map_or(0, |c| c.pairs);
    let mut records = Vec::with_capacity((job.warmup_pairs + job.pairs + counted) as usize);
    // Counted pairs after the timed ones, drawn from the same stream, so
    // the timed pairs' inputs and order are those of a run that counts
    // nothing; without time, the warm-up and measured pairs are counted.
    let counter = job.count.as_ref().map(|c| &c.with);
    let timed_with = counter.filter(|_| job.count.as_ref().is_some_and(|c| !c.timed));
    let mut measure = || -> Result<u32> {
        let page = runner_os::memory_layout::stack_page_offset();
        for (phase, n, with) in [
            (Phase::Warmup, job.warmup_pairs, timed_with),
            (Phase::Measure, job.pairs, timed_with),
            (Phase::Count, counted, counter),
        ] {
            if phase == Phase::Count && n == 0 {
                continue;
            }
            records.extend(match job.ordering {
                Ordering::PairedRandom => timer.paired_random(phase, n, draws, out, with)?,
                Ordering::Blocked => timer.blocked(phase, n, draws, out, with)?,
            });
        }
        Ok(page)
    };
    // The timed runs' frames start `stack_offset_bytes` deeper.
    let stack_page = match job.layout {
        Some(l) => runner_os::memory_layout::with_stack_offset(l.stack_offset_bytes, measure)?,
        None => measure()?,
    };
    Ok((records, stack_page))
}

/// The records go out only now that the timing is over, in one burst, so
/// that no timed run was preceded by a write the others did not have;
/// whether any run measured its resource usage comes back for the summary.
fn send_records(
    out: &mut impl Write,
    records: Vec<runner_core::record::PairRecord>,
) -> Result<bool> {
    let usage = records.iter().any(|r| r.usage.is_some());
    for r in records {
        send(out, &WorkerMessage::Pair(r))?;
    }
    out.flush()?;
    Ok(usage)
}

/// Arms whose results differed on some input: the rows that differ,
/// from the agreement check run again on that input before teardown,
/// since a checksum alone does not say what to look at.
fn recheck_mismatch(job: &JobRequest, timer: &mut timer::Timer) -> Option<String> {
    timer
        .first_mismatch
        .filter(|_| same_fingerprints(&job.baseline, &job.treatment))
        .map(|(pair, input)| {
            let rows = match agreement::check(job, &mut timer.arms, input) {
                Err(e) => format!("; run again on that input: {}", e.chain()),
                Ok(_) => "; run again on that input they agreed, so a result depends on more than the input (state, time, randomness)".to_string(),
            };
            format!("first at pair {pair} (input {input}){rows}")
        })
}

/// Checked last, on the summary's own checksums and after the re-check,
/// so that a disagreement is reported with the rows that differ
/// (`mismatch`) rather than as a bare difference of checksums.
fn refuse_differing_results(
    job: &JobRequest,
    summary: &ForkSummary,
    mismatch: Option<&str>,
) -> Result<()> {
    if summary.checksum_baseline != summary.checksum_treatment
        && same_fingerprints(&job.baseline, &job.treatment)
    {
        fail!(
            "the arms' results differ although both saw the same inputs (per-arm checksums {} vs {}): {}",
            summary.checksum_baseline,
            summary.checksum_treatment,
            mismatch.unwrap_or("no single pair differed")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::wait_for_go;

    #[test]
    fn a_worker_times_nothing_without_the_parents_go() {
        assert!(wait_for_go(&mut "go\n".as_bytes()).is_ok());
        // The parent closed stdin (it stopped the run) or sent something else.
        for said in ["", "stop\n", "gone"] {
            let e = wait_for_go(&mut said.as_bytes()).unwrap_err();
            assert!(
                e.to_string().contains("before its timing started"),
                "{said:?}: {e}"
            );
        }
    }
}
