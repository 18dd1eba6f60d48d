//! The one pool of threads the analysis runs on.
//!
//! Cells, each cell's forks and each nested bootstrap are parallel, and
//! each nests inside the one before. Had each level its own threads, they
//! would multiply (cells x forks x bootstrap chunks: 41 threads alive on
//! a 2-core machine with 16 configured threads, thousands on a large
//! server). Here every level hands its work to one rayon pool of
//! [`threads`] workers: a nested parallel map runs on the same workers,
//! which steal each other's work, so at most that many threads compute at
//! once, while the thread that asked waits.
//!
//! Results never depend on the thread count: every map returns its results
//! in item order, and every random stream is seeded per item (per bootstrap
//! chunk, see `resample::chunk_streams`), never per thread.

use rayon::prelude::*;
use std::sync::OnceLock;

/// Prefix of the pool's thread names (visible in /proc/PID/task/*/comm and
/// in a debugger), so a reader can tell them from other threads.
pub const THREAD_NAME: &str = "runner-pool";

/// The pool's size as configured: set once, before the pool is first used.
static CONFIGURED: OnceLock<usize> = OnceLock::new();

/// Sets the pool's size (`None`: every core). The caller reads it from its
/// settings (runner: `RUNNER_THREADS`); this crate reads no environment.
/// Only the first call counts, and only before the pool is first used.
pub fn configure(threads: Option<usize>) {
    if let Some(t) = threads.filter(|&t| t > 0) {
        let _ = CONFIGURED.set(t);
    }
}

/// Workers of the pool: as [`configure`]d, else every core
/// `std::thread::available_parallelism` reports.
pub fn threads() -> usize {
    CONFIGURED
        .get()
        .copied()
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn build(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("{THREAD_NAME}-{i}"))
        .build()
        // Only the operating system refusing a thread gets here; there is
        // nothing the analysis could do without one.
        .expect("the operating system refused to start the analysis's threads")
}

fn pool() -> &'static rayon::ThreadPool {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| build(threads()))
}

/// Runs `f` on the pool: every [`map_in_order`] and [`join`] inside it
/// uses the pool's workers. Called from one of them, it runs at once.
pub fn install<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    pool().install(f)
}

/// `f` on a pool of its own of `threads` workers, for a test or a bench
/// that compares thread counts inside one process.
pub fn on_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    build(threads.max(1)).install(f)
}

/// `f` of every item, on the pool; returned in item order, so the result
/// does not depend on the thread count. A panic in `f` is raised here.
pub fn map_in_order<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    if items.len() <= 1 {
        return items.iter().map(f).collect();
    }
    let f = &f;
    install(|| items.par_iter().map(f).collect())
}

/// `a` and `b`, possibly at the same time, on the pool.
pub fn join<A: Send, B: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    install(|| rayon::join(a, b))
}

/// The parts one after the other. When every part is as long (the forks
/// of a run are), the copy is spread over the pool: element i is part
/// i / len's element i % len, and each worker writes (and first touches)
/// its own share of the result.
pub fn concat<T: Clone + Send + Sync>(parts: &[Vec<T>]) -> Vec<T> {
    let len = parts.first().map_or(0, Vec::len);
    if len == 0 || parts.iter().any(|p| p.len() != len) {
        return parts.concat();
    }
    let mut out = Vec::with_capacity(len * parts.len());
    install(|| {
        out.par_extend(
            (0..len * parts.len())
                .into_par_iter()
                .map(|i| parts[i / len][i % len].clone()),
        )
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_join_in_order_whatever_their_lengths() {
        let even: Vec<Vec<u32>> = (0..50)
            .map(|p| (0..7).map(|i| p * 7 + i).collect())
            .collect();
        let joined = on_threads(3, || concat(&even));
        assert_eq!(joined, (0..350).collect::<Vec<u32>>());
        let uneven = vec![vec![1, 2], vec![], vec![3]];
        assert_eq!(on_threads(2, || concat(&uneven)), vec![1, 2, 3]);
        assert!(concat::<u8>(&[]).is_empty());
    }

    #[test]
    fn results_keep_item_order_on_any_pool() {
        let items: Vec<u64> = (0..1000).collect();
        let square = |x: &u64| x * x;
        let one = on_threads(1, || map_in_order(&items, square));
        assert_eq!(one, items.iter().map(square).collect::<Vec<_>>());
        for t in [2, 3, 7] {
            assert_eq!(on_threads(t, || map_in_order(&items, square)), one);
        }
    }

    #[test]
    fn nested_maps_share_the_workers() {
        let outer: Vec<u32> = (0..8).collect();
        let names = on_threads(2, || {
            map_in_order(&outer, |_| {
                let inner: Vec<u32> = (0..64).collect();
                map_in_order(&inner, |_| {
                    std::thread::current().name().unwrap_or("").to_string()
                })
            })
        });
        let distinct: std::collections::BTreeSet<String> = names.into_iter().flatten().collect();
        assert!(distinct.len() <= 2, "{distinct:?}");
        assert!(
            distinct.iter().all(|n| n.starts_with(THREAD_NAME)),
            "{distinct:?}"
        );
    }

    #[test]
    fn both_halves_of_a_join_run() {
        assert_eq!(on_threads(2, || join(|| 1 + 1, || "b")), (2, "b"));
    }
}
