//! Quoting for every command line runner prints (resume, reproduce), so a
//! printed command pastes into a POSIX shell as the same argv.

/// `args` joined into one POSIX shell line, each argument quoted only when
/// it needs to be.
pub fn join<S: AsRef<str>>(args: &[S]) -> String {
    shlex::try_join(args.iter().map(|a| a.as_ref()))
        // shlex refuses only NUL bytes, which no argv can hold.
        .unwrap_or_else(|_| {
            args.iter()
                .map(|a| a.as_ref())
                .collect::<Vec<_>>()
                .join(" ")
        })
}
