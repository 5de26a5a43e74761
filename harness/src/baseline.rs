//! Expected-failures baselines, so CI fails only when a client's behaviour changes.
//!
//! The file format is the official MCP conformance suite's `expected-failures.yml`
//! (`client:` and `server:` lists of scenario names; this harness tests clients, so it reads
//! `client:`), extended with a `flaky:` list whose scenarios may pass or fail. A scenario
//! that runs over several transports is named `<name>@<transport>`.
//!
//! Verdicts: a failure that is listed is expected; a failure that is not is a regression; a
//! listed scenario that passes is a stale entry (it fails the run too, so the baseline
//! burns down as clients improve); a flaky one never fails the run.
//!
//! The driver self-test (`scenarios/driver-selftest/`) is never baselined: a driver applies
//! each plan field or reports it `unsupported` (the run is skipped), so a failure there is a
//! driver bug to fix. A baseline that lists one is refused, and `render` never writes one.

use crate::error::HarnessError;
use mcp_results::{RunResult, Status, Verdict};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The folder of the driver self-test scenarios (clients/README.md, "Driver self-test").
pub const SELFTEST_DIR: &str = "driver-selftest";

/// Whether a scenario file belongs to the driver self-test.
pub fn is_selftest(path: &Path) -> bool {
    path.components().any(|c| c.as_os_str() == SELFTEST_DIR)
}

/// A client's baseline.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Baseline {
    /// Scenarios the client is known to fail.
    pub client: Vec<String>,
    /// Kept for compatibility with the official format; unused here.
    pub server: Vec<String>,
    /// Scenarios whose outcome is not stable for this client.
    pub flaky: Vec<String>,
    /// Runs this client is known to leave *not exercised* (it never meets the fault, or never
    /// finishes its plan after it): CI notices when one passes, or another joins them.
    pub not_exercised: Vec<String>,
}

impl Baseline {
    /// Reads a baseline file; errors name the file (and line:column for YAML errors).
    pub fn load(path: &Path) -> Result<Self, HarnessError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| HarnessError::io(format!("reading baseline {}", path.display()), e))?;
        serde_saphyr::from_str(&text).map_err(|e| {
            let at = e.location().map(|l| format!(":{}:{}", l.line(), l.column())).unwrap_or_default();
            HarnessError::io(
                format!("baseline {}{at}", path.display()),
                std::io::Error::other(e.to_string().lines().next().unwrap_or("invalid YAML").to_string()),
            )
        })
    }

    /// Refuses a baseline that lists (under `client:` or `flaky:`) a scenario of the driver
    /// self-test: `selftest` holds the names of the self-test scenarios being run.
    pub fn refuse_selftest(&self, file: &Path, selftest: &[&str]) -> Result<(), HarnessError> {
        let named = |k: &String| selftest.contains(&k.split('@').next().unwrap_or(k));
        let entries: Vec<String> =
            self.client.iter().chain(&self.flaky).chain(&self.not_exercised).filter(|k| named(k)).cloned().collect();
        if entries.is_empty() {
            Ok(())
        } else {
            Err(HarnessError::SelftestBaselined { file: PathBuf::from(file), entries })
        }
    }

    /// The key a run is listed under.
    pub fn key(result: &RunResult, multi_transport: bool) -> String {
        if multi_transport {
            format!("{}@{}", result.scenario, result.transport.as_str())
        } else {
            result.scenario.clone()
        }
    }

    /// The verdict for one run.
    pub fn verdict(&self, key: &str, status: Status) -> Verdict {
        let listed = self.client.iter().any(|k| k == key);
        let flaky = self.flaky.iter().any(|k| k == key);
        let unexercised = self.not_exercised.iter().any(|k| k == key);
        match status {
            Status::Skipped | Status::Pending | Status::NotRun | Status::NotApplicable => Verdict::Skipped,
            _ if flaky => Verdict::Flaky,
            Status::Passed | Status::Warned if listed || unexercised => Verdict::StaleEntry,
            Status::Passed | Status::Warned => Verdict::Pass,
            Status::Failed | Status::Error if listed => Verdict::ExpectedFailure,
            Status::Failed | Status::Error => Verdict::UnexpectedFailure,
            Status::NotExercised if unexercised => Verdict::ExpectedNotExercised,
            Status::NotExercised => Verdict::UnexpectedNotExercised,
            // No verdict was reached; it fails the job like a failure unless listed flaky.
            Status::FlakyUnderLoad => Verdict::UnexpectedFailure,
        }
    }

    /// Whether this baseline lists `r` as a known failure (`client:` or `flaky:`), as a run
    /// ends: `multi` says whether its scenario runs over more than one transport.
    pub fn expects_failure(&self, r: &RunResult, multi: bool) -> bool {
        matches!(self.verdict(&Self::key(r, multi), r.status), Verdict::ExpectedFailure | Verdict::Flaky)
    }

    /// Verdicts for every run, in order.
    pub fn judge(&self, results: &[RunResult]) -> Vec<Verdict> {
        results
            .iter()
            .map(|r| {
                let multi = results.iter().filter(|o| o.scenario == r.scenario).count() > 1;
                self.verdict(&Self::key(r, multi), r.status)
            })
            .collect()
    }
}

/// Writes the baseline that makes the current results pass: failures under `client:`, runs
/// not exercised under `not_exercised:`, keeping the `flaky:` list of `previous` and, from
/// `previous_text` (the file as it was), the comment lines written above each entry that is
/// still listed: the reasons reviewers wrote down survive a regeneration.
pub fn render(client: &str, results: &[RunResult], previous: &Baseline, previous_text: &str) -> String {
    let notes = entry_comments(previous_text);
    let keys = |want: fn(Status) -> bool| {
        let mut keys: Vec<String> = results
            .iter()
            .filter(|r| want(r.status))
            .filter(|r| !is_selftest(&r.path))
            .map(|r| {
                let multi = results.iter().filter(|o| o.scenario == r.scenario).count() > 1;
                Baseline::key(r, multi)
            })
            .filter(|k| !previous.flaky.contains(k))
            .collect();
        keys.sort();
        keys.dedup();
        keys
    };
    let list = |out: &mut String, name: &str, entries: &[String]| {
        if entries.is_empty() {
            out.push_str(&format!("{name}: []\n"));
            return;
        }
        out.push_str(&format!("{name}:\n"));
        for k in entries {
            for line in notes.get(k).into_iter().flatten() {
                out.push_str(&format!("{line}\n"));
            }
            out.push_str(&format!("  - {k}\n"));
        }
    };
    let mut out = format!(
        "# Scenarios {client} is known to fail (the official conformance suite's expected-failures\n\
         # format, plus `flaky:`). CI fails when a listed scenario starts passing (remove it) or an\n\
         # unlisted one fails. Regenerate with `make baselines`; review every change.\n"
    );
    list(&mut out, "client", &keys(|s| matches!(s, Status::Failed | Status::Error)));
    let unexercised = keys(|s| s == Status::NotExercised);
    if !unexercised.is_empty() {
        out.push_str(
            "# Runs the client leaves not exercised (it never meets the fault, or never finishes the plan\n\
             # after it): CI fails when one passes (remove it) or another joins them.\n",
        );
    }
    list(&mut out, "not_exercised", &unexercised);
    list(&mut out, "flaky", &previous.flaky);
    out
}

/// The comment lines (`  # …`) written directly above each list entry (`  - key`) of a
/// baseline file, by key.
fn entry_comments(text: &str) -> std::collections::HashMap<String, Vec<String>> {
    let mut found = std::collections::HashMap::new();
    let mut pending = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if line.starts_with(' ') && trimmed.starts_with('#') {
            pending.push(line.to_string());
        } else if let Some(key) = trimmed.strip_prefix("- ").filter(|_| line.starts_with(' ')) {
            if !pending.is_empty() {
                found.insert(key.trim().to_string(), std::mem::take(&mut pending));
            }
        } else {
            pending.clear();
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_the_listing() {
        let b = Baseline {
            client: vec!["known".into()],
            server: vec![],
            flaky: vec!["shaky".into()],
            not_exercised: vec!["unmet".into()],
        };
        assert_eq!(b.verdict("known", Status::Failed), Verdict::ExpectedFailure);
        assert_eq!(b.verdict("known", Status::Passed), Verdict::StaleEntry);
        assert_eq!(b.verdict("new", Status::Failed), Verdict::UnexpectedFailure);
        assert_eq!(b.verdict("new", Status::Passed), Verdict::Pass);
        assert_eq!(b.verdict("shaky", Status::Failed), Verdict::Flaky);
        assert_eq!(b.verdict("known", Status::Skipped), Verdict::Skipped);
        assert_eq!(b.verdict("unmet", Status::NotExercised), Verdict::ExpectedNotExercised);
        assert_eq!(b.verdict("new", Status::NotExercised), Verdict::UnexpectedNotExercised);
        assert_eq!(b.verdict("unmet", Status::Passed), Verdict::StaleEntry);
        assert_eq!(b.verdict("new", Status::NotApplicable), Verdict::Skipped);
        assert!(Verdict::StaleEntry.fails() && Verdict::UnexpectedFailure.fails() && !Verdict::Flaky.fails());
    }

    #[test]
    fn a_regenerated_baseline_keeps_the_comments_of_entries_still_listed() {
        let run = |name: &str, status: Status| -> RunResult {
            serde_json::from_value(serde_json::json!({
                "scenario": name, "path": format!("scenarios/stdio/{name}.yaml"), "transport": "stdio",
                "status": status.as_str(),
            }))
            .expect("a run")
        };
        let previous_text =
            "client:\n  # why a fails\n  - a\n  # why gone fails\n  - gone\nflaky:\n  # why it flips\n  - shaky\n";
        let previous: Baseline = serde_saphyr::from_str(previous_text).expect("parses");
        let results = [run("a", Status::Failed), run("gone", Status::Passed), run("idle", Status::NotExercised)];
        let text = render("c", &results, &previous, previous_text);
        assert!(text.contains("client:\n  # why a fails\n  - a\n"), "{text}");
        assert!(!text.contains("why gone fails"), "{text}");
        assert!(text.contains("not_exercised:\n  - idle\n"), "{text}");
        assert!(text.ends_with("flaky:\n  # why it flips\n  - shaky\n"), "{text}");
        let back: Baseline = serde_saphyr::from_str(&text).expect("the written file parses");
        assert_eq!((back.client, back.not_exercised), (vec!["a".to_string()], vec!["idle".to_string()]));
    }

    #[test]
    fn a_driver_selftest_scenario_is_never_baselined() {
        let b = Baseline {
            client: vec!["ok-to-list".into(), "driver-x@http".into()],
            server: vec![],
            flaky: vec!["driver-y".into()],
            not_exercised: vec![],
        };
        let err = b.refuse_selftest(Path::new("b.yml"), &["driver-x", "driver-y"]).expect_err("refused");
        let text = err.to_string();
        assert!(text.contains("driver-x@http, driver-y") && text.contains("unsupported"), "{text}");
        assert!(b.refuse_selftest(Path::new("b.yml"), &["other"]).is_ok());
        assert!(is_selftest(Path::new("scenarios/driver-selftest/request-params.yaml")));
        assert!(!is_selftest(Path::new("scenarios/stdio/request-params.yaml")));
    }

    #[test]
    fn reads_the_official_format() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("expected-failures.yml");
        std::fs::write(&path, "client:\n  - a\n  - b\nserver: []\nflaky:\n  - c\n").expect("write");
        let b = Baseline::load(&path).expect("loads");
        assert_eq!((b.client.len(), b.flaky.len()), (2, 1));
        std::fs::write(&path, "clients:\n  - a\n").expect("write");
        assert!(Baseline::load(&path).is_err());
    }
}
