//! The stdio mock in-process, on duplex pipes: replies and their corruptions, raw bytes and
//! chunking, stderr, server-to-client requests, stdin EOF, signals, exits and deadlines.

use crate::support::{Stdio, head, init, request};
use mcp_mock::ExitReason;
use mcp_scenario::WireEvent;
use nix::sys::signal::Signal;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn script(server: &str) -> String {
    head("2025-11-25", "stdio") + "server:\n" + server
}

fn signalled(run: &[WireEvent], signal: &str, was_ignored: bool) -> bool {
    run.iter()
        .any(|e| matches!(e, WireEvent::Signal { name, ignored, .. } if name == signal && *ignored == was_ignored))
}

fn writes<'a>(run: &'a [WireEvent], why: &str) -> Vec<&'a str> {
    run.iter()
        .filter_map(|e| match e {
            WireEvent::ToClient { bytes, why: w, .. } if w == why => Some(bytes.text.as_deref().unwrap_or("<bin>")),
            _ => None,
        })
        .collect()
}

/// How many lines the mock wrote for each of `whys`.
fn write_counts<const N: usize>(run: &[WireEvent], whys: [&str; N]) -> [usize; N] {
    whys.map(|why| writes(run, why).len())
}

#[tokio::test]
async fn replies_answer_with_wrong_ids_and_line_ends() {
    let mut m = Stdio::start(&script(
        "  - op: handshake\n  - op: expect\n    method: a\n  - op: reply\n    wrong_id: other_type\n  - op: expect\n    method: b\n    as: bee\n  - op: reply\n    to: bee\n    wrong_id: 'null'\n    error: {\"code\": -1, \"message\": \"no\"}\n  - op: expect\n    method: c\n  - op: reply\n    wrong_id: unknown\n    line_end: crlf\n    result: {\"ok\": true}\n",
    ));
    let init = m.handshake().await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    m.send(request(2, "a")).await;
    assert_eq!(m.line().await, json!({"jsonrpc": "2.0", "id": "2", "result": {}}));
    m.send(request(3, "b")).await;
    assert_eq!(m.line().await, json!({"jsonrpc": "2.0", "id": null, "error": {"code": -1, "message": "no"}}));
    m.send(request("4", "c")).await;
    let raw = m.raw_line().await;
    assert!(raw.ends_with(b"}\r\n"), "{}", String::from_utf8_lossy(&raw));
    assert_eq!(serde_json::from_slice::<Value>(&raw).expect("json")["id"], "no-such-request");
    m.close_stdin();
    let (reason, run) = m.ended().await;
    assert_eq!(reason, ExitReason::code(0, "stdin EOF"));
    assert!(run.iter().any(|e| matches!(e, WireEvent::Labelled { label, .. } if label == "bee")));
    assert!(matches!(run.last(), Some(WireEvent::Exit { code: Some(0), .. })), "{run:?}");
}

#[tokio::test]
async fn unscripted_requests_are_answered_at_once() {
    let mut m = Stdio::start(&script("  - op: expect\n    method: tools/list\n  - op: reply\n"));
    m.send(json!({"jsonrpc": "2.0", "method": "notifications/whatever"})).await;
    m.send(request(9, "x/y")).await;
    let answer = m.line().await;
    assert_eq!(answer["id"], 9);
    assert_eq!(answer["error"]["code"], -32601);
    m.write(b"not json\n").await;
    m.send(request(2, "tools/list")).await;
    assert_eq!(m.line().await["id"], 2);
    let run = m.closed().await;
    assert_eq!(writes(&run, "auto -32601").len(), 1);
    assert!(run.iter().any(|e| matches!(e, WireEvent::FromClient { json: None, .. })));
}

#[tokio::test]
async fn unscripted_ping_and_tools_list_get_their_defaults() {
    let text = "name: t\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nclient:\n  - op: connect\n  - op: request\n    method: tools/call\n    params: {\"name\": \"echo\"}\nserver:\n  - op: expect\n    method: tools/list\n  - op: reply\n    result: {\"tools\": [\"scripted\"]}\n  - op: stall\n";
    let mut m = Stdio::start(text);
    // The scripted `expect` wins the first tools/list; the second is unscripted.
    m.send(request(1, "tools/list")).await;
    assert_eq!(m.line().await["result"], json!({"tools": ["scripted"]}));
    m.send(request(2, "tools/list")).await;
    assert_eq!(
        m.line().await,
        json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}})
    );
    m.send(request("p", "ping")).await;
    assert_eq!(m.line().await, json!({"jsonrpc": "2.0", "id": "p", "result": {}}));
    m.send(request(3, "server/discover")).await;
    assert_eq!(m.line().await["error"]["code"], -32601);
    let run = m.closed().await;
    assert_eq!(write_counts(&run, ["default tools/list", "default ping", "auto -32601"]), [1, 1, 1]);
}

#[tokio::test]
async fn reply_always_answers_every_unscripted_request_before_the_defaults() {
    let mut m = Stdio::start(&script(
        "  - op: reply_always\n    method: tools/call\n    result: {\"content\": []}\n  - op: reply_always\n    method: ping\n    error: {\"code\": -1, \"message\": \"no\"}\n  - op: expect\n    method: tools/call\n  - op: reply\n    result: {\"scripted\": true}\n  - op: stall\n",
    ));
    // The scripted `expect` still wins the first call; the rule answers the later ones.
    m.send(request(1, "tools/call")).await;
    assert_eq!(m.line().await["result"], json!({"scripted": true}));
    for id in 2..4 {
        m.send(request(id, "tools/call")).await;
        assert_eq!(m.line().await, json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}}));
    }
    // A rule comes before the default `ping` answer.
    m.send(request("p", "ping")).await;
    assert_eq!(m.line().await, json!({"jsonrpc": "2.0", "id": "p", "error": {"code": -1, "message": "no"}}));
    let run = m.closed().await;
    assert_eq!(write_counts(&run, ["reply_always", "default ping"]), [3, 0]);
}

#[tokio::test]
async fn placeholders_take_the_request_being_answered_and_never_invent_a_token() {
    let mut m = Stdio::start(&script(
        "  - op: expect\n    method: tools/call\n  - op: notify\n    method: notifications/progress\n    params: {\"progressToken\": \"{progressToken}\", \"progress\": 1}\n  - op: send\n    text: \"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":{id},\\\"result\\\":{}}\\n\"\n  - op: expect\n    method: tools/call\n  - op: notify\n    method: notifications/progress\n    params: {\"progressToken\": \"{progressToken}\", \"progress\": 1}\n  - op: send\n    json: {\"jsonrpc\": \"2.0\", \"id\": \"{id}\", \"result\": {}}\n  - op: stall\n",
    ));
    let mut call = request(0, "tools/call");
    call["params"]["_meta"] = json!({"progressToken": "tok-0"});
    m.send(call).await;
    assert_eq!(m.line().await["params"], json!({"progressToken": "tok-0", "progress": 1}));
    assert_eq!(m.line().await, json!({"jsonrpc": "2.0", "id": 0, "result": {}}));
    // No token on this request: no progress at all, only the answer.
    m.send(request("b", "tools/call")).await;
    assert_eq!(m.line().await, json!({"jsonrpc": "2.0", "id": "b", "result": {}}));
    let run = m.closed().await;
    assert_eq!(writes(&run, "notify").len(), 1);
    let noted = run.iter().any(|e| {
        matches!(e, WireEvent::Note { text, .. } if text.contains("carries no params._meta.progressToken") && text.ends_with("nothing sent"))
    });
    assert!(noted, "{run:?}");
}

#[tokio::test]
async fn raw_bytes_in_chunks() {
    let mut m = Stdio::start(&script(
        "  - op: send\n    hex: ff fe 0a\n    chunks: [1, 1]\n    chunk_delay_ms: 1\n  - op: send\n    generate: {size: 4, fill: z}\n  - op: send\n    base64: YWI=\n    chunks: [5]\n  - op: send\n    json: {\"a\": 1}\n  - op: stall\n",
    ));
    assert_eq!(m.bytes(3).await, [0xff, 0xfe, 0x0a]);
    assert_eq!(m.bytes(5).await, b"zzzz\n");
    assert_eq!(m.bytes(2).await, b"ab");
    assert_eq!(m.line().await, json!({"a": 1}));
    let run = m.closed().await;
    let sends: Vec<usize> = run
        .iter()
        .filter_map(|e| match e {
            WireEvent::ToClient { bytes, why, .. } if why == "send" => Some(bytes.len),
            _ => None,
        })
        .collect();
    // hex in three writes; generate in one; base64 as its one sized chunk (no empty rest);
    // json in one.
    assert_eq!(sends, [1, 1, 1, 5, 2, 8]);
    assert!(run.iter().any(|e| matches!(e, WireEvent::Script { finished: true, .. })), "stall counts as the end");
}

#[tokio::test]
async fn stderr_is_written_and_recorded() {
    let mut m = Stdio::start(&script(
        "  - op: stderr\n    text: \"warming up\\n\"\n  - op: stderr\n    generate: {size: 3, fill: e, newline: false}\n  - op: notify\n    method: ready\n",
    ));
    assert_eq!(m.line().await, json!({"jsonrpc": "2.0", "method": "ready"}));
    let mut err = vec![0; 14];
    m.stderr.read_exact(&mut err).await.expect("stderr");
    assert_eq!(err, b"warming up\neee");
    let run = m.closed().await;
    assert_eq!(run.iter().filter(|e| matches!(e, WireEvent::Stderr { .. })).count(), 2);
}

#[tokio::test]
async fn server_requests_wait_for_their_answer() {
    let mut m = Stdio::start(&script(
        "  - op: request\n    method: roots/list\n    as: r\n  - op: expect_response\n    to: r\n  - op: notify\n    method: done\n    params: {\"n\": 1}\n",
    ));
    let req = m.line().await;
    assert_eq!(req, json!({"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list"}));
    m.send(json!({"jsonrpc": "2.0", "id": "srv-1", "result": {"roots": []}})).await;
    assert_eq!(m.line().await, json!({"jsonrpc": "2.0", "method": "done", "params": {"n": 1}}));
    let run = m.closed().await;
    assert!(run.iter().any(|e| matches!(e, WireEvent::Labelled { label, id, .. } if label == "r" && id == "srv-1")));
}

#[tokio::test]
async fn stdin_eof_waits_for_what_already_arrived() {
    let mut m = Stdio::start(&script("  - op: handshake\n  - op: expect\n    method: tools/list\n  - op: reply\n"));
    // Everything at once, then EOF: the mock still serves it before it exits.
    let all = format!(
        "{}\n{}\n{}\n",
        crate::support::init(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        request(2, "tools/list")
    );
    m.write(all.as_bytes()).await;
    m.close_stdin();
    assert_eq!(m.line().await["id"], 1);
    assert_eq!(m.line().await["id"], 2);
    let (reason, run) = m.ended().await;
    assert_eq!(reason, ExitReason::code(0, "stdin EOF"));
    let eof = run.iter().position(|e| matches!(e, WireEvent::StdinEof { .. })).expect("EOF recorded");
    let exit = run.iter().position(|e| matches!(e, WireEvent::Exit { .. })).expect("exit recorded");
    assert!(eof < exit);
    assert!(matches!(run[exit - 1], WireEvent::Script { finished: true, .. }));
}

#[tokio::test]
async fn ignore_stdin_eof_then_expect_eof_then_exit() {
    let mut m = Stdio::start(&script(
        "  - op: ignore_stdin_eof\n  - op: expect_eof\n  - op: notify\n    method: bye\n  - op: exit\n    code: 7\n",
    ));
    assert!(m.running_after(Duration::from_millis(20)).await, "waits for EOF");
    m.close_stdin();
    assert_eq!(m.line().await["method"], "bye");
    let (reason, run) = m.ended().await;
    assert_eq!(reason, ExitReason::code(7, "script"));
    assert!(matches!(run.last(), Some(WireEvent::Exit { code: Some(7), signal: None, .. })), "{run:?}");
}

/// A client's first line; `expect_write` waits for it however late it comes (a client held
/// up by load), so the exit after it cannot race the write.
#[tokio::test]
async fn expect_write_waits_for_a_late_client_and_leaves_its_bytes_unread() {
    let mut m = Stdio::start(&script("  - op: stop_reading\n  - op: expect_write\n  - op: exit\n    code: 3\n"));
    assert!(m.running_after(Duration::from_millis(150)).await, "waits for the client's write");
    m.send(init()).await;
    let (reason, run) = m.ended().await;
    assert_eq!(reason, ExitReason::code(3, "script"));
    assert!(!run.iter().any(|e| matches!(e, WireEvent::FromClient { .. })), "left unread: {run:?}");
}

/// Bytes that arrive after `stop_reading` stay unread even when the reader thread was
/// already waiting in a read as the script stopped it (before, they were handled).
#[tokio::test]
async fn stop_reading_leaves_what_comes_after_it_unread() {
    let mut m = Stdio::start(&script(
        "  - op: handshake\n  - op: stop_reading\n  - op: notify\n    method: stopped\n  - op: expect_write\n  - op: notify\n    method: bye\n  - op: exit\n    code: 0\n",
    ));
    m.handshake().await;
    assert_eq!(m.line().await["method"], "stopped");
    m.send(request(2, "tools/list")).await;
    assert_eq!(m.line().await["method"], "bye", "no answer to the unread request");
    let (_, run) = m.ended().await;
    let read: Vec<_> = run.iter().filter_map(|e| e.client_line()).collect();
    assert_eq!(read.len(), 2, "initialize and initialized only: {run:?}");
}

#[tokio::test]
async fn exit_by_signal_is_left_to_the_process_edge() {
    let m = Stdio::start(&script("  - op: exit\n    signal: SIGKILL\n  - op: notify\n    method: never\n"));
    let (reason, run) = m.ended().await;
    assert_eq!(reason, ExitReason { code: 1, signal: Some(Signal::SIGKILL), why: "script".into() });
    assert!(
        matches!(run.last(), Some(WireEvent::Exit { code: None, signal: Some(s), .. }) if s == "SIGKILL"),
        "{run:?}"
    );
    assert!(!run.iter().any(|e| matches!(e, WireEvent::ToClient { .. })), "nothing after the exit");
}

/// Serves `server`, delivers `signals` 10 ms apart, and waits for the mock to end.
async fn stopped_by(server: &str, signals: &[Signal]) -> (ExitReason, Vec<WireEvent>, bool) {
    let mut m = Stdio::start(&script(server));
    let mut ran_on = true;
    for sig in signals {
        ran_on &= m.running_after(Duration::from_millis(10)).await;
        m.signal(*sig);
    }
    let (reason, run) = m.ended().await;
    (reason, run, ran_on)
}

#[tokio::test]
async fn signals_stop_the_mock_unless_sigterm_is_ignored() {
    let (reason, run, _) = stopped_by("  - op: stall\n", &[Signal::SIGTERM]).await;
    assert_eq!(reason, ExitReason::code(143, "SIGTERM"));
    assert!(signalled(&run, "SIGTERM", false));
    let ignoring = "  - op: ignore_sigterm\n  - op: stall\n";
    let (reason, run, ran_on) = stopped_by(ignoring, &[Signal::SIGTERM, Signal::SIGINT]).await;
    assert!(ran_on, "SIGTERM is ignored");
    assert_eq!(reason, ExitReason::code(130, "SIGINT"));
    assert!(signalled(&run, "SIGTERM", true) && signalled(&run, "SIGINT", false));
}

/// A client's probe copy (a process that asks `server/discover` and leaves) gets the
/// default answer and its own record; the script goes to the client's next process.
#[tokio::test]
async fn a_probe_copy_leaves_the_script_to_the_next_process() {
    let text = script(
        "  - op: handshake\n  - op: expect\n    method: ping\n  - op: reply\n    result: {\"scripted\": true}\n",
    );
    let mut probe = Stdio::start(&text);
    probe.send(request("p-1", "server/discover")).await;
    let answer = probe.line().await;
    assert_eq!(answer["error"]["code"], -32601, "a 2025-11-25 server does not know server/discover: {answer}");
    probe.close_stdin();
    let mut real = probe.beside(&text);
    let (reason, probe_run) = probe.ended_run().await;
    assert_eq!(reason, ExitReason::code(0, "stdin EOF"));
    // (The real process's record is there too, still pending: it has not heard the client.)
    let is_probe = |events: &Vec<WireEvent>| {
        events
            .iter()
            .any(|e| matches!(e, WireEvent::Note { text, .. } if text.starts_with(mcp_mock::stdio::run::PROBE_NOTE)))
    };
    let probe_events = probe_run.iter().find(|c| is_probe(c)).unwrap_or_else(|| panic!("{probe_run:?}"));
    assert!(!probe_events.iter().any(|e| matches!(e, WireEvent::Script { .. })), "no script ran on the probe");
    // The real session runs connection 1's script.
    let init = real.handshake().await;
    assert!(init["result"]["protocolVersion"].is_string(), "{init}");
    real.send(request(2, "ping")).await;
    assert_eq!(real.line().await["result"], serde_json::json!({"scripted": true}));
    real.close_stdin();
    let (_, run) = real.ended_run().await;
    assert_eq!(run.len(), 2, "connection 1, then the probe: {run:?}");
    assert!(run[0].iter().any(|e| matches!(e, WireEvent::Script { finished: true, .. })), "{:?}", run[0]);
}

/// On 2026-07-28 a probe copy's `server/discover` is answered as the script's leading
/// `stateless` step says (its versions), though no script runs there.
#[tokio::test]
async fn a_probe_copy_is_answered_by_the_scripts_leading_rules() {
    let text = head("2026-07-28", "stdio")
        + "server:\n  - op: stateless\n    supported_versions: [\"2026-07-28\", \"2030-01-01\"]\n  - op: expect\n    method: tools/list\n  - op: reply\n";
    let mut probe = Stdio::start(&text);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    probe.send(json!({"jsonrpc": "2.0", "id": "p", "method": "server/discover", "params": {"_meta": meta}})).await;
    let answer = probe.line().await;
    assert_eq!(answer["result"]["supportedVersions"], json!(["2026-07-28", "2030-01-01"]), "{answer}");
    probe.close_stdin();
    let (_, run) = probe.ended_run().await;
    assert_eq!(run.len(), 1, "{run:?}");
    assert!(!run[0].iter().any(|e| matches!(e, WireEvent::Script { .. })), "no script ran: {:?}", run[0]);
}

/// A process the client never spoke to still holds the connection's script (it waited at
/// its start): only a `server/discover` makes a probe.
#[tokio::test]
async fn a_silent_process_is_a_connection_not_a_probe() {
    let mut m = Stdio::start(&script("  - op: handshake\n"));
    m.close_stdin();
    let (_, run) = m.ended_run().await;
    assert_eq!(run.len(), 1);
    assert!(
        matches!(run[0].iter().rev().nth(1), Some(WireEvent::Script { reached: 1, finished: false, .. })),
        "{:?}",
        run[0]
    );
}

#[tokio::test]
async fn the_deadline_ends_the_mock() {
    let m = Stdio::start_with(&script("  - op: expect\n    method: never\n"), 1 << 16, Duration::from_millis(50));
    let (reason, run) = m.ended().await;
    assert_eq!(reason, ExitReason::code(124, "deadline"));
    assert!(matches!(run.last(), Some(WireEvent::Exit { code: Some(124), .. })));
    assert!(matches!(run[run.len() - 2], WireEvent::Script { reached: 1, finished: false, .. }));
}

#[tokio::test]
async fn stop_reading_blocks_the_client() {
    let mut m = Stdio::start_with(&script("  - op: stop_reading\n  - op: stall\n"), 256, Duration::from_secs(10));
    tokio::time::sleep(Duration::from_millis(10)).await;
    let big = vec![b'x'; 4096];
    let blocked = tokio::time::timeout(Duration::from_millis(50), m.write(&big)).await;
    assert!(blocked.is_err(), "the write must block on a mock that stopped reading");
}

#[tokio::test]
async fn close_stdin_breaks_the_clients_pipe_and_waits_for_a_signal() {
    let mut m = Stdio::start(&script(
        "  - op: handshake\n  - op: close_stdin\n  - op: notify\n    method: notifications/message\n",
    ));
    m.handshake().await;
    assert_eq!(m.line().await["method"], "notifications/message");
    // The mock dropped its end of the pipe before it wrote the notification.
    let stdin = m.stdin_mut();
    let write = stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n").await;
    assert_eq!(write.map_err(|e| e.kind()), Err(std::io::ErrorKind::BrokenPipe));
    assert!(m.running_after(Duration::from_millis(50)).await, "no stdin EOF ends it");
    m.signal(Signal::SIGTERM);
    let (reason, run) = m.ended().await;
    assert_eq!(reason, ExitReason::code(143, "SIGTERM"));
    assert!(run.iter().any(|e| matches!(e, WireEvent::Note { text, .. } if text.starts_with("close_stdin"))));
}

#[tokio::test]
async fn a_server_request_carries_the_id_the_step_gives() {
    let mut m = Stdio::start(&script(
        "  - op: handshake\n  - op: request\n    method: ping\n    as: p\n    id: 0\n  - op: expect_response\n    to: p\n  - op: request\n    method: ping\n    as: q\n",
    ));
    m.handshake().await;
    let first = m.line().await;
    assert_eq!(first["id"], json!(0));
    m.send(json!({"jsonrpc": "2.0", "id": 0, "result": {}})).await;
    assert_eq!(m.line().await["id"], json!("srv-2"), "the next one numbers as before");
    m.close_stdin();
    m.ended().await;
}

/// A stdout that reads the record on disk each time the mock writes to it: the write must
/// already be there, as the last thing the mock wrote, after the client line it answers.
struct RecordFirst {
    run_dir: std::path::PathBuf,
    problems: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    inner: tokio::io::DuplexStream,
}

impl tokio::io::AsyncWrite for RecordFirst {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let run = mcp_mock::record::read_run(&self.run_dir);
        let events = run.first().map(Vec::as_slice).unwrap_or_default();
        let text = String::from_utf8_lossy(buf);
        let last_write = events.iter().rposition(|e| matches!(e, WireEvent::ToClient { .. }));
        let id = serde_json::from_slice::<Value>(buf).ok().and_then(|v| v.get("id").cloned());
        let asked = id.as_ref().and_then(|id| {
            events.iter().position(
                |e| matches!(e, WireEvent::FromClient { json: Some(j), .. } if j.get("id") == Some(id) && j.get("method").is_some()),
            )
        });
        match (last_write.map(|i| &events[i]), asked) {
            (Some(WireEvent::ToClient { bytes, .. }), Some(asked))
                if bytes.text.as_deref() == Some(&*text) && asked < last_write.unwrap_or(0) => {}
            (found, _) => {
                let problem = format!(
                    "{text:?} reached the pipe before its record (last write on disk: {found:?}; request at {asked:?})"
                );
                self.problems.lock().expect("lock").push(problem);
            }
        }
        std::pin::Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[tokio::test]
async fn every_answer_is_on_disk_with_its_request_before_it_reaches_the_pipe() {
    let scenario = crate::support::scenario(&script(
        "  - op: reply_always\n    method: tools/call\n    result: {\"content\": []}\n  - op: handshake\n  - op: stall\n",
    ));
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut client_stdin, mock_stdin) = tokio::io::duplex(1 << 20);
    let (mock_stdout, client_stdout) = tokio::io::duplex(1 << 20);
    let (mock_stderr, _client_stderr) = tokio::io::duplex(1 << 20);
    let problems = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let stdout = RecordFirst { run_dir: dir.path().to_path_buf(), problems: problems.clone(), inner: mock_stdout };
    let (_stop, shutdown) = mcp_mock::Shutdown::channel(Some(crate::support::BOUND));
    let pipes = mcp_mock::stdio::Pipes::new(mock_stdin, stdout, mock_stderr);
    let run_dir = dir.path().to_path_buf();
    let server = tokio::spawn(async move { mcp_mock::stdio::serve(&scenario, &run_dir, pipes, shutdown).await });
    let mut replies = tokio::io::BufReader::new(client_stdout);
    let mut reply = async || {
        let mut line = String::new();
        crate::support::bounded("a reply", tokio::io::AsyncBufReadExt::read_line(&mut replies, &mut line))
            .await
            .expect("read");
        line
    };
    let mut lines = vec![request(1, "initialize"), json!({"jsonrpc": "2.0", "method": "notifications/initialized"})];
    lines.extend((2..40).map(|id| request(id, "tools/call")));
    lines.extend([request(40, "ping"), request(41, "no/such/method")]);
    let mut answered = 0;
    for line in &lines {
        client_stdin.write_all(format!("{line}\n").as_bytes()).await.expect("write");
        if line.get("id").is_some() {
            assert!(reply().await.contains(&format!("\"id\":{}", line["id"])));
            answered += 1;
        }
    }
    drop(client_stdin);
    crate::support::bounded("the mock's end", server).await.expect("join").expect("served");
    assert_eq!(answered, 41);
    let problems = problems.lock().expect("lock");
    assert!(problems.is_empty(), "{problems:#?}");
}
