//! Which shard this process is: `--shard I/N`, else the scheduler's
//! environment. Pure (the environment comes in as a function), so every
//! case is a unit test.
//!
//! - `--shard I/N`: I from 1 to N, as jest and Playwright number them. It
//!   wins over the environment (`--shard 1/1` runs the whole plan inside an
//!   array job).
//! - Slurm job array: `SLURM_ARRAY_TASK_ID` relative to
//!   `SLURM_ARRAY_TASK_MIN` (divided by `SLURM_ARRAY_TASK_STEP` when the
//!   array has a step), out of `SLURM_ARRAY_TASK_COUNT`: `--array=1-4` and
//!   `--array=0-3` both give shards 1..4 of 4.
//! - Kubernetes Indexed Job: the 0-based `JOB_COMPLETION_INDEX`, out of
//!   `--shards N` (the Job's `completions`; Kubernetes does not put it in
//!   the pod's environment).

use super::{ShardError, Source};

/// The shard a process runs: 1-based index of count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Selection {
    pub index: u32,
    pub count: u32,
    pub source: Source,
}

fn number(
    env: &dyn Fn(&str) -> Option<String>,
    name: &'static str,
) -> Result<Option<u64>, ShardError> {
    match env(name).filter(|v| !v.trim().is_empty()) {
        None => Ok(None),
        Some(v) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| ShardError::NotANumber { name, value: v }),
    }
}

/// The shard from the flag or the environment; `None`: the whole plan.
pub(crate) fn select(
    flag: Option<(u32, u32)>,
    shards: Option<u32>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Selection>, ShardError> {
    if shards == Some(0) {
        return Err(ShardError::ZeroShards);
    }
    if let Some((index, count)) = flag {
        if let Some(n) = shards.filter(|&n| n != count) {
            return Err(ShardError::FlagsDisagree {
                index,
                count,
                shards: n,
            });
        }
        return Ok(Some(Selection {
            index,
            count,
            source: Source::Flag,
        }));
    }
    if let Some(id) = number(env, "SLURM_ARRAY_TASK_ID")? {
        return slurm(id, shards, env).map(Some);
    }
    if let Some(index) = number(env, "JOB_COMPLETION_INDEX")? {
        let Some(count) = shards else {
            return Err(ShardError::KubernetesCountUnknown { index });
        };
        if index >= u64::from(count) {
            return Err(ShardError::KubernetesIndex { index, count });
        }
        return Ok(Some(Selection {
            index: index as u32 + 1,
            count,
            source: Source::Kubernetes,
        }));
    }
    match shards {
        Some(n) => Err(ShardError::NoIndex { shards: n }),
        None => Ok(None),
    }
}

fn slurm(
    id: u64,
    shards: Option<u32>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Selection, ShardError> {
    let missing = |name: &'static str| ShardError::SlurmUnset { id, name };
    let min =
        number(env, "SLURM_ARRAY_TASK_MIN")?.ok_or_else(|| missing("SLURM_ARRAY_TASK_MIN"))?;
    let count =
        number(env, "SLURM_ARRAY_TASK_COUNT")?.ok_or_else(|| missing("SLURM_ARRAY_TASK_COUNT"))?;
    let step = number(env, "SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
    let offset = id.checked_sub(min);
    let index = offset.filter(|o| o % step == 0).map(|o| o / step);
    let Some(index) = index.filter(|&i| i < count && count <= u64::from(u32::MAX)) else {
        return Err(ShardError::SlurmUneven {
            id,
            count,
            min,
            step,
        });
    };
    let count = count as u32;
    if let Some(n) = shards.filter(|&n| n != count) {
        return Err(ShardError::SlurmCount { shards: n, count });
    }
    Ok(Selection {
        index: index as u32 + 1,
        count,
        source: Source::Slurm,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    fn pick(flag: Option<(u32, u32)>, shards: Option<u32>, vars: &[(&str, &str)]) -> Selection {
        select(flag, shards, &env(vars)).unwrap().unwrap()
    }

    fn refused(flag: Option<(u32, u32)>, shards: Option<u32>, vars: &[(&str, &str)]) -> String {
        select(flag, shards, &env(vars)).unwrap_err().to_string()
    }

    #[test]
    fn the_flag_is_one_based_and_checked() {
        assert_eq!(runner_folder::invocation::parse_shard("2/4"), Ok((2, 4)));
        assert_eq!(runner_folder::invocation::parse_shard("1/1"), Ok((1, 1)));
        for bad in ["0/4", "5/4", "1/0", "2", "a/b", "-1/2", "1/2/3"] {
            let e = runner_folder::invocation::parse_shard(bad)
                .unwrap_err()
                .to_string();
            assert!(e.contains("--shard 1/4") && e.contains(bad), "{e}");
        }
    }

    #[test]
    fn nothing_set_is_the_whole_plan_and_the_flag_wins() {
        assert_eq!(select(None, None, &env(&[])), Ok(None));
        let s = pick(Some((2, 3)), None, &[("SLURM_ARRAY_TASK_ID", "1")]);
        assert_eq!((s.index, s.count, s.source), (2, 3, Source::Flag));
        assert!(refused(Some((1, 3)), Some(4), &[]).contains("disagree"));
    }

    #[test]
    fn slurm_arrays_count_from_their_minimum() {
        let (id, min, count, step) = (
            "SLURM_ARRAY_TASK_ID",
            "SLURM_ARRAY_TASK_MIN",
            "SLURM_ARRAY_TASK_COUNT",
            "SLURM_ARRAY_TASK_STEP",
        );
        let s = pick(None, None, &[(id, "1"), (min, "1"), (count, "4")]);
        assert_eq!((s.index, s.count, s.source), (1, 4, Source::Slurm));
        let s = pick(None, None, &[(id, "3"), (min, "0"), (count, "4")]);
        assert_eq!((s.index, s.count), (4, 4));
        let s = pick(
            None,
            None,
            &[(id, "14"), (min, "10"), (count, "3"), (step, "2")],
        );
        assert_eq!((s.index, s.count), (3, 3));
        // A list array (--array=1,3,7) is not evenly spaced.
        let e = refused(None, None, &[(id, "7"), (min, "1"), (count, "3")]);
        assert!(
            e.contains("--array=1-3") && e.contains("--shard I/N"),
            "{e}"
        );
        let e = refused(None, Some(5), &[(id, "1"), (min, "1"), (count, "4")]);
        assert!(e.contains("SLURM_ARRAY_TASK_COUNT 4"), "{e}");
        let e = refused(None, None, &[(id, "2")]);
        assert!(e.contains("SLURM_ARRAY_TASK_MIN is not set"), "{e}");
        let e = refused(None, None, &[(id, "x")]);
        assert!(e.contains("SLURM_ARRAY_TASK_ID is `x`"), "{e}");
    }

    #[test]
    fn kubernetes_indexes_from_zero_and_needs_the_count() {
        let s = pick(None, Some(4), &[("JOB_COMPLETION_INDEX", "0")]);
        assert_eq!((s.index, s.count, s.source), (1, 4, Source::Kubernetes));
        let s = pick(None, Some(4), &[("JOB_COMPLETION_INDEX", "3")]);
        assert_eq!(s.index, 4);
        let e = refused(None, None, &[("JOB_COMPLETION_INDEX", "1")]);
        assert!(e.contains("--shards N"), "{e}");
        let e = refused(None, Some(2), &[("JOB_COMPLETION_INDEX", "2")]);
        assert!(e.contains("0 to 1"), "{e}");
        let e = refused(None, Some(2), &[]);
        assert!(e.contains("--shard I/2"), "{e}");
        assert!(refused(None, Some(0), &[]).contains("positive"));
    }
}
