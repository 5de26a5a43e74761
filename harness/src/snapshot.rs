//! Snapshots: insta-format `.snap` files beside their scenario. The harness compares them
//! itself (so `mcp-harness run` needs no test runner) the way insta does, and writes
//! `.snap.new` on a mismatch so `cargo insta review` can accept it.

use crate::targets::Target;
use mcp_scenario::Scenario;
use mcp_scenario::TransportName;
use mcp_scenario::results::SnapshotStatus;
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
}

/// Compares `transcript` with the snapshot at `path`; writes it when asked to, or when
/// there is none yet and none is required.
pub fn compare_or_update(path: &Path, scenario_path: &Path, transcript: &str, policy: Policy) -> SnapshotStatus {
    let existing = std::fs::read_to_string(path).ok();
    if let Some(text) = &existing
        && normalise(read_body(text)) == normalise(transcript)
    {
        let _ = std::fs::remove_file(new_path(path));
        return SnapshotStatus::Matched;
    }
    let first = existing.is_none() && !policy.update && !policy.require;
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
    // Like insta: leave a .snap.new for `cargo insta review`, except on CI.
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
            compare_or_update(&snap, Path::new("a.yaml"), "line one\nline two\n", Policy::default()),
            SnapshotStatus::Matched
        );
        let SnapshotStatus::Mismatch { diff, .. } =
            compare_or_update(&snap, Path::new("a.yaml"), "line one\nline twp", Policy::default())
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
        assert!(matches!(compare_or_update(&snap, Path::new("a.yaml"), "t", required), SnapshotStatus::Missing { .. }));
        assert!(!snap.exists(), "a required snapshot is never written by the run that lacks it");
        assert!(matches!(
            compare_or_update(&snap, Path::new("a.yaml"), "t", Policy::default()),
            SnapshotStatus::Created { .. }
        ));
        assert_eq!(compare_or_update(&snap, Path::new("a.yaml"), "t", required), SnapshotStatus::Matched);
    }
}
