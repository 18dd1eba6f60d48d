//! Progress on stderr (docs/guide/commands.md): bars with ETA on a terminal, plain
//! lines otherwise, nothing with `--quiet`. Never on stdout, which carries the
//! answer.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Instant;

pub(crate) enum Progress {
    Quiet,
    /// stderr is not a terminal: one line per finished job.
    Lines {
        total: u64,
        done: u64,
        started: Instant,
        /// What a job is called: `forks`, or `jobs (cell x fork)`.
        unit: &'static str,
    },
    Bars {
        _multi: MultiProgress,
        jobs: ProgressBar,
        pairs: ProgressBar,
        started: Instant,
        unit: &'static str,
    },
}

/// `73 s`, `2 min 5 s`, `1 h 3 min`.
fn elapsed(d: std::time::Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{:.1} s", d.as_secs_f64()),
        60..=3599 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

impl Progress {
    /// `single`: the run compares one cell, whose jobs are its forks (the
    /// words say forks, not jobs of cells).
    pub(crate) fn new(quiet: bool, total_jobs: u64, already_done: u64, single: bool) -> Progress {
        if quiet {
            return Progress::Quiet;
        }
        let unit = if single {
            "forks"
        } else {
            "jobs (cell x fork)"
        };
        let started = Instant::now();
        if !std::io::stderr().is_terminal() {
            return Progress::Lines {
                total: total_jobs,
                done: already_done,
                started,
                unit,
            };
        }
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(4));
        let jobs = multi.add(ProgressBar::new(total_jobs));
        jobs.set_style(
            ProgressStyle::with_template(&format!(
                "{unit} {{bar:30}} {{pos}}/{{len}}  elapsed {{elapsed}}  eta {{eta}}"
            ))
            .expect("valid template"),
        );
        jobs.set_position(already_done);
        let pairs = multi.add(ProgressBar::new(0));
        pairs.set_style(
            ProgressStyle::with_template("{msg:24} {bar:30} {pos}/{len} pairs  eta {eta}")
                .expect("valid template"),
        );
        Progress::Bars {
            _multi: multi,
            jobs,
            pairs,
            started,
            unit,
        }
    }

    pub(crate) fn start_fork(&mut self, label: &str, pairs: u64) {
        if let Progress::Bars { pairs: bar, .. } = self {
            bar.reset();
            bar.set_length(pairs);
            bar.set_message(label.to_string());
        }
    }

    pub(crate) fn pair(&mut self) {
        if let Progress::Bars { pairs, .. } = self {
            pairs.inc(1);
        }
    }

    pub(crate) fn finish_fork(&mut self, label: &str, seconds: f64) {
        match self {
            Progress::Quiet => {}
            Progress::Lines { total, done, .. } => {
                *done += 1;
                // A closed stderr (`2>&1 | head -1`) must not stop the run.
                runner_core::console::err(&format!(
                    "[{done}/{total}] {label} done in {seconds:.2} s"
                ));
            }
            Progress::Bars { jobs, .. } => jobs.inc(1),
        }
    }

    /// The jobs the run will hold in all, now that some will not run (a
    /// sequential design's stopped cells).
    pub(crate) fn skip_to(&mut self, total_jobs: u64) {
        match self {
            Progress::Quiet => {}
            Progress::Lines { total, .. } => *total = total_jobs,
            Progress::Bars { jobs, .. } => jobs.set_length(total_jobs),
        }
    }

    /// A message that must not be torn by the bars.
    pub(crate) fn println(&self, msg: &str) {
        match self {
            Progress::Quiet => {}
            Progress::Lines { .. } => runner_core::console::err(msg),
            Progress::Bars { jobs, .. } => jobs.println(msg),
        }
    }

    pub(crate) fn clear(&self) {
        if let Progress::Bars { jobs, pairs, .. } = self {
            pairs.finish_and_clear();
            jobs.finish_and_clear();
        }
    }

    /// Clears the bars and leaves one line with the total on screen.
    pub(crate) fn finish(&self, jobs_run: usize) {
        self.clear();
        match self {
            _ if jobs_run == 0 => {}
            Progress::Quiet => {}
            Progress::Lines { started, unit, .. } | Progress::Bars { started, unit, .. } => {
                runner_core::console::err(&format!(
                    "{jobs_run} {unit} run in {}",
                    elapsed(started.elapsed())
                ))
            }
        }
    }
}
