//! How the `sql` arms ran, for the Setup: the protocol of each arm when
//! one prepares its statements, and each arm's failures when it may fail
//! (`allow_failure = true`). A line appears only when an arm uses the
//! feature, so other reports are unchanged.

use runner_folder::RunInfo;
use runner_spec::{Protocol, StrategyKind};
use std::collections::BTreeMap;

/// `Protocol: `a` simple (...); `b` prepared (...).`, when an arm
/// prepares its statements (a swept `protocol` counts by its cells).
pub(super) fn protocol_line(info: &RunInfo) -> Option<String> {
    let exp = &info.spec().experiment;
    let mut per_arm: BTreeMap<&str, Vec<Protocol>> = BTreeMap::new();
    for cell in info.cells() {
        let (b, t) = cell.arms(&exp.design);
        for name in [b, t] {
            if let StrategyKind::Sql(s) = runner_plan::bind(exp, cell, name) {
                let seen = per_arm.entry(name).or_default();
                if !seen.contains(&s.protocol) {
                    seen.push(s.protocol);
                }
            }
        }
    }
    if per_arm.values().flatten().all(Protocol::is_simple) {
        return None;
    }
    let said: Vec<String> = per_arm
        .iter()
        .map(|(name, ps)| {
            let ps: Vec<&str> = ps.iter().map(|p| p.label()).collect();
            format!("`{name}` {}", ps.join(" or "))
        })
        .collect();
    Some(format!(
        "Protocol: {}. Simple: a run's statements go as text, parsed and planned every run; prepared: each statement is prepared once per fork, untimed, and a run EXECUTEs it with the input as its bigint parameter (the plan cache decides between custom and generic plans).",
        said.join("; ")
    ))
}

/// Every measured client time and the sampled wait events, per arm with
/// `clients > 1` and per number of clients (a swept `clients` gives an arm
/// one entry per level). An A/A instance's times are all under the
/// baseline.
type ArmClientTimes = (Vec<u64>, BTreeMap<String, u64>);

fn client_times(info: &RunInfo) -> BTreeMap<(u32, String), ArmClientTimes> {
    let exp = &info.spec().experiment;
    let mut out: BTreeMap<(u32, String), ArmClientTimes> = BTreeMap::new();
    for f in info.forks() {
        let Some(c) = f.summary.sql.as_ref().and_then(|s| s.clients.as_ref()) else {
            continue;
        };
        let Some(cell) = info.cells().iter().find(|x| x.cell == f.summary.cell) else {
            continue;
        };
        let (b, t) = cell.arms(&exp.design);
        for (name, times) in [(b, &c.baseline), (t, &c.treatment)] {
            if let Some(times) = times {
                let e = out.entry((times.clients, name.to_owned())).or_default();
                e.0.extend(&times.ns);
                for (k, n) in &times.waits {
                    *e.1.entry(k.clone()).or_default() += n;
                }
            }
        }
    }
    out
}

/// `Concurrent clients: `a` ran as 4 concurrent clients ...; client
/// latency p50 ..., p90 ..., p99 ...` per arm with `clients > 1`.
pub(super) fn client_lines(info: &RunInfo) -> Vec<String> {
    use crate::numbers::duration;
    let mut out = Vec::new();
    for ((n, name), (mut ns, waits)) in client_times(info) {
        if ns.is_empty() {
            continue;
        }
        ns.sort_unstable();
        let q = |p: f64| duration(runner_stats::quantile::nearest_rank(&ns, p).unwrap_or(f64::NAN));
        out.push(format!(
            "Concurrent clients: `{name}` ran as {n} concurrent clients, each on a connection of its own, released together every run; a run's time is from the release until the last client ended. Client latency (a client's release to its last row) over {} client runs: p50 {}, p90 {}, p99 {}.{}",
            ns.len(),
            q(0.5),
            q(0.9),
            q(0.99),
            wait_sentence(&waits)
        ));
    }
    out
}

/// ` Sampled every 1 ms from pg_stat_activity (40 samples of an active
/// client): waiting for a lock 35 %; LWLock 5 %; no wait 60 %.`
fn wait_sentence(waits: &BTreeMap<String, u64>) -> String {
    use crate::numbers::percent;
    let total: u64 = waits.values().sum();
    if total == 0 {
        return " No active client was sampled in pg_stat_activity (runs shorter than its 1 ms interval).".into();
    }
    let share = |n: u64| percent(n as f64 / total as f64);
    let lock = waits.get("Lock").copied().unwrap_or(0);
    let mut parts = vec![format!("waiting for a lock {}", share(lock))];
    for (k, n) in waits {
        if k != "Lock" && k != "CPU" {
            parts.push(format!("{k} {}", share(*n)));
        }
    }
    parts.push(format!(
        "no wait {}",
        share(waits.get("CPU").copied().unwrap_or(0))
    ));
    format!(
        " Client time sampled every 1 ms from pg_stat_activity ({total} samples of an active client): {}.",
        parts.join("; ")
    )
}

/// Measured runs and failures of one arm, over every fork it ran in.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Failures {
    pub runs: u32,
    pub failed: u32,
    /// Code -> how many measured runs failed with it.
    pub codes: BTreeMap<String, u32>,
}

/// Per arm name, its measured runs and failures. An A/A arm is both sides
/// of each pair, so it ran twice per pair.
pub(super) fn failures(info: &RunInfo) -> BTreeMap<String, Failures> {
    use runner_core::record::{Arm, Phase};
    let exp = &info.spec().experiment;
    let pairs = exp.design.pairs.get();
    let mut out: BTreeMap<String, Failures> = BTreeMap::new();
    for f in info.forks() {
        let Some(cell) = info.cells().iter().find(|c| c.cell == f.summary.cell) else {
            continue;
        };
        let (b, t) = cell.arms(&exp.design);
        for name in [b, t] {
            out.entry(name.to_owned()).or_default().runs += pairs;
        }
        let measured = f.summary.sql.iter().flat_map(|s| &s.failures);
        for r in measured.filter(|r| r.phase == Phase::Measure) {
            let name = if r.arm == Arm::Baseline { b } else { t };
            let e = out.entry(name.to_owned()).or_default();
            e.failed += 1;
            *e.codes.entry(r.code.clone()).or_default() += 1;
        }
    }
    out
}

/// The two-sided 95 % Clopper-Pearson interval of `k` of `n` (each side
/// a one-sided 97.5 % bound).
pub(super) fn interval(k: u32, n: u32) -> Option<(f64, f64)> {
    use runner_stats::gate::{lower_bound, upper_bound};
    Some((lower_bound(k, n, 0.975)?, upper_bound(k, n, 0.975)?))
}

/// `` `name` failed 12 of 400 measured runs (3 %, 95 % CI 1.6 % to 5.2 %,
/// Clopper-Pearson): SQLSTATE 22012 (12) `` for each arm that allows
/// failures or has some.
pub(super) fn failure_lines(info: &RunInfo) -> Vec<String> {
    use crate::numbers::percent;
    let exp = &info.spec().experiment;
    let allows = |name: &str| matches!(exp.strategies.get(name), Some(StrategyKind::Sql(s)) if s.allow_failure);
    let mut out = Vec::new();
    for (name, f) in failures(info) {
        if !allows(&name) && f.failed == 0 {
            continue;
        }
        let Some((lo, hi)) = interval(f.failed, f.runs) else {
            continue;
        };
        let codes: Vec<String> = f
            .codes
            .iter()
            .map(|(c, n)| format!("{} ({n})", runner_db::code_label(c)))
            .collect();
        let kinds = if codes.is_empty() {
            String::new()
        } else {
            format!(": {}", codes.join(", "))
        };
        out.push(format!(
            "Failures of `{name}` (allow_failure = true; a failed run is timed to its error and rolled back): {} of {} measured runs ({}, 95 % CI {} to {}, Clopper-Pearson){kinds}.",
            f.failed,
            f.runs,
            percent(f64::from(f.failed) / f64::from(f.runs)),
            percent(lo),
            percent(hi),
        ));
    }
    out
}

/// The Finding's warning for each arm that failed measured runs (above
/// 0): its failure rate with its interval and codes, and what that does to
/// the figures beside it.
pub(super) fn failure_warnings(info: &RunInfo) -> Vec<super::comparison::Warning> {
    use crate::numbers::percent;
    failures(info)
        .into_iter()
        .filter(|(_, f)| f.failed > 0)
        .filter_map(|(name, f)| {
            let (lo, hi) = interval(f.failed, f.runs)?;
            let codes: Vec<String> = f
                .codes
                .iter()
                .map(|(c, n)| format!("{} ({n})", runner_db::code_label(c)))
                .collect();
            let all = f.failed == f.runs;
            Some(super::comparison::Warning {
                kind: "failures",
                text: format!(
                    "`{name}` failed {} of {} measured runs ({}, 95 % CI {} to {}){}: a failed run is timed to its error and rolled back, so {}.",
                    f.failed,
                    f.runs,
                    percent(f64::from(f.failed) / f64::from(f.runs)),
                    percent(lo),
                    percent(hi),
                    if codes.is_empty() {
                        String::new()
                    } else {
                        format!(", {}", codes.join(", "))
                    },
                    if all {
                        format!("the figures above time `{name}`'s failures, not its work")
                    } else {
                        format!("the figures above mix `{name}`'s completed runs with its failures")
                    }
                ),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::interval;

    #[test]
    fn the_interval_holds_the_share_and_closes_at_the_ends() {
        let (lo, hi) = interval(12, 400).unwrap();
        assert!(lo < 0.03 && 0.03 < hi, "{lo} {hi}");
        // Exact Clopper-Pearson 95 % for 12/400: [0.01561, 0.05181].
        assert!((lo - 0.01561).abs() < 5e-4 && (hi - 0.05181).abs() < 5e-4);
        let (lo, hi) = interval(0, 100).unwrap();
        assert_eq!(lo, 0.0);
        // The rule of three, nearly: 1 - 0.025^(1/100).
        assert!((hi - 0.03622).abs() < 5e-4, "{hi}");
        assert_eq!(interval(100, 100).unwrap().1, 1.0);
        assert_eq!(interval(0, 0), None);
    }
}
