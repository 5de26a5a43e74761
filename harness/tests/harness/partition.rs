//! `run --partition k/n` on a `cmd:` target and `merge`: the shards' runs joined are the
//! whole run's runs, with the same verdicts, and the merged folder is one report with one
//! baseline comparison.
//!
//! The client is the reference client (`clients/reference/`, Python standard library only)
//! over the stdio folder's quick pass, snapshots off: its verdicts come from the checks
//! alone, so the two runs can be compared run for run.

use assert_cmd::Command;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn harness() -> Command {
    Command::cargo_bin("mcp-harness").expect("binary built")
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// (scenario path, transport) → (status, first failing check) of a reports folder.
fn verdicts(dir: &Path) -> BTreeMap<(String, String), (String, Option<String>)> {
    let text = std::fs::read_to_string(dir.join("results.json")).expect("results.json");
    let doc: Value = serde_json::from_str(&text).expect("JSON");
    doc["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| {
            let key = (r["path"].as_str().expect("path").to_string(), r["transport"].as_str().expect("t").to_string());
            let first = r["failures"].get(0).map(|f| f["check"].as_str().unwrap_or_default().to_string());
            (key, (r["status"].as_str().expect("status").to_string(), first))
        })
        .collect()
}

/// The JUnit test cases of a folder, by name, with their verdict element.
fn cases(dir: &Path) -> BTreeMap<String, String> {
    let xml = std::fs::read_to_string(dir.join("junit.xml")).expect("junit.xml");
    xml.split("<testcase ")
        .skip(1)
        .map(|case| {
            let name = case.split("name=\"").nth(1).and_then(|s| s.split('"').next()).unwrap_or_default();
            let verdict = ["<failure", "<error", "<skipped"].iter().find(|v| case.contains(**v)).unwrap_or(&"passed");
            (name.to_string(), verdict.to_string())
        })
        .collect()
}

#[test]
fn the_shards_of_a_cmd_run_merge_into_the_whole_run() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let run = |reports: &Path, extra: &[&str]| {
        harness()
            .current_dir(repo())
            .args(["run", "scenarios/stdio", "--tag", "!slow", "--no-snapshots", "-q"])
            .args(["--target", "cmd:clients/reference/run", "--reports"])
            .arg(reports)
            .args(extra)
            .env("CI", "1")
            .output()
            .expect("runs")
    };
    let whole = tmp.path().join("whole");
    let out = run(&whole, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    let shards: Vec<PathBuf> = (1..=3).map(|k| tmp.path().join(format!("shard-{k}"))).collect();
    let mut sizes = Vec::new();
    for (k, dir) in shards.iter().enumerate() {
        let out = run(dir, &["--partition", &format!("{}/3", k + 1)]);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
        sizes.push(verdicts(dir).len());
    }
    assert!(sizes.iter().all(|n| *n > 0), "every shard holds some runs: {sizes:?}");
    let merged = tmp.path().join("merged");
    harness().arg("merge").args(&shards).arg("--reports").arg(&merged).assert().code(0);
    let (whole_verdicts, merged_verdicts) = (verdicts(&whole), verdicts(&merged));
    assert!(whole_verdicts.len() > 20, "{whole_verdicts:?}");
    assert_eq!(merged_verdicts, whole_verdicts);
    assert_eq!(sizes.iter().sum::<usize>(), whole_verdicts.len(), "no run in two shards");
    assert_eq!(cases(&merged), cases(&whole));
    let report = std::fs::read_to_string(merged.join("index.html")).expect("index.html");
    assert!(report.contains("\"connections\":[{"), "the merged report draws the shards' wire");
    assert!(merged.join("transcripts/scenarios/stdio/handshake-order.stdio.txt").is_file());

    // One baseline comparison over the merged runs: a listed scenario that passes is stale.
    let passing = std::fs::read_to_string(merged.join("results.json")).expect("results");
    let doc: Value = serde_json::from_str(&passing).expect("JSON");
    let name = doc["runs"]
        .as_array()
        .and_then(|runs| runs.iter().find(|r| r["status"] == "passed"))
        .and_then(|r| r["scenario"].as_str())
        .expect("a passing run")
        .to_string();
    let baseline = tmp.path().join("baseline.yml");
    std::fs::write(&baseline, format!("client:\n  - {name}\n")).expect("write");
    let out = harness()
        .arg("merge")
        .args(&shards)
        .arg("--reports")
        .arg(&merged)
        .arg("--expected-failures")
        .arg(&baseline)
        .output()
        .expect("merges");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains(&format!("NOW PASSES   {name} [stdio]")) && stdout.contains("CHANGED"), "{stdout}");

    // A shard left out is refused, not merged into a report that looks complete.
    let out = harness().arg("merge").args(&shards[..2]).arg("--reports").arg(&merged).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("shard(s) 3/3 missing"));
}
