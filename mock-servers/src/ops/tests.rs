//! The ops as a whole: one module per op named as scenarios write it, the descriptions the
//! harness prints, the load-time messages (file:line:column and wording, kept from before
//! the ops had modules), and the message budgets.

use super::*;
use std::collections::BTreeSet;
use std::path::Path;

/// One step of every op, in a script that is valid over stdio and legacy SSE.
const EVERY_OP: &str = r#"
- op: handshake
- op: expect
  method: tools/list
  as: l
- op: reply
- op: send
  text: "x\n"
- op: notify
  method: note
- op: request
  method: roots/list
  as: r
- op: expect_response
  to: r
- op: stderr
  text: log
- op: delay
  ms: 1
- op: stall
- op: stop_reading
- op: expect_write
- op: close_stdin
- op: ignore_sigterm
- op: ignore_stdin_eof
- op: expect_eof
- op: exit
- op: new_connection
- op: respond
- op: raw_response
  text: x
- op: open_stream
- op: event
  data: x
- op: end_stream
- op: expect_get
- op: expect_delete
- op: expire_session
- op: require_auth
  token: t
- op: reply_always
  method: ping
- op: message_event
  name: m
- op: endpoint
- op: stateless
  check_headers: false
- op: subscription_notify
  to: l
  method: notifications/subscriptions/acknowledged
- op: authorization_server
- op: expire_tokens
"#;

fn every_op() -> Vec<ServerStep> {
    serde_saphyr::from_str(EVERY_OP).expect("every op parses")
}

#[test]
fn every_op_has_its_module_named_as_scenarios_write_it() {
    let steps = every_op();
    let names: BTreeSet<&str> = steps.iter().map(name).collect();
    assert_eq!(names.len(), steps.len(), "one module per op");
    for step in &steps {
        let tag = serde_json::to_value(step).expect("serialises")["op"].as_str().map(str::to_string);
        assert_eq!(tag.as_deref(), Some(name(step)));
    }
    // Every variant serde knows is among them (its unknown-variant error lists them all).
    let err = serde_saphyr::from_str::<Vec<ServerStep>>("- op: nope\n").expect_err("unknown op").to_string();
    let listed = err.split("expected one of ").nth(1).expect("variants listed").lines().next().unwrap_or_default();
    let known: BTreeSet<&str> = listed.split(", ").map(str::trim).collect();
    assert_eq!(known, names);
}

#[test]
fn descriptions_are_the_harness_ones() {
    for step in &every_op() {
        let expected = match step {
            ServerStep::Expect(e) => format!("expect {}", e.method),
            ServerStep::ExpectResponse(e) => format!("expect_response {}", e.to),
            _ => name(step).to_string(),
        };
        assert_eq!(describe(step), expected);
    }
}

#[test]
fn budgets_count_what_each_transport_consumes() {
    let steps = every_op();
    let stdio = budget(&steps, TransportName::Stdio);
    assert_eq!(stdio.len(), 3);
    for key in ["initialize", "notifications/initialized", "tools/list"] {
        assert_eq!(stdio.get(key), 1, "{key}");
    }
    let http = budget(&steps, TransportName::Http);
    assert_eq!(http.get(crate::http::conn::GET), 1);
    assert_eq!(http.get(crate::http::conn::DELETE), 1);
    assert_eq!(http.len(), 5);
}

#[test]
fn transports_are_written_once_per_op() {
    let steps = every_op();
    let only = |t: Transports| steps.iter().filter(|s| op(s).about().transports == t).map(name).collect::<Vec<_>>();
    assert_eq!(
        only(Transports::STDIO),
        ["stderr", "stop_reading", "expect_write", "close_stdin", "ignore_sigterm", "ignore_stdin_eof", "expect_eof"]
    );
    assert_eq!(
        only(Transports::HTTP),
        ["respond", "raw_response", "open_stream", "event", "end_stream", "expect_get", "expect_delete", "endpoint"]
    );
    assert_eq!(only(Transports::HTTP.standing_rule()), ["expire_session", "require_auth", "message_event"]);
    assert_eq!(only(Transports::ALL.standing_rule()), ["reply_always", "stateless"]);
    assert_eq!(only(Transports::STREAMABLE_HTTP.standing_rule()), ["authorization_server", "expire_tokens"]);
}

const HEADS: [(&str, &str); 4] = [
    ("stdio", "name: t\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nclient:\n  - op: connect\n"),
    ("http", "name: t\nsummary: s\ntransport: http\nrevision: 2025-11-25\nclient:\n  - op: connect\n"),
    ("legacy", "name: t\nsummary: s\ntransport: legacy-sse\nrevision: 2024-11-05\nclient:\n  - op: connect\n"),
    ("multi", "name: t\nsummary: s\ntransport: [stdio, http]\nrevision: 2025-11-25\nclient:\n  - op: connect\n"),
];

/// (case, head, server script, the loader's whole message or `None` when it loads).
const CASES: &[(&str, &str, &str, Option<&str>)] = &[
    (
        "stall_extra",
        "stdio",
        "  - op: stall\n    foo: 1\n",
        Some("s.yaml:8:5: unknown field `foo`: op `stall` takes no fields"),
    ),
    ("stall_ok", "stdio", "  - op: stall\n", None),
    (
        "newconn_extra",
        "stdio",
        "  - op: new_connection\n    x: 1\n",
        Some("s.yaml:8:5: unknown field `x`: op `new_connection` takes no fields"),
    ),
    (
        "expire_extra",
        "http",
        "  - op: expire_session\n    x: 1\n",
        Some("s.yaml:8:5: unknown field `x`, expected one of http_method"),
    ),
    (
        "eof_extra",
        "stdio",
        "  - op: expect_eof\n    x: 1\n",
        Some("s.yaml:8:5: unknown field `x`: op `expect_eof` takes no fields"),
    ),
    (
        "stall_null",
        "stdio",
        "  - op: stall\n  - op: stop_reading\n    bar: [1]\n",
        Some("s.yaml:9:5: unknown field `bar`: op `stop_reading` takes no fields"),
    ),
    (
        "http_only_on_stdio",
        "stdio",
        "  - op: expect_get\n",
        Some(
            "s.yaml:8:5: server step 1: op `expect_get` needs transport `http` or `legacy-sse`; this scenario runs over stdio only",
        ),
    ),
    (
        "respond_on_stdio",
        "stdio",
        "  - op: respond\n",
        Some(
            "s.yaml:8:5: server step 1: op `respond` needs transport `http` or `legacy-sse`; this scenario runs over stdio only",
        ),
    ),
    (
        "endpoint_on_stdio",
        "stdio",
        "  - op: endpoint\n",
        Some(
            "s.yaml:8:5: server step 1: op `endpoint` needs transport `http` or `legacy-sse`; this scenario runs over stdio only",
        ),
    ),
    (
        "endpoint_on_http",
        "http",
        "  - op: endpoint\n",
        Some(
            "s.yaml:8:5: server step 1: op `endpoint` is the legacy SSE `endpoint` event; this scenario does not run over `legacy-sse`",
        ),
    ),
    ("endpoint_on_legacy", "legacy", "  - op: expect_get\n  - op: endpoint\n", None),
    (
        "stderr_on_http",
        "http",
        "  - op: stderr\n    text: a\n",
        Some(
            "s.yaml:8:5: server step 1: op `stderr` only means something over stdio; this scenario does not run over stdio",
        ),
    ),
    (
        "stop_reading_http",
        "http",
        "  - op: stop_reading\n",
        Some(
            "s.yaml:8:5: server step 1: op `stop_reading` only means something over stdio; this scenario does not run over stdio",
        ),
    ),
    (
        "expect_write_without_stop_reading",
        "stdio",
        "  - op: expect_write\n",
        Some(
            "s.yaml:8:5: server step 1: op `expect_write` waits for bytes the mock leaves unread, so it needs an earlier `stop_reading` on this connection (to wait for a message the mock reads, write `expect` with its method)",
        ),
    ),
    (
        "expect_write_on_the_next_connection",
        "stdio",
        "  - op: stop_reading\n  - op: new_connection\n  - op: expect_write\n",
        Some(
            "s.yaml:10:5: server step 3: op `expect_write` waits for bytes the mock leaves unread, so it needs an earlier `stop_reading` on this connection (to wait for a message the mock reads, write `expect` with its method)",
        ),
    ),
    ("expect_write_ok", "stdio", "  - op: stop_reading\n  - op: expect_write\n", None),
    (
        "ignore_sigterm_http",
        "legacy",
        "  - op: ignore_sigterm\n",
        Some(
            "s.yaml:8:5: server step 1: op `ignore_sigterm` only means something over stdio; this scenario does not run over stdio",
        ),
    ),
    (
        "ignore_eof_http",
        "http",
        "  - op: ignore_stdin_eof\n",
        Some(
            "s.yaml:8:5: server step 1: op `ignore_stdin_eof` only means something over stdio; this scenario does not run over stdio",
        ),
    ),
    (
        "expect_eof_http",
        "http",
        "  - op: expect_eof\n",
        Some(
            "s.yaml:8:5: server step 1: op `expect_eof` only means something over stdio; this scenario does not run over stdio",
        ),
    ),
    (
        "multi_ok",
        "multi",
        "  - op: stderr\n    text: a\n  - op: respond\n  - op: endpoint\n",
        Some(
            "s.yaml:11:5: server step 3: op `endpoint` is the legacy SSE `endpoint` event; this scenario does not run over `legacy-sse`",
        ),
    ),
    (
        "placeholder_before_any_request",
        "stdio",
        "  - op: handshake\n  - op: send\n    text: \"{\\\"id\\\":{id}}\\n\"\n",
        Some(
            "s.yaml:9:5: server step 2: field `text`: `{id}` and `{progressToken}` stand for the request being answered, but no earlier `expect` on this connection waits for a request; add that `expect` first, or write the value out",
        ),
    ),
    (
        "placeholder_after_a_notification_only",
        "http",
        "  - op: expect\n    method: notifications/initialized\n  - op: notify\n    method: notifications/progress\n    params: {\"progressToken\": \"{progressToken}\", \"progress\": 1}\n",
        Some(
            "s.yaml:10:5: server step 2: field `params`: `{id}` and `{progressToken}` stand for the request being answered, but no earlier `expect` on this connection waits for a request; add that `expect` first, or write the value out",
        ),
    ),
    (
        "placeholder_on_the_next_connection",
        "http",
        "  - op: expect\n    method: tools/call\n  - op: new_connection\n  - op: open_stream\n  - op: event\n    json: {\"id\": \"{id}\"}\n",
        Some(
            "s.yaml:12:5: server step 4: field `json`: `{id}` and `{progressToken}` stand for the request being answered, but no earlier `expect` on this connection waits for a request; add that `expect` first, or write the value out",
        ),
    ),
    (
        "placeholder_answering",
        "http",
        "  - op: expect\n    method: tools/call\n  - op: open_stream\n  - op: event\n    data: \"{\\\"id\\\":{id}}\"\n  - op: end_stream\n    partial: \"{id}\"\n",
        None,
    ),
    (
        "reply_to_unknown",
        "stdio",
        "  - op: reply\n    to: x\n",
        Some("s.yaml:8:5: server step 1: field `to`: no earlier `expect` is labelled \"x\""),
    ),
    (
        "reply_both",
        "stdio",
        "  - op: reply\n    result: {}\n    error: {}\n",
        Some("s.yaml:8:5: server step 1: fields `result` and `error`: give one, not both"),
    ),
    (
        "reply_to_both",
        "stdio",
        "  - op: expect\n    method: a\n    as: l\n  - op: reply\n    to: l\n    result: {}\n    error: {}\n",
        Some("s.yaml:11:5: server step 2: fields `result` and `error`: give one, not both"),
    ),
    (
        "send_none",
        "stdio",
        "  - op: send\n",
        Some("s.yaml:8:5: server step 1: op `send` takes exactly one of `text`, `hex`, `base64`, `json`, `generate`"),
    ),
    (
        "send_two",
        "stdio",
        "  - op: send\n    text: a\n    hex: ff\n",
        Some("s.yaml:8:5: server step 1: op `send` takes exactly one of `text`, `hex`, `base64`, `json`, `generate`"),
    ),
    (
        "send_badhex",
        "stdio",
        "  - op: send\n    hex: zz\n",
        Some("s.yaml:8:5: server step 1: field `hex`: Invalid character 'z' at position 0"),
    ),
    (
        "send_oddhex",
        "stdio",
        "  - op: send\n    hex: fff\n",
        Some("s.yaml:8:5: server step 1: field `hex`: Odd number of digits"),
    ),
    (
        "send_badb64",
        "stdio",
        "  - op: send\n    base64: '!!!'\n",
        Some("s.yaml:8:5: server step 1: field `base64`: Invalid symbol 33, offset 0."),
    ),
    (
        "send_badfill",
        "stdio",
        "  - op: send\n    generate: {size: 3, fill: ab}\n",
        Some("s.yaml:8:5: server step 1: field `fill`: \"ab\" must be one ASCII character"),
    ),
    (
        "send_badfill2",
        "stdio",
        "  - op: send\n    generate: {size: 3, fill: 'é'}\n",
        Some("s.yaml:8:5: server step 1: field `fill`: \"é\" must be one ASCII character"),
    ),
    (
        "stderr_none",
        "stdio",
        "  - op: stderr\n",
        Some("s.yaml:8:5: server step 1: op `stderr` takes exactly one of `text`, `generate`"),
    ),
    (
        "stderr_two",
        "stdio",
        "  - op: stderr\n    text: a\n    generate: {size: 1}\n",
        Some("s.yaml:8:5: server step 1: op `stderr` takes exactly one of `text`, `generate`"),
    ),
    ("stderr_badfill", "stdio", "  - op: stderr\n    generate: {size: 1, fill: ab}\n", None),
    (
        "request_dup",
        "stdio",
        "  - op: request\n    method: a\n    as: r\n  - op: request\n    method: b\n    as: r\n",
        Some("s.yaml:11:5: server step 2: field `as`: label \"r\" is used twice"),
    ),
    (
        "expect_response_unknown",
        "stdio",
        "  - op: expect_response\n    to: r\n",
        Some("s.yaml:8:5: server step 1: field `to`: no earlier `request` is labelled \"r\""),
    ),
    (
        "expect_response_later",
        "stdio",
        "  - op: expect_response\n    to: r\n  - op: request\n    method: b\n    as: r\n",
        Some("s.yaml:8:5: server step 1: field `to`: no earlier `request` is labelled \"r\""),
    ),
    (
        "exit_both",
        "stdio",
        "  - op: exit\n    code: 1\n    signal: SIGKILL\n",
        Some("s.yaml:8:5: server step 1: fields `code` and `signal`: give one, not both"),
    ),
    (
        "exit_badsig",
        "stdio",
        "  - op: exit\n    signal: SIGFOO\n",
        Some("s.yaml:8:5: server step 1: field `signal`: unknown signal \"SIGFOO\" (e.g. SIGKILL, SIGTERM, SIGSEGV)"),
    ),
    ("exit_code_only", "stdio", "  - op: exit\n    code: 3\n", None),
    (
        "respond_to_unknown",
        "http",
        "  - op: respond\n    to: x\n",
        Some("s.yaml:8:5: server step 1: field `to`: no earlier `expect` is labelled \"x\""),
    ),
    (
        "respond_status",
        "http",
        "  - op: respond\n    status: 700\n",
        Some("s.yaml:8:5: server step 1: field `status`: 700 is not an HTTP status (100–599)"),
    ),
    (
        "respond_status_low",
        "http",
        "  - op: respond\n    status: 99\n",
        Some("s.yaml:8:5: server step 1: field `status`: 99 is not an HTTP status (100–599)"),
    ),
    (
        "respond_header_name",
        "http",
        "  - op: respond\n    headers: {'bad name': x}\n",
        Some("s.yaml:8:5: server step 1: field `headers`: \"bad name\" is not a valid header name"),
    ),
    (
        "respond_header_value",
        "http",
        "  - op: respond\n    headers: {X-A: \"a\\nb\"}\n",
        Some("s.yaml:8:5: server step 1: field `headers`: the value of \"X-A\" is not a valid header value"),
    ),
    (
        "respond_two",
        "http",
        "  - op: respond\n    json: {}\n    text: a\n",
        Some("s.yaml:8:5: server step 1: op `respond` takes at most one of `json`, `text`, `generate`"),
    ),
    (
        "respond_badfill",
        "http",
        "  - op: respond\n    generate: {size: 1, fill: ab}\n",
        Some("s.yaml:8:5: server step 1: field `fill`: \"ab\" must be one ASCII character"),
    ),
    (
        "raw_to_unknown",
        "http",
        "  - op: raw_response\n    to: x\n    text: a\n",
        Some("s.yaml:8:5: server step 1: field `to`: no earlier `expect` is labelled \"x\""),
    ),
    (
        "raw_none",
        "http",
        "  - op: raw_response\n",
        Some("s.yaml:8:5: server step 1: op `raw_response` takes exactly one of `text`, `hex`, `base64`"),
    ),
    (
        "raw_two",
        "http",
        "  - op: raw_response\n    text: a\n    base64: YQ==\n",
        Some("s.yaml:8:5: server step 1: op `raw_response` takes exactly one of `text`, `hex`, `base64`"),
    ),
    (
        "raw_badhex",
        "http",
        "  - op: raw_response\n    hex: zz\n",
        Some("s.yaml:8:5: server step 1: field `hex`: Invalid character 'z' at position 0"),
    ),
    (
        "open_to_unknown",
        "http",
        "  - op: open_stream\n    to: x\n",
        Some("s.yaml:8:5: server step 1: field `to`: no earlier `expect` is labelled \"x\""),
    ),
    (
        "open_status",
        "http",
        "  - op: open_stream\n    status: 1000\n",
        Some("s.yaml:8:5: server step 1: field `status`: 1000 is not an HTTP status (100–599)"),
    ),
    (
        "open_headers",
        "http",
        "  - op: open_stream\n    headers: {'a b': c}\n",
        Some("s.yaml:8:5: server step 1: field `headers`: \"a b\" is not a valid header name"),
    ),
    (
        "open_label_then_event",
        "http",
        "  - op: expect\n    method: m\n  - op: open_stream\n    as: s1\n  - op: event\n    stream: s1\n    data: x\n  - op: end_stream\n    stream: s1\n",
        None,
    ),
    (
        "open_to_label_stream",
        "http",
        "  - op: expect\n    method: m\n    as: lab\n  - op: open_stream\n    to: lab\n  - op: event\n    stream: lab\n    data: x\n",
        None,
    ),
    (
        "event_unknown_stream",
        "http",
        "  - op: event\n    stream: nope\n    data: x\n",
        Some(
            "s.yaml:8:5: server step 1: field `stream`: no earlier `open_stream` or `expect_get` names a stream \"nope\"",
        ),
    ),
    (
        "event_get_post",
        "http",
        "  - op: event\n    stream: get\n    data: x\n  - op: event\n    stream: post\n    data: x\n",
        None,
    ),
    (
        "event_expect_label",
        "http",
        "  - op: expect\n    method: m\n    as: q\n  - op: event\n    stream: q\n    data: x\n",
        None,
    ),
    (
        "event_both",
        "http",
        "  - op: event\n    data: x\n    json: {}\n",
        Some("s.yaml:8:5: server step 1: fields `data` and `json`: give one, not both"),
    ),
    (
        "event_empty",
        "http",
        "  - op: event\n",
        Some(
            "s.yaml:8:5: server step 1: op `event` needs at least one of `comment`, `event`, `id`, `retry`, `data`, `json`",
        ),
    ),
    (
        "event_newline_id",
        "http",
        "  - op: event\n    id: \"a\\nb\"\n",
        Some("s.yaml:8:5: server step 1: field `id`: a line break would end the field early; use `send` for raw bytes"),
    ),
    (
        "event_newline_event",
        "http",
        "  - op: event\n    event: \"a\\rb\"\n",
        Some(
            "s.yaml:8:5: server step 1: field `event`: a line break would end the field early; use `send` for raw bytes",
        ),
    ),
    (
        "end_unknown_stream",
        "http",
        "  - op: end_stream\n    stream: nope\n",
        Some(
            "s.yaml:8:5: server step 1: field `stream`: no earlier `open_stream` or `expect_get` names a stream \"nope\"",
        ),
    ),
    (
        "get_status",
        "http",
        "  - op: expect_get\n    status: 42\n",
        Some("s.yaml:8:5: server step 1: field `status`: 42 is not an HTTP status (100–599)"),
    ),
    (
        "get_headers",
        "http",
        "  - op: expect_get\n    headers: {X: \"\\u0001\"}\n",
        Some("s.yaml:8:5: server step 1: field `headers`: the value of \"X\" is not a valid header value"),
    ),
    ("get_label", "http", "  - op: expect_get\n    as: g2\n  - op: end_stream\n    stream: g2\n", None),
    ("get_optional_405", "http", "  - op: expect_get\n    status: 405\n    repeat: true\n    optional: true\n", None),
    (
        "get_optional_stream",
        "http",
        "  - op: expect_get\n    optional: true\n",
        Some(
            "s.yaml:8:5: server step 1: field `optional`: an optional GET needs an answer the mock gives on its own: a non-2xx `status`, `close: true` or a non-stream `content_type` (later steps could not write on a stream the script never waited for)",
        ),
    ),
    (
        "get_after_optional",
        "http",
        "  - op: expect_get\n    close: true\n    optional: true\n  - op: expect_get\n",
        Some(
            "s.yaml:11:5: server step 2: an `expect_get` after an optional one that takes the same GETs on the same connection: make the optional one the last, or tell them apart with `resumption`",
        ),
    ),
    (
        "get_resumption_after_optional_listener",
        "http",
        "  - op: expect_get\n    status: 405\n    optional: true\n    resumption: false\n  - op: expect_get\n    resumption: true\n",
        None,
    ),
    (
        "get_listener_after_optional_listener",
        "http",
        "  - op: expect_get\n    status: 405\n    optional: true\n    resumption: false\n  - op: expect_get\n    resumption: false\n",
        Some(
            "s.yaml:12:5: server step 2: an `expect_get` after an optional one that takes the same GETs on the same connection: make the optional one the last, or tell them apart with `resumption`",
        ),
    ),
    (
        "get_resumption_mixed",
        "http",
        "  - op: expect_get\n    status: 405\n  - op: expect_get\n    resumption: true\n",
        Some(
            "s.yaml:10:5: server step 2: field `resumption`: an earlier `expect_get` on this connection sets `resumption` and this one does not, or the other way round: a GET both could take would go to either; set `resumption` on every `expect_get` of the connection (`false` for the listener, `true` for resumptions) or on none",
        ),
    ),
    (
        "get_resumption_per_connection",
        "http",
        "  - op: expect_get\n    status: 405\n  - op: new_connection\n  - op: expect_get\n    resumption: true\n",
        None,
    ),
    (
        "get_optional_per_connection",
        "http",
        "  - op: expect_get\n    close: true\n    optional: true\n  - op: new_connection\n  - op: expect_get\n",
        None,
    ),
    (
        "delete_status",
        "http",
        "  - op: expect_delete\n    status: 9999\n",
        Some("s.yaml:8:5: server step 1: field `status`: 9999 is not an HTTP status (100–599)"),
    ),
    (
        "auth_token_empty",
        "http",
        "  - op: require_auth\n    token: ' '\n",
        Some("s.yaml:8:5: server step 1: field `token`: give a non-empty token without spaces"),
    ),
    (
        "auth_token_space",
        "http",
        "  - op: require_auth\n    token: 'a b'\n",
        Some("s.yaml:8:5: server step 1: field `token`: give a non-empty token without spaces"),
    ),
    (
        "auth_status",
        "http",
        "  - op: require_auth\n    token: t\n    status: 500\n",
        Some("s.yaml:8:5: server step 1: field `status`: 500 is not a 4xx status (use 401 or 403)"),
    ),
    (
        "auth_www",
        "http",
        "  - op: require_auth\n    token: t\n    www_authenticate: \"a\\nb\"\n",
        Some("s.yaml:8:5: server step 1: field `www_authenticate`: \"a\\nb\" is not a valid header value"),
    ),
    (
        "reply_always_both",
        "http",
        "  - op: reply_always\n    method: m\n    result: {}\n    error: {}\n",
        Some("s.yaml:8:5: server step 1: fields `result` and `error`: give one, not both"),
    ),
    ("reply_always_stdio_ok", "stdio", "  - op: reply_always\n    method: m\n", None),
    (
        "server_and_check_errors",
        "stdio",
        "  - op: reply\n    to: nope\nchecks:\n  - outcome: {step: 9, ok: true}\n",
        Some("s.yaml:8:5: server step 1: field `to`: no earlier `expect` is labelled \"nope\""),
    ),
];

#[test]
fn load_time_messages_name_file_line_column_and_field() {
    for (case, head, server, expected) in CASES {
        let head = HEADS.iter().find(|(h, _)| h == head).map(|(_, text)| *text).expect("head");
        let text = format!("{head}server:\n{server}");
        let got = crate::load::parse(Path::new("s.yaml"), &text).err().map(|e| e.to_string());
        assert_eq!(got.as_deref(), *expected, "case {case}");
    }
}
