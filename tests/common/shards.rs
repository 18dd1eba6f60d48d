//! Running shards and merging them, for tests/suite/shards.rs, merge.rs and
//! machines.rs.

use super::runner;
use std::path::{Path, PathBuf};

/// `runner exec SPEC --shard I/N --out DIR EXTRA...` in `dir`, with `env`.
pub fn shard(
    dir: &Path,
    spec: &Path,
    shard: &str,
    out: &str,
    env: &[(&str, &str)],
    extra: &[&str],
) -> PathBuf {
    let out = dir.join(out);
    let mut cmd = runner();
    cmd.current_dir(dir)
        .arg("exec")
        .arg(spec)
        .args(["--quiet", "--shard", shard, "--out"])
        .arg(&out)
        .args(extra);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.assert().success();
    out
}

pub fn merge(dir: &Path, out: &str, shards: &[&Path], extra: &[&str]) -> std::process::Output {
    runner()
        .current_dir(dir)
        .arg("merge")
        .arg(dir.join(out))
        .args(shards)
        .args(extra)
        .output()
        .unwrap()
}

/// The small A/A spec of `SMALL_AA` written into `dir`.
pub fn small(dir: &Path) -> PathBuf {
    super::write_spec(dir, "small", super::SMALL_AA)
}
