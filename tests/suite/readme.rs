//! The documented figures are the committed reports' and bench output's
//! figures. Two blocks are generated here: the index of the committed
//! report folders in `reports/README.md` (from each folder's `run.json` and
//! `analysis.json` as committed at HEAD, through the same view-model and
//! sentences as the reports), and the bench table in
//! `docs/guide/performance.md` (from `benches/harness.txt`). After a
//! re-measurement is committed, `UPDATE_README=1 cargo test --test suite readme::`
//! rewrites both; without it, a difference fails and prints the expected
//! block. A report folder re-run in the work tree (the README's first
//! command rewrites `reports/aa`) does not change what is compared: the
//! index describes what is committed. Outside the blocks and code, the
//! README and the guide state no measured figure at all.

use crate::common;

use runner_analysis::Analysis;
use runner_folder::RunInfo;
use runner_report::{context, numbers};
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Report folders in the work tree, by name.
fn report_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("reports"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|d| d.join("run.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// `git show HEAD:PATH`, or `None` outside a git checkout (or for a file
/// HEAD does not have).
fn at_head(path: &str) -> Option<Vec<u8>> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(root())
        .args(["show", &format!("HEAD:{path}")])
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

/// The report folders as committed: each folder's files the index reads,
/// copied from HEAD into `into` (a folder HEAD lacks is left out; outside a
/// git checkout, the work tree's folders).
fn committed_dirs(into: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in report_dirs() {
        let name = d.file_name().unwrap().to_string_lossy().into_owned();
        let Some(run) = at_head(&format!("reports/{name}/run.json")) else {
            if at_head("README.md").is_none() {
                out.push(d);
            }
            continue;
        };
        let copy = into.join(&name);
        std::fs::create_dir_all(&copy).unwrap();
        std::fs::write(copy.join("run.json"), run).unwrap();
        for file in ["analysis.json", "report.md", "hyperfine-true.json"] {
            if let Some(bytes) = at_head(&format!("reports/{name}/{file}")) {
                std::fs::write(copy.join(file), bytes).unwrap();
            }
        }
        out.push(copy);
    }
    out
}

fn wall(info: &RunInfo) -> String {
    let parse = |t: &str| chrono::DateTime::parse_from_rfc3339(t).ok();
    let (Some(a), Some(b)) = (
        parse(info.started_at()),
        info.finished_at().as_deref().and_then(parse),
    ) else {
        return "unfinished".into();
    };
    let s = (b - a).num_seconds();
    if s < 60 {
        format!("{s} s")
    } else {
        format!("{} min {} s", s / 60, s % 60)
    }
}

/// One report's entry: where it is, what ran where, and its finding in the
/// report's own sentences.
fn report_entry(dir: &Path) -> String {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let info = RunInfo::read(&dir.join("run.json")).unwrap();
    let json = std::fs::read_to_string(dir.join("analysis.json")).unwrap();
    let analysis: Analysis = serde_json::from_str(&json).unwrap();
    let ctx = context::build(&info, &analysis);
    let env = &info.environment();
    let load = match env.load_after {
        Some(after) => format!("load {} to {}", env.load_before[0], after[0]),
        None => format!("load {}", env.load_before[0]),
    };
    let database = ctx
        .database
        .as_ref()
        .map_or("Ran without a database".to_string(), |d| {
            format!("Ran on {}", d.label)
        });
    let date = info.started_at().get(..10).unwrap_or(info.started_at());
    // A sequential design runs a share of its planned jobs.
    let jobs = match ctx.stop {
        Some(_) => format!("{} of {}", ctx.run.forks_run, ctx.run.jobs),
        None => ctx.run.jobs.to_string(),
    };
    let mut out = format!(
        "**[`reports/{name}`]({name}/report.md)**: {}\n{database}; measured {date}; {jobs} jobs in {} on {}, {} logical cores, {load}.\n`{}`\n\n",
        info.spec().experiment.title,
        wall(&info),
        env.cpu_model,
        env.logical_cores,
        ctx.reproduce.command,
    );
    let exp = &info.spec().experiment;
    if let Some(g) = &ctx.gate {
        out.push_str(&format!(
            "- Gate (`{}`): {}. {}\n- {}\n",
            g.data.max_slowdown, g.view.label, g.view.verdict, g.view.self_check
        ));
    }
    // A sequential design: where its cells stopped is its answer (the
    // stop-validity run has 200 groups, each with its own lines).
    if let Some(s) = &ctx.stop {
        out.push_str(&format!("- Stopping: {}. {}\n", s.rule, s.forks));
        for line in [&s.at_zero, &s.at_delays].into_iter().flatten() {
            out.push_str(&format!("- {line}\n"));
        }
    }
    if ctx.stop.is_none() && (exp.design.is_aa() || ctx.run.has_delays) {
        for g in &ctx.headline.groups {
            let v = &g.view;
            let label = if ctx.headline.groups.len() > 1 {
                format!("{}: ", v.label)
            } else {
                String::new()
            };
            for line in [
                &v.threshold,
                &v.larger_missed,
                &v.false_positives,
                &v.separate_runs,
                &v.two_speeds,
            ]
            .into_iter()
            .flatten()
            {
                out.push_str(&format!("- {label}{line}\n"));
            }
        }
    }
    let delayed: Vec<_> = ctx.cells.iter().filter(|c| c.data.delay_ns > 0).collect();
    if !delayed.is_empty() && info.imported().is_none() && ctx.stop.is_none() {
        let each = |f: &dyn Fn(&runner_analysis::Calibration, u32) -> String| {
            delayed
                .iter()
                .map(|c| {
                    format!(
                        "{} {}",
                        c.view.label,
                        f(&c.data.calibration, c.data.forks_total)
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push_str(&format!(
            "- Calibration: forks whose interval covered the wait actually injected: {}; residual bias (pooled median D − median injected): {}.\n",
            each(&|k, n| format!("{}/{n}", k.forks_covering_spin)),
            each(&|k, _| numbers::duration(k.residual_bias_ns)),
        ));
    }
    // A hyperfine run of the same command beside the report (command-floor).
    let hyperfine = dir.join("hyperfine-true.json");
    if hyperfine.is_file() {
        let h: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&hyperfine).unwrap()).unwrap();
        let r = &h["results"][0];
        let s = |k: &str| numbers::duration(r[k].as_f64().unwrap() * 1e9);
        let zero = ctx.cells.iter().find(|c| c.data.delay_ns == 0);
        out.push_str(&format!(
            "- Beside it on the same machine, `hyperfine -N --warmup 100 --runs 3000 true` (`{name}/hyperfine-true.json`): mean {} ± {} (sd), median {}, range {} to {}; runner's median baseline run at d = 0: {}. hyperfine reports the spread of separate runs; runner the paired difference and the smallest delay every fork saw.\n",
            s("mean"),
            s("stddev"),
            s("median"),
            s("min"),
            s("max"),
            zero.map_or("n/a".into(), |c| numbers::duration(c.data.pooled.baseline_median_ns)),
        ));
    }
    // A run that counts: its instructions' Finding, in the report's words.
    for f in ctx.instructions.iter().flat_map(|i| &i.findings) {
        out.push_str(&format!("- {}\n", f.replace("**", "")));
    }
    if !exp.design.is_aa() {
        for c in &ctx.cells {
            let p = &c.data.pooled;
            out.push_str(&format!(
                "- {}: `{}` − `{}` = {} per run, slower in {} of pairs.\n",
                c.view.label,
                exp.design.treatment,
                exp.design.baseline,
                numbers::estimate(p.median_ns, p.ci_ns[0], p.ci_ns[1]),
                numbers::percent(p.share_slower),
            ));
        }
    }
    out
}

/// The README's validity paragraph: per committed `reports/validity*`
/// folder, the A/A false positives at d = 0 and the forks that covered the
/// injected wait at each delay.
/// The central 95 % range of Binomial(n, p): what chance alone gives.
fn chance_range(n: u32, p: f64) -> (u32, u32) {
    let quantile = |q: f64| {
        (0..=n)
            .find(|&k| runner_stats::gate::binomial_cdf(k, n, p) >= q)
            .unwrap_or(n)
    };
    (quantile(0.025), quantile(0.975))
}

fn validity_block(dirs: &[PathBuf]) -> String {
    let mut out = String::new();
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        // Not a previous report an exec moved aside (`validity.old`).
        if !name.starts_with("validity") || name.contains('.') {
            continue;
        }
        let info = RunInfo::read(&dir.join("run.json")).unwrap();
        let json = std::fs::read_to_string(dir.join("analysis.json")).unwrap();
        let analysis: Analysis = serde_json::from_str(&json).unwrap();
        let ctx = context::build(&info, &analysis);
        let target = ctx
            .database
            .as_ref()
            .map_or_else(|| ctx.spec.baseline_kind.to_string(), |d| d.label.clone());
        let mut parts = Vec::new();
        for c in &analysis.cells {
            let n = c.forks_total;
            let miss = 1.0 - analysis.confidence;
            if c.delay_ns == 0 {
                let (lo, hi) = chance_range(n, miss);
                parts.push(format!(
                    "at d = 0, {} of {n} forks' intervals excluded 0 (chance alone: {lo} to {hi} in 95 % of runs; the ranges below are chance's too)",
                    c.forks_seen + c.forks_reversed,
                ));
            } else {
                let (lo, hi) = chance_range(n, analysis.confidence);
                parts.push(format!(
                    "at {} {}/{n} covered the injected wait ({lo} to {hi}) and {}/{n} saw it",
                    numbers::delay(c.delay_ns as f64),
                    c.calibration.forks_covering_spin,
                    c.forks_seen
                ));
            }
        }
        out.push_str(&format!(
            "- {target} ([`reports/{name}`](reports/{name}/report.md), measured {}): {}.\n",
            info.started_at().get(..10).unwrap_or(info.started_at()),
            parts.join("; ")
        ));
    }
    out
}

/// The README's example of a Finding: the first sentence of a committed
/// plain A/B report's Finding, quoted as the report prints it.
fn finding_block(dirs: &[PathBuf]) -> String {
    const SOURCE: &str = "stop-gzip";
    let dir = dirs
        .iter()
        .find(|d| d.file_name().is_some_and(|n| n == SOURCE))
        .unwrap_or_else(|| panic!("reports/{SOURCE} is committed"));
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let finding = common::section(&report, "Finding")
        .and_then(|text| text.trim_start().lines().next())
        .unwrap_or_else(|| panic!("reports/{SOURCE}/report.md has a Finding"));
    let sentence = finding
        .find(" forks.")
        .map_or(finding, |end| &finding[..end + " forks.".len()]);
    // Indented as a part of the list item, up to the END marker.
    format!("   > {sentence}\n   ")
}

fn reports_block(dirs: &[PathBuf]) -> String {
    dirs.iter()
        .map(|d| report_entry(d))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where the cells of every committed sequential design (`[design.stop]`)
/// stopped: per report, per cell (a report of more than ten cells: per
/// delay), the forks run and why, against `max_forks`.
fn stop_block(dirs: &[PathBuf]) -> String {
    let mut out = String::from(
        "| report | cells | forks run per cell | stopped because | of `max_forks` |\n|---|---|---|---|---|\n",
    );
    for dir in dirs {
        let info = RunInfo::read(&dir.join("run.json")).unwrap();
        let Some(rule) = info.spec().experiment.design.stop else {
            continue;
        };
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let json = std::fs::read_to_string(dir.join("analysis.json")).unwrap();
        let analysis: Analysis = serde_json::from_str(&json).unwrap();
        let ctx = context::build(&info, &analysis);
        let many = ctx.cells.len() > 10;
        let mut groups: Vec<(String, Vec<&runner_analysis::stop::CellStop>)> = Vec::new();
        for c in &ctx.cells {
            let key = if many {
                format!("d = {}", c.view.delay)
            } else {
                c.view.label.clone()
            };
            let stop = c
                .data
                .stop
                .as_ref()
                .expect("a sequential design's cells stop");
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push(stop),
                None => groups.push((key, vec![stop])),
            }
        }
        for (i, (key, stops)) in groups.iter().enumerate() {
            let first = if i == 0 {
                format!(
                    "[`reports/{name}`](../../reports/{name}/report.md), measured {}",
                    info.started_at().get(..10).unwrap_or(info.started_at())
                )
            } else {
                String::new()
            };
            let forks: Vec<u32> = stops.iter().map(|s| s.forks_run).collect();
            let (lo, hi) = (*forks.iter().min().unwrap(), *forks.iter().max().unwrap());
            let run = if lo == hi {
                lo.to_string()
            } else {
                format!(
                    "{lo} to {hi}, mean {:.1}",
                    f64::from(forks.iter().sum::<u32>()) / forks.len() as f64
                )
            };
            let mut reasons: Vec<(String, usize)> = Vec::new();
            for s in stops {
                let r = s.reason.to_string();
                match reasons.iter_mut().find(|(k, _)| *k == r) {
                    Some((_, n)) => *n += 1,
                    None => reasons.push((r, 1)),
                }
            }
            let why: Vec<String> = reasons
                .iter()
                .map(|(r, n)| {
                    if stops.len() == 1 {
                        format!("`{r}`")
                    } else {
                        format!("`{r}` {n}")
                    }
                })
                .collect();
            let cells = if stops.len() == 1 {
                key.clone()
            } else {
                format!("{key} ({} cells)", stops.len())
            };
            out.push_str(&format!(
                "| {first} | {cells} | {run} | {} | {} |\n",
                why.join(", "),
                rule.max_forks
            ));
        }
    }
    out
}

/// The wall time to an answer in docs/guide/performance.md, from
/// `benches/stop-gzip.txt` (`sh experiments/stop-gzip.sh`): each run, and
/// whether every sequential interval holds every fixed run's answer.
fn gzip_block() -> String {
    let text = std::fs::read_to_string(root().join("benches/stop-gzip.txt")).unwrap();
    let mut out = String::from(
        "| design | wall time | forks | mean of fork estimates [stopping interval] | hierarchical median |\n|---|---:|---:|---|---|\n",
    );
    let (mut seq, mut fixed) = (Vec::new(), Vec::new());
    for l in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let design = l.split_whitespace().next().unwrap();
        let word_after = |key: &str| {
            l.split(key)
                .nth(1)
                .unwrap()
                .split_whitespace()
                .next()
                .unwrap()
        };
        let wall: f64 = word_after("wall").parse().unwrap();
        let forks: u32 = word_after("forks").parse().unwrap();
        let rest = l.split("estimates").nth(1).unwrap();
        let v: Vec<f64> = rest
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|t| !t.is_empty())
            .map(|t| t.parse().unwrap())
            .collect();
        let (mean, lo, hi, hier) = (v[0], v[1], v[2], v[3]);
        out.push_str(&format!(
            "| {design} | {wall:.2} s | {forks} | {mean:.1} [{lo:.1}, {hi:.1}] µs | {hier:.1} µs |\n"
        ));
        match design {
            "sequential" => seq.push((wall, lo, hi)),
            _ => fixed.push((wall, mean)),
        }
    }
    let range = |w: Vec<f64>| {
        let (a, b) = w
            .iter()
            .fold((f64::INFINITY, 0f64), |(a, b), x| (a.min(*x), b.max(*x)));
        format!("{a:.2} to {b:.2} s")
    };
    let held = seq
        .iter()
        .all(|&(_, lo, hi)| fixed.iter().all(|&(_, m)| lo <= m && m <= hi));
    out.push_str(&format!(
        "\nThe sequential design answered in {} ({} runs), the fixed 10-fork design in {}; {} sequential stopping interval held every fixed run's mean of fork estimates.\n",
        range(seq.iter().map(|s| s.0).collect()),
        seq.len(),
        range(fixed.iter().map(|f| f.0).collect()),
        if held { "every" } else { "not every" },
    ));
    out
}

/// `runner ab` beside hyperfine in docs/guide/performance.md, from
/// `benches/ab-hyperfine.txt` (`sh benches/ab-hyperfine.sh`): per pair of
/// commands, each run's wall time and answer, runner's wall time as a
/// share of hyperfine's in the same round and, where the output says
/// hyperfine's options (the script's since it runs two pairs), the width
/// of runner's interval against hyperfine's ± band. An output from before
/// (one pair, gzip -1 against -2, hyperfine with `--warmup 3`) reads as it
/// did. Until that output is committed, the block says so.
fn ab_block() -> String {
    ab_block_of(&std::fs::read_to_string(root().join("benches/ab-hyperfine.txt")).unwrap())
}

fn ab_block_of(text: &str) -> String {
    let header = text
        .lines()
        .find_map(|l| l.strip_prefix("# sh benches/ab-hyperfine.sh: "));
    let measured = text
        .lines()
        .any(|l| !l.starts_with('#') && !l.trim().is_empty());
    let Some(header) = header.filter(|_| measured) else {
        return "Not measured yet: the output of `sh benches/ab-hyperfine.sh` on a quiet machine is committed as `benches/ab-hyperfine.txt`.\n".into();
    };
    let (when, options) = match header.split_once("; hyperfine options: ") {
        Some((when, options)) => (when, Some(options)),
        None => (header, None),
    };
    let mut out = format!("Measured {when}.\n\n");
    // Each pair's lines, after its `# pair:` line (none in the old output).
    let mut pairs: Vec<(Option<&str>, Vec<&str>)> = vec![(None, Vec::new())];
    for l in text.lines() {
        if let Some(p) = l.strip_prefix("# pair: ") {
            pairs.push((Some(p), Vec::new()));
        } else if !l.starts_with('#') && !l.trim().is_empty() {
            pairs.last_mut().unwrap().1.push(l);
        }
    }
    pairs.retain(|(_, lines)| !lines.is_empty());
    for (pair, lines) in pairs {
        let treatment = pair
            .and_then(|p| p.split(" vs ").nth(1))
            .and_then(|t| t.split(" on ").next())
            .unwrap_or("gzip -2 -c");
        if let Some(p) = pair {
            let (commands, bytes) = p.split_once(" on ").unwrap();
            let (b, t) = commands.split_once(" vs ").unwrap();
            out.push_str(&format!("`{b}` against `{t}` on {bytes}:\n\n"));
        }
        out.push_str(&ab_table(&lines, treatment, options));
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

/// The script's output with two pairs reads as one table per pair, with
/// runner's interval against hyperfine's band.
#[test]
fn the_hyperfine_table_reads_each_pair_of_the_scripts_output() {
    let text = "# sh benches/ab-hyperfine.sh: 2027-01-01T00:00:00Z on vm, 2 CPUs, load 0.10 before; runner 0.1.0; hyperfine 1.20.0; hyperfine options: -N
# pair: gzip -1 -c vs gzip -2 -c on 938895 bytes
runner    wall   2.00 s  forks  3  runs  120  gzip -2 slower, ratio 1.046 [1.011, 1.081]
hyperfine wall   5.00 s  forks  1  runs  500  gzip -2 ratio 1.052 +- 0.070
# pair: gzip -1 -c vs gzip -6 -c on 6200000 bytes
runner    wall   8.00 s  forks  3  runs   30  forecast   6.00 s  then   7.50 s  pairs 0+5  gzip -6 slower, ratio 3.660 [3.620, 3.700]
hyperfine wall   6.00 s  forks  1  runs   40  gzip -6 ratio 3.550 +- 0.320
";
    let block = ab_block_of(text);
    assert!(block.starts_with("Measured 2027-01-01T00:00:00Z on vm, 2 CPUs, load 0.10 before; runner 0.1.0; hyperfine 1.20.0.\n\n`gzip -1 -c` against `gzip -2 -c` on 938895 bytes:\n\n| tool |"), "{block}");
    assert!(block.contains("| `hyperfine -N` | 6.00 s | 1 | 40 | `gzip -6 -c` ratio 3.550 ± 0.320 (ratio of means ± propagated sd) |"), "{block}");
    assert!(block.contains("| `runner ab` | 8.00 s | 3 | 30 | `gzip -6 -c` slower, ratio 3.660 [3.620, 3.700] (paired ratio of medians, 95 % stopping interval) |"), "{block}");
    // 0.070 / 0.140 and 0.080 / 0.640.
    assert!(block.contains("took 0.40x to 0.40x of hyperfine's wall time (1 round(s)), and its ratio's interval was 0.50x to 0.50x as wide as hyperfine's ± band.\n\n`gzip -1 -c` against `gzip -6 -c`"), "{block}");
    assert!(block.ends_with("took 1.33x to 1.33x of hyperfine's wall time (1 round(s)), and its ratio's interval was 0.13x to 0.13x as wide as hyperfine's ± band. Its trial runs chose 0 + 5 warm-up + measured pairs per fork; its forecast for the forks it ran, printed before the first, was 0.80x to 0.80x of the time they and the analysis took after it.\n"), "{block}");
}

/// One pair's table and the round-by-round shares.
fn ab_table(lines: &[&str], treatment: &str, options: Option<&str>) -> String {
    let word: String = treatment
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ");
    let hyperfine = format!("`hyperfine {}`", options.unwrap_or("-N --warmup 3"));
    let mut out = String::from(
        "| tool | wall time | forks | measured runs | answer |\n|---|---:|---:|---:|---|\n",
    );
    let (mut runner, mut theirs) = (Vec::new(), Vec::new());
    let (mut forecasts, mut pairs): (Vec<f64>, Vec<String>) = (Vec::new(), Vec::new());
    for l in lines {
        let tool = l.split_whitespace().next().unwrap();
        let word_after = |key: &str| {
            l.split(key)
                .nth(1)
                .unwrap()
                .split_whitespace()
                .next()
                .unwrap()
        };
        let wall: f64 = word_after("wall").parse().unwrap();
        let answer = l.split(word.as_str()).nth(1).unwrap().trim();
        let numbers: Vec<f64> = answer
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter_map(|t| t.parse().ok())
            .collect();
        let (label, answer) = match tool {
            "runner" => {
                // ratio [lo, hi]: the interval's width.
                runner.push((wall, numbers[2] - numbers[1]));
                if l.contains(" forecast ") {
                    let forecast: f64 = word_after(" forecast ").parse().unwrap();
                    let then: f64 = word_after(" then ").parse().unwrap();
                    forecasts.push(forecast / then);
                    let chosen = word_after(" pairs ").replace('+', " + ");
                    if !pairs.contains(&chosen) {
                        pairs.push(chosen);
                    }
                }
                (
                    "`runner ab`".to_string(),
                    format!(
                        "`{treatment}` {answer} (paired ratio of medians, 95 % stopping interval)"
                    ),
                )
            }
            _ => {
                // ratio +- sd: the band is twice the sd.
                theirs.push((wall, 2.0 * numbers[1]));
                (
                    hyperfine.clone(),
                    format!(
                        "`{treatment}` {} (ratio of means ± propagated sd)",
                        answer.replace("+-", "±")
                    ),
                )
            }
        };
        out.push_str(&format!(
            "| {label} | {wall:.2} s | {} | {} | {answer} |\n",
            word_after("forks"),
            word_after("runs")
        ));
    }
    let range = |v: Vec<f64>| {
        v.iter()
            .fold((f64::INFINITY, 0f64), |(a, b), x| (a.min(*x), b.max(*x)))
    };
    // Per round: (wall time, interval width) of each tool.
    type Run = (f64, f64);
    let rounds: Vec<(&Run, &Run)> = runner.iter().zip(&theirs).collect();
    let (lo, hi) = range(rounds.iter().map(|(r, h)| r.0 / h.0).collect());
    out.push_str(&format!(
        "\nRound by round, `runner ab` took {lo:.2}x to {hi:.2}x of hyperfine's wall time ({} round(s))",
        rounds.len()
    ));
    if options.is_some() {
        let (wlo, whi) = range(rounds.iter().map(|(r, h)| r.1 / h.1).collect());
        out.push_str(&format!(
            ", and its ratio's interval was {wlo:.2}x to {whi:.2}x as wide as hyperfine's ± band"
        ));
    }
    out.push('.');
    if !forecasts.is_empty() {
        let (flo, fhi) = range(forecasts);
        out.push_str(&format!(
            " Its trial runs chose {} warm-up + measured pairs per fork; its forecast for the forks it ran, printed before the first, was {flo:.2}x to {fhi:.2}x of the time they and the analysis took after it.",
            pairs.join(", ")
        ));
    }
    out.push_str("\n\n");
    out
}

/// The number after `key` in `line` (up to the next space or `;`).
fn after<'a>(line: &'a str, key: &str) -> &'a str {
    let rest = &line[line
        .find(key)
        .unwrap_or_else(|| panic!("{key:?} in {line:?}"))
        + key.len()..];
    rest.split([' ', ';']).next().unwrap()
}

/// The cost figures of `benches/scale.sh`, as committed in
/// `benches/scale.txt`: its first line says when and under what load.
fn scale_block() -> String {
    let text = std::fs::read_to_string(root().join("benches/scale.txt")).unwrap();
    let mut lines = text.lines();
    let when = lines
        .next()
        .and_then(|l| l.strip_prefix("# "))
        .expect("benches/scale.txt starts with `# when, CPUs, load average`");
    let goal = |label: &str| {
        if label.contains("x 100") {
            "≤ 120 bytes a pair; ≤ 15x the time of aa x 10"
        } else if label.starts_with("report") {
            "≤ 0.5 s on 2 cores"
        } else {
            ""
        }
    };
    let mut out = format!("Measured {when}.\n\n| figure | goal | measured |\n|---|---|---|\n");
    for l in lines.filter(|l| !l.trim().is_empty()) {
        let (label, rest) = l.split_once(": ").expect("`label: figures`");
        out.push_str(&format!("| {label} | {} | {rest} |\n", goal(label)));
    }
    out
}

fn bench_block() -> String {
    let text = std::fs::read_to_string(root().join("benches/harness.txt")).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    let find = |prefix: &str| -> Vec<&str> {
        lines
            .iter()
            .copied()
            .filter(|l| l.starts_with(prefix))
            .collect()
    };
    let floor = find("floor:");
    let floor = floor.first().expect("a floor: line");
    let delays = find("delay ");
    let analysis = find("analysis:");
    let analysis = analysis.first().expect("an analysis: line");
    let each =
        |f: &dyn Fn(&str) -> String| delays.iter().map(|l| f(l)).collect::<Vec<_>>().join(" / ");
    format!(
        "| figure | goal | measured |\n|---|---|---|\n\
         | harness floor: median of a timed `noop` run (call and wait mechanism at d = 0) vs one `Instant::now()` | ratio ≤ 4 | {} ns vs {} ns (ratio {}) |\n\
         | injected delay accuracy, median(spin_ns) − d at {} µs | ≤ 1 % + 100 ns ({} ns) | {} ns |\n\
         | residual bias of the wait mechanism, median(D) − median(spin_ns), same delays | ≤ one clock read | {} ns |\n\
         | analysis of a 10-fork x 8-delay x 300-pair grid, 2000 resamples | < 1 s | {} s (best of 3) |\n",
        after(floor, "median "),
        after(floor, "clock read "),
        after(floor, "ratio "),
        each(&|l| after(l, "delay ").to_string()),
        each(&|l| after(l, "goal <= ").to_string()),
        each(&|l| after(l, "- d = ").to_string()),
        each(&|l| after(l, "residual bias = ").to_string()),
        after(analysis, "resamples: "),
    )
}

/// The line of `benches/history.txt` as a table row.
fn history_bench_block() -> String {
    let text = std::fs::read_to_string(root().join("benches/history.txt")).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("history:"))
        .expect("a history: line");
    format!(
        "| figure | goal | measured |\n|---|---|---|\n\
         | `runner history` over 50 committed versions of a 2-cell x 4-fork x 50-pair report folder | < 5 s | {} s (best of 3) |\n",
        after(line, "folder: ")
    )
}

/// `text` (of `file`) with the block `name` replaced by `body`; errors
/// when the markers are missing.
fn with_block(text: &str, file: &str, name: &str, body: &str) -> String {
    let begin = format!("<!-- BEGIN generated: {name} -->\n");
    let end = format!("<!-- END generated: {name} -->");
    let a = text
        .find(&begin)
        .unwrap_or_else(|| panic!("{file} lacks {begin:?}"))
        + begin.len();
    let b = text[a..]
        .find(&end)
        .unwrap_or_else(|| panic!("{file} lacks {end:?}"))
        + a;
    format!("{}{body}{}", &text[..a], &text[b..])
}

/// Compares (or, with UPDATE_README=1, rewrites) `file`'s block `name`.
fn check_block(file: &str, name: &str, body: &str) {
    let path = root().join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let expected = with_block(&text, file, name, body);
    if std::env::var("UPDATE_README").as_deref() == Ok("1") {
        std::fs::write(&path, &expected).unwrap();
        return;
    }
    if text != expected {
        let first = text
            .lines()
            .zip(expected.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(text.lines().count().min(expected.lines().count()));
        panic!(
            "{file}'s generated figures differ from the committed reports and benches/harness.txt from line {} on:\n  {file}: {:?}\n  expected: {:?}\nRewrite them with: UPDATE_README=1 cargo test --test suite readme::",
            first + 1,
            text.lines().nth(first).unwrap_or(""),
            expected.lines().nth(first).unwrap_or(""),
        );
    }
}

#[test]
fn the_report_index_and_bench_figures_are_the_committed_ones() {
    let tmp = tempfile::tempdir().unwrap();
    // UPDATE_README=1 writes what the work tree holds (commit the reports
    // first); the check compares with what HEAD holds.
    let dirs = if std::env::var("UPDATE_README").as_deref() == Ok("1") {
        report_dirs()
    } else {
        committed_dirs(tmp.path())
    };
    check_block("reports/README.md", "reports", &reports_block(&dirs));
    check_block("README.md", "validity", &validity_block(&dirs));
    check_block("README.md", "finding", &finding_block(&dirs));
    check_block("docs/guide/performance.md", "bench", &bench_block());
    check_block(
        "docs/guide/performance.md",
        "history-bench",
        &history_bench_block(),
    );
    check_block("docs/guide/performance.md", "scale", &scale_block());
    check_block("docs/guide/performance.md", "stops", &stop_block(&dirs));
    check_block("docs/guide/performance.md", "stop-gzip", &gzip_block());
    check_block("docs/guide/performance.md", "ab-hyperfine", &ab_block());
    check_block(
        "docs/guide/instructions.md",
        "instructions-bench",
        &bench_output_block("benches/instructions.txt"),
    );
    check_block(
        "docs/guide/placement.md",
        "placement-pair",
        &bench_output_block("benches/placement-pair.txt"),
    );
    check_block(
        "docs/guide/performance.md",
        "contention",
        &contention_block(&dirs),
    );
    check_block(
        "docs/guide/statistics.md",
        "validity-forks",
        &validity_forks_block(),
    );
    check_block(
        "docs/guide/statistics.md",
        "stop-design",
        &stop_design_block(),
    );
}

/// A bench script's committed output, as it printed it: its lines say
/// the goal each figure is held to.
fn bench_output_block(file: &str) -> String {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    format!("```text\n{text}```\n")
}

/// The tables of `experiments/validity-forks.py`, before (the bootstrap)
/// and now (Student's t), and what they say side by side: the fewest
/// data sets of 60 an interval held the truth in at each size, and the
/// width at 10 forks of the effect model, now against before.
fn validity_forks_block() -> String {
    let read = |name: &str| std::fs::read_to_string(root().join("experiments").join(name)).unwrap();
    let (before, now) = (
        read("validity-forks-before.txt"),
        read("validity-forks.txt"),
    );
    let rows = |text: &str| -> Vec<Vec<String>> {
        text.lines()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| model"))
            .map(|l| l.split('|').map(|c| c.trim().to_string()).collect())
            .collect()
    };
    let held = |cell: &str| -> u32 { cell.split(' ').next().unwrap().parse().unwrap() };
    let fewest = |text: &str, forks: &str| -> u32 {
        rows(text)
            .iter()
            .filter(|r| r[2] == forks)
            .map(|r| held(&r[3]).min(held(&r[4])))
            .min()
            .unwrap()
    };
    let width = |text: &str| -> f64 {
        let r = rows(text)
            .into_iter()
            .find(|r| r[1] == "effect" && r[2] == "10")
            .unwrap();
        r[5].trim_end_matches(" us").parse().unwrap()
    };
    let table = |text: &str| -> String {
        text.lines()
            .filter(|l| l.starts_with('|'))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    let sizes = ["2", "3", "5", "10", "20"];
    let line = |text: &str| -> String {
        sizes
            .iter()
            .map(|n| format!("{} at {n}", fewest(text, n)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "Before, `{}`:\n\n{}\nNow, `{}`:\n\n{}\nThe fewest data sets of 60 in which D's or the ratio's interval held the truth, over the three models, by forks: {} before; {} now (a 95 % interval holds it in about 57). At 10 forks of the effect model the mean half-width of D's interval is {} µs now against {} µs before ({:.2} times): the level is not bought by widening every interval.\n",
        before.lines().next().unwrap().trim_start_matches("# "),
        table(&before),
        now.lines().next().unwrap().trim_start_matches("# "),
        table(&now),
        line(&before),
        line(&now),
        width(&now),
        width(&before),
        width(&now) / width(&before),
    )
}

/// `experiments/stop-design.txt`: the stopping interval's half-widths and
/// how soon it decides, against Lai's sequence.
fn stop_design_block() -> String {
    let text = std::fs::read_to_string(root().join("experiments/stop-design.txt")).unwrap();
    format!("{}\n", text.trim_end())
}

/// The contention experiment beside pgbench: per level of clients, the
/// committed report's ratio (its Finding row), each arm's p99 client
/// latency and lock-wait share (its Setup lines), and each pgbench round's
/// mean latencies (`benches/contention-pgbench.txt`); then the A/A's false
/// positives and the SQLite ratio.
fn contention_block(dirs: &[PathBuf]) -> String {
    let find = |name: &str| dirs.iter().find(|d| d.ends_with(name));
    let (Some(pg), Some(aa), Some(lite)) = (
        find("contention-postgres"),
        find("contention-aa-postgres"),
        find("contention-sqlite"),
    ) else {
        return "Not measured yet: see `experiments/contention.toml` for the commands.\n".into();
    };
    let report = std::fs::read_to_string(pg.join("report.md")).unwrap();
    let bench = std::fs::read_to_string(root().join("benches/contention-pgbench.txt")).unwrap();
    let setup = regex::Regex::new(
        r"`(\w+)` ran as (\d+) concurrent clients.*?p99 ([0-9.]+ [µm]?s)\..*?waiting for a lock ([0-9.]+ %)",
    )
    .unwrap();
    let mut out = format!(
        "{}\n\n| clients | runner: `indexed` against `plain` | p99 client latency, plain / indexed | waiting for a lock, plain / indexed | pgbench mean latency, indexed / plain: round 1 | round 2 |\n|---:|---|---|---|---|---|\n",
        bench.lines().next().unwrap().trim_start_matches("# ")
    );
    for n in ["1", "4", "8"] {
        let row = report
            .lines()
            .find(|l| l.starts_with(&format!("| clients = {n} |")))
            .unwrap();
        let ratio = row.split(" | ").nth(2).unwrap();
        let arm = |name: &str, i: usize| {
            setup
                .captures_iter(&report)
                .find(|c| &c[1] == name && &c[2] == n)
                .map_or("(one client)".to_string(), |c| c[i].to_string())
        };
        let rounds: Vec<String> = ["1", "2"]
            .iter()
            .map(|r| {
                let ms = |a: &str| -> f64 {
                    bench
                        .lines()
                        .map(|l| l.split_whitespace().collect::<Vec<_>>())
                        .find(|w| w.len() == 5 && w[0] == n && w[1] == *r && w[2] == a)
                        .unwrap()[3]
                        .parse()
                        .unwrap()
                };
                let (i, p) = (ms("indexed"), ms("plain"));
                format!("{i:.3} / {p:.3} ms ({:.3})", i / p)
            })
            .collect();
        out.push_str(&format!(
            "| {n} | {ratio} | {} / {} | {} / {} | {} | {} |\n",
            arm("plain", 3),
            arm("indexed", 3),
            arm("plain", 4),
            arm("indexed", 4),
            rounds[0],
            rounds[1]
        ));
    }
    let a: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(aa.join("analysis.json")).unwrap()).unwrap();
    let c = &a["cells"][0];
    let fp = c["forks_seen"].as_u64().unwrap() + c["forks_reversed"].as_u64().unwrap();
    let total = c["forks_total"].as_u64().unwrap();
    let sqlite = std::fs::read_to_string(lite.join("report.md")).unwrap();
    let said =
        regex::Regex::new(r"\*\*([0-9.]+x \[[0-9.]+, [0-9.]+\] (?:slower|faster))\*\*").unwrap();
    out.push_str(&format!(
        "\nThe A/A run at 4 clients had {fp} false positives in {total} forks ({}); on SQLite, one writer: {}.\n",
        numbers::percent(fp as f64 / total as f64),
        &said.captures(&sqlite).unwrap()[1]
    ));
    out
}

/// A measured figure (a duration or a percentage) in README prose must sit
/// in a generated block; code blocks and these configured values are fine.
/// The confidence (95 %), its one-sided tail (2.5 %) and the gate's
/// default bars (`max_false_block` 10 %, `min_power` 80 %) are settings.
const CONFIGURED: &[&str] = &[
    "95 %",
    "2.5 %",
    "10 %",
    "80 %",
    "±1 %",
    "a 250 ms sample",
    "delays ≤ 1 s",
    "`connect_timeout` 10 s",
    "`statement_timeout` 60 s",
    "`lock_timeout` 10 s",
];

/// The prose the rule holds for: the README, the guide and the index.
fn prose_files() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md"), root().join("reports/README.md")];
    let mut guide: Vec<PathBuf> = std::fs::read_dir(root().join("docs/guide"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    guide.sort();
    files.extend(guide);
    files
}

#[test]
fn no_measured_figure_lives_outside_the_generated_blocks() {
    let mut stray = Vec::new();
    for path in prose_files() {
        stray.extend(
            stray_figures(&std::fs::read_to_string(&path).unwrap())
                .into_iter()
                .map(|l| format!("{}: {l}", path.strip_prefix(root()).unwrap().display())),
        );
    }
    assert!(
        stray.is_empty(),
        "measured figures outside the generated blocks (name the committed report they come from, or move them into a block):\n{}",
        stray.join("\n")
    );
}

fn stray_figures(readme: &str) -> Vec<String> {
    let (mut in_code, mut in_block) = (false, false);
    let mut stray = Vec::new();
    for (i, line) in readme.lines().enumerate() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        // A block may sit indented inside a list item.
        if line.trim_start().starts_with("<!-- BEGIN generated:") {
            in_block = true;
        } else if line.trim_start().starts_with("<!-- END generated:") {
            in_block = false;
        }
        if in_code || in_block {
            continue;
        }
        let mut prose = line.to_string();
        for c in CONFIGURED.iter() {
            prose = prose.replace(c, "");
        }
        // Drop inline code: flags and keys such as `--set grid.delay_us=[0,100]`.
        let prose: String = prose.split('`').step_by(2).collect();
        let words: Vec<&str> = prose.split_whitespace().collect();
        for w in words.windows(2) {
            let number = w[0].trim_start_matches(['~', '(', '[', '-', '−']);
            let is_number = !number.is_empty()
                && number.chars().all(|c| c.is_ascii_digit() || c == '.')
                && number.chars().next().is_some_and(|c| c.is_ascii_digit());
            let unit = w[1].trim_end_matches([',', '.', ';', ')', ']', ':']);
            if is_number && ["ns", "µs", "ms", "s", "%", "min"].contains(&unit) {
                stray.push(format!("line {}: {line}", i + 1));
            }
        }
    }
    stray
}

/// A gated report (such as `reports/gate-aa` once measured) gets its
/// verdict and self-check in the block, in the report's own sentences.
/// Three forks give the self-check one fork a cell (a quarter, rounded up).
#[test]
fn a_gated_report_shows_its_verdict_and_false_alarms_in_the_block() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = tmp.path().join("g.toml");
    std::fs::write(
        &spec,
        "seed = 1\n[strategies.n]\nkind = \"noop\"\n[design]\nbaseline = \"n\"\ntreatment = \"n\"\nforks = 3\nwarmup_pairs = 2\npairs = 30\n[analysis]\nresamples = 100\n[gate]\nmax_slowdown = \"2us\"\nmax_false_block = 0.9\nmin_power = 0.2\n",
    )
    .unwrap();
    let out = tmp.path().join("gate-aa");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_runner"))
        .args(["exec", spec.to_str().unwrap(), "--quiet", "--out"])
        .arg(&out)
        .env_remove("RUNNER_DATABASE_URL")
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let entry = report_entry(&out);
    assert!(entry.contains("- Gate (`2us`): PASS. "), "{entry}");
    assert!(
        entry.contains("- Self-check (`n` against itself"),
        "{entry}"
    );
    assert!(
        entry.contains("with nothing changed the rule blocked 0 of 1 fork"),
        "{entry}"
    );
}

/// The README's minimal experiment (its first `toml` block) and its SQL
/// strategy (the second) are valid files that run, as the README says.
#[test]
fn the_readmes_minimal_experiments_run() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    // Not the file `runner ab` wrote (the next test reads that one).
    let blocks: Vec<&str> = readme
        .split("```toml\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .filter(|b| !b.starts_with(AB_WROTE))
        .collect();
    assert!(blocks.len() >= 2, "the README has its two toml blocks");
    let tmp = tempfile::tempdir().unwrap();
    let small = [
        "--set",
        "design.forks=2",
        "--set",
        "design.warmup_pairs=1",
        "--set",
        "design.pairs=5",
    ];
    let sql = format!(
        "{}\n[design]\nbaseline = \"lookup\"\ntreatment = \"lookup\"\n",
        blocks[1]
    );
    for (name, text) in [("mine", blocks[0].to_string()), ("lookup", sql)] {
        let spec = tmp.path().join(format!("{name}.toml"));
        std::fs::write(&spec, &text).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_runner"))
            .current_dir(tmp.path())
            .args(["exec", spec.to_str().unwrap(), "--quiet", "--out", name])
            .args(small)
            .env_remove("RUNNER_DATABASE_URL")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(tmp.path().join(name).join("report.md").is_file());
    }
}

/// The first line of every file `runner ab` writes.
const AB_WROTE: &str = "# Written by `runner ab`:";

/// The README's first `runner` command after its two getting-started
/// commands is `runner ab`, and the file it shows is byte for byte the one
/// that command writes.
#[test]
fn the_readmes_runner_ab_line_writes_the_file_it_shows() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let first_command = readme
        .split("```sh\n")
        .skip(1)
        .find_map(|b| {
            b.split("```")
                .next()
                .unwrap()
                .lines()
                .find(|l| l.starts_with("runner "))
        })
        .expect("a sh block with a runner command");
    assert!(first_command.starts_with("runner ab "), "{first_command}");
    let shown = readme
        .split("```toml\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .find(|b| b.starts_with(AB_WROTE))
        .expect("the file runner ab wrote, in a toml block");
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("input.txt"), "1\n2\n").unwrap();
    let words = shlex::split(first_command.strip_prefix("runner ").unwrap()).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_runner"))
        .current_dir(tmp.path())
        .args(&words[..1])
        .arg("--no-run")
        .args(&words[1..])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap()
        .to_string();
    let written = std::fs::read_to_string(tmp.path().join(&path)).unwrap();
    // The header records the command as given (without --no-run).
    assert_eq!(
        written, shown,
        "README.md's file differs from what `{first_command}` writes"
    );
}
