//! Progress on stderr (design section 2): bars with ETA on a terminal, plain
//! lines otherwise, nothing with `--quiet`. Never on stdout, which carries the
//! answer.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

pub enum Progress {
    Quiet,
    /// stderr is not a terminal: one line per finished fork.
    Lines {
        total: u64,
        done: u64,
    },
    Bars {
        _multi: MultiProgress,
        jobs: ProgressBar,
        pairs: ProgressBar,
    },
}

impl Progress {
    pub fn new(quiet: bool, total_jobs: u64, already_done: u64) -> Progress {
        if quiet {
            return Progress::Quiet;
        }
        if !std::io::stderr().is_terminal() {
            return Progress::Lines {
                total: total_jobs,
                done: already_done,
            };
        }
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(4));
        let jobs = multi.add(ProgressBar::new(total_jobs));
        jobs.set_style(
            ProgressStyle::with_template(
                "forks {bar:30} {pos}/{len}  elapsed {elapsed}  eta {eta}",
            )
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
        }
    }

    pub fn start_fork(&mut self, label: &str, pairs: u64) {
        if let Progress::Bars { pairs: bar, .. } = self {
            bar.reset();
            bar.set_length(pairs);
            bar.set_message(label.to_string());
        }
    }

    pub fn pair(&mut self) {
        if let Progress::Bars { pairs, .. } = self {
            pairs.inc(1);
        }
    }

    pub fn finish_fork(&mut self, label: &str, seconds: f64) {
        match self {
            Progress::Quiet => {}
            Progress::Lines { total, done } => {
                *done += 1;
                // A closed stderr (`2>&1 | head -1`) must not stop the run.
                crate::console::err(&format!("[{done}/{total}] {label} done in {seconds:.2} s"));
            }
            Progress::Bars { jobs, .. } => jobs.inc(1),
        }
    }

    /// A message that must not be torn by the bars.
    pub fn println(&self, msg: &str) {
        match self {
            Progress::Quiet => {}
            Progress::Lines { .. } => crate::console::err(msg),
            Progress::Bars { jobs, .. } => jobs.println(msg),
        }
    }

    pub fn clear(&self) {
        if let Progress::Bars { jobs, pairs, .. } = self {
            pairs.finish_and_clear();
            jobs.finish_and_clear();
        }
    }
}
