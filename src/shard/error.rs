//! Why this exec cannot be given a shard: the `--shard`/`--shards` flags
//! and the scheduler's variables disagree, or a resumed folder is another
//! shard. A kind per case, carrying the numbers its sentence names; the
//! caller turns it into bad input (exit 2).

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ShardError {
    #[error("{name} is `{value}`, not a whole number")]
    NotANumber { name: &'static str, value: String },
    #[error("--shards must be a positive number of shards")]
    ZeroShards,
    #[error("--shard {index}/{count} and --shards {shards} disagree; give one of them")]
    FlagsDisagree { index: u32, count: u32, shards: u32 },
    #[error("SLURM_ARRAY_TASK_ID is {id} but {name} is not set; pass --shard I/N instead")]
    SlurmUnset { id: u64, name: &'static str },
    #[error("SLURM_ARRAY_TASK_ID {id} is not one of {count} evenly spaced tasks from SLURM_ARRAY_TASK_MIN {min} (step {step}); submit a range such as --array=1-{count}, or pass --shard I/N")]
    SlurmUneven {
        id: u64,
        count: u64,
        min: u64,
        step: u64,
    },
    #[error("--shards {shards} disagrees with SLURM_ARRAY_TASK_COUNT {count}; leave --shards out in a Slurm array")]
    SlurmCount { shards: u32, count: u32 },
    #[error("JOB_COMPLETION_INDEX is {index} (a Kubernetes Indexed Job), but the number of shards is not known; pass --shards N with N the Job's completions")]
    KubernetesCountUnknown { index: u64 },
    #[error("JOB_COMPLETION_INDEX is {index}, but --shards {count} numbers the shards 0 to {}; pass the Job's completions as --shards", .count - 1)]
    KubernetesIndex { index: u64, count: u32 },
    #[error("--shards {shards} needs the shard's index from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID, and neither is set; outside a scheduler pass --shard I/{shards}")]
    NoIndex { shards: u32 },
    /// Resuming a shard's folder as another shard; `from` says where this
    /// exec's shard came from (flag, slurm, kubernetes).
    #[error("this folder holds shard {held_index}/{held_count}, but this exec is shard {index}/{count} (from {from}); resume it as the shard it is")]
    ResumeOther {
        held_index: u32,
        held_count: u32,
        index: u32,
        count: u32,
        from: String,
    },
    #[error("this folder holds a whole run, not a shard, but this exec is shard {index}/{count} (from {from}); resume it without --shard, outside a scheduler's array")]
    ResumeWhole {
        index: u32,
        count: u32,
        from: String,
    },
    #[error("shard {index}/{count} of a spec without a seed: every shard would draw its own seed, and shards of different seeds cannot be merged; set `seed = N` in the file or pass --set seed=N to every shard")]
    NoSeed { index: u32, count: u32 },
    #[error("shard {index}/{count} of a spec whose gate has a percentage threshold: its self-check is sized from the whole run's baseline median, which no shard has; give gate.max_slowdown as a duration (e.g. \"50us\") to run it in shards")]
    PercentageGate { index: u32, count: u32 },
    #[error("shard {index}/{count}: the plan has only {jobs} jobs (cells x forks), so it can be cut into at most {jobs} shards")]
    MoreShardsThanJobs { index: u32, count: u32, jobs: usize },
}
