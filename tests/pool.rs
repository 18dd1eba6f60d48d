//! The analysis runs on one bounded pool: with `RUNNER_THREADS=2`, no more
//! than two threads are added to the process while it reads and analyses
//! a real run (the study's A/A run, 8 cells of 10 forks, frozen under
//! tests/fixtures/folders), however its cells, forks and bootstraps nest.
//! The test reads /proc/self/task while the analysis runs (this file holds
//! one test, so no other test's threads come and go meanwhile).

// Helpers shared by this crate's modules are `pub` for them; nothing
// outside the test binary can reach them anyway.
#![allow(unreachable_pub)]

mod common;
use common::proc_tasks;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const THREADS: usize = 2;

/// (task id, name) of every thread of this process.
fn tasks() -> Vec<(u32, String)> {
    std::fs::read_dir(proc_tasks())
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let id: u32 = e.file_name().to_str()?.parse().ok()?;
            let name = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
            Some((id, name.trim().to_string()))
        })
        .collect()
}

#[test]
#[cfg_attr(
    not(runner_proc_tasks),
    ignore = "SKIPPED: /proc/self/task not readable"
)]
fn an_analysis_adds_at_most_runner_threads_threads() {
    // Before anything builds the pool: runner reads its settings once,
    // and sizes the pool from them, as every command does first thing.
    std::env::set_var("RUNNER_THREADS", THREADS.to_string());
    runner_stats::pool::configure(runner_core::settings::get().threads);
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut seen: BTreeSet<(u32, String)> = BTreeSet::new();
            let mut most = 0;
            let mut samples = 0u64;
            while !done.load(Ordering::Relaxed) {
                let now = tasks();
                most = most.max(now.len());
                seen.extend(now);
                samples += 1;
                std::thread::yield_now();
            }
            (most, seen, samples)
        })
    };
    // The sampler is running: what is alive now is the baseline.
    let before: BTreeSet<u32> = loop {
        let now = tasks();
        if now.len() >= 2 {
            break now.into_iter().map(|(id, _)| id).collect();
        }
    };
    // Reading checks the forks' rows on the pool too.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/folders/aa");
    let (info, pairs) = runner_report::read_folder(&dir).expect("the frozen aa run reads");
    let analysis = runner_analysis::run::analyse(&info, &pairs).expect("the analysis runs");
    done.store(true, Ordering::Relaxed);
    let (most, seen, samples) = sampler.join().unwrap();

    assert!(analysis.cells.len() > 1, "a run of several cells");
    assert!(samples > 10, "the sampler looked only {samples} times");
    // A thread is one task id; a new thread may be seen twice, under its
    // creator's name and then under its own.
    let added: Vec<&(u32, String)> = seen.iter().filter(|(id, _)| !before.contains(id)).collect();
    let ids: BTreeSet<u32> = added.iter().map(|(id, _)| *id).collect();
    assert!(
        ids.len() <= THREADS,
        "the analysis started {} threads with RUNNER_THREADS={THREADS}: {added:?}",
        ids.len()
    );
    assert!(
        most <= before.len() + THREADS,
        "{most} threads alive at once, {} before the analysis",
        before.len()
    );
    // Not vacuous: the pool's workers were seen at work.
    assert!(
        added
            .iter()
            .any(|(_, name)| name.starts_with(runner_stats::pool::THREAD_NAME)),
        "no pool thread was seen: {added:?}"
    );
}
