//! Turning script steps into bytes: the one [`Payload`] type every op that writes bytes
//! uses (`send`, `raw_response`, `stderr`, `respond`), how its bytes are split into writes
//! ([`Chunking`]), replies (with corrupted ids or padding), notifications and
//! server-to-client requests.
//!
//! The payload fields stay on the step structs (`text`, `hex`, `base64`, `json`,
//! `generate`), because serde's `flatten` would lose `deny_unknown_fields`; each step turns
//! its fields into a [`Payload`] with a method (`step::Send::payload` …), which is also
//! where the "exactly one of" rules live, so load-time validation and the engines read the
//! same answer.

use crate::script::{Generate, LineEnd, WrongId, step};
use base64::Engine as _;
use serde_json::{Value, json};
use std::time::Duration;

/// The `_meta` key naming a notification's or a listen result's subscription (2026-07-28):
/// the `subscriptions/listen` request's id.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// What is wrong with a step's payload fields; the message names the field (or the op and
/// the fields it takes).
#[derive(Debug, thiserror::Error)]
pub enum PayloadError {
    /// Not exactly one (or more than one) of the payload fields is given.
    #[error("op `{op}` takes {} one of {}", if *.exactly { "exactly" } else { "at most" }, field_list(.fields))]
    Choice {
        /// The op, as scenarios write it.
        op: &'static str,
        /// The payload fields it takes, in the order the message names them.
        fields: Vec<&'static str>,
        /// `exactly one` (true) or `at most one` (false).
        exactly: bool,
    },
    /// `hex` is not hex.
    #[error("field `hex`: {0}")]
    Hex(#[from] hex::FromHexError),
    /// `base64` is not standard base64.
    #[error("field `base64`: {0}")]
    Base64(#[from] base64::DecodeError),
    /// `json` cannot be written.
    #[error("field `json`: {0}")]
    Json(#[from] serde_json::Error),
    /// `generate.fill` is not one ASCII character.
    #[error("field `fill`: {0:?} must be one ASCII character")]
    Fill(String),
}

fn field_list(fields: &[&str]) -> String {
    fields.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
}

/// The bytes a step writes, as its scenario gives them: one of the payload fields.
#[derive(Debug, Clone, Copy)]
pub enum Payload<'a> {
    /// `text`: verbatim UTF-8.
    Text(&'a str),
    /// `hex`: arbitrary bytes as hex, spaces ignored.
    Hex(&'a str),
    /// `base64`: arbitrary bytes as standard base64.
    Base64(&'a str),
    /// `json`: any JSON value, written compactly on one line followed by `\n`.
    Json(&'a Value),
    /// `generate`: `size` copies of `fill`, then `\n` when `newline`.
    Generate(&'a Generate),
}

impl<'a> Payload<'a> {
    /// The one payload among `candidates` (field name, given value), exactly one of which
    /// must be given; the error names `op` and every candidate field.
    pub fn exactly_one(
        op: &'static str,
        candidates: &[(&'static str, Option<Payload<'a>>)],
    ) -> Result<Payload<'a>, PayloadError> {
        match Self::choose(op, candidates, true)? {
            Some(p) => Ok(p),
            None => Err(Self::choice(op, candidates, true)),
        }
    }

    /// The payload among `candidates` if one is given; more than one is an error.
    pub fn at_most_one(
        op: &'static str,
        candidates: &[(&'static str, Option<Payload<'a>>)],
    ) -> Result<Option<Payload<'a>>, PayloadError> {
        Self::choose(op, candidates, false)
    }

    fn choose(
        op: &'static str,
        candidates: &[(&'static str, Option<Payload<'a>>)],
        exactly: bool,
    ) -> Result<Option<Payload<'a>>, PayloadError> {
        let mut given = candidates.iter().filter_map(|(_, p)| *p);
        match (given.next(), given.next()) {
            (first, None) => Ok(first),
            (Some(_), Some(_)) => Err(Self::choice(op, candidates, exactly)),
            (None, Some(_)) => unreachable!("a second payload without a first"),
        }
    }

    fn choice(op: &'static str, candidates: &[(&'static str, Option<Payload<'a>>)], exactly: bool) -> PayloadError {
        PayloadError::Choice { op, fields: candidates.iter().map(|(f, _)| *f).collect(), exactly }
    }

    /// The bytes, decoded (hex, base64), written (json, followed by `\n`) or generated.
    pub fn bytes(&self) -> Result<Vec<u8>, PayloadError> {
        match *self {
            Payload::Text(t) => Ok(t.as_bytes().to_vec()),
            Payload::Hex(h) => {
                let clean: String = h.chars().filter(|c| !c.is_whitespace()).collect();
                Ok(hex::decode(clean)?)
            }
            Payload::Base64(b) => Ok(base64::engine::general_purpose::STANDARD.decode(b.trim())?),
            Payload::Json(v) => {
                let mut line = serde_json::to_vec(v)?;
                line.push(b'\n');
                Ok(line)
            }
            Payload::Generate(g) => g.bytes(),
        }
    }
}

impl Generate {
    /// The bytes a generated payload stands for.
    pub fn bytes(&self) -> Result<Vec<u8>, PayloadError> {
        let fill = match self.fill.as_bytes() {
            [b] if b.is_ascii() => *b,
            _ => return Err(PayloadError::Fill(self.fill.clone())),
        };
        let mut bytes = vec![fill; self.size];
        if self.newline {
            bytes.push(b'\n');
        }
        Ok(bytes)
    }
}

/// How a step's bytes are split into writes: `chunks` sizes, then the rest, with a pause of
/// `chunk_delay_ms` after each sized piece.
#[derive(Debug, Clone, Copy)]
pub struct Chunking<'a> {
    /// The sizes of the first writes.
    pub sizes: &'a [usize],
    /// The pause after each sized write, in ms.
    pub delay_ms: u64,
}

impl<'a> Chunking<'a> {
    /// The chunking a step's `chunks` and `chunk_delay_ms` fields describe.
    pub fn new(sizes: &'a [usize], delay_ms: u64) -> Self {
        Chunking { sizes, delay_ms }
    }

    /// One piece per size (empty once the bytes run out), and the rest (possibly empty).
    pub fn split<'b>(&self, bytes: &'b [u8]) -> (Vec<&'b [u8]>, &'b [u8]) {
        let mut rest = bytes;
        let mut pieces = Vec::with_capacity(self.sizes.len());
        for size in self.sizes {
            let (head, tail) = rest.split_at((*size).min(rest.len()));
            pieces.push(head);
            rest = tail;
        }
        (pieces, rest)
    }

    /// The pause between writes, if any.
    pub fn delay(&self) -> Option<Duration> {
        (self.delay_ms > 0).then(|| Duration::from_millis(self.delay_ms))
    }
}

fn given<'a>(field: &'a Option<String>, as_payload: fn(&'a str) -> Payload<'a>) -> Option<Payload<'a>> {
    field.as_deref().map(as_payload)
}

/// The raw-byte candidates `text`, `hex`, `base64`, in the order messages name them.
fn raw<'a>(
    text: &'a Option<String>,
    hex: &'a Option<String>,
    base64: &'a Option<String>,
) -> [(&'static str, Option<Payload<'a>>); 3] {
    [
        ("text", given(text, Payload::Text)),
        ("hex", given(hex, Payload::Hex)),
        ("base64", given(base64, Payload::Base64)),
    ]
}

impl step::Send {
    /// The payload: exactly one of `text`, `hex`, `base64`, `json`, `generate`.
    pub fn payload(&self) -> Result<Payload<'_>, PayloadError> {
        let [text, hex, base64] = raw(&self.text, &self.hex, &self.base64);
        let json = ("json", self.json.as_ref().map(Payload::Json));
        Payload::exactly_one(
            "send",
            &[text, hex, base64, json, ("generate", self.generate.as_ref().map(Payload::Generate))],
        )
    }

    /// How the bytes are split into writes.
    pub fn chunking(&self) -> Chunking<'_> {
        Chunking::new(&self.chunks, self.chunk_delay_ms)
    }
}

impl step::RawResponse {
    /// The payload: exactly one of `text`, `hex`, `base64`.
    pub fn payload(&self) -> Result<Payload<'_>, PayloadError> {
        Payload::exactly_one("raw_response", &raw(&self.text, &self.hex, &self.base64))
    }

    /// How the bytes are split into writes.
    pub fn chunking(&self) -> Chunking<'_> {
        Chunking::new(&self.chunks, self.chunk_delay_ms)
    }
}

impl step::Stderr {
    /// The payload: exactly one of `text`, `generate`.
    pub fn payload(&self) -> Result<Payload<'_>, PayloadError> {
        Payload::exactly_one(
            "stderr",
            &[("text", given(&self.text, Payload::Text)), ("generate", self.generate.as_ref().map(Payload::Generate))],
        )
    }
}

impl step::Respond {
    /// The body, if any: at most one of `json`, `text`, `generate`.
    pub fn body(&self) -> Result<Option<Payload<'_>>, PayloadError> {
        Payload::at_most_one(
            "respond",
            &[
                ("json", self.json.as_ref().map(Payload::Json)),
                ("text", given(&self.text, Payload::Text)),
                ("generate", self.generate.as_ref().map(Payload::Generate)),
            ],
        )
    }
}

impl step::Reply {
    /// How the reply line is split into writes.
    pub fn chunking(&self) -> Chunking<'_> {
        Chunking::new(&self.chunks, self.chunk_delay_ms)
    }
}

/// The id a reply carries, given the request's id and an optional corruption.
pub fn reply_id(id: &Value, wrong: Option<WrongId>) -> Value {
    match wrong {
        None => id.clone(),
        Some(WrongId::Null) => Value::Null,
        Some(WrongId::Unknown) => match id {
            Value::String(_) => json!("no-such-request"),
            _ => json!(987_654_321),
        },
        Some(WrongId::OtherType) => match id {
            Value::Number(n) => json!(n.to_string()),
            Value::String(s) => s.parse::<i64>().map(|n| json!(n)).unwrap_or_else(|_| json!(0)),
            other => other.clone(),
        },
    }
}

/// One reply line: `result` (default `{}`) or `error`, optionally padded to `pad_to` bytes.
pub fn reply_line(
    id: Value,
    result: Option<&Value>,
    error: Option<&Value>,
    pad_to: Option<usize>,
    end: LineEnd,
) -> Vec<u8> {
    let mut message = match error {
        Some(e) => json!({"jsonrpc": "2.0", "id": id, "error": e}),
        None => json!({"jsonrpc": "2.0", "id": id, "result": result.cloned().unwrap_or_else(|| json!({}))}),
    };
    if let (Some(target), Some(obj)) = (pad_to, message.get_mut("result").and_then(Value::as_object_mut)) {
        let current = serde_json::to_vec(&obj).map(|v| v.len()).unwrap_or(0) + 40;
        obj.insert("_pad".into(), json!("x".repeat(target.saturating_sub(current))));
    }
    line(&message, end)
}

/// A notification (`params` omitted when absent).
pub fn notification(method: &str, params: Option<&Value>) -> Value {
    let mut m = json!({"jsonrpc": "2.0", "method": method});
    if let Some(p) = params {
        m["params"] = p.clone();
    }
    m
}

/// A server-to-client request with `id` (`params` omitted when absent).
pub fn request(id: &Value, method: &str, params: Option<&Value>) -> Value {
    let mut m = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if let Some(p) = params {
        m["params"] = p.clone();
    }
    m
}

/// A compact JSON line.
pub fn line(message: &Value, end: LineEnd) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(message).unwrap_or_default();
    bytes.extend_from_slice(match end {
        LineEnd::Lf => b"\n",
        LineEnd::Crlf => b"\r\n",
    });
    bytes
}

/// The canned `initialize` result for a revision.
pub fn initialize_result(protocol_version: &str, capabilities: Option<&Value>) -> Value {
    json!({
        "protocolVersion": protocol_version,
        "capabilities": capabilities.cloned().unwrap_or_else(|| json!({})),
        "serverInfo": {"name": "mcp-mock", "version": "1.0.0"},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_ids() {
        assert_eq!(reply_id(&json!(2), Some(WrongId::OtherType)), json!("2"));
        assert_eq!(reply_id(&json!("2"), Some(WrongId::OtherType)), json!(2));
        assert_eq!(reply_id(&json!(2), Some(WrongId::Null)), Value::Null);
        assert_ne!(reply_id(&json!(2), Some(WrongId::Unknown)), json!(2));
    }

    #[test]
    fn padding_reaches_the_target_size() {
        let l = reply_line(json!(1), Some(&json!({"a": 1})), None, Some(10_000), LineEnd::Lf);
        assert!((9_900..10_100).contains(&l.len()), "{}", l.len());
    }

    #[test]
    fn payload_kinds_and_choices() {
        assert_eq!(Payload::Hex("ff 0a").bytes().expect("hex"), vec![0xff, 0x0a]);
        assert_eq!(Payload::Base64("YQ==").bytes().expect("b64"), b"a");
        assert_eq!(Payload::Json(&json!({"a": 1})).bytes().expect("json"), b"{\"a\":1}\n");
        let g = Generate { size: 2, fill: "z".into(), newline: false };
        assert_eq!(Payload::Generate(&g).bytes().expect("gen"), b"zz");
        let bad = Generate { size: 2, fill: "zz".into(), newline: true };
        assert_eq!(bad.bytes().expect_err("fill").to_string(), "field `fill`: \"zz\" must be one ASCII character");
        let two = [("a", Some(Payload::Text("x"))), ("b", Some(Payload::Text("y")))];
        assert_eq!(
            Payload::exactly_one("op", &two).expect_err("two").to_string(),
            "op `op` takes exactly one of `a`, `b`"
        );
        assert_eq!(
            Payload::at_most_one("op", &two).expect_err("two").to_string(),
            "op `op` takes at most one of `a`, `b`"
        );
        assert!(Payload::at_most_one("op", &[("a", None)]).expect("none").is_none());
        assert!(Payload::exactly_one("op", &[("a", None)]).is_err());
    }

    #[test]
    fn chunking_keeps_empty_pieces() {
        let (pieces, rest) = Chunking::new(&[2, 5, 1], 0).split(b"abcdef");
        assert_eq!(pieces, vec![&b"ab"[..], &b"cdef"[..], &b""[..]]);
        assert!(rest.is_empty());
        let (pieces, rest) = Chunking::new(&[], 3).split(b"abc");
        assert!(pieces.is_empty());
        assert_eq!(rest, b"abc");
        assert_eq!(Chunking::new(&[], 3).delay(), Some(Duration::from_millis(3)));
    }
}
