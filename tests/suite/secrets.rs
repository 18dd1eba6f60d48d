//! A password in a database URL (in the spec, in
//! `--set database.url=...`, in either URL form) reaches no output file and
//! no message; before, it was written verbatim into run.json and report.md.

use crate::common;
use common::*;
use std::path::Path;

/// Every byte under `dir`, and `extra` texts, are free of `secret`.
fn assert_nowhere(dir: &Path, secret: &str, extra: &[&str]) {
    for (path, bytes) in tree(dir) {
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(secret), "{secret} is in {}", path.display());
    }
    for e in extra {
        assert!(!e.contains(secret), "{secret} is in: {e}");
    }
}

#[test]
fn no_password_reaches_a_file_or_a_message() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    // The in-memory preview needs no database, but the URL is part of the
    // spec that run.json records.
    let in_spec = format!(
        "{SMALL_AA}\n[database]\nurl = \"postgres://bench:Sp3cSecret@127.0.0.1:1/bench\"\n"
    );
    write_spec(t, "small", &in_spec);
    let o = run_in(t, &["exec", "small.toml", "--out", "a"]);
    assert!(o.status.success(), "{}", err_of(&o));
    let report = std::fs::read_to_string(t.join("a/run.json")).unwrap();
    assert!(
        report.contains("postgres://bench:***@127.0.0.1:1/bench"),
        "redacted, not dropped"
    );
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_nowhere(t.join("a").as_path(), "Sp3cSecret", &[&stdout, &err_of(&o)]);

    // On the command line, in both URL forms; a run that fails prints a
    // resume command without it, and the resumed run records none.
    for (n, url, secret) in [
        (0, "postgres://u:S3tSecret@127.0.0.1:1/db", "S3tSecret"),
        (
            1,
            "host=127.0.0.1 user=u password=Kv5ecret dbname=db",
            "Kv5ecret",
        ),
    ] {
        let out = format!("b{n}");
        let set = format!("database.url={url}");
        let o = runner()
            .current_dir(t)
            .env("RUNNER_FAULT", "exit=3@cell=1,fork=1")
            .args(["exec", "small.toml", "--out", &out, "--set", &set])
            .output()
            .unwrap();
        let err = err_of(&o);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("put the password where it shows ***"), "{err}");
        assert_nowhere(&t.join(format!("{out}.partial")), secret, &[&err]);
        let o = run_in(
            t,
            &[
                "exec",
                "small.toml",
                "--out",
                &out,
                "--set",
                &set,
                "--resume",
                &format!("{out}.partial"),
            ],
        );
        assert!(o.status.success(), "{}", err_of(&o));
        assert_nowhere(&t.join(&out), secret, &[&err_of(&o)]);
    }

    // A URL that does not parse: the message does not quote it.
    let o = run_in(
        t,
        &[
            "check",
            "small.toml",
            "--set",
            "database.url=postgres://u:Bad5ecret@host:notaport/db",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert_nowhere(&t.join("a"), "Bad5ecret", &[&err_of(&o)]);
}
