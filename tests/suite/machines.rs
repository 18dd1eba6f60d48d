//! The machines level, on several machines simulated on one.

use crate::common;
use common::shards::*;
use common::*;

/// Several machines simulated on one: the shards run as separate
/// processes with different recorded host names (RUNNER_HOSTNAME), and the
/// "slow" one really is slower: the command's work is read from WORK in its
/// environment, as a slower machine would take longer for the same work.
/// The treatment does twice the baseline's work, so D itself differs by
/// machine, and the machines level must say so.
#[test]
fn the_machines_level_finds_the_slower_machine() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let spec = write_spec(
        dir,
        "machines",
        r#"
name = "machines"
seed = 3
[strategies.base]
kind = "command"
shell = "i=0; while [ $i -lt ${WORK:-10} ]; do i=$((i+1)); done"
[strategies.double]
kind = "command"
shell = "i=0; n=$((2 * ${WORK:-10})); while [ $i -lt $n ]; do i=$((i+1)); done"
[design]
baseline = "base"
treatment = "double"
forks = 4
warmup_pairs = 2
pairs = 15
[analysis]
resamples = 200
"#,
    );
    let fast = shard(
        dir,
        &spec,
        "1/2",
        "fast",
        &[("RUNNER_HOSTNAME", "fast"), ("WORK", "10")],
        &[],
    );
    let slow = shard(
        dir,
        &spec,
        "2/2",
        "slow",
        &[("RUNNER_HOSTNAME", "slow"), ("WORK", "3000")],
        &[],
    );
    let o = merge(dir, "m", &[&fast, &slow], &[]);
    assert!(o.status.success(), "{}", err_of(&o));
    let m = dir.join("m");
    let a = read_json(&m.join("analysis.json"));
    let hosts = a["machines"]["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 2);
    assert_eq!(
        (hosts[0]["host"].as_str(), hosts[0]["forks"].as_u64()),
        (Some("fast"), Some(2))
    );
    assert_eq!(
        (hosts[1]["host"].as_str(), hosts[1]["forks"].as_u64()),
        (Some("slow"), Some(2))
    );
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    assert!(
        f(&hosts[1]["baseline_min_ns"]) > f(&hosts[0]["baseline_max_ns"]),
        "the slow host's baseline medians lie above the fast one's: {hosts:?}"
    );
    let cell = &a["cells"][0]["machines"];
    let per_host = cell["hosts"].as_array().unwrap();
    assert!(
        f(&per_host[1]["median_ns"]) > f(&per_host[0]["median_ns"]),
        "{cell}"
    );
    let v = &cell["variance"];
    assert!(
        f(&v["median_between_machines_ns2"]) > f(&v["median_between_forks_ns2"]),
        "{v}"
    );
    assert_eq!(v["narrows_most"], "machines", "{v}");
    assert!(
        f(&v["twice_machines_half_width_ns"]) < f(&v["twice_forks_half_width_ns"]),
        "{v}"
    );
    let ci = cell["hierarchical"]["ci_ns"].as_array().unwrap();
    assert!(
        f(&ci[0]) <= f(&per_host[1]["median_ns"]) && f(&ci[1]) >= f(&per_host[0]["median_ns"]),
        "{cell}"
    );

    let run = read_json(&m.join("run.json"));
    assert!(run["seeds"]["cells"][0]["machines"].is_u64());
    let machines = run["merged"]["machines"].as_array().unwrap();
    assert!(machines.iter().all(|x| x["host_override"] == true));
    let report = std::fs::read_to_string(m.join("report.md")).unwrap();
    for needle in [
        "## Machines",
        "| `fast` (RUNNER_HOSTNAME) |",
        "| `slow` (RUNNER_HOSTNAME) |",
        "more machines |",
        "one run over 2 machines",
        "the spread between machines is the larger part of the variance: more machines narrow the interval most",
    ] {
        assert!(report.contains(needle), "{needle:?} not in:\n{report}");
    }
    // The machines level reproduces byte for byte from the folder.
    let before = std::fs::read(m.join("analysis.json")).unwrap();
    let o = run_in(dir, &["report", m.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err_of(&o));
    assert_eq!(std::fs::read(m.join("analysis.json")).unwrap(), before);
}
