//! Writing Server-Sent Events: the bytes of one event, a JSON-RPC message as an event, and
//! the legacy transport's `endpoint` event.

use mcp_scenario::script::SseLineEnd;
use serde_json::Value;

/// The fields of one event; absent fields are not written.
#[derive(Default)]
pub struct SseEvent<'a> {
    /// A comment line (`: text`); each line of it becomes one comment line.
    pub comment: Option<&'a str>,
    /// `event:`.
    pub event: Option<&'a str>,
    /// `id:`.
    pub id: Option<&'a str>,
    /// `retry:`.
    pub retry: Option<u64>,
    /// The data; each line becomes one `data:` line.
    pub data: Option<&'a str>,
}

/// The bytes of one event, ended by a blank line.
pub fn event(e: &SseEvent<'_>, end: SseLineEnd) -> Vec<u8> {
    let nl = match end {
        SseLineEnd::Lf => "\n",
        SseLineEnd::Crlf => "\r\n",
        SseLineEnd::Cr => "\r",
    };
    let mut out = String::new();
    let mut line = |field: &str, value: &str| {
        out.push_str(field);
        out.push_str(value);
        out.push_str(nl);
    };
    if let Some(c) = e.comment {
        for l in c.split('\n') {
            line(": ", l);
        }
    }
    if let Some(v) = e.event {
        line("event: ", v);
    }
    if let Some(v) = e.id {
        line("id: ", v);
    }
    if let Some(v) = e.retry {
        line("retry: ", &v.to_string());
    }
    if let Some(d) = e.data {
        for l in d.split('\n') {
            line("data: ", l);
        }
    }
    out.push_str(nl);
    out.into_bytes()
}

/// A JSON-RPC message as one event named `name` (unnamed when empty).
pub fn message(name: &str, message: &Value) -> Vec<u8> {
    let data = serde_json::to_string(message).unwrap_or_default();
    let e = SseEvent { event: (!name.is_empty()).then_some(name), data: Some(&data), ..SseEvent::default() };
    event(&e, SseLineEnd::Lf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_line_data_and_line_ends() {
        let e = SseEvent {
            event: Some("message"),
            id: Some("7"),
            retry: Some(50),
            data: Some("a\nb"),
            ..SseEvent::default()
        };
        assert_eq!(event(&e, SseLineEnd::Lf), b"event: message\nid: 7\nretry: 50\ndata: a\ndata: b\n\n");
        let c = SseEvent { comment: Some("ping"), ..SseEvent::default() };
        assert_eq!(event(&c, SseLineEnd::Crlf), b": ping\r\n\r\n");
        assert_eq!(event(&SseEvent { data: Some("x"), ..SseEvent::default() }, SseLineEnd::Cr), b"data: x\r\r");
    }

    #[test]
    fn unnamed_message() {
        assert_eq!(message("", &serde_json::json!({"a": 1})), b"data: {\"a\":1}\n\n");
    }
}
