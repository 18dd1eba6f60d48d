//! Writing to the terminal without ever dying of it. Rust ignores SIGPIPE,
//! so a closed stdout or stderr (`runner check x.toml | head -1`, `runner
//! exec ... 2>&1 | head -1`) makes `print!` and `eprintln!` panic; runner's
//! output goes through here instead, and a stream nobody reads is not a
//! reason to abort a run.

use std::io::Write;

/// `text` on stdout, as is; a closed stdout is ignored.
pub fn out(text: &str) {
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(text.as_bytes());
    let _ = o.flush();
}

/// One line on stderr; a closed stderr is ignored.
pub fn err(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// `warning: ...` on stderr.
pub fn warn(msg: &str) {
    err(&format!("warning: {msg}"));
}
