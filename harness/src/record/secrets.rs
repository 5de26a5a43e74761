//! Redaction at capture: what a recording keeps never holds a credential. What counts as
//! one is the project's one secret policy ([`mcp_mock::secrets`]: credential headers, JSON
//! members such as `apiKey` or `password`, bearer and basic credentials, cookies, OAuth codes,
//! verifiers, client secrets and refresh tokens in query strings, form bodies and text), plus
//! every match of the user's `--redact-pattern`. This module only decides what a recording
//! writes in their place: `<redacted:N>`, N numbering distinct values by first appearance, so
//! a replay still shows that two requests carried the same token, and a count of what was
//! redacted for the scenario's header comment. Only the capture is redacted: the bytes
//! relayed between client and server are untouched.

use crate::error::HarnessError;
use mcp_mock::secrets::{Found, Mask, Policy};
use serde_json::Value;
use std::collections::BTreeMap;

/// Redacts captured values and counts what it redacted.
#[derive(Debug, Default)]
pub struct Secrets {
    policy: Policy,
    numbers: Numbers,
}

/// `<redacted:N>` for each secret, and the counts.
#[derive(Debug, Default)]
struct Numbers {
    values: Vec<String>,
    redacted: BTreeMap<String, usize>,
}

impl Mask for Numbers {
    fn mask(&mut self, found: &Found, secret: &str) -> String {
        *self.redacted.entry(found.to_string()).or_default() += 1;
        let n = match self.values.iter().position(|v| v == secret) {
            Some(i) => i + 1,
            None => {
                self.values.push(secret.to_owned());
                self.values.len()
            }
        };
        format!("<redacted:{n}>")
    }
}

impl Secrets {
    /// A redactor for the policy plus `patterns` (regular expressions; the whole match is
    /// redacted). An invalid pattern is an error naming it.
    pub fn new(patterns: &[String]) -> Result<Self, HarnessError> {
        let policy = Policy::with_patterns(patterns)
            .map_err(|e| HarnessError::RecordOptions(format!("--redact-pattern {e}")))?;
        Ok(Secrets { policy, numbers: Numbers::default() })
    }

    /// What was redacted (a description such as `JSON member "apiKey"`) and how many times;
    /// the counts start again from here.
    pub fn take_redacted(&mut self) -> BTreeMap<String, usize> {
        std::mem::take(&mut self.numbers.redacted)
    }

    /// `text` with every secret redacted.
    pub fn text(&mut self, text: &str) -> String {
        self.policy.text(text, &mut self.numbers)
    }

    /// A header's value as the capture keeps it.
    pub fn header(&mut self, name: &str, value: &str) -> String {
        self.policy.header(name, value, &mut self.numbers)
    }

    /// A JSON value as the capture keeps it: secret members and text redacted.
    pub fn json(&mut self, v: &Value) -> Value {
        let mut kept = v.clone();
        self.policy.json(&mut kept, &mut self.numbers);
        kept
    }

    /// One captured line: parsed and redacted as JSON when it is JSON (the text is then
    /// the redacted JSON, compact), else redacted as text.
    pub fn line(&mut self, raw: &[u8]) -> (Vec<u8>, Option<Value>) {
        let trimmed = raw.strip_suffix(b"\r").unwrap_or(raw);
        match serde_json::from_slice::<Value>(trimmed) {
            Ok(v) => {
                let kept = self.json(&v);
                if kept == v {
                    // Nothing to hide: keep the bytes exactly as they crossed the wire.
                    (raw.to_vec(), Some(kept))
                } else {
                    let mut text = kept.to_string().into_bytes();
                    if trimmed.len() < raw.len() {
                        text.push(b'\r');
                    }
                    (text, Some(kept))
                }
            }
            Err(_) => match std::str::from_utf8(raw) {
                Ok(t) => (self.text(t).into_bytes(), None),
                Err(_) => (raw.to_vec(), None),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn members_headers_bearer_and_patterns_are_redacted_and_counted() {
        let mut s = Secrets::new(&["sk-[a-z0-9]+".into()]).expect("valid");
        let v = s.json(&json!({"access_token": "abc", "progressToken": "p1", "note": "key sk-12ab here", "x": ["Bearer zzzz9999"]}));
        assert_eq!(
            v,
            json!({"access_token": "<redacted:1>", "progressToken": "p1", "note": "key <redacted:2> here", "x": ["Bearer <redacted:3>"]})
        );
        assert_eq!(s.header("Authorization", "Bearer abc"), "Bearer <redacted:1>");
        assert_eq!(s.header("Cookie", "sid=1"), "<redacted:4>");
        let redacted = s.take_redacted();
        assert_eq!(redacted.get("authorization header"), Some(&1));
        assert_eq!(redacted.get("JSON member \"access_token\""), Some(&1));
    }

    #[test]
    fn a_bad_pattern_is_named() {
        let e = Secrets::new(&["(".into()]).expect_err("invalid");
        assert!(e.to_string().contains("--redact-pattern \"(\""), "{e}");
    }

    #[test]
    fn clean_lines_keep_their_bytes() {
        let mut s = Secrets::new(&[]).expect("valid");
        let (bytes, json) = s.line(br#"{"jsonrpc":"2.0", "id":1,"result":{}}"#);
        assert_eq!(bytes, br#"{"jsonrpc":"2.0", "id":1,"result":{}}"#);
        assert!(json.is_some());
    }
}
