//! `summary.md`: the run in Markdown, fit for a CI job summary (GitHub Actions'
//! `$GITHUB_STEP_SUMMARY` and the like): the totals, the failing runs with their first
//! failure message, the warn/note counts, and the baseline's verdicts when one judged the
//! run. Bounded: at most [`MAX_ROWS`] failing runs are listed (CI summaries have a size cap);
//! the rest are counted and left to `index.html`.

use crate::report::Totals;
use crate::transcript::Redactor;
use mcp_results::{RunResult, Status, Verdict};
use std::fmt::Write as _;

/// How many failing runs the summary lists.
pub const MAX_ROWS: usize = 50;

/// The Markdown summary of `results`.
pub fn summary(results: &[RunResult], wall_ms: u64) -> String {
    let t = Totals::of(results);
    let mut targets: Vec<&str> = results.iter().map(|r| r.target.as_str()).collect();
    targets.dedup();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "## mcp-harness: {} passed, {} failed, {} skipped, {} errors\n",
        t.passed, t.failed, t.skipped, t.error
    );
    let _ = writeln!(
        s,
        "{} runs against {} in {:.1} s.\n",
        results.len(),
        targets.iter().map(|t| code(t)).collect::<Vec<_>>().join(", "),
        wall_ms as f64 / 1000.0
    );
    let _ = writeln!(s, "| status | runs |\n|---|---:|");
    for (name, n) in [
        ("passed", t.passed),
        ("warned (the client broke a SHOULD handling the fault; nothing held)", t.warn_only),
        ("failed", t.failed),
        ("not exercised (the client never met the fault)", t.not_exercised),
        ("not applicable (no check judges a third-party client)", t.not_applicable),
        ("flaky under load (the machine starved it; a re-run gave another verdict)", t.flaky_under_load),
        ("skipped", t.skipped),
        ("error", t.error),
    ] {
        let _ = writeln!(s, "| {name} | {n} |");
    }
    let _ = writeln!(s, "| with warnings (unmet SHOULDs, robustness findings) | {} |", t.warned);
    let _ = writeln!(s, "| with notes (rules of our SPEC.md, not MCP's) | {} |", t.noted);
    let judged: Vec<Verdict> = results.iter().filter_map(|r| r.baseline).collect();
    if !judged.is_empty() {
        let count = |v: Verdict| judged.iter().filter(|&&j| j == v).count();
        let changed =
            count(Verdict::UnexpectedFailure) + count(Verdict::StaleEntry) + count(Verdict::UnexpectedNotExercised);
        let _ = writeln!(
            s,
            "\nBaseline: **{}** — {} new failure(s), {} newly not exercised, {} listed run(s) now passing, {} expected failure(s), {} expected not exercised, {} flaky.",
            if changed == 0 { "unchanged" } else { "CHANGED" },
            count(Verdict::UnexpectedFailure),
            count(Verdict::UnexpectedNotExercised),
            count(Verdict::StaleEntry),
            count(Verdict::ExpectedFailure),
            count(Verdict::ExpectedNotExercised),
            count(Verdict::Flaky)
        );
    }
    let failing: Vec<&RunResult> = results
        .iter()
        .filter(|r| matches!(r.status, Status::Failed | Status::Error | Status::NotExercised | Status::FlakyUnderLoad))
        .collect();
    if !failing.is_empty() {
        let _ = writeln!(s, "\n### Failing runs ({})\n", failing.len());
        let _ = writeln!(s, "| scenario | transport | target | baseline | first failure |\n|---|---|---|---|---|");
        for r in failing.iter().take(MAX_ROWS) {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                code(&r.scenario),
                r.transport.as_str(),
                code(&r.target),
                r.baseline.map(|b| b.as_str().replace('_', " ")).unwrap_or_default(),
                cell(&first_failure(r))
            );
        }
        if failing.len() > MAX_ROWS {
            let _ = writeln!(s, "\n… and {} more: see `index.html` in the reports.", failing.len() - MAX_ROWS);
        }
    }
    let stale: Vec<&RunResult> = results.iter().filter(|r| r.baseline == Some(Verdict::StaleEntry)).collect();
    if !stale.is_empty() {
        let _ = writeln!(s, "\n### Listed in the baseline but passing now ({})\n", stale.len());
        for r in stale.iter().take(MAX_ROWS) {
            let _ = writeln!(s, "- {} [{}]: remove it from the baseline", code(&r.scenario), r.transport.as_str());
        }
    }
    let _ = writeln!(s, "\nThe full report with each run's wire diagram: `index.html` in the reports folder.");
    s
}

/// The first reason a failed or errored run gives.
pub fn first_failure(r: &RunResult) -> String {
    // A bundled snapshot that differs or is missing is a `snapshot` failure of its own.
    if let Some(f) = r.failures.first() {
        return format!("{}: {}", f.check, f.message);
    }
    let reason = r.reason.clone().unwrap_or_else(|| "no reason recorded".into());
    if r.status == Status::NotExercised { format!("not exercised: {reason}") } else { reason }
}

/// `s` as a code span in a table cell: secrets redacted, one line, `|` escaped, backticks as
/// `'` (a code span shows `<` and `&` as they are, so they stay).
fn code(s: &str) -> String {
    let text: String = Redactor::secrets_only()
        .text(s)
        .chars()
        .map(|c| match c {
            '`' => '\'',
            '\n' | '\r' => ' ',
            c => c,
        })
        .collect();
    format!("`{}`", text.replace('|', "\\|"))
}

/// Text safe in one Markdown table cell: secrets redacted, one line, `|` escaped, no markup
/// (`<`, `>`, `&` as entities, backticks as `'` so no code span opens), bounded.
/// Every run-provided string in the summary goes through here or [`code`].
fn cell(s: &str) -> String {
    let mut out = String::new();
    for c in Redactor::secrets_only().text(s).chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '`' => out.push('\''),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    match out.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &out[..i]),
        None => out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(status: &str, message: &str, baseline: Option<&str>) -> RunResult {
        serde_json::from_value(serde_json::json!({
            "scenario": format!("s-{status}"),
            "path": "scenarios/s.yaml",
            "transport": "stdio",
            "target": "cmd:client --x",
            "status": status,
            "failures": if message.is_empty() { serde_json::json!([]) } else {
                serde_json::json!([{"check": "check 2 (outcome)", "message": message, "level": "must"}]) },
            "warnings": [{"check": "check 3 (sent)", "message": "w", "level": "should"}],
            "baseline": baseline,
        }))
        .expect("a run")
    }

    #[test]
    fn totals_failing_runs_and_counts() {
        let runs = [
            run("passed", "", Some("pass")),
            run("failed", "expected ok | got <error>\nline 2 Bearer tok-9", Some("unexpected_failure")),
            run("skipped", "", Some("skipped")),
        ];
        let md = summary(&runs, 1500);
        assert!(md.starts_with("## mcp-harness: 1 passed, 1 failed, 1 skipped, 0 errors\n"), "{md}");
        assert!(md.contains("| with warnings (unmet SHOULDs, robustness findings) | 3 |"), "{md}");
        assert!(md.contains("Baseline: **CHANGED** — 1 new failure(s)"), "{md}");
        assert!(
            md.contains(
                "| `s-failed` | stdio | `cmd:client --x` | unexpected failure | check 2 (outcome): expected ok \\| got &lt;error&gt; line 2 Bearer &lt;redacted&gt; |"
            ),
            "{md}"
        );
        assert!(!md.contains("tok-9"));
    }

    #[test]
    fn the_list_is_bounded() {
        let runs: Vec<RunResult> = (0..MAX_ROWS + 3).map(|_| run("failed", "m", None)).collect();
        let md = summary(&runs, 0);
        assert_eq!(md.matches("| `s-failed` |").count(), MAX_ROWS);
        assert!(md.contains("… and 3 more"), "{md}");
    }
}
