//! The spec an imported run records: what runner knows about the data
//! (arms, cells, forks x pairs, the analysis settings) written as an
//! experiment file whose arms are `kind = "imported"`, so the run.json
//! checks, `runner report` and the report's view-model read it like any
//! other run. It is validated back by `spec::parse_recorded`, the same
//! rules a run.json's spec meets.

/// A TOML string (quoted and escaped).
fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A TOML key: bare when it can be, else quoted.
fn key(s: &str) -> String {
    let bare = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        s.to_string()
    } else {
        quoted(s)
    }
}

/// A delay in µs as TOML: `5`, `0.1`.
fn micros(ns: u64) -> String {
    if ns.is_multiple_of(1000) {
        (ns / 1000).to_string()
    } else {
        format!("{:?}", ns as f64 / 1000.0)
    }
}

/// What the spec says.
pub(crate) struct Settings<'a> {
    pub name: &'a str,
    pub title: &'a str,
    pub file: &'a str,
    pub sha256: &'a str,
    /// `None`: drawn by runner, recorded in run.json (`seeds.drawn`) and not
    /// in the spec, as for a spec without a seed that `exec` runs.
    pub seed: Option<u64>,
    pub baseline: &'a str,
    pub treatment: &'a str,
    pub forks: u32,
    pub warmup_pairs: u32,
    pub pairs: u32,
    /// Sorted, unique; `[0]` when the file gave none.
    pub delays_ns: &'a [u64],
    /// Cell labels in order of appearance; empty without a `cell` column
    /// (or when it named the delays one to one).
    pub labels: &'a [String],
    pub resamples: u32,
    pub confidence: f64,
}

pub(crate) fn toml(s: &Settings<'_>) -> String {
    let mut out = format!(
        "# Written by `runner analyze`: pairs another harness measured, imported\n\
         # from {} (SHA-256 {}). `kind = \"imported\"` marks arms runner did not\n\
         # measure, so nothing here can run; `runner report` re-renders the\n\
         # report from pairs.csv and this spec.\n",
        s.file.replace('\n', " "),
        s.sha256
    );
    out.push_str(&format!("name = {}\n", quoted(s.name)));
    out.push_str(&format!("title = {}\n", quoted(s.title)));
    out.push_str(&format!(
        "description = {}\n",
        quoted(&format!(
            "Pairs measured by another harness, imported from `{}` by `runner analyze`. runner did not run them: this report states nothing about how they were measured.",
            s.file.replace('`', "'")
        ))
    ));
    match s.seed {
        Some(seed) => out.push_str(&format!("seed = {seed}\n\n")),
        None => out.push('\n'),
    }
    let mut names = vec![s.baseline];
    if s.treatment != s.baseline {
        names.push(s.treatment);
    }
    for n in names {
        out.push_str(&format!("[strategies.{}]\nkind = \"imported\"\n\n", key(n)));
    }
    out.push_str(&format!(
        "[design]\nbaseline = {}\ntreatment = {}\nforks = {}\nwarmup_pairs = {}\npairs = {}\nordering = \"paired-random\"\npad_baseline = false\nschedule = \"sequential\"\n\n",
        quoted(s.baseline),
        quoted(s.treatment),
        s.forks,
        s.warmup_pairs,
        s.pairs
    ));
    out.push_str(&format!(
        "[grid]\ndelay_us = [{}]\n",
        s.delays_ns
            .iter()
            .map(|&d| micros(d))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    if !s.labels.is_empty() {
        out.push_str(&format!(
            "cell = [{}]\n",
            s.labels
                .iter()
                .map(|l| quoted(l))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out.push_str(&format!(
        "\n[analysis]\nresamples = {}\nconfidence = {:?}\n",
        s.resamples, s.confidence
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_validates_as_a_recorded_one_and_says_what_it_knows() {
        let labels = vec!["sort \"fast\"".to_string(), "b".into()];
        let text = toml(&Settings {
            name: "jmh",
            title: "jmh.csv (imported)",
            file: "data/jmh.csv",
            sha256: "ab",
            seed: Some(9),
            baseline: "old build",
            treatment: "new",
            forks: 3,
            warmup_pairs: 0,
            pairs: 20,
            delays_ns: &[0, 1500],
            labels: &labels,
            resamples: 500,
            confidence: 0.9,
        });
        let exp = runner_spec::parse_recorded("data/jmh.csv", &text, &Default::default())
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(
            exp.strategies["old build"],
            runner_spec::StrategyKind::Imported
        );
        assert_eq!(exp.design.baseline, "old build");
        assert_eq!(exp.grid.delay_ns, [0, 1500]);
        assert_eq!(exp.grid.params["cell"][0], "sort \"fast\"");
        assert_eq!(
            (exp.analysis.resamples, exp.analysis.confidence),
            (500, 0.9)
        );
        assert!(!exp.design.pad_baseline);
        // An experiment file with an imported arm is refused before it runs.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.toml");
        std::fs::write(&path, &text).unwrap();
        let e = runner_spec::load(&path, &[]).unwrap_err().message;
        assert!(
            e.contains("kind = \"imported\" marks pairs another harness measured"),
            "{e}"
        );
    }
}
