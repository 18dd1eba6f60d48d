//! `check`'s words: [`render`] turns a [`CheckSummary`] into the lines
//! the terminal shows, a label in a column of its own and the text after.

use super::check::CheckSummary;

/// The plan as `check` prints it.
pub(super) fn render(s: &CheckSummary) -> String {
    let mut out = String::new();
    let line = |out: &mut String, label: &str, text: &str| {
        out.push_str(&format!(
            "{label:<11} {}\n",
            text.replace('\n', "\n            ")
        ));
    };
    // A line under the previous label's, indented by two.
    let sub = |out: &mut String, text: &str| out.push_str(&format!("  {text}\n"));
    line(
        &mut out,
        "experiment",
        &format!("{} ({})", s.experiment, s.spec),
    );
    line(&mut out, "arms", &s.arms);
    line(&mut out, "design", &s.design);
    line(&mut out, "placement", &s.placement);
    if let Some((first, rest)) = s.layout.split_first() {
        line(&mut out, "layout", first);
        for l in rest {
            sub(&mut out, l);
        }
    }
    if let Some(d) = &s.database {
        line(&mut out, "database", d);
    }
    for w in &s.warnings {
        line(&mut out, "warning", w);
    }
    let seed = s
        .seed
        .map_or("drawn at exec time".to_string(), |s| s.to_string());
    line(&mut out, "seed", &seed);
    line(&mut out, "cells", &s.cells_total.to_string());
    for c in s.cells.iter().chain(&s.sizing) {
        sub(&mut out, c);
    }
    if let Some(g) = &s.gate {
        line(&mut out, "gate", g);
    }
    if let Some(w) = &s.gate_self_check {
        line(&mut out, "self-check", w);
    }
    // A self-check cell runs fewer forks than an experiment cell.
    let cells_x_forks = if s.jobs == s.cells_total * s.forks {
        format!("{} cells x {} forks", s.cells_total, s.forks)
    } else {
        format!(
            "{} cells, {} forks per experiment cell",
            s.cells_total, s.forks
        )
    };
    line(
        &mut out,
        "jobs",
        &format!("{} ({cells_x_forks}), each a fresh process", s.jobs),
    );
    out.push_str(&s.flags);
    line(
        &mut out,
        "pairs",
        &format!("{} in total ({} measured)", s.pairs, s.measured_pairs),
    );
    let t = &s.trial;
    if !t.timed.is_empty() {
        let arms: Vec<String> = t
            .timed
            .iter()
            .map(|a| {
                let median = runner_report::format::duration(a.median_ns as f64);
                format!("`{}` {median}", a.arm)
            })
            .collect();
        line(
            &mut out,
            "trial",
            &format!(
                "{} run(s) of each arm here, untimed by the run (median): {}",
                t.runs,
                arms.join(", ")
            ),
        );
    }
    if t.cells > 1 && !t.tried.is_empty() {
        let tried: Vec<String> = t.tried.iter().map(u32::to_string).collect();
        let text = if t.tried.len() == t.cells {
            format!("ran the arms of every cell ({})", tried.join(", "))
        } else {
            format!(
                "ran the arms of cell{} {}; the other cells run the same arms",
                if tried.len() == 1 { "" } else { "s" },
                tried.join(", ")
            )
        };
        line(&mut out, "trial", &text);
    }
    if let Some(why) = &t.failed {
        // What exec's first fork would meet, said now; the estimate is a
        // guess from there on.
        line(
            &mut out,
            "trial",
            &format!("failed, as exec's first fork would: {why}"),
        );
    }
    if let Some(g) = &s.guard {
        if !g.held {
            line(
                &mut out,
                "guard",
                &format!(
                    "the database changed outside runner's schemas during the trial runs: {}",
                    g.changes.join("; ")
                ),
            );
        } else if g.residue.is_empty() {
            line(
                &mut out,
                "guard",
                "the database outside runner's schemas was unchanged by the trial runs",
            );
        } else {
            line(
                &mut out,
                "guard",
                &format!(
                    "the database outside runner's schemas was unchanged by the trial runs, but their rolled-back writes left {} (until VACUUM; private_copies keeps them out of your tables)",
                    g.residue.join(", ")
                ),
            );
        }
        for o in &g.other_sessions {
            line(
                &mut out,
                "note",
                &format!("another session, during the trial runs: {o}"),
            );
        }
    }
    if t.left_processes > 0 {
        line(&mut out, "warning", &format!(
            "the trial runs' commands left {} process(es) running after their runs ended; runner killed them (exec counts them per fork, in forks[].left_processes)",
            t.left_processes
        ));
    }
    line(&mut out, "estimate", &s.estimate);
    for l in &s.stop {
        out.push_str(l);
        out.push('\n');
    }
    line(&mut out, "analysis", &s.analysis);
    line(&mut out, "output", &s.output);
    out
}
