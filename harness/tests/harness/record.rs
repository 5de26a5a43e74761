//! `mcp-harness record` end to end: a session between the bundled client and a real
//! third-party server (the TypeScript SDK's own stdio example server) is recorded, written
//! as a scenario, replayed against the bundled client and passes with a transcript that
//! matches the capture up to normalisation; a faulty server (our mock, breaking off a reply
//! and exiting) is recorded and the replay reproduces the client's failure; a replay whose
//! client changed reports the first divergence with both sides; no captured secret reaches
//! the written files. No test sleeps: each waits on the client's close, which reaps the
//! recorder, which writes the files before it exits.

use mcp_harness::Target;
use mcp_harness::record::capture::{self, Captured};
use mcp_harness::runner::{self, RunConfig};
use mcp_results::{RunResult, Status};
use mcp_transports::client::{self, ClientOptions};
use mcp_transports::{Handlers, RequestOptions, Transport, TransportConfig};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const HARNESS: &str = env!("CARGO_BIN_EXE_mcp-harness");
const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
/// The TypeScript SDK's stdio example server (shipped in its npm package).
const TS_EXAMPLE: &str =
    "clients/typescript/node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/mcpServerOutputSchema.js";

/// The TypeScript SDK's example server, installed with `clients/install.sh typescript` if
/// missing; `None` (the caller skips) when that cannot be done — never under `CI=true`. Once
/// per test binary: two tests that each found it missing ran two installs into one folder,
/// and the second saw the example's file while the first was still unpacking its imports.
fn ts_example_server() -> Option<PathBuf> {
    static SERVER: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    SERVER.get_or_init(install_ts_example_server).clone()
}

fn install_ts_example_server() -> Option<PathBuf> {
    let path = Path::new(REPO).join(TS_EXAMPLE);
    if !path.exists() {
        let status =
            std::process::Command::new("bash").arg("clients/install.sh").arg("typescript").current_dir(REPO).status();
        if !matches!(status, Ok(s) if s.success()) || !path.exists() {
            let why = format!(
                "the TypeScript SDK's example server is missing and `bash clients/install.sh typescript` could not install it ({status:?}); it needs node and npm with access to the npm registry"
            );
            assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
            eprintln!("SKIPPED record → replay against the TypeScript SDK example server: {why}");
            return None;
        }
    }
    Some(path)
}

/// What the recorded client saw.
#[derive(Debug)]
pub(crate) struct Seen {
    pub(crate) results: Vec<Result<Value, String>>,
}

/// The bundled client's connection by `config` through `what` (a recorder, a proxy), bounded
/// by 5 s whatever the environment says and offering 2025-11-25, after its handshake.
async fn connect_through(what: &str, config: TransportConfig) -> Arc<dyn Transport> {
    let config = TransportConfig {
        timeout_ms: Some(5000),
        timeout_env_override: Some(None),
        protocol_version: "2025-11-25".into(),
        ..config
    };
    let t = client::create_transport(&config, Handlers::default()).await.unwrap_or_else(|e| panic!("{what}: {e}"));
    client::handshake(t.as_ref(), &ClientOptions::default())
        .await
        .unwrap_or_else(|e| panic!("handshake through {what}: {e}"));
    t
}

/// Runs the bundled client over stdio against `mcp-harness record --out <out> -- server…`:
/// handshake, then each request; then close (which waits for the recorder to exit).
pub(crate) async fn record_session(out: &Path, extra: &[&str], server: &[String], requests: &[(&str, Value)]) -> Seen {
    let mut args: Vec<String> =
        vec!["record".into(), "--speed".into(), "10".into(), "--out".into(), out.display().to_string()];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push("--".into());
    args.extend(server.iter().cloned());
    let t = connect_through(
        "the recorder",
        TransportConfig { command: HARNESS.into(), args, ..TransportConfig::default() },
    )
    .await;
    let mut results = Vec::new();
    for (method, params) in requests {
        let r = t.request(method, Some(params.clone()), RequestOptions::default()).await;
        results.push(r.map_err(|e| e.to_string()));
    }
    t.close().await;
    assert!(out.exists(), "the recorder wrote no scenario at {}", out.display());
    Seen { results }
}

/// Replays the recorded scenario against the bundled client.
async fn replay(path: &Path) -> RunResult {
    let scenario = mcp_harness::load(path).unwrap_or_else(|e| panic!("the recorded scenario does not load: {e}"));
    let config = RunConfig::new(Target::bundled(None), vec![HARNESS.to_string(), "mock".into()]);
    let job = runner::jobs(vec![(path.to_path_buf(), scenario)], &config.target).remove(0);
    runner::run_one(&job, &config).await
}

fn failures(r: &RunResult) -> String {
    r.failures.iter().map(|f| format!("{}: {}", f.check, f.message)).collect::<Vec<_>>().join("\n")
}

/// The JSON-RPC traffic of a rendered transcript's first connection: (`→`/`←`, text, the
/// full length when only a prefix is shown).
fn rendered_messages(transcript: &str) -> Vec<(char, String, Option<usize>)> {
    let mut out = Vec::new();
    for line in transcript.lines().take_while(|l| !l.starts_with("── outcome")) {
        let (dir, rest) = match line.split_at_checked(4) {
            Some((d, rest)) if d == "→ " || d == "← " => (d.chars().next().unwrap_or(' '), rest),
            _ => continue,
        };
        let rest = rest.rsplit_once("  [").map_or(rest, |(body, _)| body);
        let (body, len) = match rest.strip_suffix(" bytes)").and_then(|r| r.rsplit_once("… (")) {
            Some((prefix, n)) => (prefix.to_owned(), n.parse().ok()),
            None => (rest.strip_suffix("\\n").unwrap_or(rest).to_owned(), None),
        };
        out.push((dir, body, len));
    }
    out
}

/// A captured server line as the mock writes the same message: JSON-RPC members in the
/// mock's order (`jsonrpc`, `id`, `method`, `params`, `result`, `error`), compact; other
/// lines as they are.
fn canonical(line: &str) -> String {
    let Ok(Value::Object(o)) = serde_json::from_str::<Value>(line) else { return line.to_owned() };
    let order = ["jsonrpc", "id", "method", "params", "result", "error"];
    let mut out = serde_json::Map::new();
    for k in order.iter().filter(|k| o.contains_key(**k)) {
        out.insert(k.to_string(), o[*k].clone());
    }
    for (k, v) in o.iter().filter(|(k, _)| !order.contains(&k.as_str())) {
        out.insert(k.clone(), v.clone());
    }
    Value::Object(out).to_string()
}

/// The replay's wire matches the capture up to normalisation: the client sent the same
/// methods in the same order (its clientInfo and ids may differ); the mock sent the same
/// server messages (equal JSON where the transcript shows them whole, the same length and
/// prefix where it shows a prefix).
fn assert_matches_capture(capture_file: &Path, transcript: &str) {
    let captured = capture::read(capture_file).expect("capture file");
    let mut client_methods = Vec::new();
    let mut server = Vec::new();
    for e in &captured[0].events {
        match e {
            Captured::ClientLine { json: Some(v), .. } => client_methods.push(v.get("method").cloned()),
            Captured::ServerLine { bytes, .. } => server.push(canonical(bytes.text.as_deref().unwrap_or_default())),
            _ => {}
        }
    }
    let replayed = rendered_messages(transcript);
    let replay_methods: Vec<Option<Value>> = replayed
        .iter()
        .filter(|(d, ..)| *d == '→')
        .map(|(_, body, _)| serde_json::from_str::<Value>(body).ok().and_then(|v| v.get("method").cloned()))
        .collect();
    assert_eq!(replay_methods, client_methods, "client methods differ from the capture\n{transcript}");
    let replay_server: Vec<_> = replayed.iter().filter(|(d, ..)| *d == '←').collect();
    assert_eq!(replay_server.len(), server.len(), "server message count differs\n{transcript}");
    for ((_, body, len), want) in replay_server.into_iter().zip(&server) {
        match len {
            Some(n) => {
                assert_eq!(*n, want.len() + 1, "server line length differs: {want}");
                assert!(want.starts_with(body.as_str()), "server line differs:\n  replay {body}\n  capture {want}");
            }
            None => assert_eq!(body, want, "server message differs"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_with_the_typescript_sdk_example_server_replays_as_recorded() {
    let Some(server) = ts_example_server() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("ts-example-session.yaml");
    let server = vec!["node".to_string(), server.display().to_string()];
    let seen = record_session(&out, &[], &server, &[("tools/list", json!({}))]).await;
    let listed = seen.results[0].as_ref().expect("tools/list through the recorder");
    assert_eq!(listed.pointer("/tools/0/name"), Some(&json!("get_weather")), "{listed}");

    let check = std::process::Command::new(HARNESS).arg("check").arg(&out).output().expect("mcp-harness check");
    assert!(check.status.success(), "mcp-harness check: {}", String::from_utf8_lossy(&check.stderr));

    let result = replay(&out).await;
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    assert_eq!(result.status, Status::Passed, "{}\n\n{text}\n\n{}", failures(&result), result.transcript);
    assert_matches_capture(&capture::capture_path(&out), &result.transcript);
}

/// The rest of a mock that breaks off its reply to tools/call mid-line and exits 1.
const FAULTY: &str = r#"  - op: send
    text: "{\"jsonrpc\":\"2.0\",\"id\":{id},\"res"
  - op: exit
    code: 1
"#;

/// The mock's scenario: the handshake and an `expect tools/call`, then `rest` of the script.
const MOCK_HEAD: &str = "name: mock\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nclient:\n  - op: connect\nserver:\n  - op: handshake\n  - op: expect\n    method: tools/call\n";

/// `mcp-harness mock stdio` serving [`MOCK_HEAD`] + `rest`.
fn mock_server(dir: &Path, rest: &str) -> Vec<String> {
    let scenario = dir.join("mock.yaml");
    std::fs::write(&scenario, format!("{MOCK_HEAD}{rest}")).expect("write the mock's scenario");
    let run_dir = dir.join("mock-run");
    std::fs::create_dir_all(&run_dir).expect("run dir");
    mock_stdio(&scenario, "--run-dir", &run_dir)
}

/// The command line of `mcp-harness mock stdio` serving `scenario`, writing its records with
/// `output_flag` (`--run-dir`, `--record`) to `output`.
pub(crate) fn mock_stdio(scenario: &Path, output_flag: &str, output: &Path) -> Vec<String> {
    let scenario = scenario.display().to_string();
    let output = output.display().to_string();
    [HARNESS, "mock", "stdio", "--scenario", &scenario, output_flag, &output].map(String::from).to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_faulty_server_recorded_replays_the_clients_failure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("faulty-session.yaml");
    let seen = record_session(
        &out,
        &[],
        &mock_server(dir.path(), FAULTY),
        &[("tools/call", json!({"name": "crash", "arguments": {}}))],
    )
    .await;
    let recorded_error = seen.results[0].clone().expect_err("the broken-off reply fails the call");

    let text = std::fs::read_to_string(&out).expect("scenario");
    assert!(
        text.contains("op: send\n    text: \"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":3,\\\"res\""),
        "the half line is sent raw:\n{text}"
    );
    assert!(text.contains("op: exit\n    code: 1"), "the server's exit is scripted:\n{text}");

    let result = replay(&out).await;
    assert_eq!(result.status, Status::Passed, "{}\n\n{text}\n\n{}", failures(&result), result.transcript);
    let step = result.steps.iter().find(|s| s.what.contains("tools/call")).expect("the tools/call step");
    assert_eq!(step.error.as_deref(), Some(recorded_error.as_str()), "the replay fails the call as the recording did");
    // …having seen the same broken-off line the recorded client saw.
    assert!(result.transcript.contains("Protocol error: line is not JSON"), "{}", result.transcript);
    assert_matches_capture(&capture::capture_path(&out), &result.transcript);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_client_is_told_where_it_left_the_recording() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("faulty-session.yaml");
    record_session(
        &out,
        &[],
        &mock_server(dir.path(), FAULTY),
        &[("tools/call", json!({"name": "crash", "arguments": {}}))],
    )
    .await;
    // The changed client calls another tool.
    let text = std::fs::read_to_string(&out).expect("scenario");
    let changed = text.replacen(
        "params: {\"name\":\"crash\",\"arguments\":{}}",
        "params: {\"name\":\"other\",\"arguments\":{}}",
        1,
    );
    assert_ne!(changed, text, "the plan's tools/call params are where the test expects them:\n{text}");
    std::fs::write(&out, changed).expect("write");
    let result = replay(&out).await;
    let divergence = result
        .failures
        .iter()
        .find(|f| f.check.contains("(replays)"))
        .unwrap_or_else(|| panic!("no replays failure: {}", failures(&result)));
    assert_eq!(
        divergence.message,
        "replay diverged from the recording at client message 4 on connection 1 (the recording's server step 6: `expect tools/call`): expected tools/call with params ⊇ {\"name\":\"crash\",\"arguments\":{}}; actual {\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"other\",\"arguments\":{}}}"
    );
}

/// The rest of a mock that logs a bearer token and hands out a token in its result.
const TOKENS: &str = r#"  - op: stderr
    text: "auth: using Bearer srvlog-Token-4242\n"
  - op: reply
    result: {"content": [{"type": "text", "text": "ok"}], "access_token": "srv-Issued-777", "session": "cust-55501"}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_captured_secret_reaches_the_scenario_or_the_capture() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("secret-session.yaml");
    let args = json!({"name": "login", "arguments": {"apiKey": "cli-Key-31337", "note": "Authorization: Bearer cli-Bearer-9001", "account": "cust-55501"}});
    let seen = record_session(
        &out,
        &["--redact-pattern", "cust-[0-9]+"],
        &mock_server(dir.path(), TOKENS),
        &[("tools/call", args)],
    )
    .await;
    // The relay itself is untouched: the client got the real token.
    assert_eq!(seen.results[0].as_ref().ok().and_then(|r| r.get("access_token")), Some(&json!("srv-Issued-777")));
    let scenario = std::fs::read_to_string(&out).expect("scenario");
    let captured = std::fs::read_to_string(capture::capture_path(&out)).expect("capture");
    for secret in ["cli-Key-31337", "cli-Bearer-9001", "srv-Issued-777", "srvlog-Token-4242", "cust-55501"] {
        assert!(!scenario.contains(secret), "{secret} reached the scenario:\n{scenario}");
        assert!(!captured.contains(secret), "{secret} reached the capture file");
    }
    for listed in [
        "JSON member \"apiKey\": 1",
        "JSON member \"access_token\": 1",
        "bearer token: 2",
        "pattern \"cust-[0-9]+\": 2",
    ] {
        assert!(scenario.contains(&format!("#   {listed}\n")), "the file does not list `{listed}`:\n{scenario}");
    }
    let result = replay(&out).await;
    assert_eq!(result.status, Status::Passed, "{}\n\n{scenario}\n\n{}", failures(&result), result.transcript);
}

#[test]
fn bad_record_options_are_refused_with_what_to_write() {
    let run = |args: &[&str]| {
        let o = std::process::Command::new(HARNESS).arg("record").args(args).output().expect("runs");
        (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (code, err) = run(&["--out", "Bad Name.yaml", "--", "true"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("lowercase letters, digits and '-'"), "{err}");
    let (code, err) = run(&["--out", "ok.yaml", "--speed", "0", "--", "true"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--speed 0: give a positive number"), "{err}");
    let (code, err) = run(&["--out", "ok.yaml", "--redact-pattern", "(", "--", "true"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--redact-pattern \"(\" is not a regular expression"), "{err}");
    let (code, err) = run(&["--out", "ok.yaml"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("no server command: put it after `--`"), "{err}");
}

/// An HTTP upstream (our mock) whose tools/call answer is an SSE stream with a comment, ids,
/// a retry and a delay before the result.
const SSE_UPSTREAM: &str = r#"name: upstream
summary: s
transport: http
revision: 2025-11-25
deadline_ms: 20000
client:
  - op: connect
server:
  - op: handshake
  - op: expect_get
    status: 405
    optional: true
  - op: expect
    method: tools/call
    as: call
  - op: open_stream
    to: call
  - op: event
    stream: call
    comment: keep-alive
  - op: event
    stream: call
    id: "e1"
    retry: 500
    json: {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "p1", "progress": 1}}
  - op: delay
    ms: 50
  - op: event
    stream: call
    id: "e2"
    json: {"jsonrpc": "2.0", "id": "{id}", "result": {"content": [{"type": "text", "text": "done"}], "refresh_token": "srv-Refresh-8080"}}
  - op: end_stream
    stream: call
    how: clean
"#;

/// The first line of `r` (a child's stdout or stderr) that contains `needle`.
async fn line_with(r: impl tokio::io::AsyncRead + Unpin, needle: &str) -> String {
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(r).lines();
    while let Ok(Some(l)) = lines.next_line().await {
        if l.contains(needle) {
            return l;
        }
    }
    panic!("no line with {needle:?}")
}

/// Where a server process says the address it listens on: the line holding this text.
enum Listens {
    OnStdout(&'static str),
    OnStderr(&'static str),
}

/// Starts `cmd` (killed when dropped) and waits until it says where it listens: the child, and
/// that line's last word, the address.
async fn listening(mut cmd: tokio::process::Command, says: Listens) -> (tokio::process::Child, String) {
    use std::process::Stdio;
    match says {
        Listens::OnStdout(_) => cmd.stdout(Stdio::piped()),
        Listens::OnStderr(_) => cmd.stderr(Stdio::piped()),
    };
    let mut child = cmd.kill_on_drop(true).spawn().expect("the server starts");
    let line = match says {
        Listens::OnStdout(needle) => line_with(child.stdout.take().expect("stdout"), needle).await,
        Listens::OnStderr(needle) => line_with(child.stderr.take().expect("stderr"), needle).await,
    };
    let address = line.split_whitespace().last().expect("an address").to_owned();
    (child, address)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_session_through_the_proxy_replays_with_its_stream() {
    let dir = tempfile::tempdir().expect("tempdir");
    let upstream_yaml = dir.path().join("upstream.yaml");
    std::fs::write(&upstream_yaml, SSE_UPSTREAM).expect("write");
    let run_dir = dir.path().join("mock-run");
    std::fs::create_dir_all(&run_dir).expect("run dir");
    let mut mock = tokio::process::Command::new(HARNESS);
    mock.args(["mock", "http", "--scenario"]).arg(&upstream_yaml).arg("--run-dir").arg(&run_dir);
    let (mut mock, upstream) = listening(mock, Listens::OnStdout("listening")).await;
    let out = dir.path().join("http-session.yaml");
    let mut recorder = tokio::process::Command::new(HARNESS);
    recorder.args(["record", "--out"]).arg(&out).args(["--upstream", &upstream, "--listen", "127.0.0.1:0"]);
    let (mut recorder, proxy) = listening(recorder, Listens::OnStderr("listening on")).await;

    let config = TransportConfig {
        kind: mcp_transports::config::TransportKind::Http,
        url: format!("{proxy}/mcp"),
        headers: [("Authorization".to_string(), "Bearer cli-Http-Secret-77".to_string())].into(),
        ..TransportConfig::default()
    };
    let t = connect_through("the proxy", config).await;
    let params = json!({"name": "slow", "arguments": {}, "_meta": {"progressToken": "p1"}});
    let result =
        t.request("tools/call", Some(params), RequestOptions::default()).await.expect("the call through the proxy");
    assert_eq!(result.get("refresh_token"), Some(&json!("srv-Refresh-8080")), "the relay is untouched");
    t.close().await;
    // The recording ends on SIGTERM; its exit is the event that says the files are written.
    let pid = nix::unistd::Pid::from_raw(i32::try_from(recorder.id().expect("running")).expect("pid"));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("signal the recorder");
    let status = recorder.wait().await.expect("recorder exits");
    assert!(status.success(), "recorder: {status:?}");
    let _ = mock.kill().await;

    let text = std::fs::read_to_string(&out).expect("scenario");
    let captured = std::fs::read_to_string(capture::capture_path(&out)).expect("capture");
    for secret in ["cli-Http-Secret-77", "srv-Refresh-8080"] {
        assert!(!text.contains(secret) && !captured.contains(secret), "{secret} was kept:\n{text}");
    }
    assert!(text.contains("#   authorization header: "), "{text}");
    for kept in [
        "comment: \"keep-alive\"",
        "id: \"e1\"\n    retry: 500",
        "op: delay",
        "how: clean",
        "op: expect_delete",
        "headers: {\"Mcp-Session-Id\":",
    ] {
        assert!(text.contains(kept), "`{kept}` is not in the recorded scenario:\n{text}");
    }
    let replayed = replay(&out).await;
    assert_eq!(replayed.status, Status::Passed, "{}\n\n{text}\n\n{}", failures(&replayed), replayed.transcript);
    assert!(replayed.transcript.contains("⇐ #4 : keep-alive\\n\\n"), "{}", replayed.transcript);
    assert!(
        replayed
            .transcript
            .contains("id: e1\\nretry: 500\\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\""),
        "{}",
        replayed.transcript
    );
    assert!(replayed.transcript.contains("· #4 stream ended: clean"), "{}", replayed.transcript);
}

/// A session recorded from a client other than ours — the TypeScript SDK's, through
/// `tests/fixtures/sdk-client.mjs`: connect, list tools, call one, close — replays unedited
/// on that client (the typescript driver) and on the bundled client: the plan is what the
/// recorded client did (its `tools/list` a plan step, not folded into `connect`), and the
/// server command goes to `record` without `--`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_recorded_from_the_typescript_sdk_client_replays_on_it_and_on_bundled() {
    let Some(server) = ts_example_server() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("ts-client-session.yaml");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sdk-client.mjs");
    let mut client = tokio::process::Command::new("node");
    client
        .arg(&fixture)
        .args(["session", "stdio", HARNESS, "record", "--speed", "10", "--out"])
        .arg(&out)
        .arg("node")
        .arg(&server)
        .env("TOOL_ARGS", r#"{"city": "Paris", "country": "FR"}"#)
        .kill_on_drop(true);
    let done = tokio::time::timeout(std::time::Duration::from_secs(30), client.output())
        .await
        .expect("the SDK client's session ends")
        .expect("node runs");
    let said = String::from_utf8_lossy(&done.stdout);
    assert!(done.status.success() && said.contains("get_weather"), "{said}{}", String::from_utf8_lossy(&done.stderr));
    let text = std::fs::read_to_string(&out).expect("the recorder wrote the scenario");
    assert!(
        text.contains("- op: request\n    method: \"tools/list\""),
        "the client's tools/list is no plan step:\n{text}"
    );

    let bundled = replay(&out).await;
    assert_eq!(bundled.status, Status::Passed, "bundled: {}\n\n{text}\n\n{}", failures(&bundled), bundled.transcript);

    let run = std::process::Command::new(HARNESS)
        .current_dir(REPO)
        .arg("run")
        .arg(&out)
        .args(["--target", "cmd:clients/typescript/run", "--reports"])
        .arg(dir.path().join("reports"))
        .output()
        .expect("mcp-harness run");
    let said = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{said}{}", String::from_utf8_lossy(&run.stderr));
    // The recorded checks carry no MCP basis (the recording pins what the client did, which
    // MCP does not rule on), so the run is not applicable, not passed; what shows the replay
    // held is each check's judgement.
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("reports/results.json")).expect("results.json"))
            .expect("JSON");
    let judged = results["runs"][0]["judged"].as_array().cloned().unwrap_or_default();
    assert!(
        judged.iter().any(|j| j["check"].as_str().is_some_and(|c| c.contains("(replays)")))
            && judged.iter().all(|j| j["judgement"] == "held"),
        "the typescript driver does not replay it as recorded: {judged:#?}\n{said}\n\n{text}"
    );
}
