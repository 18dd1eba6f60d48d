use clap::Parser;

fn main() {
    let cli = runner::cli::Cli::parse();
    if let Err(e) = runner::run(cli) {
        // The last guard: whatever a message quotes, no password is printed.
        runner::console::err(&format!(
            "error: {}",
            runner::redact::secrets(&e.to_string())
        ));
        std::process::exit(e.exit_code());
    }
}
