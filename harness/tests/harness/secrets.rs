//! The secret policy (`mcp_mock::secrets`) holds for every output: no bearer token used by
//! any scenario of the library appears in a snapshot, a report or the run's output; a token
//! a server puts on the wire reaches no report; and a corpus of every secret shape the
//! policy knows reaches no output at all (`no_secret_of_the_corpus_reaches_any_output`), nor
//! does any token, code or verifier of the auth library's OAuth flows.

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
    let (dir, path) = crate::files::file_in_tempdir("leaky.yaml", LEAKY);
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

/// Every shape of secret the policy (`mcp_mock::secrets`) knows, each value unique so a leak
/// names its shape: (the shape, the secret value). The scenarios below put each on the wire.
const CORPUS: &[(&str, &str)] = &[
    ("Authorization: Bearer header", "LEAKbearerHDR1"),
    ("Authorization: Basic header", "TEVBS2Jhc2ljOnB3MQ"),
    ("Bearer in text", "LEAKbearerTXT2"),
    ("Basic in text", "TEVBS2Jhc2ljVFhUOnB3Mg"),
    ("X-Api-Key response header", "LEAKapikeyHDR3"),
    ("Set-Cookie response header", "LEAKcookieSET4"),
    ("Cookie in text", "LEAKcookieTXT5"),
    ("api_key in a query string", "LEAKqueryKEY6"),
    ("access_token in a query string", "LEAKqueryTOK7"),
    ("JSON member apiKey", "LEAKmemberKEY8"),
    ("JSON member password", "LEAKmemberPW9"),
    ("JSON member client_secret, nested in an array", "LEAKmemberCS10"),
    ("JSON member refreshToken, nested", "LEAKmemberRT11"),
    ("OAuth form code", "LEAKoauthCODE12"),
    ("OAuth form code_verifier", "LEAKoauthVER13"),
    ("OAuth form client_secret", "LEAKoauthCS14"),
    ("OAuth form refresh_token", "LEAKoauthRT15"),
    ("OAuth callback code", "LEAKcbCODE16"),
    ("access_token in JSON inside a JSON string", "LEAKreplyAT17"),
    ("refresh_token in JSON inside a JSON string", "LEAKreplyRT18"),
    ("JSON member id_token in a result", "LEAKreplyID19"),
    ("code= on a raw stdout line", "LEAKrawCODE20"),
    ("code_verifier= on a raw stdout line", "LEAKrawVER21"),
    ("Bearer on stderr", "LEAKstderrBR22"),
    ("Cookie on stderr", "LEAKstderrCK23"),
    ("refresh_token in an HTTP error body", "LEAKerrRT24"),
    ("client_secret in an HTTP error body", "LEAKerrCS25"),
    ("password in JSON in an HTTP error body", "LEAKerrPW26"),
    ("URL password", "LEAKurlPW27"),
];

/// What a client sends: a tool call whose arguments carry the text shapes and JSON members.
const CORPUS_ARGUMENTS: &str = r#"{"name": "login", "arguments": {"apiKey": "LEAKmemberKEY8", "password": "LEAKmemberPW9", "config": {"auth": [{"client_secret": "LEAKmemberCS10", "refreshToken": "LEAKmemberRT11"}]}, "note": "retry with Bearer LEAKbearerTXT2", "basic": "Basic TEVBS2Jhc2ljVFhUOnB3Mg==", "headers_seen": "Cookie: sid=LEAKcookieTXT5; theme=dark", "form": "grant_type=authorization_code&code=LEAKoauthCODE12&code_verifier=LEAKoauthVER13&client_secret=LEAKoauthCS14&refresh_token=LEAKoauthRT15", "callback": "http://127.0.0.1:9/cb?code=LEAKcbCODE16&state=s1", "mirror": "http://leak:LEAKurlPW27@127.0.0.1:9/"}}"#;

/// What a server answers: a token response as text, an `id_token` member.
const CORPUS_RESULT: &str = r#"{"content": [{"type": "text", "text": "{\"access_token\":\"LEAKreplyAT17\",\"refresh_token\":\"LEAKreplyRT18\"}"}], "session": {"id_token": "LEAKreplyID19"}}"#;

/// A stdio server script's part after the handshake: the call, a log line and a raw line
/// carrying secrets, then the answer.
fn corpus_stdio_script() -> String {
    format!(
        "  - op: expect\n    method: tools/call\n  - op: stderr\n    text: \"auth: using Bearer LEAKstderrBR22 and Cookie: sid=LEAKstderrCK23\\n\"\n  - op: send\n    text: \"oauth: code=LEAKrawCODE20&code_verifier=LEAKrawVER21\\n\"\n  - op: reply\n    result: {CORPUS_RESULT}\n"
    )
}

/// The scenarios of the corpus: a passing stdio run (its snapshot is written), a stdio run
/// whose result check fails (its message quotes the result), a legacy SSE run whose
/// endpoint carries secrets in its query and whose client sends a bearer header, and a
/// Streamable HTTP run whose client sends a Basic header and meets a 400 whose headers and
/// body carry secrets (its failure message quotes the body).
fn corpus_scenarios() -> Vec<(&'static str, String)> {
    let head = |name: &str, transport: &str, revision: &str| {
        format!("name: {name}\nsummary: the secret corpus\ntransport: {transport}\nrevision: {revision}\n")
    };
    let call = format!("  - op: request\n    method: tools/call\n    params: {CORPUS_ARGUMENTS}\n");
    vec![
        (
            "corpus-stdio.yaml",
            format!(
                "{}client:\n  - op: connect\n{call}server:\n  - op: handshake\n{}checks:\n  - outcome: {{step: 2, ok: true}}\n",
                head("corpus-stdio", "stdio", "2025-11-25"),
                corpus_stdio_script()
            ),
        ),
        (
            "corpus-result-fails.yaml",
            format!(
                "{}client:\n  - op: connect\n{call}server:\n  - op: handshake\n{}checks:\n  - outcome: {{step: 2, ok: true, result: {{\"never\": true}}}}\n",
                head("corpus-result-fails", "stdio", "2025-11-25"),
                corpus_stdio_script()
            ),
        ),
        (
            "corpus-legacy.yaml",
            format!(
                "{}client:\n  - op: connect\n    headers: {{\"Authorization\": \"Bearer LEAKbearerHDR1\"}}\n{call}server:\n  - op: expect_get\n  - op: endpoint\n    uri: \"/message?session_id=1&api_key=LEAKqueryKEY6&access_token=LEAKqueryTOK7\"\n  - op: handshake\n  - op: expect\n    method: tools/call\n  - op: reply\n    result: {CORPUS_RESULT}\nchecks:\n  - outcome: {{step: 2, ok: true}}\n",
                head("corpus-legacy", "legacy-sse", "2024-11-05"),
            ),
        ),
        (
            "corpus-http-fails.yaml",
            format!(
                "{}client:\n  - op: connect\n    headers: {{\"Authorization\": \"Basic TEVBS2Jhc2ljOnB3MQ==\"}}\n{call}server:\n  - op: handshake\n  - op: expect\n    method: tools/call\n  - op: respond\n    status: 400\n    headers: {{\"X-Api-Key\": \"LEAKapikeyHDR3\", \"Set-Cookie\": \"sid=LEAKcookieSET4; Path=/\"}}\n    text: \"grant_type=refresh_token&refresh_token=LEAKerrRT24&client_secret=LEAKerrCS25 {{\\\"password\\\": \\\"LEAKerrPW26\\\"}}\"\nchecks:\n  - outcome: {{step: 2, ok: true}}\n",
                head("corpus-http-fails", "http", "2025-11-25"),
            ),
        ),
    ]
}

/// Each corpus secret found in `text`, named with where: `<secret> (<shape>) in <place>`.
fn leaks_in(place: &str, text: &str, leaks: &mut Vec<String>) {
    for (shape, secret) in CORPUS {
        if text.contains(secret) {
            leaks.push(format!("{secret} ({shape}) in {place}"));
        }
    }
}

/// The bundled client over stdio through `mcp-harness record` to `mcp-harness mock stdio
/// --record`: the corpus call, answered by the corpus script. Returns the call's result.
async fn record_corpus_session(out: &Path, mock_scenario: &Path, mock_record: &Path) -> serde_json::Value {
    let server = crate::record::mock_stdio(mock_scenario, "--record", mock_record);
    let params: serde_json::Value = serde_json::from_str(CORPUS_ARGUMENTS).expect("the corpus arguments are JSON");
    let seen = crate::record::record_session(out, &[], &server, &[("tools/call", params)]).await;
    seen.results.into_iter().next().expect("one call").expect("the corpus call")
}

/// The secret policy holds for every output: a corpus of every secret shape it knows
/// (credential headers, query strings, JSON members at any depth, Bearer and Basic text,
/// cookies, OAuth codes, verifiers, client secrets and refresh tokens) crosses the wire in
/// runs, a `record` session and a mock's `--record`, and none of it reaches a transcript
/// (`reports/transcripts/`), a snapshot (`.snap`, `.snap.new`), `results.json`, JUnit, the
/// HTML or Markdown report, the terminal or the log lines (`MCP_HARNESS_LOG=debug`),
/// `record`'s scenario and capture, the mock's `--record` rendering, or `check-record`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_of_the_corpus_reaches_any_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenarios = dir.path().join("scenarios");
    std::fs::create_dir_all(&scenarios).expect("mkdir");
    for (file, text) in corpus_scenarios() {
        std::fs::write(scenarios.join(file), text).expect("write a corpus scenario");
    }
    let mut leaks = Vec::new();

    // A run of the corpus scenarios, every report written, debug logs on.
    let reports = dir.path().join("reports");
    let output = Command::cargo_bin("mcp-harness")
        .expect("binary built")
        .args(["run", scenarios.to_str().expect("utf8"), "--reports", reports.to_str().expect("utf8")])
        .env("MCP_HARNESS_LOG", "debug")
        .env_remove("CI")
        .output()
        .expect("harness runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    // Two scenarios pass and two fail, as written: each reached the wire it was meant to.
    for (line, what) in [
        ("corpus-result-fails [stdio, bundled]", "the failing stdio run"),
        ("corpus-http-fails [http, bundled]", "the failing HTTP run"),
    ] {
        assert!(stdout.contains(&format!("FAIL  {line}")), "{what} did not fail as written:\n{stdout}\n{stderr}");
    }
    assert!(stdout.contains("2 passed, 2 failed"), "the corpus runs did not end as written:\n{stdout}\n{stderr}");
    leaks_in("the run's stdout", &stdout, &mut leaks);
    leaks_in("the run's stderr (log lines)", &stderr, &mut leaks);

    // The `record` session and the mock's `--record` of it.
    let recorded = dir.path().join("recorded");
    std::fs::create_dir_all(&recorded).expect("mkdir");
    let mock_scenario = recorded.join("corpus-mock.yaml");
    let script = format!(
        "name: corpus-mock\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nclient:\n  - op: connect\nserver:\n  - op: handshake\n{}",
        corpus_stdio_script()
    );
    std::fs::write(&mock_scenario, script).expect("write the mock's scenario");
    let mock_record = dir.path().join("mock-record.txt");
    let seen = record_corpus_session(&recorded.join("corpus-session.yaml"), &mock_scenario, &mock_record).await;
    // The relay is untouched: the client got the real token; and the mock's structured
    // record (the evidence check-record judges) holds what the client really sent.
    assert!(seen.to_string().contains("LEAKreplyAT17"), "the client did not get the server's answer: {seen}");
    let wire = std::fs::read_to_string(mcp_mock::live::record_dir_of(&mock_record).join("conn-1.jsonl"))
        .expect("the mock's structured record");
    assert!(wire.contains("LEAKmemberKEY8"), "the corpus call never reached the mock:\n{wire}");
    let check = Command::cargo_bin("mcp-harness")
        .expect("binary built")
        .args(["check-record", mock_scenario.to_str().expect("utf8"), mock_record.to_str().expect("utf8")])
        .output()
        .expect("check-record runs");
    leaks_in("check-record's output", &String::from_utf8_lossy(&check.stdout), &mut leaks);
    leaks_in("check-record's stderr", &String::from_utf8_lossy(&check.stderr), &mut leaks);

    // Every file written: reports, transcripts, snapshots, the recording, the mock's
    // rendering (not the scenarios themselves, nor the mock's structured record).
    let mut written = Vec::new();
    files_under(dir.path(), &mut written);
    let inputs: Vec<PathBuf> =
        corpus_scenarios().iter().map(|(f, _)| scenarios.join(f)).chain([mock_scenario.clone()]).collect();
    let structured = mcp_mock::live::record_dir_of(&mock_record);
    written.retain(|f| !inputs.contains(f) && !f.starts_with(&structured));
    for wanted in [
        "results.json",
        "junit.xml",
        "index.html",
        "summary.md",
        "corpus-stdio.stdio.txt",
        "corpus-stdio.snap",
        "corpus-result-fails.snap.new",
        "corpus-legacy.snap",
        "corpus-http-fails.snap.new",
        "corpus-session.yaml",
        "mock-record.txt",
    ] {
        assert!(written.iter().any(|f| f.ends_with(wanted)), "no {wanted} was written: {written:?}");
    }
    assert!(written.iter().any(|f| f.to_string_lossy().contains("capture")), "record wrote no capture: {written:?}");
    for file in &written {
        let text = String::from_utf8_lossy(&std::fs::read(file).expect("read an output")).into_owned();
        leaks_in(&file.strip_prefix(dir.path()).unwrap_or(file).display().to_string(), &text, &mut leaks);
    }
    assert!(leaks.is_empty(), "{} secret(s) leaked:\n{}", leaks.len(), leaks.join("\n"));
}

/// What the auth library's flows put on the wire that must reach no output: the mock's
/// access and refresh tokens and authorization codes (`mock-access-N`, `mock-refresh-N`,
/// `mock-code-N`), and the client's PKCE verifier (a fresh random string, so found by the
/// parameter that carries it).
const AUTH_SECRETS: [&str; 3] = ["mock-access-", "mock-refresh-", "mock-code-"];

/// `name=` or `"name":"` followed by anything but a redaction mark (`<redacted…>`, its
/// XML escape in JUnit, or `\u003credacted…` inside the HTML report's script-safe JSON).
fn unredacted_param(text: &str, name: &str) -> bool {
    [format!("{name}="), format!("\"{name}\":\"")].iter().any(|key| {
        text.match_indices(key.as_str()).any(|(i, _)| {
            let rest = &text[i + key.len()..];
            !["<redacted", "&lt;redacted", "\\u003credacted"].iter().any(|mark| rest.starts_with(mark))
        })
    })
}

/// The auth library (`scenarios/auth/`: discovery, registration, authorization code with
/// PKCE, token refresh and rotation, step-up) runs against the bundled client, and none of
/// its tokens, codes or verifiers reaches the reports (results.json, JUnit, HTML, Markdown,
/// transcripts, wire.json), the snapshots or the run's output and debug log lines — while the
/// transcripts show that tokens were issued and redacted.
#[test]
fn no_token_code_or_verifier_of_the_auth_library_reaches_any_output() {
    let auth = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/auth"));
    let reports = tempfile::tempdir().expect("tempdir");
    let output = Command::cargo_bin("mcp-harness")
        .expect("binary built")
        .args(["run", auth.to_str().expect("utf8"), "--reports", reports.path().to_str().expect("utf8")])
        .env("CI", "1")
        .env("MCP_HARNESS_LOG", "debug")
        .output()
        .expect("harness runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let passed = output.status.success();

    let mut files = Vec::new();
    files_under(reports.path(), &mut files);
    files_under(auth, &mut files);
    let mut outputs: Vec<(String, String)> =
        files.iter().map(|f| (f.display().to_string(), std::fs::read_to_string(f).unwrap_or_default())).collect();
    outputs.push(("the run's stdout".into(), stdout.clone().into_owned()));
    outputs.push(("the run's stderr (log lines)".into(), String::from_utf8_lossy(&output.stderr).into_owned()));
    let transcripts: String =
        outputs.iter().filter(|(p, _)| p.contains("/transcripts/")).map(|(_, t)| t.as_str()).collect();
    assert!(
        transcripts.contains("\"access_token\":\"<redacted>\"") && transcripts.contains("code_verifier="),
        "the transcripts show no issued token or verifier: nothing was proven"
    );

    let mut leaks = Vec::new();
    for (place, text) in &outputs {
        for secret in AUTH_SECRETS.iter().filter(|s| text.contains(**s)) {
            leaks.push(format!("{secret}… in {place}"));
        }
        for param in ["code_verifier", "client_secret", "refresh_token", "access_token", "code"] {
            if unredacted_param(text, param) {
                leaks.push(format!("an unredacted {param} in {place}"));
            }
        }
    }
    assert!(leaks.is_empty(), "{} auth secret(s) leaked:\n{}", leaks.len(), leaks.join("\n"));
    // Checked after the leaks: a policy that lets a secret through also changes the snapshots.
    assert!(passed, "the auth library failed:\n{stdout}");
}
