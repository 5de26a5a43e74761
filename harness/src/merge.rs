//! `mcp-harness merge`: the reports folders of a partitioned run's shards (`run --partition
//! k/n --reports DIR`, one per CI job) joined into the runs of one whole run, so that one
//! report and one baseline comparison cover the library.
//!
//! Joining refuses what would make the merged report lie: a shard missing or given twice (a
//! scenario never run would read as never failing), a run found in two folders (shards of
//! different `n`, or one folder given twice), and a folder that is not a shard next to ones
//! that are. The runs come out in the order a whole run lists them (by the scenario's path
//! inside its library; a scenario's transports stay together, in their shard's order).

use crate::error::HarnessError;
use crate::partition::{self, Partition};
use crate::report::{self, Written};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// Reads each folder's reports and joins them (see the module docs). The wall time is the
/// slowest shard's: shards run side by side.
pub fn join(dirs: &[PathBuf]) -> Result<Written, HarnessError> {
    if dirs.is_empty() {
        return Err(HarnessError::Merge(
            "give the shards' reports folders, e.g. `mcp-harness merge shard-1 shard-2`".into(),
        ));
    }
    let mut shards: Vec<(&Path, Written)> = Vec::new();
    for dir in dirs {
        shards.push((dir, report::read(dir)?));
    }
    check_partitions(&shards)?;
    let mut seen: HashMap<(String, &'static str, String), &Path> = HashMap::new();
    let mut runs = Vec::new();
    let mut wall_ms = 0;
    for (dir, written) in shards {
        wall_ms = wall_ms.max(written.wall_ms);
        for r in written.runs {
            let key = (partition::library_key(&r.path), r.transport.as_str(), r.target.clone());
            if let Some(first) = seen.insert(key, dir) {
                return Err(HarnessError::Merge(format!(
                    "{} [{}, {}] is in both {} and {}: give each shard's folder once, from shards of one `--partition k/n` count",
                    r.scenario,
                    r.transport.as_str(),
                    r.target,
                    first.display(),
                    dir.display()
                )));
            }
            runs.push(r);
        }
    }
    runs.sort_by_cached_key(|r| partition::library_key(&r.path));
    Ok(Written { runs, wall_ms, partition: None })
}

/// Every folder a shard of the same count, and every shard of that count there once.
fn check_partitions(shards: &[(&Path, Written)]) -> Result<(), HarnessError> {
    let marked: Vec<(&Path, Partition)> = shards.iter().filter_map(|(d, w)| w.partition.map(|p| (*d, p))).collect();
    let Some((_, first)) = marked.first() else { return Ok(()) };
    if let Some((dir, _)) = shards.iter().find(|(_, w)| w.partition.is_none()) {
        return Err(HarnessError::Merge(format!(
            "{} holds a whole run, not a shard (it was run without --partition): merge only the shards' folders",
            dir.display()
        )));
    }
    if let Some((dir, p)) = marked.iter().find(|(_, p)| p.of != first.of) {
        return Err(HarnessError::Merge(format!(
            "{} is shard {p} but {} is shard {first}: merge shards of one `--partition k/n` count",
            dir.display(),
            marked[0].0.display()
        )));
    }
    let mut found = BTreeSet::new();
    for (dir, p) in &marked {
        if !found.insert(p.shard) {
            return Err(HarnessError::Merge(format!("shard {p} is given twice (again in {})", dir.display())));
        }
    }
    let missing: Vec<String> =
        (1..=first.of).filter(|k| !found.contains(k)).map(|k| format!("{k}/{}", first.of)).collect();
    if !missing.is_empty() {
        return Err(HarnessError::Merge(format!(
            "shard(s) {} missing: their scenarios would be reported as never failing; give every shard's reports folder",
            missing.join(", ")
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_results::RunResult;

    fn run(path: &str, transport: &str) -> RunResult {
        serde_json::from_value(serde_json::json!({
            "scenario": Path::new(path).file_stem().and_then(|s| s.to_str()),
            "path": path,
            "transport": transport,
            "target": "cmd:x",
            "status": "passed",
            "reason": null,
            "client": null,
            "baseline": null,
        }))
        .expect("a run")
    }

    fn shard(dir: &Path, name: &str, partition: Option<Partition>, runs: &[RunResult]) -> PathBuf {
        let out = dir.join(name);
        report::write(&out, runs, 7, partition).expect("written");
        out
    }

    #[test]
    fn shards_join_in_library_order_and_a_gap_or_a_repeat_is_refused() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let p = |k| Some(Partition { shard: k, of: 2 });
        let a = shard(tmp.path(), "a", p(1), &[run("scenarios/stdio/b.yaml", "stdio")]);
        let b = shard(
            tmp.path(),
            "b",
            p(2),
            &[run("scenarios/http/a.yaml", "http"), run("scenarios/http/a.yaml", "legacy-sse")],
        );
        let joined = join(&[a.clone(), b.clone()]).expect("joins");
        let order: Vec<(&str, &str)> =
            joined.runs.iter().map(|r| (r.scenario.as_str(), r.transport.as_str())).collect();
        assert_eq!(order, [("a", "http"), ("a", "legacy-sse"), ("b", "stdio")]);
        assert_eq!(joined.wall_ms, 7);

        let e = join(std::slice::from_ref(&a)).expect_err("shard 2 missing").to_string();
        assert!(e.contains("shard(s) 2/2 missing"), "{e}");
        let e = join(&[a.clone(), a.clone()]).expect_err("twice").to_string();
        assert!(e.contains("shard 1/2 is given twice"), "{e}");
        let whole = shard(tmp.path(), "whole", None, &[run("scenarios/x.yaml", "stdio")]);
        let e = join(&[a.clone(), whole]).expect_err("not a shard").to_string();
        assert!(e.contains("holds a whole run, not a shard"), "{e}");
        let other =
            shard(tmp.path(), "c", Some(Partition { shard: 2, of: 3 }), &[run("scenarios/stdio/b.yaml", "stdio")]);
        let e = join(&[a.clone(), other]).expect_err("other count").to_string();
        assert!(e.contains("merge shards of one `--partition k/n` count"), "{e}");
        let e = join(&[tmp.path().join("nowhere")]).expect_err("no folder").to_string();
        assert!(e.contains("a reports folder that `mcp-harness run --reports DIR` wrote"), "{e}");
    }

    #[test]
    fn a_run_in_two_folders_is_refused() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let a = shard(tmp.path(), "a", None, &[run("scenarios/stdio/b.yaml", "stdio")]);
        let b = shard(tmp.path(), "b", None, &[run("scenarios/stdio/b.yaml", "stdio")]);
        let e = join(&[a, b]).expect_err("duplicate").to_string();
        assert!(e.contains("b [stdio, cmd:x] is in both"), "{e}");
    }

    #[test]
    fn transcripts_and_wire_come_back_from_the_folder() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut r = run("scenarios/stdio/b.yaml", "stdio");
        r.transcript = "the transcript\n".into();
        r.wire =
            vec![vec![serde_json::from_value(serde_json::json!({"event": "started", "pid": 42})).expect("an event")]];
        let a = shard(tmp.path(), "a", None, std::slice::from_ref(&r));
        let back = join(&[a]).expect("joins");
        assert_eq!(back.runs[0].transcript, r.transcript);
        assert_eq!(back.runs[0].wire, r.wire);
    }
}
