use clap::Parser;

fn main() {
    let cli = runner::cli::Cli::parse();
    if let Err(e) = runner::run(cli) {
        eprintln!("error: {e}");
        std::process::exit(e.exit_code());
    }
}
