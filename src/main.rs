use clap::Parser;
use runner::exec::bisect;

fn main() {
    one_arena();
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // `exec --bisect` answers `git bisect run`, for which exit 2 would mean
    // "bad commit": every way it can end is mapped (exec::bisect), a
    // command line clap refuses included.
    let cli = match runner::cli::Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) => {
            let words: Vec<String> = argv
                .iter()
                .map(|w| w.to_string_lossy().into_owned())
                .collect();
            if e.use_stderr() && bisect::requested(&words) {
                let _ = e.print();
                told(bisect::ABORT, "bad input");
            }
            e.exit()
        }
    };
    let bisecting = matches!(&cli.command, runner::cli::Command::Exec(a) if a.bisect);
    match runner::dispatch::run(cli) {
        Ok(code) if bisecting => told(bisect::of_outcome(code), bisect::outcome_word(code)),
        Ok(0) => {}
        // A gate's verdict: the run itself succeeded.
        Ok(code) => std::process::exit(code),
        Err(e) => {
            // The last guard: whatever a message quotes, no password is printed.
            runner_core::console::err(&format!(
                "error: {}",
                runner_core::redact::secrets(&e.to_string())
            ));
            if bisecting {
                told(bisect::of_error(&e), bisect::error_word(&e));
            }
            std::process::exit(e.exit_code());
        }
    }
}

/// Ends `exec --bisect`: says on stderr what `git bisect run` is told
/// ("git bisect: regression: bad, exit 1"), then exits with that code.
fn told(code: i32, verdict: &str) -> ! {
    runner_core::console::err(&runner::exec::retry::bisect_line(code, verdict));
    std::process::exit(code)
}

/// glibc gives every thread that allocates an arena of its own, and memory
/// freed in one arena is not reused by another: with the analysis's pool
/// on two cores, a 2.4M-pair `runner analyze` peaked at 306 MB with an
/// arena per thread and at 276 MB with one, in about the same time
/// (`MALLOC_ARENA_MAX`, measured with `benches/scale.sh`'s data). Set
/// before any thread starts.
#[allow(unsafe_code)]
fn one_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt sets one of the allocator's parameters and is called
    // before any other thread exists; it touches no memory of ours.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}
