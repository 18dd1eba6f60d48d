use clap::Parser;
use runner::exec::bisect;

fn main() {
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
                std::process::exit(bisect::ABORT);
            }
            e.exit()
        }
    };
    let bisecting = matches!(&cli.command, runner::cli::Command::Exec(a) if a.bisect);
    match runner::run(cli) {
        Ok(code) if bisecting => std::process::exit(bisect::of_outcome(code)),
        Ok(0) => {}
        // A gate's verdict: the run itself succeeded.
        Ok(code) => std::process::exit(code),
        Err(e) => {
            // The last guard: whatever a message quotes, no password is printed.
            runner::console::err(&format!(
                "error: {}",
                runner::redact::secrets(&e.to_string())
            ));
            std::process::exit(if bisecting {
                bisect::of_error(&e)
            } else {
                e.exit_code()
            });
        }
    }
}
