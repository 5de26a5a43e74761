//! Sharding a run across CI jobs: `run --partition k/n` keeps the scenarios of shard `k`,
//! `mcp-harness merge` joins the shards' reports.
//!
//! Why by a hash of the scenario's path and not by position in the sorted list (nextest's
//! `count:`): a scenario must land in the same shard whatever else the run holds — a
//! scenario added, a `--filter` changed or a newer library in one job must not move the
//! others, or two jobs would run one scenario twice and another never. Why by scenario and
//! not by run: every transport of a scenario stays in one shard, so a baseline's
//! `<name>@<transport>` keys read the same in a shard as in the whole run.
//!
//! The path hashed is the file's path inside its library: everything up to the last
//! `scenarios` folder is dropped (`scenarios/http/x.yaml`, `./scenarios/http/x.yaml` and the
//! embedded library's copy in a cache folder hash alike); a path with no such folder is
//! hashed as given. The hash is FNV-1a (64 bits), fixed here, so every platform and every
//! version of the harness agrees (the standard library's hasher is not stable).

use crate::error::HarnessError;
use std::path::{Component, Path};

/// Shard `shard` of `of` (both counted from 1): the results contract's type, since a
/// shard's `results.json` names it.
pub use mcp_results::Partition;

/// Reads `k/n` (`hash:k/n` is taken too, as nextest writes it).
pub fn parse(given: &str) -> Result<Partition, HarnessError> {
    let bad = |why: &str| HarnessError::Partition(format!("--partition {given:?}: {why}; write k/n, e.g. 2/4"));
    let text = given.strip_prefix("hash:").unwrap_or(given);
    let (k, n) = text.split_once('/').ok_or_else(|| bad("no `/`"))?;
    let k: u32 = k.trim().parse().map_err(|_| bad("the shard is not a number"))?;
    let n: u32 = n.trim().parse().map_err(|_| bad("the shard count is not a number"))?;
    if n == 0 {
        return Err(bad("the shard count must be 1 or more"));
    }
    if k == 0 || k > n {
        return Err(bad(&format!("the shard must be between 1 and {n}")));
    }
    Ok(Partition { shard: k, of: n })
}

/// Whether the scenario file at `path` belongs to shard `p`.
pub fn holds(p: Partition, path: &Path) -> bool {
    shard_of(path, p.of) == p.shard
}

/// The shard (1..=of) the scenario file at `path` belongs to.
pub fn shard_of(path: &Path, of: u32) -> u32 {
    let key = library_key(path);
    (fnv1a(key.as_bytes()) % u64::from(of.max(1))) as u32 + 1
}

/// The file's path inside its library, `/`-separated: the normal components after the last
/// `scenarios` folder (all of them when there is none).
pub fn library_key(path: &Path) -> String {
    let parts: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(p) => Some(p.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let start = parts[..parts.len().saturating_sub(1)].iter().rposition(|p| p == "scenarios").map_or(0, |i| i + 1);
    parts[start..].join("/")
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn parses_k_of_n_and_says_what_to_write() {
        assert_eq!(parse("2/4").expect("valid"), Partition { shard: 2, of: 4 });
        assert_eq!(parse("hash:1/2").expect("valid"), Partition { shard: 1, of: 2 });
        for bad in ["3", "0/2", "3/2", "1/0", "a/2"] {
            let e = parse(bad).expect_err(bad).to_string();
            assert!(e.contains("write k/n, e.g. 2/4"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_key_is_the_path_inside_the_library() {
        for p in ["scenarios/http/x.yaml", "./scenarios/http/x.yaml", "/home/u/.cache/lib-1/scenarios/http/x.yaml"] {
            assert_eq!(library_key(Path::new(p)), "http/x.yaml", "{p}");
        }
        assert_eq!(library_key(Path::new("my/bug.yaml")), "my/bug.yaml");
        assert_eq!(library_key(Path::new("scenarios/scenarios.yaml")), "scenarios.yaml");
    }

    /// Each file lands in exactly one shard, the same one whatever else is partitioned,
    /// and the shards are not lopsided.
    #[test]
    fn every_file_is_in_exactly_one_shard_and_stays_there() {
        let files: Vec<PathBuf> =
            (0..400).map(|i| PathBuf::from(format!("scenarios/area{}/s{i}.yaml", i % 7))).collect();
        for n in 1..=5u32 {
            let mut sizes = vec![0usize; n as usize];
            for f in &files {
                let holders: Vec<u32> = (1..=n).filter(|k| holds(Partition { shard: *k, of: n }, f)).collect();
                assert_eq!(holders.len(), 1, "{} in {holders:?} of {n}", f.display());
                sizes[holders[0] as usize - 1] += 1;
            }
            let fair = files.len() / n as usize;
            assert!(sizes.iter().all(|s| *s * 2 > fair), "{n} shards: {sizes:?}");
        }
        // Fixed across versions: a change here moves scenarios between existing CI shards.
        assert_eq!(
            shard_of(Path::new("scenarios/stdio/handshake-order.yaml"), 4),
            shard_of(Path::new("stdio/handshake-order.yaml"), 4)
        );
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
