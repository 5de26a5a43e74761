//! Turning script steps into bytes: raw payloads, replies (with corrupted ids or padding),
//! notifications and server-to-client requests.

use crate::script::{Generate, LineEnd, ServerStep, WrongId};
use base64::Engine as _;
use serde_json::{Value, json};

/// The bytes a `send` step writes. Errors name the bad field (used at load time too).
pub fn send_bytes(step: &ServerStep) -> Result<Vec<u8>, String> {
    let ServerStep::Send { text, hex, base64, json, generate, .. } = step else {
        return Err("not a send step".into());
    };
    if let Some(t) = text {
        return Ok(t.as_bytes().to_vec());
    }
    if let Some(h) = hex {
        let clean: String = h.chars().filter(|c| !c.is_whitespace()).collect();
        return hex::decode(clean).map_err(|e| format!("field `hex`: {e}"));
    }
    if let Some(b) = base64 {
        return base64::engine::general_purpose::STANDARD.decode(b.trim()).map_err(|e| format!("field `base64`: {e}"));
    }
    if let Some(v) = json {
        let mut line = serde_json::to_vec(v).map_err(|e| format!("field `json`: {e}"))?;
        line.push(b'\n');
        return Ok(line);
    }
    if let Some(g) = generate {
        return generated(g);
    }
    Err("no payload".into())
}

/// The bytes a generated payload stands for.
pub fn generated(g: &Generate) -> Result<Vec<u8>, String> {
    let fill = match g.fill.as_bytes() {
        [b] if b.is_ascii() => *b,
        _ => return Err(format!("field `fill`: {:?} must be one ASCII character", g.fill)),
    };
    let mut bytes = vec![fill; g.size];
    if g.newline {
        bytes.push(b'\n');
    }
    Ok(bytes)
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
}
