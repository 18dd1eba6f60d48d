//! Why `runner merge` writes nothing: the folders given are not the
//! shards of one run (refused before anything is written, each naming the
//! folders and what differs: the user's input to fix, exit 2), the merged
//! record would not pass a reader's checks (exit 2), or a signal stopped
//! the analysis (exit 1). Nothing is measured, so each leaves nothing
//! behind and the merge can simply be run again.

use runner_folder::merged::jobs_text;
use std::fmt;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub(crate) enum MergeError {
    /// Promoting the merge would move a shard aside.
    #[error("OUT {} and the shard folder {} are one inside the other; merge into a folder of its own, such as reports/NAME", .out.display(), .shard.display())]
    OutNested { out: PathBuf, shard: PathBuf },
    /// A merge's output was given as a shard: its shards are what joins.
    #[error("{} is a merged folder, not a shard; merge the shard folders it came from", .dir.display())]
    Merged { dir: PathBuf },
    /// A whole run was given as a shard.
    #[error("{} is not a shard: its run.json records no --shard (it holds the whole plan); merge joins the folders of `runner exec SPEC --shard I/N`", .dir.display())]
    NotAShard { dir: PathBuf },
    /// Shard `b` drew other seeds than shard `a`, so their jobs are not
    /// one plan's.
    #[error("{} has master seed {seed_b} but {} has {seed_a}: shards of one run share one seed; run every shard with the same spec and --set flags", .b.display(), .a.display())]
    OtherSeed {
        a: PathBuf,
        b: PathBuf,
        seed_a: u64,
        seed_b: u64,
    },
    /// Shard `b` ran another spec than shard `a` (`keys` are the keys that
    /// differ; none when only comments or layout do).
    #[error("{} ran another spec than {} (SHA-256 {} vs {}: {}); shards of one run come from one spec and the same --set flags", .b.display(), .a.display(), short(.sha_b), short(.sha_a), spec_keys(.keys))]
    OtherSpec {
        a: PathBuf,
        b: PathBuf,
        sha_a: String,
        sha_b: String,
        keys: Vec<String>,
    },
    /// The run was cut into shards twice, differently.
    #[error("{} is shard {b_index}/{b_count} but {} is shard {a_index}/{a_count}: the run was cut into {a_count} shards once and into {b_count} another time, so their jobs do not fit together", .b.display(), .a.display())]
    OtherCount {
        a: PathBuf,
        b: PathBuf,
        a_index: u32,
        a_count: u32,
        b_index: u32,
        b_count: u32,
    },
    /// The shards measured on different database backends.
    #[error("{} measured on {backend_b} but {} on {backend_a}: one cell would mix forks of two systems; run every shard on the same backend", .b.display(), .a.display())]
    OtherBackend {
        a: PathBuf,
        b: PathBuf,
        backend_a: String,
        backend_b: String,
    },
    /// The shards were measured by different runner builds.
    #[error("{} was measured by {build_b} but {} by {build_a}: the timed code and the analysis may differ between builds, so one cell would mix two harnesses; run every shard with the same runner binary", .b.display(), .a.display())]
    OtherBuild {
        a: PathBuf,
        b: PathBuf,
        build_a: String,
        build_b: String,
    },
    /// Two folders hold the same jobs (`(cell, fork)`); `same_shard` is
    /// the shard both are when one shard was given twice.
    #[error("{} {} held by both {} and {}{}: merge each job once (drop one of the two folders)", jobs_text(.jobs), is_are(.jobs), .a.display(), .b.display(), both_are(.same_shard))]
    JobTwice {
        jobs: Vec<(u32, u32)>,
        a: PathBuf,
        b: PathBuf,
        same_shard: Option<(u32, u32)>,
    },
    /// Shards of the plan that no folder is, without `--allow-missing`.
    #[error("{}; then merge again with every shard folder, or pass --allow-missing to merge without {}", missing_text(.missing), if .missing.len() == 1 { "it" } else { "them" })]
    MissingShards { missing: Vec<MissingShard> },
    /// The merged run.json fails a check a reader makes: the shards are
    /// damaged in a way each alone does not show.
    #[error("the merged run.json would not be valid: {0}")]
    Invalid(#[source] runner_folder::FolderError),
    /// A signal came while the merged run was analysed.
    #[error("{0} during the analysis; nothing was written")]
    Interrupted(runner_os::interrupt::Interrupted),
}

/// A folder that is not a shard of the run, or shards that do not fit, are
/// the user's to fix (exit 2); a signal stops a merge that was fine (exit 1).
impl runner_core::error::Coded for MergeError {
    fn failure(&self) -> runner_core::error::Failure {
        use runner_core::error::Failure;
        match self {
            MergeError::Interrupted(_) => Failure::RunFailed,
            MergeError::OutNested { .. }
            | MergeError::Merged { .. }
            | MergeError::NotAShard { .. }
            | MergeError::OtherSeed { .. }
            | MergeError::OtherSpec { .. }
            | MergeError::OtherCount { .. }
            | MergeError::OtherBackend { .. }
            | MergeError::OtherBuild { .. }
            | MergeError::JobTwice { .. }
            | MergeError::MissingShards { .. }
            | MergeError::Invalid(_) => Failure::BadInput,
        }
    }
}

/// A shard of `count` that no folder given is: its jobs (`(cell, fork)`)
/// and the command that runs it.
#[derive(Debug)]
pub(crate) struct MissingShard {
    pub index: u32,
    pub count: u32,
    pub jobs: Vec<(u32, u32)>,
    pub command: String,
}

impl fmt::Display for MissingShard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "shard {}/{} is missing (its {} jobs: {}); run it with `{}`",
            self.index,
            self.count,
            self.jobs.len(),
            jobs_text(&self.jobs),
            self.command
        )
    }
}

/// The first 12 hex digits of a SHA (or commit), as merge's refusals name it.
pub(super) fn short(sha: &str) -> &str {
    sha.char_indices()
        .nth(12)
        .map_or(sha, |(end, _)| &sha[..end])
}

fn spec_keys(keys: &[String]) -> String {
    match keys.len() {
        0 => "the files differ only in comments or layout".to_string(),
        1..=4 => format!("{} differ", keys.join(", ")),
        n => format!("{} and {} more keys differ", keys[..4].join(", "), n - 4),
    }
}

fn is_are(jobs: &[(u32, u32)]) -> &'static str {
    if jobs.len() == 1 {
        "is"
    } else {
        "are"
    }
}

fn both_are(same_shard: &Option<(u32, u32)>) -> String {
    match same_shard {
        Some((index, count)) => format!(", which are both shard {index}/{count}"),
        None => String::new(),
    }
}

fn missing_text(missing: &[MissingShard]) -> String {
    missing
        .iter()
        .map(MissingShard::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use runner_core::error::RunnerError;

    /// Each kind's sentence (the one the user read before these were
    /// typed) and its exit code.
    #[test]
    fn each_kind_says_its_sentence_and_exit_code() {
        let p = PathBuf::from;
        let (a, b) = (p("s/1"), p("s/2"));
        let keys = |n: usize| (0..n).map(|i| format!("k{i}")).collect::<Vec<_>>();
        let other_spec = |keys: Vec<String>| MergeError::OtherSpec {
            a: a.clone(),
            b: b.clone(),
            sha_a: "0123456789abcdef".into(),
            sha_b: "fedcba9876543210".into(),
            keys,
        };
        let twice = |jobs: Vec<(u32, u32)>, same_shard| MergeError::JobTwice {
            jobs,
            a: a.clone(),
            b: b.clone(),
            same_shard,
        };
        let shard = |index| MissingShard {
            index,
            count: 3,
            jobs: vec![(0, index), (1, index)],
            command: format!("runner exec x.toml --shard {index}/3"),
        };
        let cases: Vec<(MergeError, &str, i32)> = vec![
            (
                MergeError::OutNested { out: p("s"), shard: a.clone() },
                "OUT s and the shard folder s/1 are one inside the other; merge into a folder of its own, such as reports/NAME",
                2,
            ),
            (
                MergeError::Merged { dir: a.clone() },
                "s/1 is a merged folder, not a shard; merge the shard folders it came from",
                2,
            ),
            (
                MergeError::NotAShard { dir: a.clone() },
                "s/1 is not a shard: its run.json records no --shard (it holds the whole plan); merge joins the folders of `runner exec SPEC --shard I/N`",
                2,
            ),
            (
                MergeError::OtherSeed { a: a.clone(), b: b.clone(), seed_a: 1, seed_b: 2 },
                "s/2 has master seed 2 but s/1 has 1: shards of one run share one seed; run every shard with the same spec and --set flags",
                2,
            ),
            (
                other_spec(Vec::new()),
                "s/2 ran another spec than s/1 (SHA-256 fedcba987654 vs 0123456789ab: the files differ only in comments or layout); shards of one run come from one spec and the same --set flags",
                2,
            ),
            (
                other_spec(keys(2)),
                "s/2 ran another spec than s/1 (SHA-256 fedcba987654 vs 0123456789ab: k0, k1 differ); shards of one run come from one spec and the same --set flags",
                2,
            ),
            (
                other_spec(keys(6)),
                "s/2 ran another spec than s/1 (SHA-256 fedcba987654 vs 0123456789ab: k0, k1, k2, k3 and 2 more keys differ); shards of one run come from one spec and the same --set flags",
                2,
            ),
            (
                MergeError::OtherCount { a: a.clone(), b: b.clone(), a_index: 1, a_count: 2, b_index: 3, b_count: 4 },
                "s/2 is shard 3/4 but s/1 is shard 1/2: the run was cut into 2 shards once and into 4 another time, so their jobs do not fit together",
                2,
            ),
            (
                MergeError::OtherBackend { a: a.clone(), b: b.clone(), backend_a: "sqlite".into(), backend_b: "no database".into() },
                "s/2 measured on no database but s/1 on sqlite: one cell would mix forks of two systems; run every shard on the same backend",
                2,
            ),
            (
                MergeError::OtherBuild { a: a.clone(), b: b.clone(), build_a: "runner 1".into(), build_b: "runner 2".into() },
                "s/2 was measured by runner 2 but s/1 by runner 1: the timed code and the analysis may differ between builds, so one cell would mix two harnesses; run every shard with the same runner binary",
                2,
            ),
            (
                twice(vec![(0, 1)], Some((2, 3))),
                "cell 0 fork 1 is held by both s/1 and s/2, which are both shard 2/3: merge each job once (drop one of the two folders)",
                2,
            ),
            (
                twice(vec![(0, 1), (1, 1)], None),
                "cell 0 fork 1, cell 1 fork 1 are held by both s/1 and s/2: merge each job once (drop one of the two folders)",
                2,
            ),
            (
                MergeError::MissingShards { missing: vec![shard(2)] },
                "shard 2/3 is missing (its 2 jobs: cell 0 fork 2, cell 1 fork 2); run it with `runner exec x.toml --shard 2/3`; then merge again with every shard folder, or pass --allow-missing to merge without it",
                2,
            ),
            (
                MergeError::MissingShards { missing: vec![shard(2), shard(3)] },
                "shard 2/3 is missing (its 2 jobs: cell 0 fork 2, cell 1 fork 2); run it with `runner exec x.toml --shard 2/3`; shard 3/3 is missing (its 2 jobs: cell 0 fork 3, cell 1 fork 3); run it with `runner exec x.toml --shard 3/3`; then merge again with every shard folder, or pass --allow-missing to merge without them",
                2,
            ),
            (
                MergeError::Invalid(runner_folder::FolderError::Edited("`jobs` is wrong".into())),
                "the merged run.json would not be valid: `jobs` is wrong",
                2,
            ),
            (
                MergeError::Interrupted(runner_os::interrupt::Interrupted),
                "interrupted (Ctrl-C or a termination signal) during the analysis; nothing was written",
                1,
            ),
        ];
        for (e, text, code) in cases {
            assert_eq!(e.to_string(), text);
            let e = RunnerError::from(e);
            assert_eq!((e.to_string().as_str(), e.exit_code()), (text, code));
        }
    }

    #[test]
    fn a_short_sha_is_its_first_twelve_characters() {
        assert_eq!(short("0123456789abcdef"), "0123456789ab");
        assert_eq!(short("unknown"), "unknown");
        assert_eq!(short("ééééééééééééé"), "éééééééééééé");
    }
}
