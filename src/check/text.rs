//! `check`'s words: [`render`] turns a [`CheckSummary`] into the lines
//! the terminal shows, a label in a column of its own and the text after.

use super::summary::CheckSummary;

/// The plan as `check` prints it.
pub(super) fn render(s: &CheckSummary) -> String {
    let mut out = String::new();
    render_setting(&mut out, s);
    render_size(&mut out, s);
    render_trial(&mut out, s);
    render_guard(&mut out, s);
    if s.trial.left_processes > 0 {
        line(&mut out, "warning", &format!(
            "the trial runs' commands left {} process(es) running after their runs ended; runner killed them (exec counts them per fork, in forks[].left_processes)",
            s.trial.left_processes
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

/// A labelled line: the label in a column of its own, so the texts start
/// in one column, and a text's own line breaks indented to that column.
fn line(out: &mut String, label: &str, text: &str) {
    out.push_str(&format!(
        "{label:<11} {}\n",
        text.replace('\n', "\n            ")
    ));
}

/// A line under the previous label's, indented by two so that it reads as
/// part of that label's text.
fn sub(out: &mut String, text: &str) {
    out.push_str(&format!("  {text}\n"));
}

/// The setting before any count: a wrong arm, placement or database is
/// what a reader must see first, since every number below follows from it.
fn render_setting(out: &mut String, s: &CheckSummary) {
    line(out, "experiment", &format!("{} ({})", s.experiment, s.spec));
    line(out, "arms", &s.arms);
    line(out, "design", &s.design);
    line(out, "placement", &s.placement);
    if let Some((first, rest)) = s.layout.split_first() {
        line(out, "layout", first);
        for l in rest {
            sub(out, l);
        }
    }
    if let Some(d) = &s.database {
        line(out, "database", d);
    }
    for w in &s.warnings {
        line(out, "warning", w);
    }
    let seed = s
        .seed
        .map_or("drawn at exec time".to_string(), |s| s.to_string());
    line(out, "seed", &seed);
}

/// The counts the run's cost follows from, kept together so they read as
/// one sum: the cells, their forks as jobs, and the pairs the jobs run.
fn render_size(out: &mut String, s: &CheckSummary) {
    line(out, "cells", &s.cells_total.to_string());
    for c in s.cells.iter().chain(&s.sizing) {
        sub(out, c);
    }
    if let Some(g) = &s.gate {
        line(out, "gate", g);
    }
    if let Some(w) = &s.gate_self_check {
        line(out, "self-check", w);
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
        out,
        "jobs",
        &format!("{} ({cells_x_forks}), each a fresh process", s.jobs),
    );
    out.push_str(&s.flags);
    line(
        out,
        "pairs",
        &format!("{} in total ({} measured)", s.pairs, s.measured_pairs),
    );
}

/// The trials' lines come before the estimate because it rests on them
/// (or, when one failed, on a guess, and the failure is why `check` exits 1).
fn render_trial(out: &mut String, s: &CheckSummary) {
    let t = &s.trial;
    if !t.timed.is_empty() {
        let arms: Vec<String> = t
            .timed
            .iter()
            .map(|a| {
                let median = runner_report::numbers::duration(a.median_ns as f64);
                format!("`{}` {median}", a.arm)
            })
            .collect();
        line(
            out,
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
        line(out, "trial", &text);
    }
    if let Some(why) = &t.failed {
        // What exec's first fork would meet, said now; the estimate is a
        // guess from there on.
        line(
            out,
            "trial",
            &format!("failed, as exec's first fork would: {why}"),
        );
    }
}

/// The guard's verdict on the trials (PostgreSQL only), said even when it
/// held so that a reader knows the trials were watched; a change to the
/// user's tables is why `check` exits 1.
fn render_guard(out: &mut String, s: &CheckSummary) {
    let Some(g) = &s.guard else {
        return;
    };
    if !g.held {
        line(
            out,
            "guard",
            &format!(
                "the database changed outside runner's schemas during the trial runs: {}",
                g.changes.join("; ")
            ),
        );
    } else if g.residue.is_empty() {
        line(
            out,
            "guard",
            "the database outside runner's schemas was unchanged by the trial runs",
        );
    } else {
        line(
            out,
            "guard",
            &format!(
                "the database outside runner's schemas was unchanged by the trial runs, but their rolled-back writes left {} (until VACUUM; private_copies keeps them out of your tables)",
                g.residue.join(", ")
            ),
        );
    }
    for o in &g.other_sessions {
        line(
            out,
            "note",
            &format!("another session, during the trial runs: {o}"),
        );
    }
}
