//! No bearer token used by any scenario appears in a snapshot, a report or the run's
//! output: transcripts, reports (the HTML report and summary.md included) and snapshots
//! redact Authorization values.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// Every token a scenario hands out or expects: `Bearer <token>` values and `token:` fields.
fn scenario_tokens(scenarios: &Path) -> Vec<String> {
    let mut files = Vec::new();
    files_under(scenarios, &mut files);
    let mut tokens = Vec::new();
    for file in files.iter().filter(|f| f.extension().is_some_and(|e| e == "yaml")) {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let mut take = |rest: &str| {
            let token: String =
                rest.chars().take_while(|c| c.is_ascii_alphanumeric() || "._~+/=-".contains(*c)).collect();
            if token.len() >= 4 && !tokens.contains(&token) {
                tokens.push(token);
            }
        };
        // Only credentials: `Authorization: Bearer …` values (configured headers, refresh
        // hooks), not `WWW-Authenticate: Bearer realm=…` challenges.
        for line in text.lines().filter(|l| l.to_ascii_lowercase().contains("authorization")) {
            for (i, _) in line.match_indices("Bearer ") {
                take(&line[i + 7..]);
            }
        }
        for line in text.lines() {
            if let Some(rest) = line.trim_start().strip_prefix("token: ") {
                take(rest.trim_matches(|c| c == '"' || c == '\''));
            }
        }
    }
    tokens
}

#[test]
fn no_scenario_token_reaches_snapshots_reports_or_output() {
    let scenarios = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios"));
    let tokens = scenario_tokens(scenarios);
    assert!(!tokens.is_empty(), "no scenario uses a bearer token, so this test would prove nothing");

    let reports = tempfile::tempdir().expect("tempdir");
    let output = Command::cargo_bin("mcp-harness")
        .expect("binary built")
        .args(["run", scenarios.to_str().expect("utf8"), "--reports", reports.path().to_str().expect("utf8")])
        .env("CI", "1")
        .output()
        .expect("harness runs");

    let mut searched = Vec::new();
    files_under(reports.path(), &mut searched);
    files_under(scenarios, &mut searched);
    searched.retain(|f| f.extension().is_some_and(|e| ["snap", "json", "xml", "html", "md"].iter().any(|x| e == *x)));
    let repo_reports = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../reports"));
    files_under(repo_reports, &mut searched);
    for report in ["results.json", "junit.xml", "index.html", "summary.md"] {
        assert!(searched.iter().any(|f| f.ends_with(report)), "the run wrote no {report}");
    }

    let mut leaks = Vec::new();
    for token in &tokens {
        for file in &searched {
            if std::fs::read_to_string(file).unwrap_or_default().contains(token.as_str()) {
                leaks.push(format!("{token} in {}", file.display()));
            }
        }
        for (name, stream) in [("stdout", &output.stdout), ("stderr", &output.stderr)] {
            if String::from_utf8_lossy(stream).contains(token.as_str()) {
                leaks.push(format!("{token} in the run's {name}"));
            }
        }
    }
    assert!(leaks.is_empty(), "tokens leaked:\n{}", leaks.join("\n"));
}

/// A stdio scenario whose server writes a bearer token and an OAuth token on the wire.
const LEAKY: &str = "name: leaky\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nclient:\n  - op: connect\n  - op: request\n    method: tools/list\nserver:\n  - op: handshake\n  - op: expect\n    method: tools/list\n  - op: send\n    text: \"Authorization: Bearer leaky-bearer-7f3a\\n\"\n  - op: reply\n    result: {\"tools\": [], \"access_token\": \"leaky-oauth-9c1d\"}\nchecks:\n  - outcome: {step: 2, ok: true}\n";

#[test]
fn a_token_on_the_wire_never_reaches_the_html_report_or_the_summary() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("leaky.yaml");
    std::fs::write(&path, LEAKY).expect("write");
    let reports = dir.path().join("reports");
    Command::cargo_bin("mcp-harness")
        .expect("binary built")
        .args(["run", path.to_str().expect("utf8"), "--reports", reports.to_str().expect("utf8")])
        .env("CI", "1")
        .assert()
        .code(0);
    let page = std::fs::read_to_string(reports.join("index.html")).expect("index.html written");
    for file in ["index.html", "summary.md", "junit.xml", "results.json"] {
        let text = std::fs::read_to_string(reports.join(file)).expect("report written");
        for token in ["leaky-bearer-7f3a", "leaky-oauth-9c1d"] {
            assert!(!text.contains(token), "{token} reached {file}");
        }
    }
    // The page still shows the line the server sent, token redacted (`<` is `\u003c` in its JSON).
    assert!(page.contains("Authorization: Bearer \\u003credacted\\u003e"), "the raw line is not in the page");
}
