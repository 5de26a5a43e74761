//! Reports: a terminal summary for people, `results.json` and JUnit XML for CI.

use crate::error::HarnessError;
use crate::transcript::Redactor;
use mcp_scenario::results::{RunResult, SnapshotStatus, Status};

use quick_xml::escape::escape;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// Totals by status.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct Totals {
    /// Runs that passed.
    pub passed: usize,
    /// Runs that failed.
    pub failed: usize,
    /// Runs skipped for the target.
    pub skipped: usize,
    /// Runs the harness could not run.
    pub error: usize,
    /// Runs of scenarios marked `pending` (never run).
    pub pending: usize,
    /// Runs never started because `--fail-fast` stopped after a failure.
    pub not_run: usize,
    /// Runs (of any status) with unmet SHOULDs reported as warnings.
    pub warned: usize,
    /// Runs (of any status) with unmet SPEC.md rules reported as notes.
    pub noted: usize,
}

impl Totals {
    /// Counts results.
    pub fn of(results: &[RunResult]) -> Self {
        let mut t = Totals::default();
        for r in results {
            t.warned += usize::from(!r.warnings.is_empty());
            t.noted += usize::from(!r.notes.is_empty());
            match r.status {
                Status::Passed => t.passed += 1,
                Status::Failed => t.failed += 1,
                Status::Skipped => t.skipped += 1,
                Status::Error => t.error += 1,
                Status::Pending => t.pending += 1,
                Status::NotRun => t.not_run += 1,
            }
        }
        t
    }
}

/// One line per run that did not pass, with its reasons, then the totals line.
pub fn summary(results: &[RunResult], wall_ms: u64) -> String {
    let mut s = String::new();
    for r in results {
        let label = format!("{} [{}, {}]", r.scenario, r.transport.as_str(), r.target);
        match r.status {
            Status::Passed => {
                let flags = match (r.warnings.len(), r.notes.len()) {
                    (0, 0) => String::new(),
                    (w, n) => format!(", {w} warning(s), {n} note(s)"),
                };
                let _ = writeln!(s, "PASS  {label} ({} ms{flags})", r.duration_ms);
                weighed_lines(&mut s, r);
                if let SnapshotStatus::Mismatch { diff, .. } = &r.snapshot {
                    for line in diff.lines() {
                        let _ = writeln!(s, "        {line}");
                    }
                }
                if let SnapshotStatus::Created { path } = &r.snapshot {
                    let _ = writeln!(
                        s,
                        "NEW   {label}: first snapshot written to {} (review and commit it)",
                        path.display()
                    );
                }
            }
            Status::Skipped => {
                let _ = writeln!(s, "SKIP  {label}: {}", r.reason.as_deref().unwrap_or(""));
            }
            Status::Error => {
                let _ = writeln!(s, "ERROR {label}: {}", r.reason.as_deref().unwrap_or(""));
            }
            Status::Pending => {
                let _ = writeln!(s, "PEND  {label}: pending: {}", r.reason.as_deref().unwrap_or(""));
            }
            Status::NotRun => {
                let _ = writeln!(s, "NOTRUN {label}: {}", r.reason.as_deref().unwrap_or(""));
            }
            Status::Failed => {
                let _ = writeln!(s, "FAIL  {label} — {}", r.path.display());
                for f in &r.failures {
                    let _ = writeln!(s, "      {}: {}", f.check, f.message);
                }
                weighed_lines(&mut s, r);
                match &r.snapshot {
                    SnapshotStatus::Mismatch { path, diff } => {
                        let _ = writeln!(
                            s,
                            "      snapshot {} differs (review with `cargo insta review` or rerun with --update-snapshots)",
                            path.display()
                        );
                        for line in diff.lines() {
                            let _ = writeln!(s, "        {line}");
                        }
                    }
                    SnapshotStatus::Missing { path } => {
                        let _ = writeln!(
                            s,
                            "      snapshot {} is missing and --require-snapshots is set (run once without it, or with --update-snapshots, to write it)",
                            path.display()
                        );
                    }
                    SnapshotStatus::Created { path } => {
                        let _ =
                            writeln!(s, "      first snapshot written to {} (review and commit it)", path.display());
                    }
                    _ => {}
                }
            }
        }
    }
    let t = Totals::of(results);
    let mut extra = String::new();
    if t.pending > 0 {
        let _ = write!(extra, ", {} pending", t.pending);
    }
    if t.not_run > 0 {
        let _ = write!(extra, ", {} not run", t.not_run);
    }
    let _ = writeln!(
        s,
        "{} passed, {} failed, {} skipped, {} errors{extra} in {:.2}s",
        t.passed,
        t.failed,
        t.skipped,
        t.error,
        wall_ms as f64 / 1000.0
    );
    if t.warned + t.noted > 0 {
        let _ = writeln!(
            s,
            "{} run(s) with warnings (unmet SHOULDs; --strict fails them), {} with notes (rules of our SPEC.md, not MCP's)",
            t.warned, t.noted
        );
    }
    let created = results.iter().filter(|r| matches!(r.snapshot, SnapshotStatus::Created { .. })).count();
    if created > 0 {
        let _ = writeln!(s, "{created} new snapshot(s) written beside their scenarios: review them before committing");
    }
    s
}

/// The summary without passed and skipped runs (each a line plus its indented details), for
/// `--quiet`.
pub fn without_passes(summary: &str) -> String {
    let mut out = String::new();
    let mut dropping = false;
    for line in summary.lines() {
        if line.starts_with("PASS") || line.starts_with("SKIP") || line.starts_with("PEND") {
            dropping = true;
            continue;
        }
        if dropping && line.starts_with(' ') {
            continue;
        }
        dropping = false;
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// A third-party run's unmet SHOULDs and SPEC.md rules, each with what it rests on.
fn weighed_lines(s: &mut String, r: &RunResult) {
    for (what, list) in [("warning", &r.warnings), ("note", &r.notes)] {
        for f in list {
            let rests_on = f.reference.as_deref().map(|x| format!(" — {}: {x}", f.level)).unwrap_or_default();
            let _ = writeln!(s, "      {what}: {}: {}{rests_on}", f.check, f.message);
        }
    }
}

/// Writes `results.json` and `junit.xml` into `dir`.
pub fn write(dir: &Path, results: &[RunResult], wall_ms: u64) -> Result<(), HarnessError> {
    std::fs::create_dir_all(dir).map_err(|e| HarnessError::io(format!("creating {}", dir.display()), e))?;
    std::fs::write(dir.join("results.json"), json(results, wall_ms))
        .map_err(|e| HarnessError::io("writing results.json", e))?;
    std::fs::write(dir.join("junit.xml"), junit(results, wall_ms))
        .map_err(|e| HarnessError::io("writing junit.xml", e))?;
    Ok(())
}

/// The `results.json` document (totals, wall time, every run), secrets redacted; also what
/// `run --format json` prints.
pub fn json(results: &[RunResult], wall_ms: u64) -> String {
    #[derive(Serialize)]
    struct Doc<'a> {
        totals: Totals,
        wall_ms: u64,
        runs: &'a [RunResult],
    }
    let json =
        serde_json::to_string_pretty(&Doc { totals: Totals::of(results), wall_ms, runs: results }).unwrap_or_default();
    Redactor::secrets_only().text(&json)
}

/// JUnit XML: one testsuite per target, one testcase per run.
pub fn junit(results: &[RunResult], wall_ms: u64) -> String {
    let t = Totals::of(results);
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        x,
        "<testsuites name=\"mcp-harness\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
        results.len(),
        t.failed,
        t.error,
        t.skipped + t.pending + t.not_run,
        wall_ms as f64 / 1000.0
    );
    let _ = writeln!(
        x,
        "  <testsuite name=\"scenarios\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">",
        results.len(),
        t.failed,
        t.error,
        t.skipped + t.pending + t.not_run
    );
    for r in results {
        let name = escape(format!("{} [{}]", r.scenario, r.transport.as_str())).into_owned();
        let class = escape(r.target.clone()).into_owned();
        let _ = write!(
            x,
            "    <testcase name=\"{name}\" classname=\"{class}\" file=\"{}\" time=\"{:.3}\"",
            escape(r.path.display().to_string()),
            r.duration_ms as f64 / 1000.0
        );
        match r.status {
            Status::Passed if r.warnings.is_empty() && r.notes.is_empty() => x.push_str("/>\n"),
            Status::Passed => {
                // JUnit has no warning state: unmet SHOULDs and SPEC.md notes go to the
                // test case's output, where CI viewers show them beside a passing case.
                let mut out = String::new();
                weighed_lines(&mut out, r);
                let _ = writeln!(
                    x,
                    ">\n      <system-out>{}</system-out>\n    </testcase>",
                    escape(Redactor::secrets_only().text(out.trim_end()))
                );
            }
            Status::Skipped => {
                let _ = writeln!(
                    x,
                    ">\n      <skipped message=\"{}\"/>\n    </testcase>",
                    escape(r.reason.clone().unwrap_or_default())
                );
            }
            // JUnit has no pending or not-run state: both are skipped cases whose message
            // starts with the status, so CI viewers tell them apart.
            Status::Pending | Status::NotRun => {
                let _ = writeln!(
                    x,
                    ">\n      <skipped message=\"{}: {}\"/>\n    </testcase>",
                    r.status.as_str(),
                    escape(r.reason.clone().unwrap_or_default())
                );
            }
            Status::Error => {
                let _ = writeln!(
                    x,
                    ">\n      <error message=\"{}\"/>\n    </testcase>",
                    escape(r.reason.clone().unwrap_or_default())
                );
            }
            Status::Failed => {
                let mut body: Vec<String> = r.failures.iter().map(|f| format!("{}: {}", f.check, f.message)).collect();
                if let SnapshotStatus::Mismatch { diff, .. } = &r.snapshot {
                    body.push(format!("snapshot differs\n{diff}"));
                }
                if let SnapshotStatus::Missing { path } = &r.snapshot {
                    body.push(format!("snapshot {} missing", path.display()));
                }
                let first = body.first().cloned().unwrap_or_default();
                let redactor = Redactor::secrets_only();
                let body = redactor.text(&body.join("\n"));
                let _ = writeln!(
                    x,
                    ">\n      <failure message=\"{}\">{}</failure>\n    </testcase>",
                    escape(redactor.text(&first)),
                    escape(body)
                );
            }
        }
    }
    x.push_str("  </testsuite>\n</testsuites>\n");
    x
}
