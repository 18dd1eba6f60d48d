//! `runner env`: what a run would record of this machine, and its checks.

/// `runner env`: what a run would record, and the machine checks as
/// OK / WARN / N/A lines; with `json`, the whole record as run.json has it.
pub(crate) fn env(json: bool) -> String {
    let mut env = runner_os::environment::capture(&crate::binary::BINARY);
    // What a run that counts instructions could use here (`design.measure`).
    env.counters = Some(runner_os::environment::counters::detect());
    if json {
        let mut s = serde_json::to_string_pretty(&env).expect("environment serializes");
        s.push('\n');
        return s;
    }
    env_text(&env)
}

/// The human-readable form of [`env()`].
pub(crate) fn env_text(env: &runner_os::environment::Environment) -> String {
    let opt = |v: Option<String>| v.unwrap_or_else(|| "n/a".into());
    let mut out = String::new();
    let mut line = |k: &str, v: String| out.push_str(&format!("{k:<10}  {v}\n"));
    line(
        "system",
        format!("{}, kernel {}, host {}", env.os, env.kernel, env.hostname),
    );
    line(
        "cpu",
        format!(
            "{}, {} logical / {} physical cores, {} MHz",
            env.cpu_model,
            env.logical_cores,
            opt(env.physical_cores.map(|c| c.to_string())),
            opt(env.cpu_frequency_mhz.map(|f| f.to_string())),
        ),
    );
    line(
        "memory",
        format!("{:.1} GiB", env.memory_bytes as f64 / (1u64 << 30) as f64),
    );
    let [one, five, fifteen] = env.load_before;
    line(
        "load",
        format!("{one:.2} {five:.2} {fifteen:.2} (1, 5, 15 min)"),
    );
    line(
        "clock",
        format!(
            "one read {:.1} ns, smallest step {} ns",
            env.clock.read_cost_ns, env.clock.resolution_ns
        ),
    );
    line(
        "build",
        format!(
            "runner {} ({}), {}",
            env.runner_version, env.git_commit, env.rustc
        ),
    );
    if let Some(c) = &env.counters {
        out.push_str("\ninstruction counters (`design.measure = [\"time\", \"instructions\"]`)\n");
        for l in c.lines() {
            out.push_str(&format!("{l}\n"));
        }
    }
    out.push_str("\nmachine checks (`runner env --json` prints every field)\n");
    for c in &env.checks {
        out.push_str(&format!(
            "{:<5} {}: {}\n",
            c.status.tag(),
            c.check.label(),
            c.found
        ));
        if let Some(advice) = &c.advice {
            out.push_str(&format!("      {advice}\n"));
        }
    }
    out
}
