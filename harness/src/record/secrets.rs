//! Redaction at capture: what a recording keeps never holds a credential. Header values
//! (`Authorization`, `Cookie`, `Set-Cookie`, any header naming a token, key or secret),
//! JSON members whose name says they hold one (`access_token`, `apiKey`, `password`, …;
//! never `progressToken`, which the replay needs), bearer tokens anywhere in text, and every
//! match of the user's `--redact-pattern` become `<redacted:N>` (N numbers distinct values
//! by first appearance, so a replay still shows that two requests carried the same token).
//! Only the capture is redacted: the bytes relayed between client and server are untouched.

use regex::Regex;
use serde_json::Value;
use std::collections::BTreeMap;

/// Bearer (and Basic) credentials inside any text.
const BEARER: &str = r"(?i)\b(?:bearer|basic)\s+[A-Za-z0-9._~+/=-]{4,}";

/// Redacts captured values and counts what it redacted.
#[derive(Debug)]
pub struct Secrets {
    patterns: Vec<(String, Regex)>,
    values: Vec<String>,
    /// What was redacted (a description) and how many times.
    pub redacted: BTreeMap<String, usize>,
}

impl Secrets {
    /// A redactor for the default rules plus `patterns` (regular expressions; the whole
    /// match is redacted). An invalid pattern is an error naming it.
    pub fn new(patterns: &[String]) -> Result<Self, String> {
        let mut compiled = vec![("bearer token".to_string(), Regex::new(BEARER).map_err(|e| e.to_string())?)];
        for p in patterns {
            let re = Regex::new(p).map_err(|e| format!("--redact-pattern {p:?} is not a regular expression: {e}"))?;
            compiled.push((format!("pattern {p:?}"), re));
        }
        Ok(Secrets { patterns: compiled, values: Vec::new(), redacted: BTreeMap::new() })
    }

    /// The placeholder for `secret`, counting it under `what`.
    fn placeholder(&mut self, what: String, secret: &str) -> String {
        *self.redacted.entry(what).or_default() += 1;
        let n = match self.values.iter().position(|v| v == secret) {
            Some(i) => i + 1,
            None => {
                self.values.push(secret.to_owned());
                self.values.len()
            }
        };
        format!("<redacted:{n}>")
    }

    /// `text` with every bearer token and pattern match redacted.
    pub fn text(&mut self, text: &str) -> String {
        let mut out = text.to_owned();
        for i in 0..self.patterns.len() {
            let (what, re) = (self.patterns[i].0.clone(), self.patterns[i].1.clone());
            let matches: Vec<String> = re.find_iter(&out).map(|m| m.as_str().to_owned()).collect();
            for m in matches {
                if m.starts_with("<redacted:") {
                    continue;
                }
                let p = self.placeholder(what.clone(), &m);
                out = out.replacen(&m, &p, 1);
            }
        }
        out
    }

    /// A header's value as the capture keeps it.
    pub fn header(&mut self, name: &str, value: &str) -> String {
        if sensitive_header(name) {
            let lower = name.to_ascii_lowercase();
            // Keep the scheme of an Authorization value: it says what kind of credential.
            if lower.ends_with("authorization")
                && let Some((scheme, rest)) = value.split_once(' ')
            {
                let p = self.placeholder(format!("{lower} header"), rest.trim());
                return format!("{scheme} {p}");
            }
            return self.placeholder(format!("{lower} header"), value);
        }
        self.text(value)
    }

    /// A JSON value as the capture keeps it: sensitive members and text redacted.
    pub fn json(&mut self, v: &Value) -> Value {
        match v {
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        let kept = match v {
                            Value::String(s) if sensitive_member(k) => {
                                Value::String(self.placeholder(format!("JSON member {k:?}"), s))
                            }
                            other => self.json(other),
                        };
                        (k.clone(), kept)
                    })
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(|i| self.json(i)).collect()),
            Value::String(s) => Value::String(self.text(s)),
            other => other.clone(),
        }
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

/// Headers that carry credentials.
pub fn sensitive_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    matches!(n.as_str(), "authorization" | "proxy-authorization" | "cookie" | "set-cookie")
        || ["token", "secret", "api-key", "apikey", "password"].iter().any(|w| n.contains(w))
}

/// JSON members whose name says they hold a credential.
pub fn sensitive_member(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace(['_', '-'], "");
    if n == "progresstoken" || n == "nextcursor" {
        return false;
    }
    n.ends_with("token")
        || ["secret", "password", "passwd", "apikey", "authorization", "cookie", "credential"]
            .iter()
            .any(|w| n.contains(w))
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
            json!({"access_token": "<redacted:1>", "progressToken": "p1", "note": "key <redacted:2> here", "x": ["<redacted:3>"]})
        );
        assert_eq!(s.header("Authorization", "Bearer abc"), "Bearer <redacted:1>");
        assert_eq!(s.header("Cookie", "sid=1"), "<redacted:4>");
        assert_eq!(s.redacted.get("authorization header"), Some(&1));
        assert_eq!(s.redacted.get("JSON member \"access_token\""), Some(&1));
    }

    #[test]
    fn a_bad_pattern_is_named() {
        let e = Secrets::new(&["(".into()]).expect_err("invalid");
        assert!(e.contains("--redact-pattern \"(\""), "{e}");
    }

    #[test]
    fn clean_lines_keep_their_bytes() {
        let mut s = Secrets::new(&[]).expect("valid");
        let (bytes, json) = s.line(br#"{"jsonrpc":"2.0", "id":1,"result":{}}"#);
        assert_eq!(bytes, br#"{"jsonrpc":"2.0", "id":1,"result":{}}"#);
        assert!(json.is_some());
    }
}
