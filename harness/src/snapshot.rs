//! Snapshots: insta-format `.snap` files beside their scenario. The harness compares them
//! itself (so `mcp-harness run` needs no test runner) the way insta does, and writes
//! `.snap.new` on a mismatch, and for the first transcript of a run that failed, for
//! `mcp-harness review` ([`pending`], [`accept`], [`reject`]) to accept or reject.

use crate::targets::Target;
use mcp_results::SnapshotStatus;
use mcp_scenario::Scenario;
use mcp_scenario::TransportName;
use std::path::{Path, PathBuf};

/// The snapshot name for a run: the scenario file's stem, plus `@<transport>` when the
/// scenario runs over several transports, plus `@<client>` for non-bundled targets.
pub fn name_for(scenario_path: &Path, scenario: &Scenario, transport: TransportName, target: &Target) -> String {
    let stem = scenario_path.file_stem().and_then(|s| s.to_str()).unwrap_or(&scenario.name);
    let mut name = stem.to_string();
    if scenario.transport.to_vec().len() > 1 {
        name.push('@');
        name.push_str(transport.as_str());
    }
    if let Some(label) = target.snapshot_label() {
        name.push('@');
        name.push_str(&label);
    }
    name
}

/// The snapshot file for a run, beside the scenario.
pub fn path_for(scenario_path: &Path, scenario: &Scenario, transport: TransportName, target: &Target) -> PathBuf {
    let dir = scenario_path.parent().unwrap_or(Path::new("."));
    dir.join(format!("{}.snap", name_for(scenario_path, scenario, transport, target)))
}

/// The body of a `.snap` file: everything after its `---` header.
pub fn read_body(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("---\n") else { return text };
    match rest.find("\n---\n") {
        Some(i) => &rest[i + 5..],
        None => text,
    }
}

fn normalise(s: &str) -> String {
    s.trim_end().replace("\r\n", "\n")
}

/// The full file text insta would write for this transcript.
pub fn file_text(scenario_path: &Path, transcript: &str) -> String {
    let source = scenario_path.to_string_lossy().replace('\\', "/");
    let source = match source.find("scenarios/") {
        Some(i) => source[i..].to_string(),
        None => source,
    };
    format!("---\nsource: {source}\nexpression: transcript\n---\n{}\n", transcript.trim_end())
}

/// What to do with a run's snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Policy {
    /// Write every transcript over its snapshot (`--update-snapshots`).
    pub update: bool,
    /// A missing snapshot fails the run instead of being written (`--require-snapshots`:
    /// CI for a target whose snapshots are committed).
    pub require: bool,
    /// Compare with the snapshots there are and write nothing (no first snapshot, no
    /// `.snap.new`): the embedded library ([`crate::library`]) is read-only. A run with no
    /// snapshot is then judged by its checks alone (`NotCompared`), unless `require`.
    pub read_only: bool,
}

/// Compares `transcript` with the snapshot at `path`; writes it when asked to, or when
/// there is none yet and none is required.
///
/// The first transcript of a run that `failed` is never taken as its snapshot: it waits as
/// `.snap.new` for review.
pub fn compare_or_update(
    path: &Path,
    scenario_path: &Path,
    transcript: &str,
    policy: Policy,
    failed: bool,
) -> SnapshotStatus {
    let existing = std::fs::read_to_string(path).ok();
    if let Some(text) = &existing
        && normalise(read_body(text)) == normalise(transcript)
    {
        let _ = std::fs::remove_file(new_path(path));
        return SnapshotStatus::Matched;
    }
    if policy.read_only {
        return match existing {
            None if policy.require => SnapshotStatus::Missing { path: path.into() },
            None => SnapshotStatus::NotCompared,
            Some(text) => SnapshotStatus::Mismatch {
                path: path.into(),
                diff: first_difference(&normalise(read_body(&text)), &normalise(transcript)),
            },
        };
    }
    let first = existing.is_none() && !policy.update && !policy.require;
    if first && failed {
        return match std::fs::write(new_path(path), file_text(scenario_path, transcript)) {
            Ok(()) => SnapshotStatus::Withheld { path: path.into() },
            Err(e) => SnapshotStatus::Mismatch { path: path.into(), diff: format!("cannot write the snapshot: {e}") },
        };
    }
    if first || policy.update {
        return match std::fs::write(path, file_text(scenario_path, transcript)) {
            Ok(()) => {
                let _ = std::fs::remove_file(new_path(path));
                let path = path.into();
                if first { SnapshotStatus::Created { path } } else { SnapshotStatus::Updated { path } }
            }
            Err(e) => SnapshotStatus::Mismatch { path: path.into(), diff: format!("cannot write the snapshot: {e}") },
        };
    }
    // Like insta: leave a .snap.new for review, except on CI.
    if std::env::var_os("CI").is_none() {
        let _ = std::fs::write(new_path(path), file_text(scenario_path, transcript));
    }
    match existing {
        None => SnapshotStatus::Missing { path: path.into() },
        Some(text) => SnapshotStatus::Mismatch {
            path: path.into(),
            diff: first_difference(&normalise(read_body(&text)), &normalise(transcript)),
        },
    }
}

/// Every pending `.snap.new` under `paths` (files or folders), sorted.
pub fn pending(paths: &[PathBuf]) -> Vec<PathBuf> {
    let is_pending = |p: &Path| p.to_string_lossy().ends_with(".snap.new");
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let _ = crate::discover::files_under(p, &is_pending, &mut out);
        } else if is_pending(p) {
            out.push(p.clone());
        }
    }
    out.sort();
    out
}

/// The snapshot a pending `.snap.new` would replace.
pub fn accepted_path(pending: &Path) -> PathBuf {
    PathBuf::from(pending.to_string_lossy().trim_end_matches(".new"))
}

/// What review shows of a pending snapshot: the diff against the accepted one, or the whole
/// transcript when there is none yet.
pub fn review_text(pending: &Path) -> std::io::Result<String> {
    let new = std::fs::read_to_string(pending)?;
    Ok(match std::fs::read_to_string(accepted_path(pending)) {
        Ok(old) => first_difference(&normalise(read_body(&old)), &normalise(read_body(&new))),
        Err(_) => format!("(no snapshot yet: the whole transcript)\n{}", read_body(&new).trim_end()),
    })
}

/// Accepts a pending snapshot: it replaces the accepted one.
pub fn accept(pending: &Path) -> std::io::Result<()> {
    std::fs::rename(pending, accepted_path(pending))
}

/// Rejects a pending snapshot: it is deleted.
pub fn reject(pending: &Path) -> std::io::Result<()> {
    std::fs::remove_file(pending)
}

fn new_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".new");
    PathBuf::from(p)
}

/// A line diff of the snapshot (`-`) against this run's transcript (`+`), two lines of
/// context around each change, as plain text (results.json and JUnit keep it so; the
/// terminal colours it, [`crate::terminal`]). The `similar` crate computes it (insta's own).
pub fn first_difference(old: &str, new: &str) -> String {
    let diff = similar::TextDiff::from_lines(old, new);
    let mut out = String::from("--- snapshot\n+++ this run\n");
    for group in diff.grouped_ops(2) {
        for op in group {
            for change in diff.iter_changes(&op) {
                let sign = match change.tag() {
                    similar::ChangeTag::Delete => '-',
                    similar::ChangeTag::Insert => '+',
                    similar::ChangeTag::Equal => ' ',
                };
                out.push(sign);
                out.push(' ');
                out.push_str(change.value().trim_end_matches('\n'));
                out.push('\n');
            }
        }
        out.push_str("@@\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_after_header() {
        assert_eq!(read_body("---\nsource: x\n---\nhello\n"), "hello\n");
        assert_eq!(read_body("plain"), "plain");
    }

    #[test]
    fn one_changed_byte_is_a_mismatch() {
        let dir = tempfile::tempdir().expect("tempdir");
        let snap = dir.path().join("a.snap");
        std::fs::write(&snap, file_text(Path::new("scenarios/stdio/a.yaml"), "line one\nline two")).expect("write");
        assert_eq!(
            compare_or_update(&snap, Path::new("a.yaml"), "line one\nline two\n", Policy::default(), false),
            SnapshotStatus::Matched
        );
        let SnapshotStatus::Mismatch { diff, .. } =
            compare_or_update(&snap, Path::new("a.yaml"), "line one\nline twp", Policy::default(), false)
        else {
            panic!("a changed byte must be a mismatch")
        };
        assert_eq!(diff, "--- snapshot\n+++ this run\n  line one\n- line two\n+ line twp\n@@\n");
    }

    #[test]
    fn a_missing_snapshot_is_written_unless_required() {
        let dir = tempfile::tempdir().expect("tempdir");
        let snap = dir.path().join("a.snap");
        let required = Policy { require: true, ..Policy::default() };
        assert!(matches!(
            compare_or_update(&snap, Path::new("a.yaml"), "t", required, false),
            SnapshotStatus::Missing { .. }
        ));
        assert!(!snap.exists(), "a required snapshot is never written by the run that lacks it");
        assert!(matches!(
            compare_or_update(&snap, Path::new("a.yaml"), "t", Policy::default(), false),
            SnapshotStatus::Created { .. }
        ));
        assert_eq!(compare_or_update(&snap, Path::new("a.yaml"), "t", required, false), SnapshotStatus::Matched);
    }

    #[test]
    fn read_only_compares_and_writes_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let snap = dir.path().join("a.snap");
        let read_only = Policy { read_only: true, ..Policy::default() };
        assert_eq!(compare_or_update(&snap, Path::new("a.yaml"), "t", read_only, true), SnapshotStatus::NotCompared);
        let required = Policy { require: true, ..read_only };
        assert!(matches!(
            compare_or_update(&snap, Path::new("a.yaml"), "t", required, false),
            SnapshotStatus::Missing { .. }
        ));
        std::fs::write(&snap, file_text(Path::new("a.yaml"), "t")).expect("write");
        assert_eq!(compare_or_update(&snap, Path::new("a.yaml"), "t", read_only, false), SnapshotStatus::Matched);
        assert!(matches!(
            compare_or_update(&snap, Path::new("a.yaml"), "u", read_only, false),
            SnapshotStatus::Mismatch { .. }
        ));
        let names: Vec<_> = std::fs::read_dir(dir.path()).expect("dir").flatten().map(|e| e.file_name()).collect();
        assert_eq!(names, ["a.snap"], "no .snap.new, no first snapshot");
    }

    #[test]
    fn a_failed_first_run_waits_for_review_and_review_accepts_or_rejects() {
        let dir = tempfile::tempdir().expect("tempdir");
        let snap = dir.path().join("a.snap");
        let status = compare_or_update(&snap, Path::new("a.yaml"), "bad\n", Policy::default(), true);
        assert_eq!(status, SnapshotStatus::Withheld { path: snap.clone() });
        assert!(!snap.exists(), "never the accepted first snapshot");
        let found = pending(&[dir.path().to_path_buf()]);
        assert_eq!(found, [dir.path().join("a.snap.new")]);
        assert!(review_text(&found[0]).expect("readable").contains("no snapshot yet"));
        accept(&found[0]).expect("accepted");
        assert!(snap.exists() && pending(&[dir.path().to_path_buf()]).is_empty());
        // A mismatch leaves a pending one beside the accepted (off CI); review shows the diff.
        std::fs::write(new_path(&snap), file_text(Path::new("a.yaml"), "good\n")).expect("pending");
        let found = pending(&[dir.path().to_path_buf()]);
        let diff = review_text(&found[0]).expect("readable");
        assert!(diff.contains("- bad") && diff.contains("+ good"), "{diff}");
        reject(&found[0]).expect("rejected");
        assert!(pending(&[dir.path().to_path_buf()]).is_empty());
        assert_eq!(read_body(&std::fs::read_to_string(&snap).expect("snap")).trim(), "bad");
    }
}
