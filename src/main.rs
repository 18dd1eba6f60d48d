use clap::Parser;

fn main() {
    let cli = runner::cli::Cli::parse();
    match runner::run(cli) {
        Ok(0) => {}
        // A gate's verdict: the run itself succeeded.
        Ok(code) => std::process::exit(code),
        Err(e) => {
            // The last guard: whatever a message quotes, no password is printed.
            runner::console::err(&format!(
                "error: {}",
                runner::redact::secrets(&e.to_string())
            ));
            std::process::exit(e.exit_code());
        }
    }
}
