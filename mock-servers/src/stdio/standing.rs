//! [`StandingAnswer`]: a `reply_always` rule's answer, serialised once when the rule is set
//! rather than built and serialised again for every request it answers (a busy run answers
//! thousands). Its line is byte for byte the one `payload::reply_line` makes; a unit test
//! holds the two together.

use mcp_scenario::payload;
use mcp_scenario::script::LineEnd;
use serde_json::Value;

/// The answer a `reply_always` rule gives: the member it sets (`error` when the rule has
/// one, else `result`, `{}` by default) and that member's JSON text.
#[derive(Debug, Clone)]
pub struct StandingAnswer {
    member: &'static str,
    text: Vec<u8>,
}

impl StandingAnswer {
    /// The answer of a rule given as `{"result": …}` or `{"error": …}`.
    pub fn new(answer: &Value) -> Self {
        let (member, body) = match (answer.get("error"), answer.get("result")) {
            (Some(error), _) => ("error", error.clone()),
            (None, result) => ("result", result.cloned().unwrap_or_else(|| serde_json::json!({}))),
        };
        StandingAnswer { member, text: serde_json::to_vec(&body).unwrap_or_default() }
    }

    /// The answer's line to the request with `id`, `\n`-terminated.
    pub fn line(&self, id: &Value) -> Vec<u8> {
        let mut line = Vec::with_capacity(self.text.len() + 48);
        line.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        if serde_json::to_writer(&mut line, id).is_err() {
            // Not reached for a parsed id; the general path says what any id becomes.
            return payload::reply_line(id.clone(), None, None, None, LineEnd::Lf);
        }
        line.extend_from_slice(b",\"");
        line.extend_from_slice(self.member.as_bytes());
        line.extend_from_slice(b"\":");
        line.extend_from_slice(&self.text);
        line.extend_from_slice(b"}\n");
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_standing_answer_is_the_line_reply_line_makes() {
        let answers = [
            json!({"result": {"content": [{"type": "text", "text": "ok \"q\" é"}], "z": 1, "a": 2.5}}),
            json!({"error": {"code": -32000, "message": "no", "data": [null, true]}}),
            json!({"error": {"code": 1}, "result": {"ignored": true}}),
            json!({"result": null}),
            json!({}),
        ];
        let ids = [json!(1), json!(-7), json!(1.5), json!("a\"b\\c"), json!(null), json!(u64::MAX), json!({"k": [1]})];
        for answer in &answers {
            let standing = StandingAnswer::new(answer);
            for id in &ids {
                let expected =
                    payload::reply_line(id.clone(), answer.get("result"), answer.get("error"), None, LineEnd::Lf);
                assert_eq!(
                    String::from_utf8_lossy(&standing.line(id)),
                    String::from_utf8_lossy(&expected),
                    "{answer} to {id}"
                );
            }
        }
    }
}
