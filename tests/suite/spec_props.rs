//! `spec::load` must return an error, never panic, whatever the file and the
//! flags hold. Inputs mix arbitrary text with fragments of real specs so the
//! generator reaches validation and overrides, not only the TOML parser.

use proptest::prelude::*;
use std::io::Write;

const FRAGMENTS: &[&str] = &[
    "[design]\n",
    "baseline = \"a\"\n",
    "treatment = \"a\"\n",
    "[strategies.a]\n",
    "kind = \"noop\"\n",
    "kind = \"spin\"\n",
    "duration_us = 1e300\n",
    "[grid]\n",
    "delay_us = [0, 0.0001, -1]\n",
    "plans = [1, 1]\n",
    "[analysis]\n",
    "confidence = nan\n",
    "resamples = 9223372036854775807\n",
    "seed = -9223372036854775808\n",
    "[database]\n",
    "backend = \"postgres\"\n",
    "url = \"\u{0}\"\n",
    "[report]\n",
    "template = \"\"\n",
    "design = { forks = 0 }\n",
    "[[grid]]\n",
    "strategies = 1\n",
    "x.y.z = 1\n",
    "name = \"../..\"\n",
    "\"\u{e9}\" = 'é'\n",
    "\r\n",
    "\t",
    "#",
];

fn spec_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        proptest::collection::vec(prop::sample::select(FRAGMENTS), 0..12).prop_map(|f| f.concat()),
        (
            proptest::collection::vec(prop::sample::select(FRAGMENTS), 0..8),
            any::<String>()
        )
            .prop_map(|(f, tail)| f.concat() + &tail),
    ]
}

fn flag() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-z._=\\[\\]{}\"0-9, -]{0,24}",
        (
            prop::sample::select(
                &[
                    "design.forks",
                    "grid.delay_us",
                    "strategies.a.kind",
                    "design",
                    "a..b",
                    "design.baseline.x",
                    ""
                ][..]
            ),
            any::<String>()
        )
            .prop_map(|(k, v)| format!("{k}={v}")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn load_never_panics(text in spec_text(), flags in proptest::collection::vec(flag(), 0..4), raw_bytes in any::<bool>()) {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        let mut bytes = text.into_bytes();
        if raw_bytes && !bytes.is_empty() {
            bytes[0] = 0xff;
        }
        file.write_all(&bytes).unwrap();
        // One line per problem, each naming the file: a problem's own
        // sentence never breaks a line.
        if let Err(e) = runner_spec::load(file.path(), &flags) {
            let shown = file.path().display().to_string();
            for line in e.message.lines() {
                prop_assert!(line.starts_with(&shown), "a line without its file: {}", e.message);
            }
        }
    }
}
